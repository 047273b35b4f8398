#include "transforms/batch_rules.hpp"

#include <numeric>

#include "jx/lax.hpp"
#include "support/check.hpp"
#include "trace/tracer.hpp"

namespace jx::batching {

std::int64_t batch_size(std::span<const Array> args, std::span<const BatchDim> dims) {
  for (std::size_t k = 0; k < args.size(); ++k)
    if (dims[k]) return args[k].shape()[static_cast<std::size_t>(*dims[k])];
  JX_CHECK(false, "batch_size: no operand is batched");
  return 0;
}

Array move_axis(const Array& x, int from, int to) {
  if (from == to) return x;
  std::vector<std::int64_t> perm(static_cast<std::size_t>(x.ndim()));
  std::iota(perm.begin(), perm.end(), 0);
  perm.erase(perm.begin() + from);
  perm.insert(perm.begin() + to, from);
  return lax::transpose(x, perm);
}

Array batch_at(const Array& x, BatchDim dim, std::int64_t size, int at) {
  if (dim) return move_axis(x, *dim, at);
  Shape shape = x.shape();
  shape.insert(shape.begin() + at, size);
  std::vector<std::int64_t> dims;
  for (int d = 0; d < x.ndim(); ++d) dims.push_back(shift(d, at));
  return lax::broadcast_in_dim(x, shape, dims);
}

void def_elementwise_batch(Primitive& p) {
  p.batch = [&p](std::span<const Array> args, std::span<const BatchDim> dims,
                 const Params& params) {
    if (args.size() == 1) return BatchResult{trace::bind(p, {args[0]}, params), {dims[0]}};
    std::int64_t size = batch_size(args, dims);
    // The unbatched shape of the result: the operands' (0-d and size-1 dims broadcast).
    Shape shape;
    for (std::size_t k = 0; k < args.size(); ++k) {
      Shape s = args[k].shape();
      if (dims[k]) s.erase(s.begin() + *dims[k]);
      if (s.size() > shape.size()) shape = s;
      if (s.size() == shape.size())
        for (std::size_t d = 0; d < s.size(); ++d) shape[d] = std::max(shape[d], s[d]);
    }
    Shape full{size};
    full.insert(full.end(), shape.begin(), shape.end());
    std::vector<Array> operands;
    for (std::size_t k = 0; k < args.size(); ++k) {
      // An unbatched 0-d operand of a shaped result stays 0-d: every elementwise primitive
      // broadcasts it. Where each example's result is 0-d, all operands become [size].
      if (!dims[k] && args[k].ndim() == 0 && !shape.empty()) {
        operands.push_back(args[k]);
        continue;
      }
      Array x = batch_at(args[k], dims[k], size, 0);
      // A batched 0-d operand is now [size]: broadcast it over the result's other axes.
      if (x.ndim() != static_cast<int>(full.size())) x = lax::broadcast_in_dim(x, full, {0});
      operands.push_back(x);
    }
    std::vector<Array> outs = trace::bind(p, std::move(operands), params);
    return BatchResult{outs, std::vector<BatchDim>(outs.size(), 0)};
  };
}

}  // namespace jx::batching
