#include "passes/splat_constants.hpp"

#include <cstring>

#include "core/array_impl.hpp"
#include "hlo/builder.hpp"

namespace jx::passes {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// The first element as a 0-d array, when every element has its bytes.
std::optional<Array> splat_value(const Array& literal) {
  const auto* bytes = static_cast<const unsigned char*>(concrete_buffer(literal, "splat").data());
  std::size_t item = itemsize(literal.dtype());
  auto n = static_cast<std::size_t>(literal.size());
  for (std::size_t k = 1; k < n; ++k)
    if (std::memcmp(bytes, bytes + k * item, item) != 0) return std::nullopt;
  Array scalar = make_array(ShapedArray{{}, literal.dtype(), false});
  std::memcpy(scalar.impl()->buffer->data(), bytes, item);
  return scalar;
}

}  // namespace

bool SplatConstants::run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : module.computations()) {
    hlo::Builder b(c);
    for (Instruction* i : c->instructions()) {
      if (i->opcode != Opcode::kConstant || i->shape.rank() == 0 || i->shape.size() < 2) continue;
      std::optional<Array> value = splat_value(*i->literal);
      if (!value) continue;
      c->replace_all_uses(i, b.broadcast(b.constant(*value), i->shape.dims, {}));
      changed = true;
    }
    if (changed) c->remove_unreachable();
  }
  return changed;
}

}  // namespace jx::passes
