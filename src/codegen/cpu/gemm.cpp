// The register-blocked matrix kernel for moderate dots, and the choice between it, the element
// loop nest (dot.cpp) and BLAS. A tile of out, R rows by V vectors, stays in registers for the
// whole contraction: each step loads V vectors of a rhs row, broadcasts R lhs elements and
// issues R * V independent multiply-adds, enough to cover the FMA latency on both ports.
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <optional>

#include "codegen/cpu/cpu_compiler.hpp"
#include "codegen/cpu/gemm.hpp"
#include "hlo/gemm.hpp"

namespace jx::codegen {
namespace {

// Below this many multiply-adds per product the element loop nest beats any kernel's setup.
constexpr std::int64_t kMinGemmMacs = 16 * 16 * 16;
// Above this many in all, BLAS (packed panels, its own threads) is faster. Timed against BLAS
// on 2 cores, alternating (docs/performance.md): the kernel takes 0.2-0.8x BLAS's time up to
// 8M multiply-adds, about 1x at 16M-67M, 1.2-1.6x at 51M with k = 784.
constexpr std::int64_t kMaxBlockedMacs = std::int64_t{1} << 23;

}  // namespace

DotStrategy dot_strategy(const hlo::Instruction& dot) {
  std::optional<hlo::GemmShape> g = hlo::as_gemm(dot);
  if (!g || g->m * g->n * g->k < kMinGemmMacs) return DotStrategy::kLoopNest;
  if (g->transpose_rhs || g->macs() > kMaxBlockedMacs) return DotStrategy::kBlas;
  return DotStrategy::kBlockedKernel;
}

namespace cpu {
namespace {

// The host's vector registers: 32 of 64 bytes with AVX-512, else 16 of 32 (AVX2; LLVM
// splits wider vectors on narrower ISAs).
struct VectorRegisters {
  unsigned bytes, count;
};

VectorRegisters host_vector_registers() {
  static const VectorRegisters regs = [] {
    auto features = llvm::sys::getHostCPUFeatures();
    auto avx512 = features.find("avx512f");
    return avx512 != features.end() && avx512->second ? VectorRegisters{64, 32}
                                                      : VectorRegisters{32, 16};
  }();
  return regs;
}

class GemmEmitter {
 public:
  GemmEmitter(ElementalEmitter& em, const hlo::GemmShape& g, llvm::Value* lhs, llvm::Value* rhs,
              llvm::Value* out)
      : em_(em), b_(em.b()), g_(g), lhs_(lhs), rhs_(rhs), out_(out), elem_(em.type(g.dtype)) {
    VectorRegisters regs = host_vector_registers();
    lanes_ = regs.bytes / static_cast<unsigned>(itemsize(g.dtype));
    vec_ = llvm::FixedVectorType::get(elem_, lanes_);
    // Half the registers accumulate; the rest hold the rhs row and a broadcast.
    auto needed = static_cast<int>((g.n + lanes_ - 1) / lanes_);
    tile_vectors_ = std::clamp(needed, 1, 4);
    tile_rows_ = std::min(8, static_cast<int>(regs.count / 2) / tile_vectors_);
  }

  // Rows [row_begin, row_end) of products [batch_begin, batch_end).
  void emit(llvm::Value* batch_begin, llvm::Value* batch_end, llvm::Value* row_begin,
            llvm::Value* row_end) {
    for_range(batch_begin, batch_end, "gemm.batch", [&](llvm::Value* batch) {
      llvm::Value* blocks = b_.CreateUDiv(b_.CreateSub(row_end, row_begin), em_.i64(tile_rows_));
      llvm::Value* tiled_end = add(row_begin, mul(blocks, tile_rows_));
      for_range(em_.i64(0), blocks, "gemm.rows", [&](llvm::Value* q) {
        row_band(batch, add(row_begin, mul(q, tile_rows_)), tile_rows_);
      });
      for_range(tiled_end, row_end, "gemm.row", [&](llvm::Value* row) { row_band(batch, row, 1); });
    });
  }

 private:
  llvm::Value* add(llvm::Value* a, llvm::Value* c) { return b_.CreateAdd(a, c, "", true, true); }
  llvm::Value* mul(llvm::Value* a, std::int64_t c) {
    return b_.CreateMul(a, em_.i64(c), "", true, true);
  }
  // (outer * extent + inner), the row-major offset of one dimension into the next
  llvm::Value* nest(llvm::Value* outer, std::int64_t extent, llvm::Value* inner) {
    return add(mul(outer, extent), inner);
  }
  llvm::Value* lhs_at(llvm::Value* batch, llvm::Value* row, llvm::Value* p) {
    return g_.transpose_lhs ? nest(nest(batch, g_.k, p), g_.m, row)
                            : nest(nest(batch, g_.m, row), g_.k, p);
  }
  llvm::Value* rhs_at(llvm::Value* batch, llvm::Value* p, llvm::Value* col) {
    return nest(nest(batch, g_.k, p), g_.n, col);
  }
  llvm::Value* out_at(llvm::Value* batch, llvm::Value* row, llvm::Value* col) {
    return nest(nest(batch, g_.m, row), g_.n, col);
  }
  llvm::Value* element(llvm::Value* base, llvm::Value* offset) {
    return b_.CreateInBoundsGEP(elem_, base, offset);
  }

