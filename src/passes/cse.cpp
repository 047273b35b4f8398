// Common subexpression elimination: one walk per computation in operand-before-user order,
// so merging operands first lets their users merge too.
#include "passes/cse.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <unordered_map>

#include "core/array_impl.hpp"

namespace jx::passes {
namespace {

using hlo::Instruction;

// Equal literals: same dtype, dims and bytes (so -0.0 and 0.0 stay apart, equal NaNs merge).
bool same_literal(const std::optional<Array>& a, const std::optional<Array>& b) {
  if (!a || !b) return !a && !b;
  if (a->dtype() != b->dtype() || a->shape() != b->shape()) return false;
  const Buffer& x = concrete_buffer(*a, "cse");
  const Buffer& y = concrete_buffer(*b, "cse");
  return x.nbytes() == y.nbytes() && std::memcmp(x.data(), y.data(), x.nbytes()) == 0;
}

bool same(const Instruction& a, const Instruction& b) {
  return a.opcode == b.opcode && a.operands == b.operands && a.shape == b.shape &&
         a.attrs == b.attrs && a.called == b.called && same_literal(a.literal, b.literal);
}

std::size_t hash_of(const Instruction& i) {
  std::size_t h = std::hash<int>{}(static_cast<int>(i.opcode));
  auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (const Instruction* op : i.operands) mix(std::hash<const void*>{}(op));
  for (std::int64_t d : i.shape.dims) mix(std::hash<std::int64_t>{}(d));
  if (i.literal) {
    const Buffer& b = concrete_buffer(*i.literal, "cse");
    mix(std::hash<std::string_view>{}(
        std::string_view(static_cast<const char*>(b.data()), b.nbytes())));
  }
  return h;
}

bool mergeable(const Instruction& i) {
  return i.opcode != hlo::Opcode::kParameter && !hlo::has_trait(i.opcode, hlo::kSideEffects);
}

}  // namespace

bool Cse::run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : module.computations()) {
    std::unordered_multimap<std::size_t, Instruction*> seen;
    bool merged = false;
    for (Instruction* inst : c->instructions()) {
      if (!mergeable(*inst)) continue;
      std::size_t h = hash_of(*inst);
      auto [first, last] = seen.equal_range(h);
      auto match = std::find_if(first, last, [&](const auto& e) { return same(*e.second, *inst); });
      if (match == last) {
        seen.emplace(h, inst);
        continue;
      }
      c->replace_all_uses(inst, match->second);
      merged = true;
    }
    if (merged) c->remove_unreachable();
    changed |= merged;
  }
  return changed;
}

}  // namespace jx::passes
