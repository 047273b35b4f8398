#include "passes/fusion/multi_output_fusion.hpp"

#include <optional>

#include "hlo/fusion.hpp"
#include "passes/fusion/kernels.hpp"
#include "passes/fusion/outline.hpp"

namespace jx::passes {

using hlo::Instruction;
using hlo::Opcode;

namespace {

bool same_loop_nest(const Instruction& a, const Instruction& b) {
  std::optional<Shape> dims = hlo::common_output_dims(a);
  return dims && !dims->empty() && dims == hlo::common_output_dims(b);
}

// A consumer fusion that reads the loop fusion `p` once per element, over p's shape, where p
// also has other users none of which leads to the consumer.
Instruction* consumer_to_join(const hlo::Computation& entry, const hlo::UserIndex& users_of,
                              Instruction& p) {
  if (p.opcode != Opcode::kFusion || p.shape.is_tuple || p.attrs.get_string("kind") != "kLoop")
    return nullptr;
  const std::vector<Instruction*>& users = users_of(&p);
  if (users.size() < 2 && &p != entry.root()) return nullptr;
  for (Instruction* c : users) {
    if (c->opcode != Opcode::kFusion || !same_loop_nest(p, *c) || fusion::computes_prefix_scan(*c))
      continue;
    bool once = true;
    for (std::size_t k = 0; k < c->operands.size(); ++k)
      if (c->operands[k] == &p) once &= fusion::reads_once(*c, k);
    bool other_path = false;
    for (const Instruction* u : users) other_path |= u != c && fusion::reaches(users_of, u, c);
    if (once && !other_path) return c;
  }
  return nullptr;
}

// Another kernel sharing a large operand with `a`, over the same loop nest, with no path
// between the two.
Instruction* sibling_of(const hlo::UserIndex& users, Instruction& a) {
  if (!fusion::is_kernel(a) || fusion::computes_prefix_scan(a)) return nullptr;
  for (const Instruction* x : a.operands) {
    if (x->shape.is_tuple || x->shape.byte_size() < MultiOutputFusion::kMinSharedBytes) continue;
    for (Instruction* b : users(x)) {
      if (b == &a || !fusion::is_kernel(*b) || fusion::computes_prefix_scan(*b) ||
          !same_loop_nest(a, *b))
        continue;
      if (!fusion::reaches(users, &a, b) && !fusion::reaches(users, b, &a)) return b;
    }
  }
  return nullptr;
}

}  // namespace

bool MultiOutputFusion::run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* entry : hlo::program_computations(module))
    changed |=
        fusion::rewrite_to_fixed_point(*entry, [&](Instruction* i, const hlo::UserIndex& users) {
          Instruction* partner = consumer_to_join(*entry, users, *i);
          if (!partner) partner = sibling_of(users, *i);
          if (!partner) return false;
          fusion::outline(*entry, {{i, partner}, {}});
          return true;
        });
  return changed;
}

}  // namespace jx::passes
