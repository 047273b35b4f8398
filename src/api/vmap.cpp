// vmap over flat leaves: checks the axes, traces f on one example's types, batches its jaxpr
// (src/transforms/vmap.cpp) and runs the result.
#include <sstream>

#include "jaxpr/dce.hpp"
#include "jx/detail/vmap_impl.hpp"
#include "jx/transforms.hpp"
#include "support/format.hpp"
#include "trace/staging.hpp"
#include "transforms/vmap.hpp"

namespace jx::detail {
namespace {

// A negative axis counts from the end; the result is checked against the rank.
int canonical_axis(int axis, const Array& x, int argnum) {
  int rank = x.ndim();
  int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    std::ostringstream os;
    os << "vmap was requested to map its argument " << argnum << " along axis " << axis
       << ", which implies that its rank should be at least " << (axis < 0 ? -axis : axis + 1)
       << ", but is only " << rank << " (its shape is " << shape_str(x.shape()) << ")";
    throw ShapeError(os.str());
  }
  return a;
}

}  // namespace

std::vector<Array> vmap_flat(const std::function<std::vector<Array>(const std::vector<Array>&)>& f,
                             const std::vector<Array>& leaves,
                             const std::vector<std::optional<int>>& in_axes,
                             const std::vector<int>& arg_of_leaf,
                             const std::function<std::vector<std::optional<int>>()>& out_axes) {
  std::vector<BatchDim> dims;
  std::vector<ShapedArray> avals;
  std::optional<std::int64_t> size;
  bool consistent = true;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    ShapedArray aval = leaves[i].aval();
    BatchDim d;
    if (in_axes[i]) {
      d = canonical_axis(*in_axes[i], leaves[i], arg_of_leaf[i]);
      std::int64_t n = aval.shape[static_cast<std::size_t>(*d)];
      consistent = consistent && (!size || *size == n);
      if (!size) size = n;
      aval.shape.erase(aval.shape.begin() + *d);
    }
    dims.push_back(d);
    avals.push_back(aval);
  }
  if (!size) throw ShapeError("vmap must have at least one non-None value in in_axes");
  if (!consistent) {
    std::ostringstream os;
    os << "vmap got inconsistent sizes for array axes to be mapped:";
    for (std::size_t i = 0; i < leaves.size(); ++i)
      if (dims[i])
        os << "\n  * argument " << arg_of_leaf[i] << " of type " << leaves[i].aval().str()
           << " has size " << leaves[i].shape()[static_cast<std::size_t>(*dims[i])]
           << " along axis " << *dims[i];
    throw ShapeError(os.str());
  }
  ClosedJaxprData j = trace::trace_to_jaxpr(f, avals, "vmap");
  std::vector<std::optional<int>> out_axis_of = out_axes();
  std::vector<ShapedArray> out_avals = j.jaxpr.out_avals();
  std::vector<BatchDim> out_dims;
  for (std::size_t k = 0; k < out_avals.size(); ++k) {
    const ShapedArray& out = out_avals[k];
    const std::optional<int>& out_axis = out_axis_of.at(k);
    BatchDim d;
    if (out_axis) {
      int rank = out.ndim() + 1;
      d = *out_axis < 0 ? *out_axis + rank : *out_axis;
      if (*d < 0 || *d >= rank)
        throw ShapeError("vmap out_axes " + std::to_string(*out_axis) +
                         " is out of range for an output of rank " + std::to_string(rank) + " (" +
                         out.str() + " with the batch axis)");
    }
    out_dims.push_back(d);
  }
  ClosedJaxprData batched = dce_jaxpr(vmap_jaxpr(j, dims, *size, out_dims)).jaxpr;
  return eval_jaxpr(batched.jaxpr, batched.consts, leaves);
}

}  // namespace jx::detail
