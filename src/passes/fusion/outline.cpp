#include "passes/fusion/outline.hpp"

#include <algorithm>
#include <functional>
#include <unordered_map>

#include "support/check.hpp"

namespace jx::passes::fusion {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

namespace {

// Copies members into a new computation, mapping outside operands to parameters.
class Cloner {
 public:
  Cloner(hlo::Module& module) : fused_(module.add_computation("fused_computation")) {}

  Computation* computation() const { return fused_; }
  const std::vector<Instruction*>& operands() const { return operands_; }

  // The fused computation's value for `i`, an entry instruction or a member's instruction.
  Instruction* value(Instruction* i) {
    if (auto it = map_.find(i); it != map_.end()) return it->second;
    auto p = std::make_unique<Instruction>();
    p->opcode = Opcode::kParameter;
    p->shape = i->shape;
    p->parameter_number = static_cast<std::int64_t>(operands_.size());
    operands_.push_back(i);
    return map_[i] = fused_->add(std::move(p), "param");
  }

  void add_member(Instruction* m) {
    if (m->opcode == Opcode::kFusion) return inline_fusion(m);
    if (m->opcode == Opcode::kGetTupleElement && map_.count(m->operands[0]) &&
        map_.at(m->operands[0])->opcode == Opcode::kTuple) {
      map_[m] =
          map_.at(m->operands[0])->operands.at(static_cast<std::size_t>(m->attrs.get_int("index")));
      return;
    }
    map_[m] = copy(*m, [&](Instruction* op) { return value(op); });
  }

 private:
  Instruction* copy(const Instruction& m,
                    const std::function<Instruction*(Instruction*)>& operand) {
    auto c = std::make_unique<Instruction>();
    c->opcode = m.opcode;
    c->shape = m.shape;
    c->attrs = m.attrs;
    c->called = m.called;
    c->literal = m.literal;
    for (Instruction* op : m.operands) c->operands.push_back(operand(op));
    std::string hint(hlo::info(m.opcode).name);
    return fused_->add(std::move(c), hint);
  }

  // A fused member's body is copied in, its parameters bound to the member's operands.
  void inline_fusion(Instruction* m) {
    const Computation& body = *m->called.at(0);
    std::unordered_map<const Instruction*, Instruction*> inner;
    for (Instruction* i : body.instructions()) {
      if (i->opcode == Opcode::kParameter) {
        inner[i] = value(m->operands.at(static_cast<std::size_t>(i->parameter_number)));
        continue;
      }
      inner[i] = copy(*i, [&](Instruction* op) { return inner.at(op); });
    }
    map_[m] = inner.at(body.root());
  }

