// The HLO verifier: structure (roots, parameters, operands, cycles, calls), then each
// instruction's rule (verifier_rules.cpp). Throws jx::CompileError "HLO verifier: <name>: <what>".
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hlo/ir.hpp"
#include "hlo/verifier_rules.hpp"

namespace jx::hlo {
namespace {

using verifier::check_instruction;
using verifier::fail;

void check_computation(const Computation& c, const std::unordered_set<const Computation*>& comps,
                       std::unordered_set<std::string>& names) {
  std::vector<Instruction*> owned = c.owned();
  std::unordered_set<const Instruction*> mine(owned.begin(), owned.end());
  std::string who = "%" + c.name();
  if (!c.root()) fail(who, "computation has no root");
  if (!mine.count(c.root())) fail(who, "root %" + c.root()->name + " is not in the computation");
  const auto& params = c.parameters();
  for (std::size_t k = 0; k < params.size(); ++k)
    if (!params[k] || params[k]->opcode != Opcode::kParameter ||
        params[k]->parameter_number != static_cast<std::int64_t>(k) || !mine.count(params[k]))
      fail(who, "parameter numbers must be dense: no parameter(" + std::to_string(k) + ")");
  for (const Instruction* i : owned) {
    if (!names.insert(i->name).second) fail(*i, "the name is used twice in the module");
    if (i->opcode == Opcode::kParameter &&
        (i->parameter_number < 0 ||
         static_cast<std::size_t>(i->parameter_number) >= params.size() ||
         params[i->parameter_number] != i))
      fail(*i, "parameter(" + std::to_string(i->parameter_number) + ") is not its computation's");
    for (std::size_t k = 0; k < i->operands.size(); ++k) {
      const Instruction* op = i->operands[k];
      if (!op) fail(*i, "operand " + std::to_string(k) + " is null");
      if (!mine.count(op)) fail(*i, "operand %" + op->name + " is not in computation %" + c.name());
    }
  }
  // Cycles: depth-first over operands, with the path on a stack of colors.
  std::unordered_map<const Instruction*, int> color;  // 1: on the path, 2: done
  std::function<void(const Instruction*)> visit = [&](const Instruction* i) {
    int& state = color[i];
    if (state == 2) return;
    if (state == 1) fail(*i, "is part of a cycle");
    state = 1;
    for (const Instruction* op : i->operands) visit(op);
    color[i] = 2;
  };
  for (const Instruction* i : owned) visit(i);
  for (const Instruction* i : owned) check_instruction(*i, comps);
}

}  // namespace

void verify(const Module& module) {
  if (!module.entry()) fail("module " + module.name(), "no ENTRY computation");
  std::vector<Computation*> all = module.computations();
  std::unordered_set<const Computation*> comps(all.begin(), all.end());
  if (!comps.count(module.entry())) fail("module " + module.name(), "ENTRY is not in the module");
  std::unordered_set<std::string> names;
  for (const Computation* c : all) check_computation(*c, comps, names);
  // Calls must not recurse (the callees form a DAG).
  std::unordered_map<const Computation*, int> color;
  std::function<void(const Computation*)> visit = [&](const Computation* c) {
    int& state = color[c];
    if (state == 2) return;
    if (state == 1) fail("%" + c->name(), "computation calls itself");
    state = 1;
    for (const Instruction* i : c->owned())
      for (const Computation* callee : i->called) visit(callee);
    color[c] = 2;
  };
  for (const Computation* c : all) visit(c);
}

}  // namespace jx::hlo
