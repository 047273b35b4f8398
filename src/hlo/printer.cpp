// XLA's HLO text form: HloModule header, called computations first, then ENTRY.
#include <algorithm>
#include <functional>
#include <sstream>
#include <unordered_set>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "hlo/ir.hpp"
#include "hlo/window.hpp"
#include "support/format.hpp"

namespace jx::hlo {
namespace {

// One element as XLA prints it: 1 (not 1.0), 1.5, -inf, nan, true.
std::string float_str(double v, bool single) {
  std::string s = detail::python_float_repr(v, single);
  if (s.size() > 2 && s.ends_with(".0")) s.resize(s.size() - 2);  // XLA prints 1, not 1.0
  return s;
}

// Every element as text; integers are read as integers, so int64 values print exactly.
std::vector<std::string> element_strs(const Array& lit) {
  std::vector<std::string> out;
  DType d = lit.dtype();
  if (d == bool_) {
    for (bool b : lit.to_vector<bool>()) out.push_back(b ? "true" : "false");
  } else if (is_floating(d)) {
    for (double v : lit.to_vector<double>()) out.push_back(float_str(v, d == float32));
  } else {
    for (std::int64_t v : lit.to_vector<std::int64_t>()) out.push_back(std::to_string(v));
  }
  return out;
}

// Nested braces per dimension: {1, 2}, { {1, 2}, {3, 4} }; a scalar prints bare.
std::string literal_str(const Array& lit) {
  std::vector<std::string> v = element_strs(lit);
  const Shape& dims = lit.shape();
  if (dims.empty()) return v[0];
  std::size_t pos = 0;
  std::function<std::string(std::size_t)> rec = [&](std::size_t d) -> std::string {
    std::vector<std::string> parts;
    for (std::int64_t i = 0; i < dims[d]; ++i)
      parts.push_back(d + 1 == dims.size() ? v[pos++] : rec(d + 1));
    if (d + 1 == dims.size()) return "{" + detail::join(parts, ", ") + "}";
    return "{ " + detail::join(parts, ", ") + " }";
  };
  return rec(0);
}

std::string triples_str(const std::vector<std::int64_t>& v, bool slice) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i + 2 < v.size(); i += 3) {
    std::string a = std::to_string(v[i]), b = std::to_string(v[i + 1]);
    std::string c = std::to_string(v[i + 2]);
    if (slice)
      parts.push_back("[" + a + ":" + b + (v[i + 2] != 1 ? ":" + c : "") + "]");
    else
      parts.push_back(a + "_" + b + (v[i + 2] ? "_" + c : ""));
  }
  return slice ? "{" + detail::join(parts, ", ") + "}" : detail::join(parts, "x");
}

// XLA's window: {size=3x1 stride=2x1 pad=2_0x0_0 lhs_dilate=... rhs_dilate=...}; fields other
// than size print only where some dimension differs from the default.
std::string window_str(const std::vector<std::int64_t>& attr) {
  Window window = window_from_attr(attr);
  std::vector<std::string> fields;
  auto field = [&](const char* name, auto value, bool always) {
    std::vector<std::string> parts;
    bool differs = always;
    for (const WindowDim& w : window) {
      auto [text, is_default] = value(w);
      parts.push_back(text);
      differs |= !is_default;
    }
    if (differs && !window.empty()) fields.push_back(name + ("=" + detail::join(parts, "x")));
  };
  auto one = [](std::int64_t WindowDim::*m, std::int64_t def) {
    return [m, def](const WindowDim& w) { return std::pair{std::to_string(w.*m), w.*m == def}; };
  };
  field("size", one(&WindowDim::size, -1), true);
  field("stride", one(&WindowDim::stride, 1), false);
  field(
      "pad",
      [](const WindowDim& w) {
        return std::pair{std::to_string(w.pad_lo) + "_" + std::to_string(w.pad_hi),
                         w.pad_lo == 0 && w.pad_hi == 0};
      },
      false);
  field("lhs_dilate", one(&WindowDim::base_dilation, 1), false);
  field("rhs_dilate", one(&WindowDim::window_dilation, 1), false);
  return "{" + detail::join(fields, " ") + "}";
}

