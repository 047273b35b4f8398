// Scalar emitters of the unary elementwise opcodes (math functions, negate, abs, sign, not) and
// of convert. Semantics follow the eager impls in src/primitives/unary.cpp and convert.cpp.
#include <string>

#include "codegen/elemental/elemental.hpp"
#include "jx/errors.hpp"

namespace jx::codegen {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using Values = llvm::ArrayRef<llvm::Value*>;

DType operand_dtype(const Instruction& inst) { return inst.operands[0]->shape.dtype; }

void require_float(const Instruction& inst) {
  DType d = operand_dtype(inst);
  if (!is_floating(d))
    throw CompileError("codegen: " + std::string(hlo::info(inst.opcode).name) +
                       " needs a floating dtype, got " + std::string(hlo::hlo_type_name(d)));
}

// Opcodes that are exactly one math function of a float.
struct MathOp {
  Opcode op;
  MathFn fn;
};
constexpr MathOp kMathOps[] = {
    {Opcode::kExp, MathFn::kExp},
    {Opcode::kLog, MathFn::kLog},
    {Opcode::kLog1p, MathFn::kLog1p},
    {Opcode::kExpm1, MathFn::kExpm1},
    {Opcode::kSin, MathFn::kSin},
    {Opcode::kCos, MathFn::kCos},
    {Opcode::kTan, MathFn::kTan},
    {Opcode::kTanh, MathFn::kTanh},
    {Opcode::kSqrt, MathFn::kSqrt},
    {Opcode::kFloor, MathFn::kFloor},
    {Opcode::kCeil, MathFn::kCeil},
    {Opcode::kRoundAfz, MathFn::kRound},
    {Opcode::kRoundEven, MathFn::kRoundEven},
    {Opcode::kErf, MathFn::kErf},
    {Opcode::kExp2, MathFn::kExp2},
    {Opcode::kCbrt, MathFn::kCbrt},
    {Opcode::kAsin, MathFn::kAsin},
    {Opcode::kAcos, MathFn::kAcos},
    {Opcode::kAtan, MathFn::kAtan},
    {Opcode::kSinh, MathFn::kSinh},
    {Opcode::kCosh, MathFn::kCosh},
    {Opcode::kAsinh, MathFn::kAsinh},
    {Opcode::kAcosh, MathFn::kAcosh},
    {Opcode::kAtanh, MathFn::kAtanh},
};

llvm::Value* emit_math(ElementalEmitter& em, const Instruction& inst, Values x) {
  require_float(inst);
  if (inst.opcode == Opcode::kExp && hlo::never_positive(*inst.operands[0]))
    return em.math().call(em.b(), MathFn::kExpNonPositive, x);
  for (const MathOp& m : kMathOps)
    if (m.op == inst.opcode) return em.math().call(em.b(), m.fn, x);
  throw CompileError("codegen: no math function for " + std::string(hlo::info(inst.opcode).name));
}

llvm::Value* emit_negate(ElementalEmitter& em, const Instruction& inst, Values x) {
  return is_floating(operand_dtype(inst)) ? em.b().CreateFNeg(x[0]) : em.b().CreateNeg(x[0]);
}

// 1 / (1 + e) for x >= 0 and e / (1 + e) below, with e = exp(-|x|): e never overflows, so large
// negative x gives its tiny (possibly subnormal) result rather than 0.
llvm::Value* emit_logistic(ElementalEmitter& em, const Instruction& inst, Values x) {
  require_float(inst);
  auto& b = em.b();
  llvm::Type* t = x[0]->getType();
  llvm::Value* one = llvm::ConstantFP::get(t, 1.0);
  llvm::Value* a = em.math().call(b, MathFn::kFabs, x);
  llvm::Value* e = em.math().call(b, MathFn::kExp, {b.CreateFNeg(a)});
  llvm::Value* numerator =
      b.CreateSelect(b.CreateFCmpOGE(x[0], llvm::ConstantFP::get(t, 0.0)), one, e);
  return b.CreateFDiv(numerator, b.CreateFAdd(one, e));
}

llvm::Value* emit_rsqrt(ElementalEmitter& em, const Instruction& inst, Values x) {
  require_float(inst);
  llvm::Value* one = llvm::ConstantFP::get(x[0]->getType(), 1.0);
  return em.b().CreateFDiv(one, em.math().call(em.b(), MathFn::kSqrt, x));
}

llvm::Value* emit_abs(ElementalEmitter& em, const Instruction& inst, Values x) {
  DType d = operand_dtype(inst);
  if (is_floating(d)) return em.math().call(em.b(), MathFn::kFabs, x);
  if (d == bool_ || is_unsigned(d)) return x[0];
  // abs(INT_MIN) = INT_MIN: the wrapping result, not poison.
  return em.b().CreateBinaryIntrinsic(llvm::Intrinsic::abs, x[0], em.b().getFalse());
}

// -1, 0 or 1 by the sign of x; sign(NaN) = NaN and sign(-0.0) = +0.0, as the eager impl.
llvm::Value* emit_sign(ElementalEmitter& em, const Instruction& inst, Values x) {
  auto& b = em.b();
  DType d = operand_dtype(inst);
  llvm::Type* t = x[0]->getType();
  if (d == bool_) return x[0];
  if (is_floating(d)) {
    llvm::Value* zero = llvm::ConstantFP::get(t, 0.0);
    llvm::Value* s = b.CreateSelect(
        b.CreateFCmpOGT(x[0], zero), llvm::ConstantFP::get(t, 1.0),
        b.CreateSelect(b.CreateFCmpOLT(x[0], zero), llvm::ConstantFP::get(t, -1.0), zero));
    return b.CreateSelect(b.CreateFCmpUNO(x[0], x[0]), x[0], s);
  }
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  if (is_unsigned(d)) return b.CreateZExt(b.CreateICmpNE(x[0], zero), t);
  return b.CreateSelect(
      b.CreateICmpSGT(x[0], zero), llvm::ConstantInt::get(t, 1),
      b.CreateSelect(b.CreateICmpSLT(x[0], zero), llvm::ConstantInt::getSigned(t, -1), zero));
}

// |x| != inf, ordered: false for NaN.
llvm::Value* emit_is_finite(ElementalEmitter& em, const Instruction& inst, Values x) {
  require_float(inst);
  llvm::Value* a = em.math().call(em.b(), MathFn::kFabs, x);
  return em.b().CreateFCmpONE(a, llvm::ConstantFP::getInfinity(x[0]->getType()));
}

llvm::Value* emit_not(ElementalEmitter& em, const Instruction& inst, Values x) {
  if (is_floating(operand_dtype(inst)))
    throw CompileError("codegen: not needs an integer or pred dtype");
  return em.b().CreateNot(x[0]);  // logical on pred (i1), bitwise on integers
}

llvm::Value* emit_convert_op(ElementalEmitter& em, const Instruction& inst, Values x) {
  return emit_convert(em.b(), x[0], operand_dtype(inst), inst.shape.dtype);
}

// d rounded to float toward zero, with the lowest bit set when that was inexact ("round to
// odd"): rounding this float to nearest even at 16 bits gives d's own nearest-even rounding,
// where rounding d to float first could round twice.
llvm::Value* round_to_odd_f32(llvm::IRBuilder<>& b, llvm::Value* d) {
  llvm::Value* f = b.CreateFPTrunc(d, b.getFloatTy());
  llvm::Value* back = b.CreateFPExt(f, d->getType());
  llvm::Value* bits = b.CreateBitCast(f, b.getInt32Ty());
  auto fabs = [&](llvm::Value* x) { return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); };
  llvm::Value* rounded_away = b.CreateFCmpOGT(fabs(back), fabs(d));
  llvm::Value* truncated = b.CreateSelect(rounded_away, b.CreateSub(bits, b.getInt32(1)), bits);
  llvm::Value* odd = b.CreateOr(truncated, b.getInt32(1));
  return b.CreateBitCast(b.CreateSelect(b.CreateFCmpONE(back, d), odd, bits), b.getFloatTy());
}

