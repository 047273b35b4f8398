#include "passes/fusion/horizontal_fusion.hpp"

#include <algorithm>

#include "passes/fusion/kernels.hpp"
#include "passes/fusion/outline.hpp"

namespace jx::passes {

using hlo::Instruction;

namespace {

// Batches the small independent kernels of one program computation.
bool fuse_program(hlo::Computation& entry,
                  const std::function<std::string(const hlo::Instruction&)>& batch_key) {
  std::vector<std::vector<Instruction*>> batches;
  std::vector<std::string> keys;  // each batch's
  for (Instruction* i : entry.instructions()) {
    if (!fusion::is_kernel(*i) || i->shape.byte_size() > HorizontalFusion::kMaxBytes ||
        fusion::computes_prefix_scan(*i))
      continue;
    std::string key = batch_key ? batch_key(*i) : std::string();
    auto independent = [&](const std::vector<Instruction*>& batch) {
      if (batch.size() >= HorizontalFusion::kMaxKernels ||
          keys[static_cast<std::size_t>(&batch - batches.data())] != key)
        return false;
      for (const Instruction* b : batch)
        if (fusion::reaches(entry, b, i) || fusion::reaches(entry, i, b)) return false;
      return true;
    };
    auto it = std::find_if(batches.begin(), batches.end(), independent);
    if (it == batches.end()) {
      batches.push_back({i});
      keys.push_back(key);
    } else
      it->push_back(i);
  }
  bool changed = false;
  for (const auto& batch : batches) {
    if (batch.size() < 2) continue;
    fusion::outline(entry, {batch, {}});
    changed = true;
  }
  return changed;
}

}  // namespace

bool HorizontalFusion::run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : hlo::program_computations(module))
    changed |= fuse_program(*c, batch_key_);
  return changed;
}

}  // namespace jx::passes
