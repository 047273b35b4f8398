// HLO IR bookkeeping: opcode table, shapes, attributes, computations and modules.
#include "hlo/ir.hpp"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "core/array_impl.hpp"
#include "support/check.hpp"
#include "support/format.hpp"

namespace jx::hlo {
namespace {

constexpr OpcodeInfo kInfos[] = {
#define JX_HLO_OPCODE(e, name, arity, dtypes, runs_as, traits) \
  {name, arity, dtypes, RunsAs::runs_as, traits},
#include "hlo/opcodes.def"
#undef JX_HLO_OPCODE
};

}  // namespace

const OpcodeInfo& info(Opcode op) { return kInfos[static_cast<int>(op)]; }

std::optional<Opcode> opcode_from_name(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kInfos); ++i)
    if (kInfos[i].name == name) return static_cast<Opcode>(i);
  return std::nullopt;
}

std::string_view hlo_type_name(DType d) {
  switch (d) {
#define JX_HLO_TYPE_NAME(name, type, text, short_name, hlo_name) \
  case DType::name:                                              \
    return hlo_name;
    JX_FOR_EACH_DTYPE(JX_HLO_TYPE_NAME)
#undef JX_HLO_TYPE_NAME
  }
  return "?";
}

std::int64_t HloShape::byte_size() const {
  if (!is_tuple) return size() * static_cast<std::int64_t>(itemsize(dtype));
  std::int64_t n = 0;
  for (const auto& s : tuple_shapes) n += s.byte_size();
  return n;
}

std::string HloShape::str() const {
  if (is_tuple) {
    std::vector<std::string> parts;
    for (const auto& s : tuple_shapes) parts.push_back(s.str());
    return "(" + detail::join(parts, ", ") + ")";
  }
  std::string s = std::string(hlo_type_name(dtype)) + "[" + detail::join(dims, ",") + "]";
  if (dims.empty()) return s;
  std::vector<int> layout;  // row-major: minor-to-major is the reversed dimension order
  for (int d = rank() - 1; d >= 0; --d) layout.push_back(d);
  return s + "{" + detail::join(layout, ",") + "}";
}

const AttrValue& Attrs::get(const std::string& name) const {
  const AttrValue* v = find(name);
  JX_CHECK(v, "missing HLO attribute '" << name << "'");
  return *v;
}

std::int64_t Attrs::get_int(const std::string& name) const {
  return std::get<std::int64_t>(get(name));
}
const std::vector<std::int64_t>& Attrs::get_ints(const std::string& name) const {
  return std::get<std::vector<std::int64_t>>(get(name));
}
const std::string& Attrs::get_string(const std::string& name) const {
  return std::get<std::string>(get(name));
}

Instruction* Computation::add(std::unique_ptr<Instruction> inst, std::string_view name_hint) {
  if (inst->name.empty())
    inst->name = module_->unique_name(name_hint.empty() ? info(inst->opcode).name : name_hint);
  if (inst->opcode == Opcode::kParameter) {
    auto n = static_cast<std::size_t>(inst->parameter_number);
    if (parameters_.size() <= n) parameters_.resize(n + 1, nullptr);
    parameters_[n] = inst.get();
  }
  owned_.push_back(std::move(inst));
  return owned_.back().get();
}

std::vector<Instruction*> Computation::instructions() const {
  std::vector<Instruction*> order;
  std::unordered_set<const Instruction*> done;
  std::function<void(Instruction*)> visit = [&](Instruction* i) {
    if (!done.insert(i).second) return;
    for (Instruction* op : i->operands) visit(op);
    order.push_back(i);
  };
  for (const auto& i : owned_) visit(i.get());
  return order;
}

std::vector<Instruction*> Computation::owned() const {
  std::vector<Instruction*> out;
  for (const auto& i : owned_) out.push_back(i.get());
  return out;
}

std::vector<Instruction*> Computation::users(const Instruction* inst) const {
  std::vector<Instruction*> out;
  for (const auto& i : owned_)
    if (std::find(i->operands.begin(), i->operands.end(), inst) != i->operands.end())
      out.push_back(i.get());
  return out;
}

UserIndex::UserIndex(const Computation& c) {
  for (Instruction* i : c.owned())
    for (const Instruction* op : i->operands) {
      std::vector<Instruction*>& users = users_[op];
      if (users.empty() || users.back() != i)
        users.push_back(i);  // once, however often it reads op
    }
}

