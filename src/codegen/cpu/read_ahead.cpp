#include "codegen/cpu/read_ahead.hpp"

#include <utility>

#include "hlo/fusion.hpp"

namespace jx::codegen::cpu {
namespace {

constexpr std::int64_t kStreamingChunkLines = 32;

}  // namespace

ElementalEmitter::ChunkHook read_ahead(ElementalEmitter& em, std::vector<ReadStream> streams,
                                       std::int64_t ahead) {
  return [&em, streams = std::move(streams), ahead](llvm::Value* first, std::int64_t count) {
    llvm::IRBuilder<>& b = em.b();
    llvm::Value* at = b.CreateAdd(first, em.i64(ahead));
    for (auto [buffer, dtype] : streams) {
      std::int64_t per_line = kCacheLine / itemsize(dtype);
      for (std::int64_t e = 0; e < count; e += per_line)
        em.prefetch(b.CreateGEP(storage_type(em.ctx(), dtype), buffer, b.CreateAdd(at, em.i64(e))));
    }
  };
}

std::optional<LoopChunks> streaming_chunks(ElementalEmitter& em, const hlo::Instruction& kernel,
                                           const std::vector<llvm::Value*>& buffers, int output,
                                           std::int64_t line) {
  std::vector<ReadStream> streams;
  for (std::size_t k = 0; k < buffers.size(); ++k)
    if (hlo::reads_only_at_output_index(kernel, static_cast<int>(k), output))
      streams.push_back({buffers[k], kernel.operands[k]->shape.dtype});
  if (streams.empty()) return std::nullopt;
  std::int64_t size = kStreamingChunkLines * line;
  return LoopChunks{size, read_ahead(em, std::move(streams), size / 2)};
}

}  // namespace jx::codegen::cpu