std::string attr_str(const std::string& name, const AttrValue& v) {
  if (auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  const auto& ints = std::get<std::vector<std::int64_t>>(v);
  if (name == "slice" || name == "padding") return triples_str(ints, name == "slice");
  if (name == "window") return window_str(ints);
  return "{" + detail::join(ints, ",") + "}";
}

std::string callee_name(const Computation* c) { return "%" + (c ? c->name() : "<null>"); }

// The called computations as XLA names them: to_apply=, calls=, condition= and body=,
// branch_computations={...}.
std::string called_str(const Instruction& inst) {
  const auto& called = inst.called;
  if (inst.opcode == Opcode::kConditional) {
    std::vector<std::string> names;
    for (const Computation* c : called) names.push_back(callee_name(c));
    return ", branch_computations={" + detail::join(names, ", ") + "}";
  }
  if (inst.opcode == Opcode::kWhile && called.size() == 2)
    return ", condition=" + callee_name(called[0]) + ", body=" + callee_name(called[1]);
  std::string s;
  for (const Computation* c : called)
    s += (inst.opcode == Opcode::kFusion ? ", calls=" : ", to_apply=") + callee_name(c);
  return s;
}

// Signature shapes print without layouts: `(p: f32[2,3]) -> f32[3]`.
std::string signature_shape(const HloShape& s) {
  if (s.is_tuple) return s.str();
  return std::string(hlo_type_name(s.dtype)) + "[" + detail::join(s.dims, ",") + "]";
}

void print_computation(std::ostringstream& os, const Computation& c, bool entry) {
  std::vector<std::string> params;
  for (const Instruction* p : c.parameters())
    params.push_back(p ? p->name + ": " + signature_shape(p->shape) : "<missing>");
  os << (entry ? "ENTRY " : "") << "%" << c.name() << " (" << detail::join(params, ", ") << ") -> "
     << (c.root() ? signature_shape(c.root()->shape) : "<no root>") << " {\n";
  for (const Instruction* i : c.instructions())
    os << "  " << (i == c.root() ? "ROOT " : "") << to_string(*i) << "\n";
  os << "}\n";
}

// Callees before callers (as XLA prints), else in creation order; the entry comes last.
std::vector<const Computation*> post_order(const Module& module) {
  std::vector<const Computation*> order;
  std::unordered_set<const Computation*> seen;  // marked before the callees: cycles end
  std::function<void(const Computation*)> visit = [&](const Computation* c) {
    if (!seen.insert(c).second) return;
    for (const Instruction* i : c->owned())
      for (const Computation* callee : i->called)
        if (callee) visit(callee);
    order.push_back(c);
  };
  for (const Computation* c : module.computations())
    if (c != module.entry()) visit(c);
  std::erase(order, module.entry());
  return order;
}

}  // namespace

std::string to_string(const Instruction& inst) {
  std::ostringstream os;
  os << "%" << inst.name << " = " << inst.shape.str() << " " << info(inst.opcode).name << "(";
  if (inst.opcode == Opcode::kParameter) {
    os << inst.parameter_number;
  } else if (inst.opcode == Opcode::kConstant) {
    os << (inst.literal ? literal_str(*inst.literal) : "<no literal>");
  } else {
    for (std::size_t k = 0; k < inst.operands.size(); ++k) {
      const Instruction* op = inst.operands[k];
      os << (k ? ", " : "") << (op ? op->shape.str() + " %" + op->name : "<null>");
    }
  }
  os << ")";
  for (const auto& [name, value] : inst.attrs.entries())
    os << ", " << name << "=" << attr_str(name, value);
  os << called_str(inst);
  return os.str();
}

std::string to_string(const Module& module) {
  std::ostringstream os;
  const Computation* entry = module.entry();
  os << "HloModule " << module.name();
  if (entry && entry->root()) {
    std::vector<std::string> in;
    for (const Instruction* p : entry->parameters()) in.push_back(p ? p->shape.str() : "?");
    os << ", entry_computation_layout={(" << detail::join(in, ", ") << ")->"
       << entry->root()->shape.str() << "}";
  }
  os << "\n";
  for (const Computation* c : post_order(module)) {
    os << "\n";
    print_computation(os, *c, false);
  }
  if (entry) {
    os << "\n";
    print_computation(os, *entry, true);
  }
  return os.str();
}

}  // namespace jx::hlo
