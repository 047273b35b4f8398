// Blocked prefix scans: a cumulative reduction along the last dim runs its rows on the CPU's
// threads, one row each; a long scan with fewer rows than threads leaves cores idle. Each such
// row becomes R blocks: the blocks' totals (a reduce, their rows shared by the threads), an
// exclusive scan of the R totals (the carries), then every block scanned with its carry folded
// into its first element (again rows the threads share). That reads the operand twice instead
// of once but runs on every core, which pays from 4 threads. Only for a combiner that is one
// commutative opcode (add, multiply, maximum, minimum) from its identity; as prefix scans
// already take it to be (hlo/window.hpp), it is taken to be associative.
#pragma once

#include <cstdint>

#include "passes/pass.hpp"

namespace jx::passes {

class BlockedPrefixScans final : public Pass {
 public:
  // A block shorter than this is not worth a second read of the operand.
  static constexpr std::int64_t kMinBlock = 1 << 14;

  // `threads`: how many threads a kernel's rows are split over.
  explicit BlockedPrefixScans(int threads, std::int64_t min_block = kMinBlock)
      : threads_(threads), min_block_(min_block) {}
  std::string name() const override { return "blocked-prefix-scans"; }
  bool run(hlo::Module& module) override;

 private:
  int threads_;
  std::int64_t min_block_;
};

}  // namespace jx::passes
