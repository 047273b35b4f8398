#include "passes/fusion/fusion_merger.hpp"

#include <cstdint>

#include "passes/fusion/instruction_fusion.hpp"
#include "passes/fusion/kernels.hpp"
#include "passes/fusion/outline.hpp"

namespace jx::passes {

using hlo::Instruction;
using hlo::Opcode;

namespace {

std::int64_t body_size(const Instruction& fusion) {
  return static_cast<std::int64_t>(fusion.called.front()->owned().size());
}

bool mergeable(const hlo::Computation& entry, const hlo::UserIndex& users_of,
               const Instruction& f) {
  if (f.opcode != Opcode::kFusion || f.shape.is_tuple || &f == entry.root() ||
      f.attrs.get_string("kind") != "kLoop")
    return false;
  const std::vector<Instruction*>& users = users_of(&f);
  if (users.empty()) return false;
  // A merged body stays within kMaxMergedSize instructions: it bounds a kernel's compile time
  // and the depth of the emitter's walk over the body (a chain of 30,000 elementwise ops, merged
  // whole, overflowed an 8 MiB stack).
  const std::int64_t room = FusionMerger::kMaxMergedSize - body_size(f);
  for (const Instruction* u : users)
    if (u->opcode != Opcode::kFusion || body_size(*u) > room) return false;
  if (!fusion::has_costly_ops(f))
    return users.size() <= static_cast<std::size_t>(InstructionFusion::kMaxDuplication);
  if (users.size() != 1) return false;
  for (std::size_t k = 0; k < users[0]->operands.size(); ++k)
    if (users[0]->operands[k] == &f && !fusion::reads_once(*users[0], k)) return false;
  return true;
}

}  // namespace

bool FusionMerger::run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* entry : hlo::program_computations(module))
    changed |=
        fusion::rewrite_to_fixed_point(*entry, [&](Instruction* f, const hlo::UserIndex& users) {
          if (!mergeable(*entry, users, *f)) return false;
          for (Instruction* u : users(f)) fusion::outline(*entry, {{f, u}, {f}});
          return true;
        });
  return changed;
}

}  // namespace jx::passes
