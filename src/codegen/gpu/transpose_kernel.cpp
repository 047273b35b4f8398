// Transposes of the last two dims: [..., a, b] → [..., b, a]. A block of 32x8 threads moves
// 32x32 tiles through shared memory, reading rows of the operand and writing rows of the output,
// so that a warp's loads and its stores each touch consecutive addresses. A tile row holds 33
// elements: a warp reading a tile column then hits 32 different memory banks. The output is the
// transpose or an elementwise function of it, computed as each element is written.
#include "codegen/gpu/kernel.hpp"
#include "codegen/gpu/kernel_plan.hpp"
#include "codegen/gpu/nvvm.hpp"

namespace jx::codegen::gpu {
namespace {

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // rows of threads: each thread moves kTile / kTileRows elements
constexpr int kPitch = kTile + 1;

}  // namespace

GpuLaunch emit_transpose_kernel(KernelBody& k, const hlo::Instruction& transpose) {
  ElementalEmitter& em = k.em();
  auto& b = em.b();
  llvm::Value* moved = nullptr;  // the transpose's element being written
  std::vector<ElementGenerator> gens =
      k.generators_of({transpose.operands[0], computed_outputs(k.root()).front()},
                      {{&transpose, [&moved](const IrIndex&) { return moved; }}});
  const ElementGenerator &x = gens[0], &output = gens[1];
  const Shape& in = transpose.operands[0]->shape.dims;
  DType dtype = transpose.shape.dtype;
  Shape batch(in.begin(), in.end() - 2);
  std::int64_t rows = in[in.size() - 2], cols = in[in.size() - 1];
  std::int64_t row_tiles = ceil_div(rows, kTile), col_tiles = ceil_div(cols, kTile);
  std::int64_t tiles = shape_size(batch) * row_tiles * col_tiles;
  GpuLaunch launch{grid_for(tiles), kTile * kTileRows, 0};

  llvm::GlobalVariable* tile_memory =
      shared_array(em.module(), storage_type(em.ctx(), dtype), kTile * kPitch, "tile");
  llvm::Value* tid = thread_id(em);
  llvm::Value* tx = b.CreateAnd(tid, em.i64(kTile - 1), "tx");
  llvm::Value* ty = b.CreateUDiv(tid, em.i64(kTile), "ty");
  auto add = [&](llvm::Value* a, llvm::Value* c) { return b.CreateAdd(a, c, "", true, true); };
  auto mul = [&](llvm::Value* a, std::int64_t c) {
    return b.CreateMul(a, em.i64(c), "", true, true);
  };
  auto both_below = [&](llvm::Value* r, std::int64_t rmax, llvm::Value* c, std::int64_t cmax) {
    return b.CreateAnd(b.CreateICmpULT(r, em.i64(rmax)), b.CreateICmpULT(c, em.i64(cmax)));
  };

  emit_strided_loop(em, block_id(em), tiles, launch.grid, "tile", [&](llvm::Value* tile) {
    llvm::Value* col_tile = b.CreateURem(tile, em.i64(col_tiles));
    llvm::Value* rest = b.CreateUDiv(tile, em.i64(col_tiles));
    llvm::Value* row_tile = b.CreateURem(rest, em.i64(row_tiles));
    llvm::Value* batch_linear = b.CreateUDiv(rest, em.i64(row_tiles), "batch");
    LoopIndex batch_index(em, batch_linear, batch, "batch");
    llvm::Value* row0 = mul(row_tile, kTile);
    llvm::Value* col0 = mul(col_tile, kTile);

    // Operand rows in: thread (tx, ty) reads column col0 + tx of rows row0 + ty + 8j.
    for (int j = 0; j < kTile; j += kTileRows) {
      llvm::Value* r = add(row0, add(ty, em.i64(j)));
      llvm::Value* c = add(col0, tx);
      llvm::Value* v = em.if_else(
          both_below(r, rows, c, cols),
          [&] {
            IrIndex index{batch_index.index().dims, nullptr};
            index.dims.push_back(r);
            index.dims.push_back(c);
            index.linear = add(mul(add(mul(batch_linear, rows), r), cols), c);
            return x(index);
          },
          [&] { return llvm::Constant::getNullValue(em.type(dtype)); }, "read");
      em.store(dtype, v, tile_memory, add(mul(add(ty, em.i64(j)), kPitch), tx));
    }
    barrier(em);
    // Output rows out: thread (tx, ty) writes column row0 + tx of output rows col0 + ty + 8j.
    for (int j = 0; j < kTile; j += kTileRows) {
      llvm::Value* out_row = add(col0, add(ty, em.i64(j)));
      llvm::Value* out_col = add(row0, tx);
      emit_if(em, both_below(out_row, cols, out_col, rows), "write", [&] {
        moved = em.load(dtype, tile_memory, add(mul(tx, kPitch), add(ty, em.i64(j))));
        IrIndex index{batch_index.index().dims, nullptr};
        index.dims.push_back(out_row);
        index.dims.push_back(out_col);
        index.linear = add(mul(add(mul(batch_linear, cols), out_row), rows), out_col);
        em.store(k.output_shapes()[0]->dtype, output(index), k.output(0), index.linear);
      });
    }
    barrier(em);  // the next tile reuses the shared memory
  });
  return launch;
}

}  // namespace jx::codegen::gpu
