// Layout primitives: broadcast_in_dim reshape transpose squeeze expand_dims slice dynamic_slice
// dynamic_update_slice concatenate pad iota. No arithmetic: every impl only moves elements.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>

#include "core/dtype_dispatch.hpp"
#include "jx/lax.hpp"
#include "primitives/ad_rules.hpp"
#include "primitives/batch_rules.hpp"
#include "primitives/elementwise.hpp"
#include "primitives/indexing.hpp"
#include "support/format.hpp"
#include "trace/tracer.hpp"

namespace jx {

Primitive broadcast_in_dim_p("broadcast_in_dim"), reshape_p("reshape"), transpose_p("transpose"),
    squeeze_p("squeeze"), expand_dims_p("expand_dims"), slice_p("slice"),
    dynamic_slice_p("dynamic_slice"), dynamic_update_slice_p("dynamic_update_slice"),
    concatenate_p("concatenate"), pad_p("pad"), iota_p("iota");

namespace {

using trace::bind1;
using Ints = std::vector<std::int64_t>;
using Avals = std::span<const ShapedArray>;
using Outs = std::vector<ShapedArray>;
using Ins = std::span<const Array>;

std::string tup(const Ints& v) { return detail::tuple_str(v); }

template <class E, class... A>
[[noreturn]] void fail(const A&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw E(os.str());
}

// Operands listed for messages, each shown by f: "(2, 3), (4,)", "int32, float32".
template <class F>
std::string list(Avals in, F f) {
  std::vector<std::string> s;
  for (const auto& a : in) s.push_back(f(a));
  return detail::join(s, ", ");
}
std::string shapes_str(Avals in) {
  return list(in, [](auto& a) { return shape_str(a.shape); });
}
std::string dtypes_str(Avals in) {
  return list(in, [](auto& a) { return std::string(dtype_name(a.dtype)); });
}
// "(i32[], f32[2])": index operands, shown by their types.
std::string avals_str(Avals in) {
  return "(" + list(in, [](auto& a) { return a.str(); }) + (in.size() == 1 ? ",)" : ")");
}

// Whether pred(i) holds for some i in [0, n): most rules check every dim or every operand.
template <class P>
bool any_of_n(std::size_t n, P pred) {
  for (std::size_t i = 0; i < n; ++i)
    if (pred(i)) return true;
  return false;
}

// Parsed jaxprs can hand a rule any operand count; the wrappers never do.
void check_arity(const Primitive& p, Avals in, std::size_t n, bool or_more = false) {
  if (in.size() == n || (or_more && in.size() > n)) return;
  fail<TypeError>(p.name, " takes ", or_more ? "at least " : "", n, " operand(s), got ", in.size(),
                  ".");
}

// JAX's _check_shapelike: every entry of a shape-like param is >= 0 (> 0 for strides).
void check_shapelike(const std::string& op, const char* what, const Ints& v,
                     bool positive = false) {
  if (std::any_of(v.begin(), v.end(), [&](auto d) { return d < (positive ? 1 : 0); }))
    fail<ShapeError>(op, " ", what, " must have every element be ",
                     positive ? "strictly positive" : "nonnegative", ", got ", tup(v), ".");
}

// Sizes computed from user params must not overflow: signed overflow is UB.
std::int64_t add_checked(const std::string& op, std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail<ShapeError>(op, " result size overflows int64.");
  return r;
}
std::int64_t mul_checked(const std::string& op, std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail<ShapeError>(op, " result size overflows int64.");
  return r;
}

// The single result of a rule; its byte size must be countable, or allocating it would overflow.
Outs result(const std::string& op, Shape shape, DType dtype, bool weak) {
  std::int64_t bytes = static_cast<std::int64_t>(itemsize(dtype));
  for (auto d : shape) bytes = mul_checked(op, bytes, d);
  return {ShapedArray{std::move(shape), dtype, weak}};
}

Ints ints(const Params& params, const char* name) { return params.get(name).as_ints(); }

// Start indices of dynamic_slice / dynamic_update_slice: 0-d integers, all of one dtype.
void check_indices(const std::string& op, Avals idx) {
  if (any_of_n(idx.size(), [&](auto i) { return idx[i].ndim() != 0; }))
    fail<ShapeError>(op, " start_indices must be scalars, got indices ", avals_str(idx), ".");
  if (any_of_n(idx.size(),
               [&](auto i) { return idx[i].dtype != idx[0].dtype || !is_integral(idx[i].dtype); }))
    fail<TypeError>("index arguments to ", op,
                    " must be integers of the same type, got: ", dtypes_str(idx));
}

void check_same_dtypes(const std::string& op, Avals in) {
  if (any_of_n(in.size(), [&](auto i) { return in[i].dtype != in[0].dtype; }))
    fail<TypeError>(op, " requires arguments to have the same dtypes, got ", dtypes_str(in), ".");
}

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

// Where one output element comes from: operand `arg`, flat element offset `at`.
struct Source {
  std::size_t arg;
  std::int64_t at;
};

// Builds `out` by copying, for every output index, the element src(index) names. Layout ops
// only move elements, so copying bytes serves every dtype.
template <class F>
std::vector<Array> assemble(Ins in, const ShapedArray& out, F src) {
  Array r = make_array(out);
  std::vector<const std::byte*> base;
  for (const Array& a : in)
    base.push_back(static_cast<const std::byte*>(concrete_buffer(a, "impl").data()));
  auto* o = static_cast<std::byte*>(r.impl()->buffer->data());
  const std::size_t w = itemsize(out.dtype);
  std::size_t k = 0;
  for_each_index(out.shape, [&](const Ints& index) {
    Source s = src(index);
    std::memcpy(o + w * k++, base[s.arg] + w * static_cast<std::size_t>(s.at), w);
  });
  return {r};
}

// The values of 0-d integer index operands, clamped to [0, dim - size] as XLA does.
Ints clamped_starts(Ins idx, const Shape& dims, const Shape& sizes) {
  Ints starts;
  for (std::size_t d = 0; d < idx.size(); ++d)
    starts.push_back(std::clamp(idx[d].item<std::int64_t>(), std::int64_t{0}, dims[d] - sizes[d]));
  return starts;
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

// ---- slice[limit_indices start_indices strides] ----
void def_slice(Primitive& p) {
  p.abstract_eval = [&p](Avals in, const Params& params) {
    check_arity(p, in, 1);
    const Shape& s = in[0].shape;
    Ints start = ints(params, "start_indices"), limit = ints(params, "limit_indices"),
         stride = ints(params, "strides");
    check_shapelike(p.name, "start_indices", start);
    check_shapelike(p.name, "limit_indices", limit);
    if (start.size() != s.size())
      fail<ShapeError>(p.name,
                       " start_indices must have length equal to the number of dimensions "
                       "of the operand, got indices ",
                       tup(start), " for operand shape ", shape_str(s), ".");
    if (limit.size() != start.size())
      fail<ShapeError>(p.name,
                       " limit_indices must have the same length as start_indices, got "
                       "start_indices ",
                       tup(start), " and limit_indices ", tup(limit), ".");
    if (any_of_n(s.size(), [&](auto d) { return limit[d] > s[d]; }))
      fail<ShapeError>(p.name,
                       " limit_indices must be less than or equal to operand shape, got "
                       "limit_indices ",
                       tup(limit), " for operand shape ", shape_str(s), ".");
    if (any_of_n(s.size(), [&](auto d) { return limit[d] < start[d]; }))
      fail<ShapeError>(p.name,
                       " limit_indices must be greater than or equal to start_indices, "
                       "got start_indices ",
                       tup(start), " and limit_indices ", tup(limit), ".");
    if (stride.size() != s.size())
      fail<ShapeError>(p.name,
                       " strides must have length equal to the number of dimensions of "
                       "the operand, got strides ",
                       tup(stride), " for operand shape ", shape_str(s), ".");
    check_shapelike(p.name, "strides", stride, /*positive=*/true);
    Shape shape;  // ceil((limit - start) / stride), without overflowing for huge strides
    for (std::size_t d = 0; d < s.size(); ++d) {
      std::int64_t n = limit[d] - start[d];
      shape.push_back(n == 0 ? 0 : (n - 1) / stride[d] + 1);
    }
    return result(p.name, shape, in[0].dtype, in[0].weak_type);
  };
  p.impl = [](Ins in, const Params& params, Avals out) {
    Ints start = ints(params, "start_indices"), stride = ints(params, "strides");
    Ints xs = strides(in[0].shape());
    return assemble(in, out[0], [&](const Ints& index) {
      std::int64_t at = 0;
      for (std::size_t d = 0; d < index.size(); ++d)
        at += (start[d] + index[d] * stride[d]) * xs[d];
      return Source{0, at};
    });
  };
}

// ---- dynamic_slice[slice_sizes]: operands (x, *start_indices) ----
void def_dynamic_slice(Primitive& p) {
  p.abstract_eval = [&p](Avals in, const Params& params) {
    check_arity(p, in, 1, /*or_more=*/true);
    const Shape& s = in[0].shape;
    Avals idx = in.subspan(1);
    Ints sizes = ints(params, "slice_sizes");
    if (idx.size() != s.size())
      fail<ShapeError>(p.name,
                       " start_indices must have length equal to the number of dimensions "
                       "of the operand, got indices ",
                       avals_str(idx), " for operand shape ", shape_str(s), ".");
    if (sizes.size() != idx.size())
      fail<ShapeError>(p.name,
                       " slice_sizes must have the same length as start_indices, got "
                       "start_indices length ",
                       idx.size(), " and slice_sizes ", tup(sizes), ".");
    if (any_of_n(s.size(), [&](auto d) { return sizes[d] > s[d]; }))
      fail<ShapeError>(p.name,
                       " slice_sizes must be less than or equal to operand shape, got "
                       "slice_sizes ",
                       tup(sizes), " for operand shape ", shape_str(s), ".");
    if (std::any_of(sizes.begin(), sizes.end(), [](auto d) { return d < 0; }))
      fail<ShapeError>(p.name,
                       " slice_sizes must be greater than or equal to zero, got "
                       "slice_sizes ",
                       tup(sizes), ".");
    check_indices(p.name, idx);
    return result(p.name, sizes, in[0].dtype, in[0].weak_type);
  };
  p.impl = [](Ins in, const Params&, Avals out) {
    Ints starts = clamped_starts(in.subspan(1), in[0].shape(), out[0].shape);
    Ints xs = strides(in[0].shape());
    return assemble(in.first(1), out[0], [&](const Ints& index) {
      std::int64_t at = 0;
      for (std::size_t d = 0; d < index.size(); ++d) at += (starts[d] + index[d]) * xs[d];
      return Source{0, at};
    });
  };
}

// ---- dynamic_update_slice: operands (x, update, *start_indices) ----
void def_dynamic_update_slice(Primitive& p) {
  p.abstract_eval = [&p](Avals in, const Params&) {
    check_arity(p, in, 2, /*or_more=*/true);
    const ShapedArray &x = in[0], &u = in[1];
    Avals idx = in.subspan(2);
    if (u.ndim() != x.ndim())
      fail<ShapeError>(p.name, " update must have the same rank as operand, got update shape ",
                       shape_str(u.shape), " for operand shape ", shape_str(x.shape), ".");
    if (idx.size() != x.shape.size())
      fail<ShapeError>(p.name,
                       " start_indices must have length equal to the rank of operand, got "
                       "indices ",
                       avals_str(idx), " for operand shape ", shape_str(x.shape), ".");
    if (any_of_n(x.shape.size(), [&](auto d) { return u.shape[d] > x.shape[d]; }))
      fail<ShapeError>(p.name,
                       " update shape must be smaller than operand shape, got update "
                       "shape ",
                       shape_str(u.shape), " for operand shape ", shape_str(x.shape), ".");
    check_indices(p.name, idx);
    check_same_dtypes(p.name, in.first(2));
    return result(p.name, x.shape, x.dtype, x.weak_type);
  };
  p.impl = [](Ins in, const Params&, Avals out) {
    const Shape& ushape = in[1].shape();
    Ints starts = clamped_starts(in.subspan(2), out[0].shape, ushape);
    Ints xs = strides(out[0].shape), us = strides(ushape);
    return assemble(in.first(2), out[0], [&](const Ints& index) {
      std::int64_t at = 0;
      for (std::size_t d = 0; d < index.size(); ++d) {
        std::int64_t k = index[d] - starts[d];
        if (k < 0 || k >= ushape[d]) return Source{0, offset_of(index, xs)};
        at += k * us[d];
      }
      return Source{1, at};
    });
  };
}

// ---- concatenate[dimension] ----
void def_concatenate(Primitive& p) {
  p.abstract_eval = [&p](Avals in, const Params& params) {
    if (in.empty()) fail<TypeError>(p.name, " expects at least one operand, got 0.");
    std::int64_t dim = params.get("dimension").as_int();
    if (any_of_n(in.size(), [&](auto i) { return in[i].ndim() != in[0].ndim(); }))
      fail<ShapeError>("Cannot concatenate arrays with different numbers of dimensions: got ",
                       shapes_str(in), ".");
    if (dim < 0 || dim >= in[0].ndim())
      fail<ShapeError>(p.name, " dimension out of bounds: dimension ", dim, " for shapes ",
                       shapes_str(in), ".");
    Shape shape = in[0].shape;
    shape[dim] = 0;
    bool weak = true;
    for (const auto& a : in) {
      for (std::int64_t d = 0; d < a.ndim(); ++d)
        if (d != dim && a.shape[d] != shape[d])
          fail<ShapeError>(
              "Cannot concatenate arrays with shapes that differ in dimensions other "
              "than the one being concatenated: concatenating along dimension ",
              dim, " for shapes ", shapes_str(in), ".");
      shape[dim] = add_checked(p.name, shape[dim], a.shape[dim]);
      weak = weak && a.weak_type;
    }
    check_same_dtypes(p.name, in);
    return result(p.name, shape, in[0].dtype, weak);
  };
  p.impl = [](Ins in, const Params& params, Avals out) {
    std::int64_t dim = params.get("dimension").as_int();
    std::vector<Ints> xs;
    for (const Array& a : in) xs.push_back(strides(a.shape()));
    return assemble(in, out[0], [&](const Ints& index) {
      Ints local = index;  // walk past the operands that lie before index[dim]
      std::size_t k = 0;
      while (local[dim] >= in[k].shape()[dim]) local[dim] -= in[k++].shape()[dim];
      return Source{k, offset_of(local, xs[k])};
    });
  };
}

// ---- pad[padding_config]: operands (x, padding_value); (low, high, interior) per dim ----
std::vector<Ints> padding_config(const Params& params) {
  std::vector<Ints> config;
  for (const Param& dim : params.get("padding_config").items()) config.push_back(dim.as_ints());
  return config;
}

void def_pad(Primitive& p) {
  p.abstract_eval = [&p](Avals in, const Params& params) {
    check_arity(p, in, 2);
    const ShapedArray &x = in[0], &v = in[1];
    std::vector<Ints> config = padding_config(params);
    std::string config_str = params.get("padding_config").str();
    if (x.dtype != v.dtype)
      fail<TypeError>(p.name, " operand and padding_value must be same dtype: got ",
                      dtype_name(x.dtype), " and ", dtype_name(v.dtype), ".");
    if (v.ndim() != 0)
      fail<ShapeError>(p.name, " padding_value must be a scalar (0-d), got shape ",
                       shape_str(v.shape), ".");
    if (config.size() != x.shape.size())
      fail<ShapeError>(
          "length of padding_config must equal the number of axes of operand, got "
          "padding_config ",
          config_str, " for operand shape ", shape_str(x.shape));
    if (std::any_of(config.begin(), config.end(), [](auto& c) { return c.size() != 3; }))
      fail<ShapeError>(p.name,
                       " padding_config entries must be (low, high, interior) triples, "
                       "got padding_config ",
                       config_str);
    if (std::any_of(config.begin(), config.end(), [](auto& c) { return c[2] < 0; }))
      fail<ShapeError>(
          "interior padding in padding_config must be nonnegative, got "
          "padding_config ",
          config_str);
    Shape shape;  // low + high + the operand dilated by interior
    for (std::size_t d = 0; d < config.size(); ++d) {
      std::int64_t n = x.shape[d], step = add_checked(p.name, config[d][2], 1), dilated = 0;
      if (n > 0) dilated = add_checked(p.name, mul_checked(p.name, n - 1, step), 1);
      std::int64_t low_high = add_checked(p.name, config[d][0], config[d][1]);
      shape.push_back(add_checked(p.name, low_high, dilated));
    }
    if (std::any_of(shape.begin(), shape.end(), [](auto d) { return d < 0; }))
      fail<ShapeError>("Dimension size after padding is not at least 0, got result shape ",
                       shape_str(shape), ", for padding_config ", config_str, " and operand shape ",
                       shape_str(x.shape));
    return result(p.name, shape, x.dtype, x.weak_type && v.weak_type);
  };
  p.impl = [](Ins in, const Params& params, Avals out) {
    std::vector<Ints> config = padding_config(params);
    const Shape& xshape = in[0].shape();
    Ints xs = strides(xshape);
    return assemble(in, out[0], [&](const Ints& index) {
      std::int64_t at = 0;
      for (std::size_t d = 0; d < index.size(); ++d) {
        std::int64_t pos, step = config[d][2] + 1;  // pos: index in the dilated operand
        if (__builtin_sub_overflow(index[d], config[d][0], &pos) || pos < 0 || pos % step != 0 ||
            pos / step >= xshape[d])
          return Source{1, 0};
        at += pos / step * xs[d];
      }
      return Source{0, at};
    });
  };
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
     def_squeeze(squeeze_p), def_expand_dims(expand_dims_p), def_slice(slice_p),
     def_dynamic_slice(dynamic_slice_p), def_dynamic_update_slice(dynamic_update_slice_p),
     def_concatenate(concatenate_p), def_pad(pad_p), def_iota(iota_p), true);

// Lowering: each primitive is one HLO layout instruction (squeeze and expand_dims are reshapes).
using Operands = std::span<hlo::Instruction* const>;
hlo::HloShape out_shape(Avals out) { return hlo::HloShape::array(out[0].dtype, out[0].shape); }
std::vector<std::int64_t> flat_triples(const Param& config) {
  std::vector<std::int64_t> flat;
  for (const Param& t : config.items())
    for (std::int64_t v : t.as_ints()) flat.push_back(v);
  return flat;
}
hlo::Attrs attrs_of(const std::string& name, hlo::AttrValue value) {
  hlo::Attrs a;
  a.set(name, std::move(value));
  return a;
}

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
  slice_p.lower = [](hlo::Builder& b, Operands ops, const Params& params, Avals out) {
    Ints start = params.get("start_indices").as_ints(),
         limit = params.get("limit_indices").as_ints();
    Ints strides = params.get("strides").as_ints(), flat;
    for (std::size_t d = 0; d < start.size(); ++d)
      flat.insert(flat.end(), {start[d], limit[d], strides[d]});
    return std::vector<hlo::Instruction*>{
        b.op(hlo::Opcode::kSlice, out_shape(out), {ops[0]}, attrs_of("slice", flat))};
  };
  dynamic_slice_p.lower = [](hlo::Builder& b, Operands ops, const Params& params, Avals out) {
    return std::vector<hlo::Instruction*>{
        b.op(hlo::Opcode::kDynamicSlice, out_shape(out), {ops.begin(), ops.end()},
             attrs_of("dynamic_slice_sizes", params.get("slice_sizes").as_ints()))};
  };
  dynamic_update_slice_p.lower = [](hlo::Builder& b, Operands ops, const Params&, Avals out) {
    return std::vector<hlo::Instruction*>{
        b.op(hlo::Opcode::kDynamicUpdateSlice, out_shape(out), {ops.begin(), ops.end()})};
  };
  concatenate_p.lower = [](hlo::Builder& b, Operands ops, const Params& params, Avals out) {
    return std::vector<hlo::Instruction*>{
        b.op(hlo::Opcode::kConcatenate, out_shape(out), {ops.begin(), ops.end()},
             attrs_of("dimensions", Ints{params.get("dimension").as_int()}))};
  };
  pad_p.lower = [](hlo::Builder& b, Operands ops, const Params& params, Avals out) {
    return std::vector<hlo::Instruction*>{
        b.op(hlo::Opcode::kPad, out_shape(out), {ops[0], ops[1]},
             attrs_of("padding", flat_triples(params.get("padding_config"))))};
  };
  iota_p.lower = [](hlo::Builder& b, Operands, const Params& params, Avals out) {
    return std::vector<hlo::Instruction*>{
        b.op(hlo::Opcode::kIota, out_shape(out), {},
             attrs_of("iota_dimension", params.get("dimension").as_int()))};
  };
  return true;
}();

// ---- differentiation: every layout op is linear; each transpose moves the cotangent back ----
using Cts = std::span<const Array>;
using LinearOps = std::span<const LinearOperand>;

Ints inverse_permutation(const Ints& perm) {
  Ints inv(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i)
    inv[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
  return inv;
}

std::vector<Array> known_values(LinearOps ops, std::size_t from) {
  std::vector<Array> out;
  for (std::size_t k = from; k < ops.size(); ++k) out.push_back(ops[k].value);
  return out;
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

// The slice's cotangent padded back to the operand: strides become interior padding.
Array transpose_slice(const Array& ct, const ShapedArray& x, const Params& params) {
  Ints start = ints(params, "start_indices"), stride = ints(params, "strides");
  lax::PaddingConfig config;
  for (std::size_t d = 0; d < start.size(); ++d) {
    std::int64_t n = ct.shape()[d], end = n == 0 ? start[d] : start[d] + (n - 1) * stride[d] + 1;
    config.push_back({start[d], x.shape[d] - end, stride[d] - 1});
  }
  return lax::pad(ct, make_scalar(0, ct.dtype()), config);
}

// JAX's transpose of pad: the operand's cotangent strips the padding (negative padding, then a
// strided slice over the interior); the padding value's is what the padding positions received.
std::vector<Array> transpose_pad(const Array& ct, LinearOps ops, const Params& params) {
  std::vector<Ints> config = padding_config(params);
  lax::PaddingConfig unpad;
  Ints start(config.size(), 0), stride;
  for (const Ints& c : config) {
    unpad.push_back({-c[0], -c[1], 0});
    stride.push_back(c[2] + 1);
  }
  Array unpadded = lax::pad(ct, make_scalar(0, ct.dtype()), unpad);
  Array operand_ct = lax::slice(unpadded, start, unpadded.shape(), stride);
  std::vector<Array> out(2);
  if (ops[0].is_linear()) out[0] = operand_ct;
  if (ops[1].is_linear()) {
    Ints all_ct(static_cast<std::size_t>(ct.ndim())),
        all_op(static_cast<std::size_t>(operand_ct.ndim()));
    std::iota(all_ct.begin(), all_ct.end(), 0);
    std::iota(all_op.begin(), all_op.end(), 0);
    out[1] = lax::sub(lax::reduce_sum(ct, all_ct), lax::reduce_sum(operand_ct, all_op));
  }
  return out;
}

std::vector<Array> transpose_concatenate(const Array& ct, LinearOps ops, const Params& params) {
  std::int64_t dim = params.get("dimension").as_int(), offset = 0;
  std::vector<Array> out(ops.size());
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const Shape& s = ops[k].aval.shape;
    if (ops[k].is_linear()) {
      Ints start(s.size(), 0), limit = ct.shape();
      start[dim] = offset;
      limit[dim] = offset + s[dim];
      out[k] = lax::slice(ct, start, limit);
    }
    offset += s[dim];
  }
  return out;
}

template <class F>
TransposeRule unary_transpose(F f) {
  return [f](Cts cts, LinearOps ops, const Params& params) {
    return std::vector<Array>{f(cts[0], ops[0].aval, params)};
  };
}

const bool kDifferentiated = [] {
  for (Primitive* p : {&broadcast_in_dim_p, &reshape_p, &transpose_p, &squeeze_p, &expand_dims_p,
                       &slice_p, &concatenate_p, &pad_p})
    ad::def_linear(*p);
  ad::def_linear(dynamic_slice_p, [](std::size_t k) { return k == 0; });
  ad::def_linear(dynamic_update_slice_p, [](std::size_t k) { return k < 2; });
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
  slice_p.transpose = unary_transpose(transpose_slice);
  pad_p.transpose = [](Cts cts, LinearOps ops, const Params& params) {
    return transpose_pad(cts[0], ops, params);
  };
  concatenate_p.transpose = [](Cts cts, LinearOps ops, const Params& params) {
    return transpose_concatenate(cts[0], ops, params);
  };
  dynamic_slice_p.transpose = [](Cts cts, LinearOps ops, const Params&) {
    std::vector<Array> out(ops.size());
    out[0] = lax::dynamic_update_slice(ad::zeros(ops[0].aval), cts[0], known_values(ops, 1));
    return out;
  };
  dynamic_update_slice_p.transpose = [](Cts cts, LinearOps ops, const Params&) {
    std::vector<Array> out(ops.size()), idx = known_values(ops, 2);
    const ShapedArray& update = ops[1].aval;
    if (ops[0].is_linear()) out[0] = lax::dynamic_update_slice(cts[0], ad::zeros(update), idx);
    if (ops[1].is_linear()) out[1] = lax::dynamic_slice(cts[0], idx, update.shape);
    return out;
  };
  return true;
}();

// ---- batching (vmap): the batch axis is one more operand dim; rules leave it where it is
// unless the op needs it elsewhere, and report where it lands ----
using BDims = std::span<const BatchDim>;
using batching::shift;

BatchResult one(Array out, std::int64_t dim) { return {{std::move(out)}, {static_cast<int>(dim)}}; }

// x with its batch axis at `at`: moved there, or, for an unbatched x, broadcast along a new axis.
Array batch_at(const Array& x, BatchDim dim, std::int64_t size, int at) {
  if (dim) return batching::move_axis(x, *dim, at);
  Shape shape = x.shape();
  shape.insert(shape.begin() + at, size);
  Ints dims;
  for (int d = 0; d < x.ndim(); ++d) dims.push_back(shift(d, at));
  return lax::broadcast_in_dim(x, shape, dims);
}

Ints inserted(Ints v, std::int64_t at, std::int64_t value) {
  v.insert(v.begin() + at, value);
  return v;
}

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

BatchResult batch_slice(Ins args, BDims dims, const Params& params) {
  int b = *dims[0];
  std::int64_t size = args[0].shape()[static_cast<std::size_t>(b)];
  return one(lax::slice(args[0], inserted(ints(params, "start_indices"), b, 0),
                        inserted(ints(params, "limit_indices"), b, size),
                        inserted(ints(params, "strides"), b, 1)),
             b);
}

// The start indices with a 0 (of their dtype) for the batch axis at `at`.
std::vector<Array> indices_at(Ins idx, int at) {
  std::vector<Array> out(idx.begin(), idx.end());
  out.insert(out.begin() + at, make_scalar(0, idx.empty() ? int32 : idx[0].dtype()));
  return out;
}

bool any_batched(BDims dims) {
  return std::any_of(dims.begin(), dims.end(), [](auto d) { return d.has_value(); });
}

// The smallest value of a dtype (-inf for floats, false for bool), as a 0-d constant.
Array lowest(DType d) {
  Array out = make_scalar(0, d);
  dispatch(d, [&]<class T>() {
    using L = std::numeric_limits<T>;
    *out.impl()->buffer->as<T>() = L::has_infinity ? -L::infinity() : L::lowest();
  });
  return out;
}

// Per-example start indices, without a gather primitive. Along axis d of v (batch axis first),
// output position p of example b reads input position p + offset[b]: each output element is the
// max of the input selected by comparing positions, the other inputs replaced by the dtype's
// lowest value. That is exact for every dtype (NaN and -0.0 included); positions that read
// nothing get the lowest value.
Array shifted_window(const Array& v, int d, const Array& offset, std::int64_t out_len) {
  Shape sel = v.shape();
  sel.insert(sel.begin() + d, out_len);  // [..., p, q, ...]: output then input positions
  Ints v_dims;
  for (int a = 0; a < v.ndim(); ++a) v_dims.push_back(a < d ? a : a + 1);
  Array read = lax::add(lax::iota(offset.dtype(), sel, d), lax::broadcast_in_dim(offset, sel, {0}));
  Array hit = lax::eq(lax::iota(offset.dtype(), sel, d + 1), read);
  Array floor = lax::broadcast_in_dim(lowest(v.dtype()), sel, {});
  return lax::reduce_max(lax::select_n(hit, {floor, lax::broadcast_in_dim(v, sel, v_dims)}),
                         {d + 1});
}

// Each example's start along dim k, clamped as XLA clamps it: [0, n - window].
Array clamped_start(const Array& idx, BatchDim dim, std::int64_t size, std::int64_t n,
                    std::int64_t window) {
  Array start = batch_at(idx, dim, size, 0);
  return lax::clamp(make_scalar(0, idx.dtype()), start,
                    make_scalar(static_cast<double>(n - window), idx.dtype()));
}

BatchResult batch_dynamic_slice(Ins args, BDims dims, const Params& params) {
  Ints sizes = ints(params, "slice_sizes");
  if (!any_batched(dims.subspan(1))) {
    int b = *dims[0];
    std::int64_t size = args[0].shape()[static_cast<std::size_t>(b)];
    return one(
        lax::dynamic_slice(args[0], indices_at(args.subspan(1), b), inserted(sizes, b, size)), b);
  }
  std::int64_t size = batching::batch_size(args, dims);
  Array x = batch_at(args[0], dims[0], size, 0);
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    int d = static_cast<int>(k) + 1;
    Array start = clamped_start(args[1 + k], dims[1 + k], size, x.shape()[d], sizes[k]);
    x = shifted_window(x, d, start, sizes[k]);
  }
  return one(x, 0);
}

// Operand and update share the batch axis: the operand's, else the update's. With per-example
// indices the update is shifted into place dim by dim and selected where it lands.
BatchResult batch_dynamic_update_slice(Ins args, BDims dims, const Params&) {
  std::int64_t size = batching::batch_size(args, dims);
  if (!any_batched(dims.subspan(2))) {
    int b = dims[0] ? *dims[0] : *dims[1];
    Array x = batch_at(args[0], dims[0], size, b), update = batch_at(args[1], dims[1], size, b);
    return one(lax::dynamic_update_slice(x, update, indices_at(args.subspan(2), b)), b);
  }
  Array x = batch_at(args[0], dims[0], size, 0), placed = batch_at(args[1], dims[1], size, 0);
  Array inside;
  for (int k = 0; k + 1 < x.ndim(); ++k) {
    int d = k + 1;
    std::int64_t n = x.shape()[d], window = placed.shape()[d];
    Array start = clamped_start(args[2 + k], dims[2 + k], size, n, window);
    placed = shifted_window(placed, d, lax::neg(start), n);
    Array pos = lax::iota(start.dtype(), x.shape(), d);
    Array lo = lax::broadcast_in_dim(start, x.shape(), {0});
    Array hi = lax::add(lo, make_scalar(static_cast<double>(window), start.dtype()));
    Array in_k = lax::bitwise_and(lax::ge(pos, lo), lax::lt(pos, hi));
    inside = k == 0 ? in_k : lax::bitwise_and(inside, in_k);
  }
  if (!inside.valid()) return one(placed, 0);  // 0-d examples: the update replaces x
  return one(lax::select_n(inside, {x, placed}), 0);
}

// Every operand gets its batch axis where the first batched one has it.
BatchResult batch_concatenate(Ins args, BDims dims, const Params& params) {
  std::int64_t size = batching::batch_size(args, dims);
  int b = **std::find_if(dims.begin(), dims.end(), [](auto d) { return d.has_value(); });
  std::vector<Array> xs;
  for (std::size_t k = 0; k < args.size(); ++k) xs.push_back(batch_at(args[k], dims[k], size, b));
  return one(lax::concatenate(xs, shift(params.get("dimension").as_int(), b)), b);
}

// The batch axis gets no padding. A padding value per example ([B]) is not a scalar pad can
// take: pad with 0, then select each example's value where a padded mask marks padding.
BatchResult batch_pad(Ins args, BDims dims, const Params& params) {
  std::int64_t size = batching::batch_size(args, dims);
  int b = dims[0] ? *dims[0] : 0;
  Array x = batch_at(args[0], dims[0], size, b);
  lax::PaddingConfig config;
  for (const Ints& c : padding_config(params)) config.push_back({c[0], c[1], c[2]});
  config.insert(config.begin() + b, {0, 0, 0});
  if (!dims[1]) return one(lax::pad(x, args[1], config), b);
  Array padded = lax::pad(x, make_scalar(0, x.dtype()), config);
  Array inside = lax::broadcast_in_dim(make_scalar(1, bool_), x.shape(), {});
  Array mask = lax::pad(inside, make_scalar(0, bool_), config);
  Array value = lax::broadcast_in_dim(args[1], padded.shape(), {b});
  return one(lax::select_n(mask, {value, padded}), b);
}

// iota has no operands, so it is never batched.
const bool kBatched = [] {
  broadcast_in_dim_p.batch = batch_broadcast_in_dim;
  reshape_p.batch = batch_reshape;
  transpose_p.batch = batch_transpose;
  squeeze_p.batch = batch_squeeze;
  expand_dims_p.batch = batch_expand_dims;
  slice_p.batch = batch_slice;
  dynamic_slice_p.batch = batch_dynamic_slice;
  dynamic_update_slice_p.batch = batch_dynamic_update_slice;
  concatenate_p.batch = batch_concatenate;
  pad_p.batch = batch_pad;
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

Array slice(const Array& x, const Ints& start_indices, const Ints& limit_indices,
            const Ints& strides) {
  Ints s = strides.empty() ? Ints(static_cast<std::size_t>(x.ndim()), 1) : strides;
  return bind1(slice_p, {x},
               {{"limit_indices", Param::ints(limit_indices)},
                {"start_indices", Param::ints(start_indices)},
                {"strides", Param::ints(s)}});
}

Array dynamic_slice(const Array& x, const std::vector<Array>& start_indices,
                    const Ints& slice_sizes) {
  std::vector<Array> operands{x};
  operands.insert(operands.end(), start_indices.begin(), start_indices.end());
  return bind1(dynamic_slice_p, std::move(operands), {{"slice_sizes", Param::ints(slice_sizes)}});
}

Array dynamic_update_slice(const Array& x, const Array& update,
                           const std::vector<Array>& start_indices) {
  std::vector<Array> operands{x, update};
  operands.insert(operands.end(), start_indices.begin(), start_indices.end());
  return bind1(dynamic_update_slice_p, std::move(operands));
}

Array concatenate(const std::vector<Array>& xs, std::int64_t dimension) {
  return bind1(concatenate_p, xs, {{"dimension", Param::integer(dimension)}});
}

Array pad(const Array& x, const Array& padding_value, const PaddingConfig& padding_config) {
  std::vector<Param> config;
  for (const auto& [lo, hi, interior] : padding_config)
    config.push_back(Param::ints({lo, hi, interior}));
  return bind1(pad_p, {x, padding_value}, {{"padding_config", Param::tuple(std::move(config))}});
}

Array iota(DType dtype, const Shape& shape, std::int64_t dimension) {
  return bind1(iota_p, {},
               {{"dimension", Param::integer(dimension)},
                {"dtype", Param::dtype(dtype)},
                {"shape", Param::ints(shape)}});
}

}  // namespace lax
}  // namespace jx
