// Layout primitives: broadcast_in_dim reshape transpose squeeze iota rev (expand_dims is a
// broadcast_in_dim, as in JAX). No
// arithmetic: every impl only moves elements (or shares the buffer), and every op but iota is
// linear, its transpose moving the cotangent back. Slicing, padding and concatenation are in
// slicing.cpp. Each primitive's rules stand together.
#include <algorithm>
#include <numeric>
#include <set>

#include "jx/lax.hpp"
#include "primitives/elementwise.hpp"
#include "primitives/layout.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"
#include "transforms/batch_rules.hpp"

namespace jx {

Primitive broadcast_in_dim_p("broadcast_in_dim"), reshape_p("reshape"), transpose_p("transpose"),
    squeeze_p("squeeze"), iota_p("iota"), rev_p("rev");

namespace {

using namespace layout;
using trace::bind1;

// reshape, squeeze and a broadcast_in_dim that only adds size-1 dims keep row-major order: the
// buffer is shared (arrays are immutable), only the aval changes.
std::vector<Array> share_buffer(Ins in, const Params&, Avals out) {
  return {with_aval(in[0], out[0])};
}

// ---- broadcast_in_dim[broadcast_dimensions shape sharding] ----
Outs broadcast_in_dim_abstract_eval(Avals in, const Params& params) {
  check_arity(broadcast_in_dim_p, in, 1);
  const ShapedArray& x = in[0];
  Ints shape = ints(params, "shape"), dims = ints(params, "broadcast_dimensions");
  check_shapelike(broadcast_in_dim_p.name, "shape", shape);
  if (static_cast<std::size_t>(x.ndim()) != dims.size())
    fail<ShapeError>(
        broadcast_in_dim_p.name,
        " broadcast_dimensions must have length equal to operand ndim; got broadcast_dimensions ",
        tup(dims), " for operand ndim ", x.ndim(), ".");
  if (shape.size() < dims.size())
    fail<ShapeError>(broadcast_in_dim_p.name,
                     " target broadcast shape must have equal or higher rank to the operand shape; "
                     "got operand ndim ",
                     x.ndim(), " and target broadcast ndim ", shape.size(), ".");
  auto n = static_cast<std::int64_t>(shape.size());
  if (std::any_of(dims.begin(), dims.end(), [n](auto d) { return d < 0 || d >= n; }))
    fail<ShapeError>(broadcast_in_dim_p.name,
                     " broadcast_dimensions must be a subset of output dimensions, got ", tup(dims),
                     " for operand ndim ", x.ndim(), " and shape ", tup(shape), ".");
  auto mismatch = [&](auto i) { return x.shape[i] != 1 && x.shape[i] != shape[dims[i]]; };
  if (any_of_n(dims.size(), mismatch))
    fail<ShapeError>(
        broadcast_in_dim_p.name,
        " operand dimension sizes must either be 1, or be equal to their corresponding dimensions "
        "in the target broadcast shape; got operand of shape ",
        shape_str(x.shape), ", target broadcast shape ", tup(shape), ", broadcast_dimensions ",
        tup(dims), " ");
  if (any_of_n(dims.size(), [&](auto i) { return i > 0 && dims[i] <= dims[i - 1]; }))
    fail<ShapeError>(broadcast_in_dim_p.name,
                     " broadcast_dimensions must be strictly increasing; got broadcast_dimensions ",
                     tup(dims));
  return result(shape, x.dtype, x.weak_type);
}

// One element everywhere: np::zeros and friends, eagerly, at the speed of memory.
Array filled_with(const Array& x, const ShapedArray& out) {
  Array r = make_array(out);
  dispatch(out.dtype, [&]<class T>() {
    std::fill_n(r.impl()->buffer->as<T>(), out.size(), *concrete_buffer(x, "impl").as<T>());
  });
  return r;
}

std::vector<Array> broadcast_in_dim_impl(Ins in, const Params& params, Avals out) {
  if (out[0].size() == in[0].size()) return share_buffer(in, params, out);  // size-1 dims added
  if (in[0].size() == 1) return {filled_with(in[0], out[0])};
  Ints dims = ints(params, "broadcast_dimensions");
  const Shape& xshape = in[0].shape();
  Ints xs = strides(xshape);
  return assemble(in, out[0], [&](const Ints& index) {
    std::int64_t at = 0;  // a size-1 operand dim repeats its only element
    for (std::size_t i = 0; i < dims.size(); ++i)
      if (xshape[i] != 1) at += index[dims[i]] * xs[i];
    return Source{0, at};
  });
}

std::vector<hlo::Instruction*> broadcast_in_dim_lower(hlo::Builder& b, Operands ops,
                                                      const Params& params, Avals out) {
  return {lower_broadcast(b, ops[0], out[0].shape, ints(params, "broadcast_dimensions"))};
}

// Sums the cotangent over the dims broadcast_in_dim created or expanded from size 1.
Array broadcast_in_dim_transpose(const Array& ct, const ShapedArray& x, const Params& params) {
  Ints dims = params.get("broadcast_dimensions").as_ints(), kept, axes;
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (x.shape[i] == ct.shape()[static_cast<std::size_t>(dims[i])]) kept.push_back(dims[i]);
  for (std::int64_t d = 0; d < ct.ndim(); ++d)
    if (std::find(kept.begin(), kept.end(), d) == kept.end()) axes.push_back(d);
  Array summed = axes.empty() ? ct : lax::reduce_sum(ct, axes);
  return summed.shape() == x.shape ? summed : lax::reshape(summed, x.shape);
}

// As JAX 0.11 prints it: the shape (the output's) and sharding never, broadcast_dimensions when
// there are any.
Params broadcast_in_dim_shown(const Params& params) {
  Params shown;
  if (!ints(params, "broadcast_dimensions").empty())
    shown.set("broadcast_dimensions", params.get("broadcast_dimensions"));
  return shown;
}

Params broadcast_in_dim_read(Params parsed, Avals out) {
  if (!parsed.has("broadcast_dimensions")) parsed.set("broadcast_dimensions", Param::ints({}));
  if (!out.empty()) parsed.set("shape", Param::ints(out[0].shape));
  parsed.set("sharding", Param());
  return parsed;
}

// The batch axis goes into the output right after the dim that operand dim b - 1 maps to, so
// broadcast_dimensions stay increasing and the operand needs no transpose.
BatchResult broadcast_in_dim_batch(Ins args, BDims dims, const Params& params) {
  int b = *dims[0];
  Ints bcast = ints(params, "broadcast_dimensions"), shape = ints(params, "shape");
  std::int64_t at = b == 0 ? 0 : bcast[static_cast<std::size_t>(b - 1)] + 1;
  for (auto& d : bcast) d = shift(d, static_cast<int>(at));
  bcast.insert(bcast.begin() + b, at);
  shape.insert(shape.begin() + at, args[0].shape()[static_cast<std::size_t>(b)]);
  return one(lax::broadcast_in_dim(args[0], shape, bcast), at);
}

// ---- transpose[permutation]: out.shape[k] = x.shape[permutation[k]] ----
Outs transpose_abstract_eval(Avals in, const Params& params) {
  check_arity(transpose_p, in, 1);
  Ints perm = ints(params, "permutation"), dims(static_cast<std::size_t>(in[0].ndim()));
  std::iota(dims.begin(), dims.end(), 0);
  if (!std::is_permutation(perm.begin(), perm.end(), dims.begin(), dims.end()))
    fail<ShapeError>(transpose_p.name,
                     " permutation isn't a permutation of operand dimensions, got permutation ",
                     tup(perm), " for operand shape ", shape_str(in[0].shape), ".");
  Shape shape;
  for (auto d : perm) shape.push_back(in[0].shape[d]);
  return result(shape, in[0].dtype, in[0].weak_type);
}

std::vector<Array> transpose_impl(Ins in, const Params& params, Avals out) {
  Ints perm = ints(params, "permutation"), xs = strides(in[0].shape());
  return assemble(in, out[0], [&](const Ints& index) {
    std::int64_t at = 0;
    for (std::size_t k = 0; k < perm.size(); ++k) at += index[k] * xs[perm[k]];
    return Source{0, at};
  });
}

std::vector<hlo::Instruction*> transpose_lower(hlo::Builder& b, Operands ops, const Params& params,
                                               Avals out) {
  return std::vector<hlo::Instruction*>{
      b.op(hlo::Opcode::kTranspose, out_shape(out), {ops[0]},
           attrs_of("dimensions", params.get("permutation").as_ints()))};
}

Ints inverse_permutation(const Ints& perm) {
  Ints inv(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i)
    inv[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
  return inv;
}

Array transpose_transpose(const Array& ct, const ShapedArray&, const Params& params) {
  return lax::transpose(ct, inverse_permutation(ints(params, "permutation")));
}

// The batch axis stays at its position in the output.
BatchResult transpose_batch(Ins args, BDims dims, const Params& params) {
  int b = *dims[0];
  Ints perm;
  for (auto p : ints(params, "permutation")) perm.push_back(shift(p, b));
  return one(lax::transpose(args[0], inserted(perm, b, b)), b);
}

// ---- what reshape and squeeze share ----
// HLO has no squeeze: both lower to a reshape.
std::vector<hlo::Instruction*> reshape_lower(hlo::Builder& b, Operands ops, const Params&,
                                             Avals out) {
  return std::vector<hlo::Instruction*>{b.reshape(ops[0], out[0].shape)};
}

// ---- reshape[dimensions=None new_sizes]: JAX's `dimensions` (transpose first) is always None ----
Outs reshape_abstract_eval(Avals in, const Params& params) {
  check_arity(reshape_p, in, 1);
  Ints sizes = ints(params, "new_sizes");
  if (params.has("dimensions") && !params.get("dimensions").is_none())
    fail<ShapeError>(reshape_p.name,
                     " supports only dimensions=None (transpose first), got dimensions=",
                     params.get("dimensions").str(), ".");
  if (std::any_of(sizes.begin(), sizes.end(), [](auto d) { return d < 0; }))
    fail<ShapeError>(reshape_p.name, " new_sizes must all be positive, got ", tup(sizes), ".");
  std::int64_t n = 1;
  for (auto d : sizes) n = mul_checked(reshape_p.name, n, d);
  if (n != in[0].size())
    fail<ShapeError>(reshape_p.name, " total size must be unchanged, got new_sizes ", tup(sizes),
                     " for shape ", shape_str(in[0].shape), ".");
  return result(sizes, in[0].dtype, in[0].weak_type);
}

// The cotangent takes the operand's shape back.
Array reshape_transpose(const Array& ct, const ShapedArray& x, const Params&) {
  return lax::reshape(ct, x.shape);
}

// Row-major order mixes the batch axis into its neighbours unless it comes first.
BatchResult reshape_batch(Ins args, BDims dims, const Params& params) {
  Array x = batching::move_axis(args[0], *dims[0], 0);
  return one(lax::reshape(x, inserted(ints(params, "new_sizes"), 0, x.shape()[0])), 0);
}

// ---- what squeeze and expand_dims share: their `dimensions` ----
// Canonicalizes negative axes (as JAX's wrappers do) and sorts; out-of-range axes stay as they
// are, for abstract_eval to report.
Ints canonical_axes(Ints axes, std::int64_t ndim) {
  for (auto& a : axes)
    if (a < 0 && a >= -ndim) a += ndim;
  std::sort(axes.begin(), axes.end());
  return axes;
}

// Their checks: unique axes within [0, ndim).
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

// ---- squeeze[dimensions] ----
Outs squeeze_abstract_eval(Avals in, const Params& params) {
  check_arity(squeeze_p, in, 1);
  Ints dims = ints(params, "dimensions");
  const Shape& s = in[0].shape;
  check_axes(squeeze_p.name, dims, s, in[0].ndim(), "[0, ndim)");
  if (std::any_of(dims.begin(), dims.end(), [&](auto d) { return s[d] != 1; }))
    fail<ShapeError>(
        "cannot select an axis to squeeze out which has size not equal to one, got shape=",
        shape_str(s), " and dimensions=", tup(dims));
  Shape shape;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (std::find(dims.begin(), dims.end(), static_cast<std::int64_t>(i)) == dims.end())
      shape.push_back(s[i]);
  return result(shape, in[0].dtype, in[0].weak_type);
}

Array squeeze_transpose(const Array& ct, const ShapedArray&, const Params& params) {
  return lax::expand_dims(ct, ints(params, "dimensions"));
}

BatchResult squeeze_batch(Ins args, BDims dims, const Params& params) {
  int b = *dims[0], out = b;
  Ints squeezed;
  for (auto d : ints(params, "dimensions")) {
    squeezed.push_back(shift(d, b));
    if (d < b) --out;  // each squeezed dim before the batch axis moves it left
  }
  return one(lax::squeeze(args[0], squeezed), out);
}

// ---- iota[dimension dtype shape]: no operands ----
Outs iota_abstract_eval(Avals in, const Params& params) {
  check_arity(iota_p, in, 0);
  Ints shape = ints(params, "shape");
  DType dtype = params.get("dtype").as_dtype();
  std::int64_t dim = params.get("dimension").as_int();
  check_shapelike(iota_p.name, "shape", shape);
  check_dtype(iota_p.name, dtype, kNumeric);
  if (dim < 0 || dim >= static_cast<std::int64_t>(shape.size()))
    fail<ShapeError>(iota_p.name,
                     " dimension must be between 0 and len(shape), got dimension=", dim,
                     " for shape=", tup(shape));
  return result(shape, dtype, false);
}

std::vector<Array> iota_impl(Ins, const Params& params, Avals out) {
  std::int64_t dim = params.get("dimension").as_int();
  Array r = make_array(out[0]);
  dispatch(out[0].dtype, [&]<class T>() {
    T* o = r.impl()->buffer->as<T>();
    for_each_index(out[0].shape, [&](const Ints& index) { *o++ = static_cast<T>(index[dim]); });
  });
  return std::vector<Array>{r};
}

std::vector<hlo::Instruction*> iota_lower(hlo::Builder& b, Operands, const Params& params,
                                          Avals out) {
  return std::vector<hlo::Instruction*>{
      b.op(hlo::Opcode::kIota, out_shape(out), {},
           attrs_of("iota_dimension", params.get("dimension").as_int()))};
}

// ---- rev[dimensions]: the operand read back to front along each of `dimensions` ----
Outs rev_abstract_eval(Avals in, const Params& params) {
  check_arity(rev_p, in, 1);
  Ints dims = ints(params, "dimensions");
  check_shapelike(rev_p.name, "dimensions", dims);
  if (std::set<std::int64_t>(dims.begin(), dims.end()).size() != dims.size())
    fail<ShapeError>(rev_p.name, " dimensions must be unique, got ", tup(dims), ".");
  if (std::any_of(dims.begin(), dims.end(), [&](auto d) { return d >= in[0].ndim(); }))
    fail<ShapeError>(rev_p.name, " dimensions must all be less than operand ndim, got dimensions ",
                     tup(dims), " for operand ndim ", in[0].ndim(), ".");
  return result(in[0].shape, in[0].dtype, in[0].weak_type);
}

std::vector<Array> rev_impl(Ins in, const Params& params, Avals out) {
  const Shape& s = in[0].shape();
  std::vector<bool> flipped(s.size(), false);
  for (auto d : ints(params, "dimensions")) flipped[static_cast<std::size_t>(d)] = true;
  Ints xs = strides(s);
  return assemble(in, out[0], [&](const Ints& index) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < index.size(); ++d)
      at += (flipped[d] ? s[d] - 1 - index[d] : index[d]) * xs[d];
    return Source{0, at};
  });
}

std::vector<hlo::Instruction*> rev_lower(hlo::Builder& b, Operands ops, const Params& params,
                                         Avals out) {
  Ints dims = ints(params, "dimensions");
  if (dims.empty()) return std::vector<hlo::Instruction*>{ops[0]};
  return std::vector<hlo::Instruction*>{
      b.op(hlo::Opcode::kReverse, out_shape(out), {ops[0]}, attrs_of("dimensions", dims))};
}

// Its own transpose: the cotangent reversed back.
Array rev_transpose(const Array& ct, const ShapedArray&, const Params& params) {
  return lax::rev(ct, ints(params, "dimensions"));
}

BatchResult rev_batch(Ins args, BDims dims, const Params& params) {
  int b = *dims[0];
  Ints reversed;
  for (auto d : ints(params, "dimensions")) reversed.push_back(shift(d, b));
  return one(lax::rev(args[0], reversed), b);
}

const bool kRegistered = [] {
  broadcast_in_dim_p.abstract_eval = broadcast_in_dim_abstract_eval;
  broadcast_in_dim_p.impl = broadcast_in_dim_impl;
  broadcast_in_dim_p.lower = broadcast_in_dim_lower;
  ad::def_linear(broadcast_in_dim_p);
  broadcast_in_dim_p.transpose = unary_transpose(broadcast_in_dim_transpose);
  broadcast_in_dim_p.batch = broadcast_in_dim_batch;
  broadcast_in_dim_p.text = {broadcast_in_dim_shown, broadcast_in_dim_read};

  transpose_p.abstract_eval = transpose_abstract_eval;
  transpose_p.impl = transpose_impl;
  transpose_p.lower = transpose_lower;
  ad::def_linear(transpose_p);
  transpose_p.transpose = unary_transpose(transpose_transpose);
  transpose_p.batch = transpose_batch;

  reshape_p.abstract_eval = reshape_abstract_eval;
  reshape_p.impl = share_buffer;
  reshape_p.lower = reshape_lower;
  ad::def_linear(reshape_p);
  reshape_p.transpose = unary_transpose(reshape_transpose);
  reshape_p.batch = reshape_batch;

  squeeze_p.abstract_eval = squeeze_abstract_eval;
  squeeze_p.impl = share_buffer;
  squeeze_p.lower = reshape_lower;
  ad::def_linear(squeeze_p);
  squeeze_p.transpose = unary_transpose(squeeze_transpose);
  squeeze_p.batch = squeeze_batch;

  // iota has no operands, so it is never batched.
  iota_p.abstract_eval = iota_abstract_eval;
  iota_p.impl = iota_impl;
  iota_p.lower = iota_lower;
  ad::def_zero_jvp(iota_p);

  rev_p.abstract_eval = rev_abstract_eval;
  rev_p.impl = rev_impl;
  rev_p.lower = rev_lower;
  ad::def_linear(rev_p);
  rev_p.transpose = unary_transpose(rev_transpose);
  rev_p.batch = rev_batch;
  return true;
}();

}  // namespace

