#include "codegen/cpu/gemm_tile_math.hpp"

#include <vector>

#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/IntrinsicsX86.h>

namespace jx::codegen::cpu {

llvm::Value* pair_multiply_add(llvm::IRBuilder<>& b, bool dpbf16, llvm::Value* acc, llvm::Value* x,
                               llvm::Value* y) {
  if (dpbf16)
    return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512, {}, {acc, x, y});
  auto* vec = llvm::cast<llvm::FixedVectorType>(acc->getType());
  unsigned lanes = vec->getNumElements();
  auto* wide = llvm::FixedVectorType::get(b.getFloatTy(), 2 * lanes);
  llvm::Value* xw = b.CreateFPExt(x, wide);
  llvm::Value* yw = b.CreateFPExt(y, wide);
  for (unsigned parity : {1u, 0u}) {
    std::vector<int> half;
    for (unsigned l = 0; l < lanes; ++l) half.push_back(static_cast<int>(2 * l + parity));
    acc =
        b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vec},
                          {b.CreateShuffleVector(xw, half), b.CreateShuffleVector(yw, half), acc});
  }
  return acc;
}

llvm::Value* apply_epilogue(ElementalEmitter& em, hlo::GemmActivation activation, llvm::Value* sum,
                            llvm::Value* bias) {
  llvm::IRBuilder<>& b = em.b();
  if (bias) sum = b.CreateFAdd(sum, bias);
  llvm::Type* vec = sum->getType();
  switch (activation) {
    case hlo::GemmActivation::kNone:
      return sum;
    case hlo::GemmActivation::kRelu:  // where(x <= 0, 0, x): NaN stays NaN
      return b.CreateSelect(b.CreateFCmpOLE(sum, llvm::Constant::getNullValue(vec)),
                            llvm::Constant::getNullValue(vec), sum);
    case hlo::GemmActivation::kGelu: {  // jx::nn::gelu's tanh form
      auto c = [&](double v) { return llvm::ConstantFP::get(vec, v); };
      llvm::Value* cube = b.CreateFMul(b.CreateFMul(sum, sum), sum);
      llvm::Value* inner =
          b.CreateFMul(c(0.7978845608028654), b.CreateFAdd(sum, b.CreateFMul(c(0.044715), cube)));
      llvm::Value* t = em.math().call(b, MathFn::kTanh, {inner});
      return b.CreateFMul(b.CreateFMul(c(0.5), sum), b.CreateFAdd(c(1.0), t));
    }
  }
  return sum;
}

void transpose_square(llvm::IRBuilder<>& b, std::vector<llvm::Value*>& rows) {
  auto lanes = static_cast<unsigned>(rows.size());
  // Round h swaps the off-diagonal h x h blocks of each 2h x 2h block.
  for (unsigned h = lanes / 2; h >= 1; h /= 2) {
    std::vector<int> low(lanes), high(lanes);
    for (unsigned c = 0; c < lanes; ++c) {
      low[c] = static_cast<int>(c & h ? lanes + c - h : c);
      high[c] = static_cast<int>(c & h ? lanes + c : c + h);
    }
    for (unsigned i = 0; i < lanes; ++i) {
      if (i & h) continue;
      llvm::Value* a = rows[i];
      rows[i] = b.CreateShuffleVector(a, rows[i + h], low);
      rows[i + h] = b.CreateShuffleVector(a, rows[i + h], high);
    }
  }
}

llvm::Value* interleave(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& runs) {
  if (runs.size() == 1) return runs[0];
  auto rows = static_cast<unsigned>(runs.size());
  unsigned lanes = llvm::cast<llvm::FixedVectorType>(runs[0]->getType())->getNumElements();
  std::vector<int> order;
  for (unsigned p = 0; p < lanes; ++p)
    for (unsigned r = 0; r < rows; ++r) order.push_back(static_cast<int>(r * lanes + p));
  return b.CreateShuffleVector(llvm::concatenateVectors(b, runs), order);
}

std::pair<llvm::Value*, llvm::Value*> share(llvm::IRBuilder<>& b, llvm::Value* count,
                                            llvm::Value* parts, llvm::Value* q) {
  auto umin = [&](llvm::Value* x, llvm::Value* y) {
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, x, y);
  };
  llvm::Value* size = b.CreateUDiv(b.CreateAdd(count, b.CreateSub(parts, b.getInt64(1))), parts);
  llvm::Value* first = umin(b.CreateMul(q, size), count);
  return {first, umin(b.CreateAdd(first, size), count)};
}

llvm::Value* axis_index(llvm::IRBuilder<>& b, llvm::Value* linear,
                        const std::vector<hlo::ImplicitGemm::Axis>& axes, std::size_t a) {
  std::int64_t after = 1;
  for (std::size_t k = a + 1; k < axes.size(); ++k) after *= axes[k].size;
  llvm::Value* i = b.CreateUDiv(linear, b.getInt64(static_cast<std::uint64_t>(after)));
  return a > 0 ? b.CreateURem(i, b.getInt64(static_cast<std::uint64_t>(axes[a].size))) : i;
}

llvm::Value* lhs_offset(llvm::IRBuilder<>& b, llvm::Value* linear,
                        const std::vector<hlo::ImplicitGemm::Axis>& axes) {
  llvm::Value* offset = b.getInt64(0);
  for (std::size_t a = 0; a < axes.size(); ++a) {
    llvm::Value* stride = b.getInt64(static_cast<std::uint64_t>(axes[a].lhs_stride));
    offset =
        b.CreateAdd(offset, b.CreateMul(axis_index(b, linear, axes, a), stride, "", true, true), "",
                    true, true);
  }
  return offset;
}

}  // namespace jx::codegen::cpu
