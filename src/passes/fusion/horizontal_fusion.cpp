#include "passes/fusion/horizontal_fusion.hpp"

#include <algorithm>

#include "passes/fusion/kernels.hpp"
#include "passes/fusion/outline.hpp"

namespace jx::passes {

using hlo::Instruction;

namespace {

std::int64_t bytes_read(const Instruction& kernel) {
  std::int64_t read = 0;
  for (const Instruction* x : kernel.operands) read += x->shape.byte_size();
  return read;
}

// Batches the small independent kernels of one program computation.
bool fuse_program(hlo::Computation& entry,
                  const std::function<std::string(const hlo::Instruction&)>& batch_key,
                  std::int64_t max_read_bytes) {
  struct Batch {
    std::string key;
    std::vector<Instruction*> kernels;
  };
  std::vector<Batch> batches;
  hlo::UserIndex users(entry);  // nothing changes before the batches are outlined
  for (Instruction* i : entry.instructions()) {
    if (!fusion::is_kernel(*i) || i->shape.byte_size() > HorizontalFusion::kMaxBytes ||
        bytes_read(*i) > max_read_bytes || fusion::computes_prefix_scan(*i))
      continue;
    std::string key = batch_key ? batch_key(*i) : std::string();
    auto joins = [&](const Batch& batch) {
      if (batch.kernels.size() >= HorizontalFusion::kMaxKernels || batch.key != key) return false;
      for (const Instruction* b : batch.kernels)
        if (fusion::reaches(users, b, i) || fusion::reaches(users, i, b)) return false;
      return true;
    };
    auto it = std::find_if(batches.begin(), batches.end(), joins);
    if (it == batches.end())
      batches.push_back({std::move(key), {i}});
    else
      it->kernels.push_back(i);
  }
  bool changed = false;
  for (const Batch& batch : batches) {
    if (batch.kernels.size() < 2) continue;
    fusion::outline(entry, {batch.kernels, {}});
    changed = true;
  }
  return changed;
}

}  // namespace

bool HorizontalFusion::run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : hlo::program_computations(module))
    changed |= fuse_program(*c, batch_key_, max_read_bytes_);
  return changed;
}

}  // namespace jx::passes
