// Layout primitives: broadcast_in_dim reshape transpose squeeze expand_dims iota. No
// arithmetic: every impl only moves elements (or shares the buffer). Slicing, padding and
// concatenation are in slicing.cpp.
#include <algorithm>
#include <numeric>
#include <set>

#include "jx/lax.hpp"
#include "transforms/ad_rules.hpp"
#include "transforms/batch_rules.hpp"
#include "primitives/elementwise.hpp"
#include "primitives/layout.hpp"
#include "trace/tracer.hpp"

namespace jx {

Primitive broadcast_in_dim_p("broadcast_in_dim"), reshape_p("reshape"), transpose_p("transpose"),
    squeeze_p("squeeze"), expand_dims_p("expand_dims"), iota_p("iota");

namespace {

using namespace layout;
using trace::bind1;

// Canonicalizes negative axes (as JAX's wrappers do) and sorts; out-of-range axes stay as they
// are, for abstract_eval to report.
Ints canonical_axes(Ints axes, std::int64_t ndim) {
  for (auto& a : axes)
    if (a < 0 && a >= -ndim) a += ndim;
  std::sort(axes.begin(), axes.end());
  return axes;
}

// The checks squeeze and expand_dims share: unique axes within [0, ndim).
void check_axes(const std::string& op, const Ints& dims, const Shape& shape, std::int64_t ndim,
                const char* range) {
  auto msg = [&](const std::string& what) {
    fail<ShapeError>(op, " dimensions ", what, ": got shape=", shape_str(shape),
                     " and dimensions=", tup(dims));
  };
  if (std::set<std::int64_t>(dims.begin(), dims.end()).size() != dims.size()) msg("are not unique");
  for (auto d : dims)
    if (d < 0 || d >= ndim) msg(std::string("outside range ") + range);
}

// reshape, squeeze and expand_dims keep row-major order: the buffer is shared (arrays are
// immutable), only the aval changes.
std::vector<Array> share_buffer(Ins in, const Params&, Avals out) {
  return {with_aval(in[0], out[0])};
}

// ---- broadcast_in_dim[broadcast_dimensions shape] ----
void def_broadcast_in_dim(Primitive& p) {
  p.abstract_eval = [&p](Avals in, const Params& params) {
    check_arity(p, in, 1);
    const ShapedArray& x = in[0];
    Ints shape = ints(params, "shape"), dims = ints(params, "broadcast_dimensions");
    check_shapelike(p.name, "shape", shape);
    if (static_cast<std::size_t>(x.ndim()) != dims.size())
      fail<ShapeError>(p.name,
                       " broadcast_dimensions must have length equal to operand ndim; got "
                       "broadcast_dimensions ",
                       tup(dims), " for operand ndim ", x.ndim(), ".");
    if (shape.size() < dims.size())
      fail<ShapeError>(p.name,
                       " target broadcast shape must have equal or higher rank to the "
                       "operand shape; got operand ndim ",
                       x.ndim(), " and target broadcast ndim ", shape.size(), ".");
    auto n = static_cast<std::int64_t>(shape.size());
    if (std::any_of(dims.begin(), dims.end(), [n](auto d) { return d < 0 || d >= n; }))
      fail<ShapeError>(p.name, " broadcast_dimensions must be a subset of output dimensions, got ",
                       tup(dims), " for operand ndim ", x.ndim(), " and shape ", tup(shape), ".");
    auto mismatch = [&](auto i) { return x.shape[i] != 1 && x.shape[i] != shape[dims[i]]; };
    if (any_of_n(dims.size(), mismatch))
      fail<ShapeError>(p.name,
                       " operand dimension sizes must either be 1, or be equal to their "
                       "corresponding dimensions in the target broadcast shape; got operand of "
                       "shape ",
                       shape_str(x.shape), ", target broadcast shape ", tup(shape),
                       ", broadcast_dimensions ", tup(dims), " ");
    if (any_of_n(dims.size(), [&](auto i) { return i > 0 && dims[i] <= dims[i - 1]; }))
      fail<ShapeError>(p.name,
                       " broadcast_dimensions must be strictly increasing; got "
                       "broadcast_dimensions ",
                       tup(dims));
    return result(p.name, shape, x.dtype, x.weak_type);
  };
  p.impl = [](Ins in, const Params& params, Avals out) {
    Ints dims = ints(params, "broadcast_dimensions");
    const Shape& xshape = in[0].shape();
    Ints xs = strides(xshape);
    return assemble(in, out[0], [&](const Ints& index) {
      std::int64_t at = 0;  // a size-1 operand dim repeats its only element
      for (std::size_t i = 0; i < dims.size(); ++i)
        if (xshape[i] != 1) at += index[dims[i]] * xs[i];
      return Source{0, at};
    });
  };
}

// ---- reshape[dimensions=None new_sizes]: JAX's `dimensions` (transpose first) is always None ----
void def_reshape(Primitive& p) {
  p.abstract_eval = [&p](Avals in, const Params& params) {
    check_arity(p, in, 1);
    Ints sizes = ints(params, "new_sizes");
    if (params.has("dimensions") && !params.get("dimensions").is_none())
      fail<ShapeError>(p.name, " supports only dimensions=None (transpose first), got dimensions=",
                       params.get("dimensions").str(), ".");
    if (std::any_of(sizes.begin(), sizes.end(), [](auto d) { return d < 0; }))
      fail<ShapeError>(p.name, " new_sizes must all be positive, got ", tup(sizes), ".");
    std::int64_t n = 1;
    for (auto d : sizes) n = mul_checked(p.name, n, d);
    if (n != in[0].size())
      fail<ShapeError>(p.name, " total size must be unchanged, got new_sizes ", tup(sizes),
                       " for shape ", shape_str(in[0].shape), ".");
    return result(p.name, sizes, in[0].dtype, in[0].weak_type);
  };
  p.impl = share_buffer;
}

// ---- transpose[permutation]: out.shape[k] = x.shape[permutation[k]] ----
void def_transpose(Primitive& p) {
  p.abstract_eval = [&p](Avals in, const Params& params) {
    check_arity(p, in, 1);
    Ints perm = ints(params, "permutation"), dims(static_cast<std::size_t>(in[0].ndim()));
    std::iota(dims.begin(), dims.end(), 0);
    if (!std::is_permutation(perm.begin(), perm.end(), dims.begin(), dims.end()))
      fail<ShapeError>(p.name,
                       " permutation isn't a permutation of operand dimensions, got "
                       "permutation ",
                       tup(perm), " for operand shape ", shape_str(in[0].shape), ".");
    Shape shape;
    for (auto d : perm) shape.push_back(in[0].shape[d]);
    return result(p.name, shape, in[0].dtype, in[0].weak_type);
  };
  p.impl = [](Ins in, const Params& params, Avals out) {
    Ints perm = ints(params, "permutation"), xs = strides(in[0].shape());
    return assemble(in, out[0], [&](const Ints& index) {
      std::int64_t at = 0;
      for (std::size_t k = 0; k < perm.size(); ++k) at += index[k] * xs[perm[k]];
      return Source{0, at};
    });
  };
}

// ---- squeeze[dimensions] and expand_dims[dimensions]: only the shape changes ----
void def_squeeze(Primitive& p) {
  p.abstract_eval = [&p](Avals in, const Params& params) {
    check_arity(p, in, 1);
    Ints dims = ints(params, "dimensions");
    const Shape& s = in[0].shape;
    check_axes(p.name, dims, s, in[0].ndim(), "[0, ndim)");
    if (std::any_of(dims.begin(), dims.end(), [&](auto d) { return s[d] != 1; }))
      fail<ShapeError>(
          "cannot select an axis to squeeze out which has size not equal to one, "
          "got shape=",
          shape_str(s), " and dimensions=", tup(dims));
    Shape shape;
    for (std::size_t i = 0; i < s.size(); ++i)
      if (std::find(dims.begin(), dims.end(), static_cast<std::int64_t>(i)) == dims.end())
        shape.push_back(s[i]);
    return result(p.name, shape, in[0].dtype, in[0].weak_type);
  };
  p.impl = share_buffer;
}

// expand_dims is jx's own: `dimensions` are the positions of new size-1 dims in the output.
void def_expand_dims(Primitive& p) {
  p.abstract_eval = [&p](Avals in, const Params& params) {
    check_arity(p, in, 1);
    Ints dims = ints(params, "dimensions");
    const Shape& s = in[0].shape;
    std::int64_t ndim_out = in[0].ndim() + static_cast<std::int64_t>(dims.size());
    check_axes(p.name, dims, s, ndim_out, "[0, ndim + len(dimensions))");
    Shape shape;
    auto next = s.begin();
    for (std::int64_t i = 0; i < ndim_out; ++i)
      shape.push_back(std::find(dims.begin(), dims.end(), i) != dims.end() ? 1 : *next++);
    return result(p.name, shape, in[0].dtype, in[0].weak_type);
  };
  p.impl = share_buffer;
}

// ---- iota[dimension dtype shape]: no operands ----
void def_iota(Primitive& p) {
  p.abstract_eval = [&p](Avals in, const Params& params) {
    check_arity(p, in, 0);
    Ints shape = ints(params, "shape");
    DType dtype = params.get("dtype").as_dtype();
    std::int64_t dim = params.get("dimension").as_int();
    check_shapelike(p.name, "shape", shape);
    check_dtype(p.name, dtype, kNumeric);
    if (dim < 0 || dim >= static_cast<std::int64_t>(shape.size()))
      fail<ShapeError>(p.name, " dimension must be between 0 and len(shape), got dimension=", dim,
                       " for shape=", tup(shape));
    return result(p.name, shape, dtype, false);
  };
  p.impl = [](Ins, const Params& params, Avals out) {
    std::int64_t dim = params.get("dimension").as_int();
    Array r = make_array(out[0]);
    dispatch(out[0].dtype, [&]<class T>() {
      T* o = r.impl()->buffer->as<T>();
      for_each_index(out[0].shape, [&](const Ints& index) { *o++ = static_cast<T>(index[dim]); });
    });
    return std::vector<Array>{r};
  };
}

const bool kRegistered =
    (def_broadcast_in_dim(broadcast_in_dim_p), def_reshape(reshape_p), def_transpose(transpose_p),
     def_squeeze(squeeze_p), def_expand_dims(expand_dims_p), def_iota(iota_p), true);

// Lowering (squeeze and expand_dims are reshapes).
const bool kLowered = [] {
  // HLO's broadcast maps operand dims to equal-sized output dims: size-1 dims that expand are
  // reshaped away first.
  broadcast_in_dim_p.lower = [](hlo::Builder& b, Operands ops, const Params& params, Avals out) {
    Ints dims = params.get("broadcast_dimensions").as_ints();
    Shape kept_shape;
    Ints kept_dims;
    for (std::size_t i = 0; i < dims.size(); ++i) {
      std::int64_t size = ops[0]->shape.dims[i];
      if (size == 1 && out[0].shape[static_cast<std::size_t>(dims[i])] != 1) continue;
      kept_shape.push_back(size);
      kept_dims.push_back(dims[i]);
    }
    hlo::Instruction* x = b.reshape(ops[0], kept_shape);
    return std::vector<hlo::Instruction*>{b.broadcast(x, out[0].shape, kept_dims)};
  };
  auto reshape_rule = [](hlo::Builder& b, Operands ops, const Params&, Avals out) {
    return std::vector<hlo::Instruction*>{b.reshape(ops[0], out[0].shape)};
  };
  reshape_p.lower = squeeze_p.lower = expand_dims_p.lower = reshape_rule;
  transpose_p.lower = [](hlo::Builder& b, Operands ops, const Params& params, Avals out) {
    return std::vector<hlo::Instruction*>{
        b.op(hlo::Opcode::kTranspose, out_shape(out), {ops[0]},
             attrs_of("dimensions", params.get("permutation").as_ints()))};
  };
  iota_p.lower = [](hlo::Builder& b, Operands, const Params& params, Avals out) {
    return std::vector<hlo::Instruction*>{
        b.op(hlo::Opcode::kIota, out_shape(out), {},
             attrs_of("iota_dimension", params.get("dimension").as_int()))};
  };
  return true;
}();

// ---- differentiation: every layout op is linear; each transpose moves the cotangent back ----
Ints inverse_permutation(const Ints& perm) {
  Ints inv(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i)
    inv[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
  return inv;
}

// Sums the cotangent over the dims broadcast_in_dim created or expanded from size 1.
Array transpose_broadcast(const Array& ct, const ShapedArray& x, const Params& params) {
  Ints dims = params.get("broadcast_dimensions").as_ints(), kept, axes;
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (x.shape[i] == ct.shape()[static_cast<std::size_t>(dims[i])]) kept.push_back(dims[i]);
  for (std::int64_t d = 0; d < ct.ndim(); ++d)
    if (std::find(kept.begin(), kept.end(), d) == kept.end()) axes.push_back(d);
  Array summed = axes.empty() ? ct : lax::reduce_sum(ct, axes);
  return summed.shape() == x.shape ? summed : lax::reshape(summed, x.shape);
}

const bool kDifferentiated = [] {
  for (Primitive* p : {&broadcast_in_dim_p, &reshape_p, &transpose_p, &squeeze_p, &expand_dims_p})
    ad::def_linear(*p);
  ad::def_zero_jvp(iota_p);

  broadcast_in_dim_p.transpose = unary_transpose(transpose_broadcast);
  reshape_p.transpose = unary_transpose([](const Array& ct, const ShapedArray& x, const Params&) {
    return lax::reshape(ct, x.shape);
  });
  transpose_p.transpose =
      unary_transpose([](const Array& ct, const ShapedArray&, const Params& params) {
        return lax::transpose(ct, inverse_permutation(ints(params, "permutation")));
      });
  squeeze_p.transpose =
      unary_transpose([](const Array& ct, const ShapedArray&, const Params& params) {
        return lax::expand_dims(ct, ints(params, "dimensions"));
      });
  expand_dims_p.transpose =
      unary_transpose([](const Array& ct, const ShapedArray&, const Params& params) {
        return lax::squeeze(ct, ints(params, "dimensions"));
      });
  return true;
}();

// ---- batching ----
// The batch axis goes into the output right after the dim that operand dim b - 1 maps to, so
// broadcast_dimensions stay increasing and the operand needs no transpose.
BatchResult batch_broadcast_in_dim(Ins args, BDims dims, const Params& params) {
  int b = *dims[0];
  Ints bcast = ints(params, "broadcast_dimensions"), shape = ints(params, "shape");
  std::int64_t at = b == 0 ? 0 : bcast[static_cast<std::size_t>(b - 1)] + 1;
  for (auto& d : bcast) d = shift(d, static_cast<int>(at));
  bcast.insert(bcast.begin() + b, at);
  shape.insert(shape.begin() + at, args[0].shape()[static_cast<std::size_t>(b)]);
  return one(lax::broadcast_in_dim(args[0], shape, bcast), at);
}

// Row-major order mixes the batch axis into its neighbours unless it comes first.
BatchResult batch_reshape(Ins args, BDims dims, const Params& params) {
  Array x = batching::move_axis(args[0], *dims[0], 0);
  return one(lax::reshape(x, inserted(ints(params, "new_sizes"), 0, x.shape()[0])), 0);
}

// The batch axis stays at its position in the output.
BatchResult batch_transpose(Ins args, BDims dims, const Params& params) {
  int b = *dims[0];
  Ints perm;
  for (auto p : ints(params, "permutation")) perm.push_back(shift(p, b));
  return one(lax::transpose(args[0], inserted(perm, b, b)), b);
}

BatchResult batch_squeeze(Ins args, BDims dims, const Params& params) {
  int b = *dims[0], out = b;
  Ints squeezed;
  for (auto d : ints(params, "dimensions")) {
    squeezed.push_back(shift(d, b));
    if (d < b) --out;  // each squeezed dim before the batch axis moves it left
  }
  return one(lax::squeeze(args[0], squeezed), out);
}

// `dimensions` are output positions: the batch axis goes right after the output position of
// operand dim b - 1, and new dims at or past it shift by one.
BatchResult batch_expand_dims(Ins args, BDims dims, const Params& params) {
  int b = *dims[0];
  Ints added = ints(params, "dimensions");
  std::int64_t at = 0;
  for (std::int64_t pos = 0, seen = 0; seen < b; ++pos)
    if (std::find(added.begin(), added.end(), pos) == added.end() && ++seen == b) at = pos + 1;
  for (auto& d : added) d = shift(d, static_cast<int>(at));
  return one(lax::expand_dims(args[0], added), at);
}

// iota has no operands, so it is never batched.
const bool kBatched = [] {
  broadcast_in_dim_p.batch = batch_broadcast_in_dim;
  reshape_p.batch = batch_reshape;
  transpose_p.batch = batch_transpose;
  squeeze_p.batch = batch_squeeze;
  expand_dims_p.batch = batch_expand_dims;
  return true;
}();

}  // namespace

namespace lax {

Array broadcast_in_dim(const Array& x, const Shape& shape, const Ints& broadcast_dimensions) {
  return bind1(
      broadcast_in_dim_p, {x},
      {{"broadcast_dimensions", Param::ints(broadcast_dimensions)}, {"shape", Param::ints(shape)}});
}

Array reshape(const Array& x, const Shape& new_sizes) {
  return bind1(reshape_p, {x}, {{"dimensions", Param()}, {"new_sizes", Param::ints(new_sizes)}});
}

Array transpose(const Array& x, const Ints& permutation) {
  return bind1(transpose_p, {x}, {{"permutation", Param::ints(permutation)}});
}

Array squeeze(const Array& x, const Ints& dimensions) {
  Ints dims = canonical_axes(dimensions, x.ndim());
  return bind1(squeeze_p, {x}, {{"dimensions", Param::ints(dims)}});
}

Array expand_dims(const Array& x, const Ints& dimensions) {
  Ints dims = canonical_axes(dimensions, x.ndim() + static_cast<std::int64_t>(dimensions.size()));
  return bind1(expand_dims_p, {x}, {{"dimensions", Param::ints(dims)}});
}

Array iota(DType dtype, const Shape& shape, std::int64_t dimension) {
  return bind1(iota_p, {},
               {{"dimension", Param::integer(dimension)},
                {"dtype", Param::dtype(dtype)},
                {"shape", Param::ints(shape)}});
}

}  // namespace lax
}  // namespace jx
