// Split column reductions: a large reduce keeping only its operand's last dim (a bias gradient's
// sum over the batch), whose rows are narrow and whose init is its combiner's identity (0 for a
// sum, -inf for a max, ...), becomes partial reductions, one per entry of the first dim, and
// their reduction. The CPU splits a column reduction over its columns among its threads: with
// narrow rows, each of many threads would read every row's cache lines for a few columns of
// them. It splits the partial reductions over the first dim instead, each thread reading its own
// rows. The split depends on the shape alone, so the values do not depend on the number of
// threads.
#pragma once

#include <cstdint>

#include "passes/pass.hpp"

namespace jx::passes {

class SplitColumnReductions final : public Pass {
 public:
  // An operand this large, at least, in bytes...
  static constexpr std::int64_t kMinBytes = 1 << 20;
  // ...whose rows are narrower than this (16 threads would each get less than a line of them)...
  static constexpr std::int64_t kNarrowRowBytes = 1 << 10;
  // ...and whose first dim has this many entries, each this many bytes: the partial results
  // are then enough parts for the threads, and small beside the operand.
  static constexpr std::int64_t kMinParts = 16, kMinPartBytes = 16 << 10;

  std::string name() const override { return "split-column-reductions"; }
  bool run(hlo::Module& module) override;
};

}  // namespace jx::passes