// A 64-bit integer as a float rounded to odd: its leading 24 significant bits, the lowest set
// when any bit below them is. Rounding that float to 16 bits gives the integer's own rounding,
// where going through float64 could first round onto a tie (past 2^53).
llvm::Value* int64_round_to_odd_f32(llvm::IRBuilder<>& b, llvm::Value* v, bool is_signed) {
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Value* zero = llvm::ConstantInt::get(i64, 0);
  llvm::Value* negative = is_signed ? b.CreateICmpSLT(v, zero) : b.getFalse();
  // |v| as unsigned: INT64_MIN gives 2^63.
  llvm::Value* m = is_signed ? b.CreateSelect(negative, b.CreateNeg(v), v) : v;
  llvm::Value* lz = b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, m, b.getFalse());
  // m has 64 - lz significant bits: drop max(0, 40 - lz) of them.
  llvm::Value* forty = llvm::ConstantInt::get(i64, 40);
  llvm::Value* shift = b.CreateSelect(b.CreateICmpULT(lz, forty), b.CreateSub(forty, lz), zero);
  llvm::Value* dropped =
      b.CreateAnd(m, b.CreateSub(b.CreateShl(llvm::ConstantInt::get(i64, 1), shift),
                                 llvm::ConstantInt::get(i64, 1)));
  llvm::Value* kept =
      b.CreateOr(b.CreateLShr(m, shift), b.CreateZExt(b.CreateICmpNE(dropped, zero), i64));
  llvm::Value* f = b.CreateUIToFP(kept, b.getFloatTy());  // exact: kept < 2^24
  // Times 2^shift (at most 2^40), whose float bits are (shift + 127) << 23: exact.
  llvm::Value* scale_bits = b.CreateTrunc(
      b.CreateShl(b.CreateAdd(shift, llvm::ConstantInt::get(i64, 127)), 23), b.getInt32Ty());
  f = b.CreateFMul(f, b.CreateBitCast(scale_bits, b.getFloatTy()));
  return is_signed ? b.CreateSelect(negative, b.CreateFNeg(f), f) : f;
}

}  // namespace

