// The portable MathTable: vector_math's branch-free functions where it has them, the emitters of
// portable_math_*.cpp for the rest, and the intrinsics that every target lowers to instructions.
#include "codegen/elemental/portable_math.hpp"

#include "codegen/elemental/math_table.hpp"
#include "codegen/elemental/portable_math_ir.hpp"
#include "codegen/elemental/vector_math.hpp"

namespace jx::codegen {

const MathTable& portable_math_table() {
  namespace I = llvm::Intrinsic;
  namespace vm = vector_math;
  namespace pm = portable_math;
  static const MathTable table =
      MathTable()
          .set(MathFn::kExp, {.emit_f32 = vm::exp_f32, .emit_f64 = vm::exp_f64})
          .set(MathFn::kExpNonPositive, {.emit_f32 = vm::exp_f32, .emit_f64 = vm::exp_f64})
          .set(MathFn::kLog, {.emit_f32 = vm::log_f32, .emit_f64 = vm::log_f64})
          .set(MathFn::kLog1p, {.emit_f32 = pm::log1p_f32, .emit_f64 = pm::log1p_f64})
          .set(MathFn::kExpm1, {.emit_f32 = pm::expm1_f32, .emit_f64 = pm::expm1_f64})
          .set(MathFn::kSin, {.emit_f32 = vm::sin_f32, .emit_f64 = pm::sin_f64})
          .set(MathFn::kCos, {.emit_f32 = vm::cos_f32, .emit_f64 = pm::cos_f64})
          .set(MathFn::kTan, {.emit_f32 = pm::tan_f32, .emit_f64 = pm::tan_f64})
          .set(MathFn::kTanh, {.emit_f32 = vm::tanh_f32, .emit_f64 = pm::tanh_f64})
          .set(MathFn::kSqrt, {I::sqrt})
          .set(MathFn::kPow, {.emit_f32 = pm::pow_f32, .emit_f64 = pm::pow_f64})
          .set(MathFn::kFloor, {I::floor})
          .set(MathFn::kCeil, {I::ceil})
          .set(MathFn::kRound, {I::round})
          .set(MathFn::kRoundEven, {I::roundeven})
          .set(MathFn::kFabs, {I::fabs})
          .set(MathFn::kErf, {.emit_f32 = vm::erf_f32, .emit_f64 = pm::erf_f64})
          .set(MathFn::kAtan2, {.emit_f32 = pm::atan2_f32, .emit_f64 = pm::atan2_f64})
          .set(MathFn::kMaximum, {I::maximum})
          .set(MathFn::kMinimum, {I::minimum})
          .set(MathFn::kExp2, {.emit_f32 = pm::exp2_f32, .emit_f64 = pm::exp2_f64})
          .set(MathFn::kCbrt, {.emit_f32 = pm::cbrt_f32, .emit_f64 = pm::cbrt_f64})
          .set(MathFn::kAsin, {.emit_f32 = pm::asin_f32, .emit_f64 = pm::asin_f64})
          .set(MathFn::kAcos, {.emit_f32 = pm::acos_f32, .emit_f64 = pm::acos_f64})
          .set(MathFn::kAtan, {.emit_f32 = pm::atan_f32, .emit_f64 = pm::atan_f64})
          .set(MathFn::kSinh, {.emit_f32 = pm::sinh_f32, .emit_f64 = pm::sinh_f64})
          .set(MathFn::kCosh, {.emit_f32 = pm::cosh_f32, .emit_f64 = pm::cosh_f64})
          .set(MathFn::kAsinh, {.emit_f32 = pm::asinh_f32, .emit_f64 = pm::asinh_f64})
          .set(MathFn::kAcosh, {.emit_f32 = pm::acosh_f32, .emit_f64 = pm::acosh_f64})
          .set(MathFn::kAtanh, {.emit_f32 = pm::atanh_f32, .emit_f64 = pm::atanh_f64});
  return table;
}

}  // namespace jx::codegen
