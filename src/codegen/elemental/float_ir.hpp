// An IRBuilder for straight-line float code (selects, bit manipulation, no calls), the one the
// branch-free math functions (vector_math.cpp, portable_math_*.cpp) are written with.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>

#include "codegen/llvm_headers.hpp"

namespace jx::codegen::float_ir {

using llvm::Value;

// The layout of an IEEE binary float.
struct Format {
  unsigned bits;      // 32 or 64
  unsigned mantissa;  // stored significand bits
  int bias;
};
inline constexpr Format kF32{32, 23, 127};
inline constexpr Format kF64{64, 52, 1023};

// A value carried as an unevaluated sum hi + lo, |lo| at most about ulp(hi).
struct TwoPart {
  Value* hi;
  Value* lo;
};

// An IRBuilder for one float type (scalar or vector) and the integer type of its width.
class Ir {
 public:
  explicit Ir(llvm::IRBuilder<>& b, llvm::Type* fp)
      : b_(b),
        fp_(fp),
        format_(fp->getScalarType()->isFloatTy() ? kF32 : kF64),
        int_(fp->getWithNewType(b.getIntNTy(format_.bits))) {}

  llvm::IRBuilder<>& builder() { return b_; }
  llvm::Type* type() const { return fp_; }
  const Format& format() const { return format_; }
  Value* c(double v) const { return llvm::ConstantFP::get(fp_, v); }
  Value* ci(std::int64_t v) const { return llvm::ConstantInt::getSigned(int_, v); }
  Value* inf() const { return llvm::ConstantFP::getInfinity(fp_); }
  Value* nan() const { return llvm::ConstantFP::getNaN(fp_); }