  Computation* fused_;
  std::vector<Instruction*> operands_;
  std::unordered_map<const Instruction*, Instruction*> map_;
};

// The members' values read outside the group: (member, element) with element -1 for arrays.
struct Output {
  Instruction* member;
  int element;
  std::vector<Instruction*> readers;  // get-tuple-elements standing for an element
};

std::vector<Output> outputs_of(const Computation& entry, const Group& group,
                               const std::unordered_set<const Instruction*>& members) {
  hlo::UserIndex users_of(entry);
  std::vector<Output> out;
  for (Instruction* m : group.members) {
    if (group.duplicated.count(m)) continue;
    bool used_outside = m == entry.root();
    const std::vector<Instruction*>& users = users_of(m);
    for (Instruction* u : users) used_outside |= !members.count(u);
    if (!used_outside) continue;
    if (!m->shape.is_tuple) {
      out.push_back({m, -1, {}});
      continue;
    }
    JX_CHECK(m->opcode == Opcode::kFusion && m != entry.root());
    for (std::size_t e = 0; e < m->shape.tuple_shapes.size(); ++e) {
      Output o{m, static_cast<int>(e), {}};
      for (Instruction* u : users)
        if (!members.count(u) && u->opcode == Opcode::kGetTupleElement &&
            u->attrs.get_int("index") == static_cast<std::int64_t>(e))
          o.readers.push_back(u);
      if (!o.readers.empty()) out.push_back(o);
    }
  }
  return out;
}

std::string kind_of(const Computation& fused, const std::vector<Instruction*>& roots) {
  for (const Instruction* r : roots)
    if (hlo::has_trait(r->opcode, hlo::kReduction)) return "kInput";
  for (const Instruction* i : fused.owned())
    if (hlo::has_trait(i->opcode, hlo::kContraction)) return "kOutput";
  return "kLoop";
}

}  // namespace

Instruction* outline(Computation& entry, const Group& group) {
  std::unordered_set<const Instruction*> members(group.members.begin(), group.members.end());
  std::vector<Instruction*> order;  // members, operands first
  for (Instruction* i : entry.instructions())
    if (members.count(i)) order.push_back(i);
  std::vector<Output> outputs = outputs_of(entry, group, members);
  JX_CHECK(!outputs.empty(), "a fusion group computes nothing used outside it");

  Cloner cloner(*entry.module());
  for (Instruction* m : order) cloner.add_member(m);
  Computation* fused = cloner.computation();
  std::vector<Instruction*> roots;
  for (const Output& o : outputs) {
    Instruction* v = cloner.value(o.member);
    roots.push_back(o.element < 0 ? v : v->operands.at(static_cast<std::size_t>(o.element)));
  }
  if (roots.size() == 1) {
    fused->set_root(roots[0]);
  } else {
    auto tuple = std::make_unique<Instruction>();
    tuple->opcode = Opcode::kTuple;
    std::vector<hlo::HloShape> shapes;
    for (Instruction* r : roots) shapes.push_back(r->shape);
    tuple->shape = hlo::HloShape::tuple(std::move(shapes));
    tuple->operands = roots;
    fused->set_root(fused->add(std::move(tuple), "tuple"));
  }

  auto f = std::make_unique<Instruction>();
  f->opcode = Opcode::kFusion;
  f->shape = fused->root()->shape;
  f->operands = cloner.operands();
  f->called = {fused};
  f->attrs.set("kind", kind_of(*fused, roots));
  Instruction* fusion = entry.add(std::move(f), "fusion");

  for (std::size_t k = 0; k < outputs.size(); ++k) {
    Instruction* value = fusion;
    if (outputs.size() > 1) {
      auto g = std::make_unique<Instruction>();
      g->opcode = Opcode::kGetTupleElement;
      g->shape = roots[k]->shape;
      g->operands = {fusion};
      g->attrs.set("index", static_cast<std::int64_t>(k));
      value = entry.add(std::move(g), "get-tuple-element");
    }
    const Output& o = outputs[k];
    if (o.element < 0) entry.replace_all_uses(o.member, value);
    for (Instruction* reader : o.readers) entry.replace_all_uses(reader, value);
  }
  fused->remove_unreachable();
  entry.remove_unreachable();
  return fusion;
}

bool rewrite_to_fixed_point(
    Computation& entry, const std::function<bool(Instruction*, const hlo::UserIndex&)>& rewrite) {
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    hlo::UserIndex users(entry);
    for (Instruction* i : entry.instructions())
      if (rewrite(i, users)) {
        changed = again = true;
        break;  // the walk's instructions may be gone
      }
  }
  return changed;
}

bool reaches(const hlo::UserIndex& users, const Instruction* from, const Instruction* to) {
  std::unordered_set<const Instruction*> seen;
  std::vector<const Instruction*> stack{from};
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    for (const Instruction* u : users(i)) {
      if (u == to) return true;
      if (seen.insert(u).second) stack.push_back(u);
    }
  }
  return false;
}

bool is_expensive(Opcode op) {
  return hlo::has_trait(op, hlo::kTranscendental) || op == Opcode::kDivide ||
         op == Opcode::kRemainder || hlo::loops_per_element(op);
}

bool has_costly_ops(const Instruction& inst) {
  if (inst.opcode != Opcode::kFusion) return is_expensive(inst.opcode);
  const auto& body = inst.called[0]->owned();
  return std::any_of(body.begin(), body.end(),
                     [](const Instruction* i) { return is_expensive(i->opcode); });
}

}  // namespace jx::passes::fusion
