// JAX's jaxpr text format: `{ lambda c:f32[3]; a:f32[3]. let b:f32[3] = add a c in (b,) }`.
#include <unordered_map>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "jaxpr/jaxpr.hpp"
#include "support/format.hpp"

namespace jx {
namespace {

constexpr std::size_t kWidth = 80;

// JAX's variable names: a..z, then ba, bb, ... (base 26 with 'a' as the zero digit).
std::string var_name(std::size_t n) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('a' + n % 26));
    n /= 26;
  } while (n);
  return s;
}

std::string literal_str(const Array& lit) {
  std::string v = dispatch(lit.dtype(), [&]<class T>() -> std::string {
    T x = *concrete_buffer(lit, "print").as<T>();
    if constexpr (std::is_same_v<T, bool>) return x ? "True" : "False";
    else if constexpr (std::is_floating_point_v<T>)
      return detail::python_float_repr(x, std::is_same_v<T, float>);
    else return std::to_string(x);
  });
  return v + ":" + lit.aval().str();
}

class Printer {
 public:
  explicit Printer(int indent) : indent_(indent) {}

  std::string jaxpr(const Jaxpr& j) {
    std::string consts = binders(j.constvars), ins = binders(j.invars);
    std::vector<std::string> eqns;
    for (const auto& e : j.eqns) eqns.push_back(eqn(e, /*flat=*/true));
    std::vector<std::string> outs;
    for (const auto& a : j.outvars) outs.push_back(atom(a));
    std::string out_tuple = detail::tuple_str(outs);
    std::string head = "{ lambda " + consts + "; " + ins + ". let";
    std::string flat = head + " " + detail::join(eqns, " ") + " in " + out_tuple + " }";
    if (indent_ + flat.size() <= kWidth && flat.find('\n') == std::string::npos) return flat;
    // Broken form: equations indented by 4, `in` by 2, relative to the jaxpr's own indent.
    std::string pad(indent_, ' ');
    std::string s = head;
    for (std::size_t k = 0; k < j.eqns.size(); ++k) {
      std::string line = eqns[k];
      if (indent_ + 4 + line.size() > kWidth || line.find('\n') != std::string::npos)
        line = eqn(j.eqns[k], /*flat=*/false);
      s += "\n" + pad + "    " + line;
    }
    return s + "\n" + pad + "  in " + out_tuple + " }";
  }

 private:
  std::string name(const Var& v) {
    if (v->dropped) return "_";
    auto [it, inserted] = names_.try_emplace(v.get(), "");
    if (inserted) it->second = var_name(count_++);
    return it->second;
  }
  std::string binder(const Var& v) { return name(v) + ":" + v->aval.str(); }
  std::string binders(const std::vector<Var>& vs) {
    std::vector<std::string> parts;
    for (const auto& v : vs) parts.push_back(binder(v));
    return detail::join(parts, " ");
  }
  std::string atom(const Atom& a) { return a.is_literal() ? literal_str(a.literal) : name(a.var); }

  // A parameter value; sub-jaxprs are printed by a nested printer sharing our names.
  std::string param(const Param& p, int indent) {
    if (p.kind() != Param::Kind::kJaxpr) return p.str();
    Printer sub(indent);
    sub.names_ = std::move(names_);
    sub.count_ = count_;
    std::string s = sub.jaxpr(p.as_jaxpr()->jaxpr);
    names_ = std::move(sub.names_);  // keep the sub-jaxpr's names: a re-print gives the same text
    count_ = sub.count_;
    return s;
  }

  std::string eqn(const Eqn& e, bool flat) {
    std::vector<std::string> ins, outs;
    for (const auto& a : e.inputs) ins.push_back(atom(a));
    // Names are handed out left to right, so the outputs are named before the params' sub-jaxprs.
    for (const auto& v : e.outvars) outs.push_back(binder(v));
    std::string s = detail::join(outs, " ") + " = " + e.prim->name;
    if (!e.params.empty()) {
      std::vector<std::string> kvs;
      int inner = indent_ + 6;
      for (const auto& [k, v] : e.params.entries()) kvs.push_back(k + "=" + param(v, inner));
      if (flat) {
        s += "[" + detail::join(kvs, " ") + "]";
      } else {
        std::string pad(indent_ + 4, ' ');
        s += "[";
        for (const auto& kv : kvs) s += "\n" + pad + "  " + kv;
        s += "\n" + pad + "]";
      }
    }
    if (!ins.empty()) s += " " + detail::join(ins, " ");
    return s;
  }

  int indent_;
  std::unordered_map<const VarNode*, std::string> names_;
  std::size_t count_ = 0;
};

}  // namespace

std::string to_string(const Jaxpr& jaxpr) { return Printer(0).jaxpr(jaxpr); }

std::string closed_jaxpr_param_str(const ClosedJaxprData& j) { return to_string(j.jaxpr); }

}  // namespace jx
