#include "passes/upcast_16bit_dots.hpp"

#include "hlo/builder.hpp"

namespace jx::passes {

using hlo::Instruction;
using hlo::Opcode;

bool Upcast16BitDots::run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : module.computations()) {
    hlo::Builder b(c);
    for (Instruction* dot : c->instructions()) {
      if (dot->opcode != Opcode::kDot) continue;
      DType in = dot->operands[0]->shape.dtype;
      if (!k16BitFloating.contains(in)) continue;
      hlo::HloShape wide = dot->shape;
      wide.dtype = float32;
      Instruction* product = b.op(Opcode::kDot, wide, dot->operands, dot->attrs);
      if (!reads_16bit_ || !reads_16bit_(*product))  // left unreachable
        product = b.op(Opcode::kDot, wide,
                       {b.convert(dot->operands[0], float32), b.convert(dot->operands[1], float32)},
                       dot->attrs);
      c->replace_all_uses(
          dot, dot->shape.dtype == float32 ? product : b.convert(product, dot->shape.dtype));
      changed = true;
    }
    if (changed) c->remove_unreachable();
  }
  return changed;
}

}  // namespace jx::passes
