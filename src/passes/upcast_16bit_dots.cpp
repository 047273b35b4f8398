#include "passes/upcast_16bit_dots.hpp"

#include "hlo/builder.hpp"

namespace jx::passes {

using hlo::Instruction;
using hlo::Opcode;

bool Upcast16BitDots::run(hlo::Module& module) {
  return replace_each(module, Opcode::kDot, [&](hlo::Builder& b, Instruction& dot) {
    if (!k16BitFloating.contains(dot.operands[0]->shape.dtype))
      return static_cast<Instruction*>(nullptr);
    hlo::HloShape wide = dot.shape;
    wide.dtype = float32;
    Instruction* product = b.op(Opcode::kDot, wide, dot.operands, dot.attrs);
    if (!reads_16bit_ || !reads_16bit_(*product))  // left unreachable
      product = b.op(Opcode::kDot, wide,
                     {b.convert(dot.operands[0], float32), b.convert(dot.operands[1], float32)},
                     dot.attrs);
    return dot.shape.dtype == float32 ? product : b.convert(product, dot.shape.dtype);
  });
}

}  // namespace jx::passes
