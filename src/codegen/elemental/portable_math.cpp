#include "codegen/elemental/portable_math.hpp"

#include "codegen/elemental/vector_math.hpp"

namespace jx::codegen {

const MathTable& portable_math_table() {
  namespace I = llvm::Intrinsic;
  namespace vm = vector_math;
  static const MathTable table =
      MathTable()
          .set(MathFn::kExp, {.emit_f32 = vm::exp_f32, .emit_f64 = vm::exp_f64})
          .set(MathFn::kLog, {.emit_f32 = vm::log_f32, .emit_f64 = vm::log_f64})
          .set(MathFn::kSin, {.emit_f32 = vm::sin_f32})
          .set(MathFn::kCos, {.emit_f32 = vm::cos_f32})
          .set(MathFn::kTanh, {.emit_f32 = vm::tanh_f32})
          .set(MathFn::kErf, {.emit_f32 = vm::erf_f32})
          .set(MathFn::kSqrt, {I::sqrt})
          .set(MathFn::kFloor, {I::floor})
          .set(MathFn::kCeil, {I::ceil})
          .set(MathFn::kRound, {I::round})
          .set(MathFn::kRoundEven, {I::roundeven})
          .set(MathFn::kFabs, {I::fabs})
          .set(MathFn::kMaximum, {I::maximum})
          .set(MathFn::kMinimum, {I::minimum});
  return table;
}

}  // namespace jx::codegen
