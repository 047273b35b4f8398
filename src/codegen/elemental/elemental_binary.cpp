// Scalar emitters of the binary and ternary elementwise opcodes: arithmetic, max/min, bitwise,
// compare, select, clamp. Semantics follow src/primitives/binary.cpp and compare_select.cpp.
#include <string>

#include "codegen/elemental/elemental.hpp"
#include "jx/errors.hpp"

namespace jx::codegen {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using Values = llvm::ArrayRef<llvm::Value*>;
using P = llvm::CmpInst::Predicate;

DType operand_dtype(const Instruction& inst, std::size_t k = 0) {
  return inst.operands[k]->shape.dtype;
}

void require(bool ok, const Instruction& inst, const char* what) {
  if (!ok)
    throw CompileError("codegen: " + std::string(hlo::info(inst.opcode).name) + " needs " + what +
                       ", got " + std::string(hlo::hlo_type_name(operand_dtype(inst))));
}

llvm::Value* ones(llvm::Value* like) { return llvm::Constant::getAllOnesValue(like->getType()); }
llvm::Value* int_const(llvm::Value* like, std::int64_t v) {
  return llvm::ConstantInt::getSigned(like->getType(), v);
}

// Integers wrap (no nsw/nuw flags), as XLA's do.
llvm::Value* emit_add(ElementalEmitter& em, const Instruction& inst, Values v) {
  return is_floating(operand_dtype(inst)) ? em.b().CreateFAdd(v[0], v[1])
                                          : em.b().CreateAdd(v[0], v[1]);
}
llvm::Value* emit_subtract(ElementalEmitter& em, const Instruction& inst, Values v) {
  return is_floating(operand_dtype(inst)) ? em.b().CreateFSub(v[0], v[1])
                                          : em.b().CreateSub(v[0], v[1]);
}
llvm::Value* emit_multiply(ElementalEmitter& em, const Instruction& inst, Values v) {
  return is_floating(operand_dtype(inst)) ? em.b().CreateFMul(v[0], v[1])
                                          : em.b().CreateMul(v[0], v[1]);
}

// Integer x / 0 = -1 (all bits), INT_MIN / -1 = INT_MIN. The divisor that would trap (or be UB
// in LLVM) is replaced by 1 before dividing, and the result fixed up after.
llvm::Value* emit_divide(ElementalEmitter& em, const Instruction& inst, Values v) {
  auto& b = em.b();
  DType d = operand_dtype(inst);
  llvm::Value *x = v[0], *y = v[1];
  if (is_floating(d)) return b.CreateFDiv(x, y);
  llvm::Value* by_zero = b.CreateICmpEQ(y, int_const(y, 0));
  if (d == bool_ || is_unsigned(d)) {
    llvm::Value* q = b.CreateUDiv(x, b.CreateSelect(by_zero, int_const(y, 1), y));
    return b.CreateSelect(by_zero, ones(x), q);
  }
  auto* min = llvm::ConstantInt::get(
      x->getType(), llvm::APInt::getSignedMinValue(x->getType()->getIntegerBitWidth()));
  llvm::Value* overflow = b.CreateAnd(b.CreateICmpEQ(x, min), b.CreateICmpEQ(y, ones(y)));
  llvm::Value* q =
      b.CreateSDiv(x, b.CreateSelect(b.CreateOr(by_zero, overflow), int_const(y, 1), y));
  return b.CreateSelect(by_zero, ones(x), q);
}

// The dividend's sign (C's fmod); integer x % 0 = x, x % -1 = 0.
llvm::Value* emit_remainder(ElementalEmitter& em, const Instruction& inst, Values v) {
  auto& b = em.b();
  DType d = operand_dtype(inst);
  llvm::Value *x = v[0], *y = v[1];
  if (is_floating(d)) return b.CreateFRem(x, y);
  llvm::Value* by_zero = b.CreateICmpEQ(y, int_const(y, 0));
  if (d == bool_ || is_unsigned(d)) {
    llvm::Value* r = b.CreateURem(x, b.CreateSelect(by_zero, int_const(y, 1), y));
    return b.CreateSelect(by_zero, x, r);
  }
  llvm::Value* unit = b.CreateOr(by_zero, b.CreateICmpEQ(y, ones(y)));  // x % ±1 = 0
  llvm::Value* r = b.CreateSRem(x, b.CreateSelect(unit, int_const(y, 1), y));
  return b.CreateSelect(by_zero, x, r);
}

llvm::Value* emit_power(ElementalEmitter& em, const Instruction& inst, Values v) {
  require(is_floating(operand_dtype(inst)), inst, "a floating dtype");
  return em.math().call(em.b(), MathFn::kPow, v);
}

llvm::Value* emit_atan2(ElementalEmitter& em, const Instruction& inst, Values v) {
  require(is_floating(operand_dtype(inst)), inst, "a floating dtype");
  return em.math().call(em.b(), MathFn::kAtan2, v);
}

// NaN-propagating on floats (llvm.maximum / minimum semantics, as XLA's max and min).
llvm::Value* emit_maximum(ElementalEmitter& em, const Instruction& inst, Values v) {
  DType d = operand_dtype(inst);
  if (is_floating(d)) return em.math().call(em.b(), MathFn::kMaximum, v);
  auto id = d == bool_ || is_unsigned(d) ? llvm::Intrinsic::umax : llvm::Intrinsic::smax;
  return em.b().CreateBinaryIntrinsic(id, v[0], v[1]);
}
llvm::Value* emit_minimum(ElementalEmitter& em, const Instruction& inst, Values v) {
  DType d = operand_dtype(inst);
  if (is_floating(d)) return em.math().call(em.b(), MathFn::kMinimum, v);
  auto id = d == bool_ || is_unsigned(d) ? llvm::Intrinsic::umin : llvm::Intrinsic::smin;
  return em.b().CreateBinaryIntrinsic(id, v[0], v[1]);
}

// Logical on pred, bitwise on integers.
llvm::Value* emit_and(ElementalEmitter& em, const Instruction& inst, Values v) {
  require(!is_floating(operand_dtype(inst)), inst, "an integer or pred dtype");
  return em.b().CreateAnd(v[0], v[1]);
}
llvm::Value* emit_or(ElementalEmitter& em, const Instruction& inst, Values v) {
  require(!is_floating(operand_dtype(inst)), inst, "an integer or pred dtype");
  return em.b().CreateOr(v[0], v[1]);
}
llvm::Value* emit_xor(ElementalEmitter& em, const Instruction& inst, Values v) {
  require(!is_floating(operand_dtype(inst)), inst, "an integer or pred dtype");
  return em.b().CreateXor(v[0], v[1]);
}

// XLA's shifts: the amount is unsigned, and shifting by the bit width or more gives 0 (the
// arithmetic shift: the sign everywhere), where LLVM's shifts would be poison.
llvm::Value* emit_shift(ElementalEmitter& em, const Instruction& inst, Values v) {
  DType d = operand_dtype(inst);
  require(!is_floating(d) && d != bool_, inst, "an integer dtype");
  auto& b = em.b();
  llvm::Type* t = v[0]->getType();
  unsigned bits = t->getIntegerBitWidth();
  llvm::Value* out_of_range = b.CreateICmpUGE(v[1], llvm::ConstantInt::get(t, bits));
  llvm::Value* amount = b.CreateSelect(out_of_range, llvm::ConstantInt::get(t, 0), v[1]);
  switch (inst.opcode) {
    case Opcode::kShiftLeft:
      return b.CreateSelect(out_of_range, llvm::ConstantInt::get(t, 0), b.CreateShl(v[0], amount));
    case Opcode::kShiftRightLogical:
      return b.CreateSelect(out_of_range, llvm::ConstantInt::get(t, 0), b.CreateLShr(v[0], amount));
    default:  // arithmetic: shifting by bits - 1 leaves the sign everywhere
      return b.CreateAShr(
          v[0], b.CreateSelect(out_of_range, llvm::ConstantInt::get(t, bits - 1), amount));
  }
}

// direction → predicate for floats (ordered, but NE is unordered: NaN != x holds), signed and
// unsigned integers (pred compares as unsigned: false < true).
struct Direction {
  const char* name;
  P fp, sint, uint;
};
constexpr Direction kDirections[] = {
    {"EQ", P::FCMP_OEQ, P::ICMP_EQ, P::ICMP_EQ},   {"NE", P::FCMP_UNE, P::ICMP_NE, P::ICMP_NE},
    {"LT", P::FCMP_OLT, P::ICMP_SLT, P::ICMP_ULT}, {"LE", P::FCMP_OLE, P::ICMP_SLE, P::ICMP_ULE},
    {"GT", P::FCMP_OGT, P::ICMP_SGT, P::ICMP_UGT}, {"GE", P::FCMP_OGE, P::ICMP_SGE, P::ICMP_UGE},
};

llvm::Value* emit_compare(ElementalEmitter& em, const Instruction& inst, Values v) {
  const std::string& dir =
      inst.attrs.has("direction") ? inst.attrs.get_string("direction") : std::string("?");
  DType d = operand_dtype(inst);
  for (const Direction& k : kDirections) {
    if (dir != k.name) continue;
    P p = is_floating(d) ? k.fp : d == bool_ || is_unsigned(d) ? k.uint : k.sint;
    return em.b().CreateCmp(p, v[0], v[1]);
  }
  throw CompileError("codegen: compare " + inst.name + " has unknown direction '" + dir + "'");
}

llvm::Value* emit_select(ElementalEmitter& em, const Instruction&, Values v) {
  return em.b().CreateSelect(v[0], v[1], v[2]);
}

// clamp(lo, x, hi) = min(max(x, lo), hi); NaN in any operand gives NaN; lo > hi gives hi.
llvm::Value* emit_clamp(ElementalEmitter& em, const Instruction& inst, Values v) {
  auto& b = em.b();
  DType d = operand_dtype(inst, 1);
  llvm::Value *lo = v[0], *x = v[1], *hi = v[2];
  if (is_floating(d)) {
    llvm::Value* r = b.CreateSelect(b.CreateFCmpOLT(x, lo), lo, x);
    r = b.CreateSelect(b.CreateFCmpOGT(r, hi), hi, r);
    llvm::Value* nan = b.CreateOr(b.CreateFCmpUNO(x, lo), b.CreateFCmpUNO(hi, hi));
    return b.CreateSelect(nan, llvm::ConstantFP::getNaN(x->getType()), r);
  }
  bool u = d == bool_ || is_unsigned(d);
  llvm::Value* r = b.CreateSelect(u ? b.CreateICmpULT(x, lo) : b.CreateICmpSLT(x, lo), lo, x);
  return b.CreateSelect(u ? b.CreateICmpUGT(r, hi) : b.CreateICmpSGT(r, hi), hi, r);
}

}  // namespace

void add_binary_emitters(EmitterTable& t) {
  t.set(Opcode::kAdd, emit_add);
  t.set(Opcode::kSubtract, emit_subtract);
  t.set(Opcode::kMultiply, emit_multiply);
  t.set(Opcode::kDivide, emit_divide);
  t.set(Opcode::kRemainder, emit_remainder);
  t.set(Opcode::kPower, emit_power);
  t.set(Opcode::kMaximum, emit_maximum);
  t.set(Opcode::kMinimum, emit_minimum);
  t.set(Opcode::kAtan2, emit_atan2);
  t.set(Opcode::kAnd, emit_and);
  t.set(Opcode::kOr, emit_or);
  t.set(Opcode::kXor, emit_xor);
  t.set(Opcode::kShiftLeft, emit_shift);
  t.set(Opcode::kShiftRightLogical, emit_shift);
  t.set(Opcode::kShiftRightArithmetic, emit_shift);
  t.set(Opcode::kCompare, emit_compare);
  t.set(Opcode::kSelect, emit_select);
  t.set(Opcode::kClamp, emit_clamp);
}

}  // namespace jx::codegen