llvm::Value* emit_convert(llvm::IRBuilder<>& b, llvm::Value* v, DType from, DType to) {
  if (from == to) return v;
  llvm::Type* t = ir_type(b.getContext(), to);
  // To a 16-bit float (computed in f32, rounded by the caller): one rounding from the exact
  // value, through a round-to-odd float (from a 64-bit integer directly, else through float64,
  // which holds every other source exactly).
  if (k16BitFloating.contains(to) && (from == int64 || from == uint64))
    return int64_round_to_odd_f32(b, v, from == int64);
  if (k16BitFloating.contains(to) && from != bool_ && from != float32 &&
      !k16BitFloating.contains(from)) {
    llvm::Value* wide = emit_convert(b, v, from, float64);
    return round_to_odd_f32(b, wide);
  }
  if (to == bool_)  // x != 0; NaN != 0 holds
    return is_floating(from) ? b.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0))
                             : b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  if (from == bool_) return is_floating(to) ? b.CreateUIToFP(v, t) : b.CreateZExt(v, t);
  if (is_floating(from) && is_floating(to)) return b.CreateFPCast(v, t);
  if (is_floating(from))  // NaN → 0, out of range saturates
    return b.CreateIntrinsic(
        is_unsigned(to) ? llvm::Intrinsic::fptoui_sat : llvm::Intrinsic::fptosi_sat,
        {t, v->getType()}, {v});
  if (is_floating(to)) return is_unsigned(from) ? b.CreateUIToFP(v, t) : b.CreateSIToFP(v, t);
  return b.CreateIntCast(v, t, /*isSigned=*/!is_unsigned(from));
}

void add_unary_emitters(EmitterTable& t) {
  for (const MathOp& m : kMathOps) t.set(m.op, emit_math);
  t.set(Opcode::kNegate, emit_negate);
  t.set(Opcode::kLogistic, emit_logistic);
  t.set(Opcode::kRsqrt, emit_rsqrt);
  t.set(Opcode::kAbs, emit_abs);
  t.set(Opcode::kSign, emit_sign);
  t.set(Opcode::kIsFinite, emit_is_finite);
  t.set(Opcode::kNot, emit_not);
  t.set(Opcode::kConvert, emit_convert_op);
}

}  // namespace jx::codegen
