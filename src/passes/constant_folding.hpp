// Constant folding: replaces an instruction whose operands are all constants (elementwise ops,
// broadcast, reshape, transpose, convert, slice, iota, concatenate) by its value, computed by the
// HLO evaluator, unless the value has more than kMaxFoldedElements elements.
#pragma once

#include <cstdint>

#include "passes/pass.hpp"

namespace jx::passes {

// Keeps literals small: a large broadcast stays a broadcast, not a megabyte of text and data.
inline constexpr std::int64_t kMaxFoldedElements = 1024;

class ConstantFolding final : public Pass {
 public:
  std::string name() const override { return "constant-folding"; }
  bool run(hlo::Module& module) override;
};

}  // namespace jx::passes