namespace lax {

Array broadcast_in_dim(const Array& x, const Shape& shape, const Ints& broadcast_dimensions) {
  return bind1(broadcast_in_dim_p, {x},
               {{"broadcast_dimensions", Param::ints(broadcast_dimensions)},
                {"shape", Param::ints(shape)},
                {"sharding", Param()}});
}

Array reshape(const Array& x, const Shape& new_sizes) {
  return bind1(
      reshape_p, {x},
      {{"dimensions", Param()}, {"new_sizes", Param::ints(new_sizes)}, {"sharding", Param()}});
}

Array transpose(const Array& x, const Ints& permutation) {
  return bind1(transpose_p, {x}, {{"permutation", Param::ints(permutation)}});
}

Array squeeze(const Array& x, const Ints& dimensions) {
  Ints dims = canonical_axes(dimensions, x.ndim());
  return bind1(squeeze_p, {x}, {{"dimensions", Param::ints(dims)}});
}

// `dimensions` are the positions of the new size-1 dims in the output.
Array expand_dims(const Array& x, const Ints& dimensions) {
  std::int64_t ndim_out = x.ndim() + static_cast<std::int64_t>(dimensions.size());
  Ints added = canonical_axes(dimensions, ndim_out);
  check_axes("expand_dims", added, x.shape(), ndim_out, "[0, ndim + len(dimensions))");
  Shape shape;
  Ints kept;
  for (std::int64_t i = 0, next = 0; i < ndim_out; ++i) {
    bool is_added = std::find(added.begin(), added.end(), i) != added.end();
    shape.push_back(is_added ? 1 : x.shape()[static_cast<std::size_t>(next++)]);
    if (!is_added) kept.push_back(i);
  }
  return broadcast_in_dim(x, shape, kept);
}

Array iota(DType dtype, const Shape& shape, std::int64_t dimension) {
  return bind1(iota_p, {},
               {{"dimension", Param::integer(dimension)},
                {"dtype", Param::dtype(dtype)},
                {"shape", Param::ints(shape)},
                {"sharding", Param()}});
}

Array rev(const Array& x, const Ints& dimensions) {
  return bind1(rev_p, {x}, {{"dimensions", Param::ints(dimensions)}});
}

}  // namespace lax
}  // namespace jx