  Value* add(Value* x, Value* y) { return b_.CreateFAdd(x, y); }
  Value* sub(Value* x, Value* y) { return b_.CreateFSub(x, y); }
  Value* mul(Value* x, Value* y) { return b_.CreateFMul(x, y); }
  Value* div(Value* x, Value* y) { return b_.CreateFDiv(x, y); }
  Value* neg(Value* x) { return b_.CreateFNeg(x); }
  // x*y + z, fused where the target has FMA.
  Value* mad(Value* x, Value* y, Value* z) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {fp_}, {x, y, z});
  }
  // x*y + z rounded once: for the exact error of a product.
  Value* fma(Value* x, Value* y, Value* z) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fma, {fp_}, {x, y, z});
  }
  Value* call(llvm::Intrinsic::ID id, Value* x) { return b_.CreateUnaryIntrinsic(id, x); }
  Value* fabs(Value* x) { return call(llvm::Intrinsic::fabs, x); }
  Value* floor(Value* x) { return call(llvm::Intrinsic::floor, x); }
  Value* rint(Value* x) { return call(llvm::Intrinsic::rint, x); }
  // min/max that return the other operand for a NaN.
  Value* minnum(Value* x, Value* y) { return b_.CreateMinNum(x, y); }
  Value* maxnum(Value* x, Value* y) { return b_.CreateMaxNum(x, y); }
  // max(x, lo) and min(x, hi) that keep NaN: a compare and a select, which x86 takes as one max
  // or min whose NaN operand wins (maxnum and minnum drop NaN, costing a test and a blend to
  // restore).
  Value* at_least(Value* x, double lo) { return select(lt(x, c(lo)), c(lo), x); }
  Value* at_most(Value* x, double hi) { return select(gt(x, c(hi)), c(hi), x); }
  Value* clamp(Value* x, double lo, double hi) { return at_least(at_most(x, hi), lo); }
  Value* copysign(Value* mag, Value* sign) { return b_.CreateCopySign(mag, sign); }
  Value* select(Value* cond, Value* t, Value* f) { return b_.CreateSelect(cond, t, f); }

  // Comparisons are ordered (false on NaN) but for ne.
  Value* lt(Value* x, Value* y) { return b_.CreateFCmpOLT(x, y); }
  Value* gt(Value* x, Value* y) { return b_.CreateFCmpOGT(x, y); }
  Value* eq(Value* x, Value* y) { return b_.CreateFCmpOEQ(x, y); }
  Value* ne(Value* x, Value* y) { return b_.CreateFCmpUNE(x, y); }
  Value* is_nan(Value* x) { return b_.CreateFCmpUNO(x, x); }
  Value* is_inf(Value* x) { return eq(fabs(x), inf()); }
  Value* sign_bit(Value* x) { return b_.CreateICmpSLT(bits(x), ci(0)); }
  Value* both(Value* p, Value* q) { return b_.CreateAnd(p, q); }
  Value* either(Value* p, Value* q) { return b_.CreateOr(p, q); }
  Value* differ(Value* p, Value* q) { return b_.CreateXor(p, q); }
  Value* negate(Value* p) { return b_.CreateNot(p); }

  // Integer ops on the bits.
  Value* bits(Value* x) { return b_.CreateBitCast(x, int_); }
  Value* from_bits(Value* i) { return b_.CreateBitCast(i, fp_); }
  Value* iadd(Value* x, Value* y) { return b_.CreateAdd(x, y); }
  Value* isub(Value* x, Value* y) { return b_.CreateSub(x, y); }
  Value* iand(Value* x, Value* y) { return b_.CreateAnd(x, y); }
  Value* ixor(Value* x, Value* y) { return b_.CreateXor(x, y); }
  Value* shl(Value* x, unsigned n) { return b_.CreateShl(x, n); }
  Value* ashr(Value* x, unsigned n) { return b_.CreateAShr(x, n); }
  Value* ine(Value* x, Value* y) { return b_.CreateICmpNE(x, y); }
  Value* igt(Value* x, Value* y) { return b_.CreateICmpSGT(x, y); }
  Value* imin(Value* x, Value* y) { return b_.CreateSelect(b_.CreateICmpSLT(x, y), x, y); }

  // Conversions between a small integral float and the integer type go through i32, as in
  // vector_math: AVX2 has packed conversions to and from i32 only.
  Value* fp_to_int(Value* x) {
    Value* i = b_.CreateFPToSI(x, fp_->getWithNewType(b_.getInt32Ty()));
    return format_.bits == 32 ? i : b_.CreateSExt(i, int_);
  }
  Value* int_to_fp(Value* i) {
    if (format_.bits != 32) i = b_.CreateTrunc(i, fp_->getWithNewType(b_.getInt32Ty()));
    return b_.CreateSIToFP(i, fp_);
  }
  // 2^k for an integer k in the normal exponent range.
  Value* pow2(Value* k) { return from_bits(shl(iadd(k, ci(format_.bias)), format_.mantissa)); }

  // x + y as a rounded sum and its exact error (Knuth's TwoSum: no condition on the magnitudes).
  TwoPart two_sum(Value* x, Value* y) {
    Value* s = add(x, y);
    Value* y_part = sub(s, x);
    Value* x_part = sub(s, y_part);
    return {s, add(sub(x, x_part), sub(y, y_part))};
  }

  // c[0] + c[1] x + c[2] x² + ..., by Horner's rule.
  Value* poly(Value* x, std::span<const double> coeffs) {
    Value* p = c(coeffs.back());
    for (std::size_t i = coeffs.size() - 1; i-- > 0;) p = mad(p, x, c(coeffs[i]));
    return p;
  }

 private:
  llvm::IRBuilder<>& b_;
  llvm::Type* fp_;
  Format format_;
  llvm::Type* int_;
};

// Adapts f(Ir&, x) or f(Ir&, x, y) to a MathEmitter's signature.
template <class F>
Value* emit(llvm::IRBuilder<>& b, llvm::ArrayRef<Value*> args, F f) {
  Ir ir(b, args[0]->getType());
  if constexpr (std::is_invocable_v<F, Ir&, Value*>)
    return f(ir, args[0]);
  else
    return f(ir, args[0], args[1]);
}

}  // namespace jx::codegen::float_ir