  // emit_for, skipping a range that folded to an empty constant one.
  void for_range(llvm::Value* begin, llvm::Value* end, const std::string& name,
                 const std::function<void(llvm::Value*)>& body) {
    auto* cb = llvm::dyn_cast<llvm::ConstantInt>(begin);
    auto* ce = llvm::dyn_cast<llvm::ConstantInt>(end);
    if (cb && ce && cb->getSExtValue() >= ce->getSExtValue()) return;
    if (cb && ce && cb->getSExtValue() + 1 == ce->getSExtValue()) return body(begin);
    emit_for(em_, begin, end, name, body, /*vectorize=*/false);
  }

  // All columns of `rows` rows: full-width tiles, then one narrower tile for the rest.
  void row_band(llvm::Value* batch, llvm::Value* row, int rows) {
    std::int64_t width = tile_vectors_ * static_cast<std::int64_t>(lanes_);
    std::int64_t full = g_.n / width, rest = g_.n % width;
    for_range(em_.i64(0), em_.i64(full), "gemm.cols",
              [&](llvm::Value* c) { tile(batch, row, rows, mul(c, width), width); });
    if (rest) tile(batch, row, rows, em_.i64(full * width), rest);
  }

  // The first `count` lanes of a vector (a partial vector at the right edge).
  llvm::Value* mask(std::int64_t count) {
    std::vector<llvm::Constant*> bits;
    for (unsigned l = 0; l < lanes_; ++l) bits.push_back(b_.getInt1(l < count));
    return llvm::ConstantVector::get(bits);
  }

  void tile(llvm::Value* batch, llvm::Value* row, int rows, llvm::Value* col, std::int64_t cols) {
    auto vectors = static_cast<int>((cols + lanes_ - 1) / lanes_);
    std::int64_t last = cols - static_cast<std::int64_t>(lanes_) * (vectors - 1);
    llvm::Align align(itemsize(g_.dtype));
    auto col_of = [&](int v) { return add(col, em_.i64(std::int64_t{v} * lanes_)); };
    std::vector<llvm::AllocaInst*> acc;
    for (int k = 0; k < rows * vectors; ++k) {
      acc.push_back(em_.entry_alloca(vec_, "gemm.acc"));
      b_.CreateStore(llvm::Constant::getNullValue(vec_), acc.back());
    }
    emit_for(
        em_, g_.k, "gemm.k",
        [&](llvm::Value* p) {
          std::vector<llvm::Value*> rhs_row;
          for (int v = 0; v < vectors; ++v) {
            llvm::Value* at = element(rhs_, rhs_at(batch, p, col_of(v)));
            bool whole = v + 1 < vectors || last == lanes_;
            rhs_row.push_back(whole
                                  ? static_cast<llvm::Value*>(b_.CreateAlignedLoad(vec_, at, align))
                                  : b_.CreateMaskedLoad(vec_, at, align, mask(last),
                                                        llvm::Constant::getNullValue(vec_)));
          }
          for (int r = 0; r < rows; ++r) {
            llvm::Value* x = b_.CreateAlignedLoad(
                elem_, element(lhs_, lhs_at(batch, add(row, em_.i64(r)), p)), align);
            llvm::Value* xs = b_.CreateVectorSplat(lanes_, x);
            for (int v = 0; v < vectors; ++v) {
              llvm::AllocaInst* a = acc[static_cast<std::size_t>(r * vectors + v)];
              b_.CreateStore(b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vec_},
                                                {xs, rhs_row[static_cast<std::size_t>(v)],
                                                 b_.CreateLoad(vec_, a)}),
                             a);
            }
          }
        },
        /*vectorize=*/false);
    for (int r = 0; r < rows; ++r)
      for (int v = 0; v < vectors; ++v) {
        llvm::Value* sum = b_.CreateLoad(vec_, acc[static_cast<std::size_t>(r * vectors + v)]);
        llvm::Value* at = element(out_, out_at(batch, add(row, em_.i64(r)), col_of(v)));
        if (v + 1 < vectors || last == lanes_)
          b_.CreateAlignedStore(sum, at, align);
        else
          b_.CreateMaskedStore(sum, at, align, mask(last));
      }
  }

  ElementalEmitter& em_;
  llvm::IRBuilder<>& b_;
  hlo::GemmShape g_;
  llvm::Value *lhs_, *rhs_, *out_;
  llvm::Type* elem_;
  unsigned lanes_ = 0;
  llvm::FixedVectorType* vec_ = nullptr;
  int tile_rows_ = 1, tile_vectors_ = 1;
};

}  // namespace

void emit_blocked_gemm(ElementalEmitter& em, const hlo::Instruction& dot, llvm::Value* lhs,
                       llvm::Value* rhs, llvm::Value* out, const std::optional<OuterRange>& rows) {
  hlo::GemmShape g = *hlo::as_gemm(dot);
  GemmEmitter gemm(em, g, lhs, rhs, out);
  // A partitioned kernel owns rows [begin, end) of out's dimension 0: rows of the product when
  // it has no batch dims, else whole products of the first batch dim.
  bool batched = dot.shape.rank() > 2;
  if (!rows) return gemm.emit(em.i64(0), em.i64(g.batch), em.i64(0), em.i64(g.m));
  if (!batched) return gemm.emit(em.i64(0), em.i64(1), rows->begin, rows->end);
  std::int64_t per_row = g.batch / dot.shape.dims[0];
  auto& b = em.b();
  gemm.emit(b.CreateMul(rows->begin, em.i64(per_row)), b.CreateMul(rows->end, em.i64(per_row)),
            em.i64(0), em.i64(g.m));
}

}  // namespace cpu
}  // namespace jx::codegen