const std::vector<Instruction*>& UserIndex::operator()(const Instruction* inst) const {
  static const std::vector<Instruction*> kNone;
  auto it = users_.find(inst);
  return it == users_.end() ? kNone : it->second;
}

void Computation::replace_all_uses(Instruction* from, Instruction* to) {
  for (const auto& i : owned_)
    if (i.get() != to) std::replace(i->operands.begin(), i->operands.end(), from, to);
  if (root_ == from) root_ = to;
}

int Computation::remove_unreachable() {
  std::unordered_set<const Instruction*> live(parameters_.begin(), parameters_.end());
  std::function<void(const Instruction*)> mark = [&](const Instruction* i) {
    if (!live.insert(i).second && i != root_) return;
    for (const Instruction* op : i->operands) mark(op);
  };
  if (root_) mark(root_);
  for (const auto& i : owned_)
    if (has_trait(i->opcode, kSideEffects)) mark(i.get());
  auto dead = std::remove_if(owned_.begin(), owned_.end(),
                             [&](const auto& i) { return !live.count(i.get()); });
  int removed = static_cast<int>(owned_.end() - dead);
  owned_.erase(dead, owned_.end());
  return removed;
}

Computation* Module::add_computation(std::string name_hint, bool entry) {
  computations_.push_back(std::make_unique<Computation>(this, unique_name(name_hint)));
  if (entry) entry_ = computations_.back().get();
  return computations_.back().get();
}

std::vector<Computation*> Module::computations() const {
  std::vector<Computation*> out;
  for (const auto& c : computations_) out.push_back(c.get());
  return out;
}

void Module::remove_computation(Computation* computation) {
  JX_CHECK(computation != entry_, "the entry computation cannot be removed");
  std::erase_if(computations_, [&](const auto& c) { return c.get() == computation; });
}

std::string Module::unique_name(std::string_view hint) {
  return std::string(hint) + "." + std::to_string(next_id_++);
}

void Module::reserve_name(std::string_view name) {
  auto dot = name.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == name.size() || name.size() - dot > 10) return;
  int id = 0;
  for (char c : name.substr(dot + 1)) {
    if (c < '0' || c > '9') return;
    id = id * 10 + (c - '0');
  }
  next_id_ = std::max(next_id_, id + 1);
}

std::vector<Computation*> program_computations(const Module& module) {
  std::vector<Computation*> out;
  std::function<void(Computation*)> visit = [&](Computation* c) {
    if (std::find(out.begin(), out.end(), c) != out.end()) return;
    out.push_back(c);
    for (const Instruction* i : c->owned())
      if (runs_as(i->opcode) == RunsAs::kNested)
        for (Computation* callee : i->called) visit(callee);
  };
  visit(module.entry());
  return out;
}

std::optional<double> splat(const Instruction* i) {
  if (i->opcode == Opcode::kBroadcast) i = i->operands[0];
  if (i->opcode != Opcode::kConstant || i->literal->size() == 0) return std::nullopt;
  std::optional<Array> v = splat_value(*i->literal);
  if (!v) return std::nullopt;
  return v->to_vector<double>()[0];
}

std::optional<Opcode> binary_combiner(const Computation& f) {
  const Instruction* r = f.root();
  const std::vector<Instruction*>& p = f.parameters();
  if (!r || p.size() != 2 || r->operands.size() != 2) return std::nullopt;
  bool both = (r->operands[0] == p[0] && r->operands[1] == p[1]) ||
              (r->operands[0] == p[1] && r->operands[1] == p[0]);
  return both ? std::optional(r->opcode) : std::nullopt;
}

bool never_positive(const Instruction& x) {
  // Floats only: an integer difference may wrap.
  if (x.opcode != Opcode::kSubtract || !is_floating(x.shape.dtype) ||
      x.operands[1]->opcode != Opcode::kBroadcast)
    return false;
  const Instruction* a = x.operands[0];
  const Instruction& broadcast = *x.operands[1];
  const Instruction& m = *broadcast.operands[0];
  if (m.opcode != Opcode::kReduce || m.operands.size() != 2 || m.operands[0] != a ||
      binary_combiner(*m.called[0]) != Opcode::kMaximum)
    return false;
  // The broadcast puts m's dims, a's kept ones in order, back where they were in a.
  const std::vector<std::int64_t>& reduced = m.attrs.get_ints("dimensions");
  std::vector<std::int64_t> kept;
  for (std::int64_t d = 0; d < a->shape.rank(); ++d)
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(d);
  return broadcast.attrs.get_ints("dimensions") == kept;
}

}  // namespace jx::hlo
