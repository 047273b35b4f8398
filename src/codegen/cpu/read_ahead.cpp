#include "codegen/cpu/read_ahead.hpp"

#include <utility>

namespace jx::codegen::cpu {
namespace {

constexpr std::int64_t kCacheLine = 64;
constexpr std::int64_t kStreamingChunkLines = 32;

// The kernel's operands of shape `dims`, and their dtypes.
std::vector<std::pair<llvm::Value*, DType>> operands_of_shape(
    const hlo::Instruction& kernel, const std::vector<llvm::Value*>& buffers, const Shape& dims) {
  std::vector<std::pair<llvm::Value*, DType>> streams;
  for (std::size_t k = 0; k < buffers.size(); ++k)
    if (kernel.operands[k]->shape.dims == dims)
      streams.emplace_back(buffers[k], kernel.operands[k]->shape.dtype);
  return streams;
}

}  // namespace

ElementalEmitter::RowChunkHook read_ahead(ElementalEmitter& em, const hlo::Instruction& kernel,
                                          const std::vector<llvm::Value*>& buffers,
                                          const Shape& dims, std::int64_t ahead) {
  return [&em, streams = operands_of_shape(kernel, buffers, dims), ahead](llvm::Value* first,
                                                                          std::int64_t count) {
    llvm::IRBuilder<>& b = em.b();
    llvm::Value* at = b.CreateAdd(first, em.i64(ahead));
    for (auto [base, dtype] : streams) {
      std::int64_t per_line = kCacheLine / itemsize(dtype);
      for (std::int64_t e = 0; e < count; e += per_line)
        em.prefetch(b.CreateGEP(storage_type(em.ctx(), dtype), base, b.CreateAdd(at, em.i64(e))));
    }
  };
}

std::optional<LoopChunks> streaming_chunks(ElementalEmitter& em, const hlo::Instruction& kernel,
                                           const std::vector<llvm::Value*>& buffers,
                                           const Shape& dims, std::int64_t line) {
  if (operands_of_shape(kernel, buffers, dims).empty()) return std::nullopt;
  std::int64_t size = kStreamingChunkLines * line;
  return LoopChunks{size, read_ahead(em, kernel, buffers, dims, size / 2)};
}

}  // namespace jx::codegen::cpu
