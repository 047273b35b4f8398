#include "passes/blocked_prefix_scans.hpp"

#include <limits>
#include <optional>
#include <type_traits>

#include "core/dtype_dispatch.hpp"
#include "hlo/builder.hpp"

namespace jx::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using Ints = std::vector<std::int64_t>;

// Below this many threads one core streams most of the machine's bandwidth (on a 2-core Zen 4,
// 25 of 34 GB/s), and the second read costs more than the threads win: cumsum of f32[16M] took
// 6.5 ms as two blocks, 5.2 ms as one row.
constexpr int kMinThreads = 4;
// At most this many blocks per thread when looking for a block count that divides the row.
constexpr std::int64_t kMaxBlocksPerThread = 16;

template <class T>
T identity(Opcode combiner) {
  using L = std::numeric_limits<T>;
  switch (combiner) {
    case Opcode::kMultiply:
      return T(1);
    case Opcode::kMaximum:
      return L::has_infinity ? -L::infinity() : L::lowest();
    case Opcode::kMinimum:
      return L::has_infinity ? L::infinity() : L::max();
    default:
      return T(0);
  }
}

// The combiner's opcode, when it is one commutative opcode applied to its two parameters.
std::optional<Opcode> commutative_combiner(const hlo::Computation& f) {
  std::optional<Opcode> op = hlo::binary_combiner(f);
  bool commutative = op && (*op == Opcode::kAdd || *op == Opcode::kMultiply ||
                            *op == Opcode::kMaximum || *op == Opcode::kMinimum);
  return commutative ? op : std::nullopt;
}

// Whether `init` is a constant x ⊕ init == x holds for (the blocks fold it in more than once).
bool is_identity(Opcode combiner, const Instruction& init) {
  if (init.opcode != Opcode::kConstant || init.shape.dtype == bool_) return false;
  return dispatch(init.shape.dtype, [&]<class T>() {
    if constexpr (std::is_integral_v<T>)
      return init.literal->item<T>() == identity<T>(combiner);
    else
      return hlo::splat(&init) == identity<double>(combiner);
  });
}

// How many blocks a row of n cuts into so that rows · blocks spread evenly over the threads,
// each block at least min_block long; 0 when no count divides n.
std::int64_t block_count(std::int64_t rows, std::int64_t n, int threads, std::int64_t min_block) {
  for (std::int64_t r = 2; r <= kMaxBlocksPerThread * threads && n / r >= min_block; ++r)
    if (n % r == 0 && (rows * r) % threads == 0) return r;
  return 0;
}

Instruction* pad(hlo::Builder& b, Instruction* x, Instruction* value, std::int64_t lo,
                 std::int64_t hi) {
  Ints config;
  Shape dims = x->shape.dims;
  for (std::size_t d = 0; d + 1 < dims.size(); ++d) config.insert(config.end(), {0, 0, 0});
  config.insert(config.end(), {lo, hi, 0});
  dims.back() += lo + hi;
  hlo::Attrs a;
  a.set("padding", config);
  return b.op(Opcode::kPad, hlo::HloShape::array(x->shape.dtype, dims), {x, value}, std::move(a));
}

// Elements [begin, begin + n) of the last dim.
Instruction* last_dim_slice(hlo::Builder& b, Instruction* x, std::int64_t begin, std::int64_t n) {
  Ints config;
  Shape dims = x->shape.dims;
  for (std::size_t d = 0; d + 1 < dims.size(); ++d) config.insert(config.end(), {0, dims[d], 1});
  config.insert(config.end(), {begin, begin + n, 1});
  dims.back() = n;
  hlo::Attrs a;
  a.set("slice", config);
  return b.op(Opcode::kSlice, hlo::HloShape::array(x->shape.dtype, dims), {x}, std::move(a));
}

// The scan of x (..., n) along its last dim as `blocks` blocks of n / blocks.
Instruction* blocked_scan(hlo::Builder& b, const Instruction& scan, Opcode combiner,
                          std::int64_t blocks, bool reverse) {
  Instruction *x = scan.operands[0], *init = scan.operands[1];
  hlo::Computation* f = scan.called[0];
  const Shape& dims = x->shape.dims;
  std::int64_t length = dims.back() / blocks;
  auto block_dim = static_cast<std::int64_t>(dims.size()) - 1;
  Shape by_block(dims.begin(), dims.end() - 1);
  by_block.insert(by_block.end(), {blocks, length});
  Instruction* xb = b.reshape(x, by_block);
  Instruction* totals = b.reduce(xb, init, {block_dim + 1}, combiner);
  // Exclusive: each block's carry folds the totals of the blocks before it (after, reversed).
  Instruction* shifted = reverse ? last_dim_slice(b, pad(b, totals, init, 0, 1), 1, blocks)
                                 : last_dim_slice(b, pad(b, totals, init, 1, 0), 0, blocks);
  Instruction* carries = b.reduce_window(
      shifted, init,
      hlo::prefix_scan_window(shifted->shape.dims, static_cast<int>(block_dim), reverse), f);
  Shape column = by_block;
  column.back() = 1;
  Instruction* seeds =
      pad(b, b.reshape(carries, column), init, reverse ? length - 1 : 0, reverse ? 0 : length - 1);
  Instruction* seeded = b.binary(combiner, xb, seeds);
  Instruction* out = b.reduce_window(
      seeded, init, hlo::prefix_scan_window(by_block, static_cast<int>(block_dim) + 1, reverse), f);
  return b.reshape(out, dims);
}

}  // namespace

bool BlockedPrefixScans::run(hlo::Module& module) {
  if (threads_ < kMinThreads) return false;
  bool changed = false;
  for (hlo::Computation* c : module.computations()) {
    hlo::Builder b(c);
    bool here = false;
    for (Instruction* scan : c->instructions()) {
      std::optional<hlo::PrefixScan> p = hlo::as_prefix_scan(*scan);
      const Shape& dims = scan->shape.dims;
      if (!p || p->axis + 1 != static_cast<int>(dims.size())) continue;
      std::optional<Opcode> combiner = commutative_combiner(*scan->called[0]);
      if (!combiner || !is_identity(*combiner, *scan->operands[1])) continue;
      std::int64_t rows = shape_size(dims) / dims.back();
      if (rows >= threads_) continue;
      std::int64_t blocks = block_count(rows, dims.back(), threads_, min_block_);
      if (blocks == 0) continue;
      c->replace_all_uses(scan, blocked_scan(b, *scan, *combiner, blocks, p->reverse));
      here = true;
    }
    if (here) c->remove_unreachable();
    changed |= here;
  }
  return changed;
}

}  // namespace jx::passes
