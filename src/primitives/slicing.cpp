// Slicing primitives: slice dynamic_slice dynamic_update_slice concatenate pad. Like the layout
// family (shape_ops.cpp) they only move elements: they cut arrays, write into them, join and pad
// them. So each is one HLO instruction and linear, its transpose putting the cotangent back where
// the elements came from. Each primitive's rules stand together.
#include <algorithm>
#include <numeric>

#include "jx/lax.hpp"
#include "primitives/elementwise.hpp"
#include "primitives/layout.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"
#include "transforms/batch_rules.hpp"

namespace jx {

Primitive slice_p("slice"), dynamic_slice_p("dynamic_slice"),
    dynamic_update_slice_p("dynamic_update_slice"), concatenate_p("concatenate"), pad_p("pad");

namespace {

using namespace layout;
using trace::bind1;

// ---- slice[limit_indices start_indices strides] ----
Outs slice_abstract_eval(Avals in, const Params& params) {
  check_arity(slice_p, in, 1);
  const Shape& s = in[0].shape;
  Ints start = ints(params, "start_indices"), limit = ints(params, "limit_indices"),
       stride = ints(params, "strides");
  check_shapelike(slice_p.name, "start_indices", start);
  check_shapelike(slice_p.name, "limit_indices", limit);
  if (start.size() != s.size())
    fail<ShapeError>(slice_p.name,
                     " start_indices must have length equal to the number of dimensions of the "
                     "operand, got indices ",
                     tup(start), " for operand shape ", shape_str(s), ".");
  if (limit.size() != start.size())
    fail<ShapeError>(
        slice_p.name,
        " limit_indices must have the same length as start_indices, got start_indices ", tup(start),
        " and limit_indices ", tup(limit), ".");
  if (any_of_n(s.size(), [&](auto d) { return limit[d] > s[d]; }))
    fail<ShapeError>(
        slice_p.name,
        " limit_indices must be less than or equal to operand shape, got limit_indices ",
        tup(limit), " for operand shape ", shape_str(s), ".");
  if (any_of_n(s.size(), [&](auto d) { return limit[d] < start[d]; }))
    fail<ShapeError>(
        slice_p.name,
        " limit_indices must be greater than or equal to start_indices, got start_indices ",
        tup(start), " and limit_indices ", tup(limit), ".");
  if (stride.size() != s.size())
    fail<ShapeError>(
        slice_p.name,
        " strides must have length equal to the number of dimensions of the operand, got strides ",
        tup(stride), " for operand shape ", shape_str(s), ".");
  check_shapelike(slice_p.name, "strides", stride, /*positive=*/true);
  Shape shape;  // ceil((limit - start) / stride), without overflowing for huge strides
  for (std::size_t d = 0; d < s.size(); ++d) {
    std::int64_t n = limit[d] - start[d];
    shape.push_back(n == 0 ? 0 : (n - 1) / stride[d] + 1);
  }
  return result(shape, in[0].dtype, in[0].weak_type);
}

std::vector<Array> slice_impl(Ins in, const Params& params, Avals out) {
  Ints start = ints(params, "start_indices"), stride = ints(params, "strides");
  Ints xs = strides(in[0].shape());
  return assemble(in, out[0], [&](const Ints& index) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < index.size(); ++d) at += (start[d] + index[d] * stride[d]) * xs[d];
    return Source{0, at};
  });
}

std::vector<hlo::Instruction*> slice_lower(hlo::Builder& b, Operands ops, const Params& params,
                                           Avals out) {
  Ints start = params.get("start_indices").as_ints(), limit = params.get("limit_indices").as_ints();
  Ints strides = params.get("strides").as_ints(), flat;
  for (std::size_t d = 0; d < start.size(); ++d)
    flat.insert(flat.end(), {start[d], limit[d], strides[d]});
  return std::vector<hlo::Instruction*>{
      b.op(hlo::Opcode::kSlice, out_shape(out), {ops[0]}, attrs_of("slice", flat))};
}

// The slice's cotangent padded back to the operand: strides become interior padding.
Array slice_transpose(const Array& ct, const ShapedArray& x, const Params& params) {
  Ints start = ints(params, "start_indices"), stride = ints(params, "strides");
  lax::PaddingConfig config;
  for (std::size_t d = 0; d < start.size(); ++d) {
    std::int64_t n = ct.shape()[d], end = n == 0 ? start[d] : start[d] + (n - 1) * stride[d] + 1;
    config.push_back({start[d], x.shape[d] - end, stride[d] - 1});
  }
  return lax::pad(ct, make_scalar(0, ct.dtype()), config);
}

BatchResult slice_batch(Ins args, BDims dims, const Params& params) {
  int b = *dims[0];
  std::int64_t size = args[0].shape()[static_cast<std::size_t>(b)];
  return one(lax::slice(args[0], inserted(ints(params, "start_indices"), b, 0),
                        inserted(ints(params, "limit_indices"), b, size),
                        inserted(ints(params, "strides"), b, 1)),
             b);
}

// ---- what dynamic_slice and dynamic_update_slice share ----
// Start indices of dynamic_slice / dynamic_update_slice: 0-d integers, all of one dtype.
void check_indices(const std::string& op, Avals idx) {
  if (any_of_n(idx.size(), [&](auto i) { return idx[i].ndim() != 0; }))
    fail<ShapeError>(op, " start_indices must be scalars, got indices ", avals_str(idx), ".");
  if (any_of_n(idx.size(),
               [&](auto i) { return idx[i].dtype != idx[0].dtype || !is_integral(idx[i].dtype); }))
    fail<TypeError>("index arguments to ", op,
                    " must be integers of the same type, got: ", dtypes_str(idx));
}

// The values of 0-d integer index operands, clamped to [0, dim - size] as XLA does.
Ints clamped_starts(Ins idx, const Shape& dims, const Shape& sizes) {
  Ints starts;
  for (std::size_t d = 0; d < idx.size(); ++d)
    starts.push_back(std::clamp(idx[d].item<std::int64_t>(), std::int64_t{0}, dims[d] - sizes[d]));
  return starts;
}

// The known operands from `from` on (the start indices), for the transposes to pass on.
std::vector<Array> known_values(LinearOps ops, std::size_t from) {
  std::vector<Array> out;
  for (std::size_t k = from; k < ops.size(); ++k) out.push_back(ops[k].value);
  return out;
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
  Array floor = lax::broadcast_in_dim(identity_of(Identity::kLowest, v.dtype()), sel, {});
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

// ---- dynamic_slice[slice_sizes]: operands (x, *start_indices) ----
Outs dynamic_slice_abstract_eval(Avals in, const Params& params) {
  check_arity(dynamic_slice_p, in, 1, /*or_more=*/true);
  const Shape& s = in[0].shape;
  Avals idx = in.subspan(1);
  Ints sizes = ints(params, "slice_sizes");
  if (idx.size() != s.size())
    fail<ShapeError>(dynamic_slice_p.name,
                     " start_indices must have length equal to the number of dimensions of the "
                     "operand, got indices ",
                     avals_str(idx), " for operand shape ", shape_str(s), ".");
  if (sizes.size() != idx.size())
    fail<ShapeError>(
        dynamic_slice_p.name,
        " slice_sizes must have the same length as start_indices, got start_indices length ",
        idx.size(), " and slice_sizes ", tup(sizes), ".");
  if (any_of_n(s.size(), [&](auto d) { return sizes[d] > s[d]; }))
    fail<ShapeError>(dynamic_slice_p.name,
                     " slice_sizes must be less than or equal to operand shape, got slice_sizes ",
                     tup(sizes), " for operand shape ", shape_str(s), ".");
  if (std::any_of(sizes.begin(), sizes.end(), [](auto d) { return d < 0; }))
    fail<ShapeError>(dynamic_slice_p.name,
                     " slice_sizes must be greater than or equal to zero, got slice_sizes ",
                     tup(sizes), ".");
  check_indices(dynamic_slice_p.name, idx);
  return result(sizes, in[0].dtype, in[0].weak_type);
}

std::vector<Array> dynamic_slice_impl(Ins in, const Params&, Avals out) {
  Ints starts = clamped_starts(in.subspan(1), in[0].shape(), out[0].shape);
  Ints xs = strides(in[0].shape());
  return assemble(in.first(1), out[0], [&](const Ints& index) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < index.size(); ++d) at += (starts[d] + index[d]) * xs[d];
    return Source{0, at};
  });
}

std::vector<hlo::Instruction*> dynamic_slice_lower(hlo::Builder& b, Operands ops,
                                                   const Params& params, Avals out) {
  return std::vector<hlo::Instruction*>{
      b.op(hlo::Opcode::kDynamicSlice, out_shape(out), {ops.begin(), ops.end()},
           attrs_of("dynamic_slice_sizes", params.get("slice_sizes").as_ints()))};
}

// Linear in x only: the cotangent is written into zeros where the slice came from.
std::vector<Array> dynamic_slice_transpose(Cts cts, LinearOps ops, const Params&) {
  std::vector<Array> out(ops.size());
  out[0] = lax::dynamic_update_slice(ad::zeros(ops[0].aval), cts[0], known_values(ops, 1));
  return out;
}

BatchResult dynamic_slice_batch(Ins args, BDims dims, const Params& params) {
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

// ---- dynamic_update_slice: operands (x, update, *start_indices) ----
Outs dynamic_update_slice_abstract_eval(Avals in, const Params&) {
  check_arity(dynamic_update_slice_p, in, 2, /*or_more=*/true);
  const ShapedArray &x = in[0], &u = in[1];
  Avals idx = in.subspan(2);
  if (u.ndim() != x.ndim())
    fail<ShapeError>(dynamic_update_slice_p.name,
                     " update must have the same rank as operand, got update shape ",
                     shape_str(u.shape), " for operand shape ", shape_str(x.shape), ".");
  if (idx.size() != x.shape.size())
    fail<ShapeError>(dynamic_update_slice_p.name,
                     " start_indices must have length equal to the rank of operand, got indices ",
                     avals_str(idx), " for operand shape ", shape_str(x.shape), ".");
  if (any_of_n(x.shape.size(), [&](auto d) { return u.shape[d] > x.shape[d]; }))
    fail<ShapeError>(dynamic_update_slice_p.name,
                     " update shape must be smaller than operand shape, got update shape ",
                     shape_str(u.shape), " for operand shape ", shape_str(x.shape), ".");
  check_indices(dynamic_update_slice_p.name, idx);
  check_same_dtypes(dynamic_update_slice_p.name, in.first(2));
  return result(x.shape, x.dtype, x.weak_type);
}

std::vector<Array> dynamic_update_slice_impl(Ins in, const Params&, Avals out) {
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
}

std::vector<hlo::Instruction*> dynamic_update_slice_lower(hlo::Builder& b, Operands ops,
                                                          const Params&, Avals out) {
  return std::vector<hlo::Instruction*>{
      b.op(hlo::Opcode::kDynamicUpdateSlice, out_shape(out), {ops.begin(), ops.end()})};
}

// Linear in x and update: x's cotangent has zeros where the update went; the update's is the
// slice of the cotangent it covered.
std::vector<Array> dynamic_update_slice_transpose(Cts cts, LinearOps ops, const Params&) {
  std::vector<Array> out(ops.size()), idx = known_values(ops, 2);
  const ShapedArray& update = ops[1].aval;
  if (ops[0].is_linear()) out[0] = lax::dynamic_update_slice(cts[0], ad::zeros(update), idx);
  if (ops[1].is_linear()) out[1] = lax::dynamic_slice(cts[0], idx, update.shape);
  return out;
}

// Operand and update share the batch axis: the operand's, else the update's. With per-example
// indices the update is shifted into place dim by dim and selected where it lands.
BatchResult dynamic_update_slice_batch(Ins args, BDims dims, const Params&) {
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

// ---- concatenate[dimension] ----
Outs concatenate_abstract_eval(Avals in, const Params& params) {
  if (in.empty()) fail<TypeError>(concatenate_p.name, " expects at least one operand, got 0.");
  std::int64_t dim = params.get("dimension").as_int();
  if (any_of_n(in.size(), [&](auto i) { return in[i].ndim() != in[0].ndim(); }))
    fail<ShapeError>("Cannot concatenate arrays with different numbers of dimensions: got ",
                     shapes_str(in), ".");
  if (dim < 0 || dim >= in[0].ndim())
    fail<ShapeError>(concatenate_p.name, " dimension out of bounds: dimension ", dim,
                     " for shapes ", shapes_str(in), ".");
  Shape shape = in[0].shape;
  shape[dim] = 0;
  bool weak = true;
  for (const auto& a : in) {
    for (std::int64_t d = 0; d < a.ndim(); ++d)
      if (d != dim && a.shape[d] != shape[d])
        fail<ShapeError>(
            "Cannot concatenate arrays with shapes that differ in dimensions other than the one "
            "being concatenated: concatenating along dimension ",
            dim, " for shapes ", shapes_str(in), ".");
    shape[dim] = add_checked(concatenate_p.name, shape[dim], a.shape[dim]);
    weak = weak && a.weak_type;
  }
  check_same_dtypes(concatenate_p.name, in);
  return result(shape, in[0].dtype, weak);
}

std::vector<Array> concatenate_impl(Ins in, const Params& params, Avals out) {
  std::int64_t dim = params.get("dimension").as_int();
  std::vector<Ints> xs;
  for (const Array& a : in) xs.push_back(strides(a.shape()));
  return assemble(in, out[0], [&](const Ints& index) {
    Ints local = index;  // walk past the operands that lie before index[dim]
    std::size_t k = 0;
    while (local[dim] >= in[k].shape()[dim]) local[dim] -= in[k++].shape()[dim];
    return Source{k, offset_of(local, xs[k])};
  });
}

std::vector<hlo::Instruction*> concatenate_lower(hlo::Builder& b, Operands ops,
                                                 const Params& params, Avals out) {
  return std::vector<hlo::Instruction*>{
      b.op(hlo::Opcode::kConcatenate, out_shape(out), {ops.begin(), ops.end()},
           attrs_of("dimensions", Ints{params.get("dimension").as_int()}))};
}

// Each linear operand's cotangent is its stretch of the output's.
std::vector<Array> concatenate_transpose(Cts cts, LinearOps ops, const Params& params) {
  const Array& ct = cts[0];
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

// Every operand gets its batch axis where the first batched one has it.
BatchResult concatenate_batch(Ins args, BDims dims, const Params& params) {
  std::int64_t size = batching::batch_size(args, dims);
  int b = **std::find_if(dims.begin(), dims.end(), [](auto d) { return d.has_value(); });
  std::vector<Array> xs;
  for (std::size_t k = 0; k < args.size(); ++k) xs.push_back(batch_at(args[k], dims[k], size, b));
  return one(lax::concatenate(xs, shift(params.get("dimension").as_int(), b)), b);
}

// ---- pad[padding_config]: operands (x, padding_value); (low, high, interior) per dim ----
std::vector<Ints> padding_config(const Params& params) {
  std::vector<Ints> config;
  for (const Param& dim : params.get("padding_config").items()) config.push_back(dim.as_ints());
  return config;
}

Outs pad_abstract_eval(Avals in, const Params& params) {
  check_arity(pad_p, in, 2);
  const ShapedArray &x = in[0], &v = in[1];
  std::vector<Ints> config = padding_config(params);
  std::string config_str = params.get("padding_config").str();
  if (x.dtype != v.dtype)
    fail<TypeError>(pad_p.name, " operand and padding_value must be same dtype: got ",
                    dtype_name(x.dtype), " and ", dtype_name(v.dtype), ".");
  if (v.ndim() != 0)
    fail<ShapeError>(pad_p.name, " padding_value must be a scalar (0-d), got shape ",
                     shape_str(v.shape), ".");
  if (config.size() != x.shape.size())
    fail<ShapeError>(
        "length of padding_config must equal the number of axes of operand, got padding_config ",
        config_str, " for operand shape ", shape_str(x.shape));
  if (std::any_of(config.begin(), config.end(), [](auto& c) { return c.size() != 3; }))
    fail<ShapeError>(
        pad_p.name,
        " padding_config entries must be (low, high, interior) triples, got padding_config ",
        config_str);
  if (std::any_of(config.begin(), config.end(), [](auto& c) { return c[2] < 0; }))
    fail<ShapeError>("interior padding in padding_config must be nonnegative, got padding_config ",
                     config_str);
  Shape shape;  // low + high + the operand dilated by interior
  for (std::size_t d = 0; d < config.size(); ++d) {
    std::int64_t n = x.shape[d], step = add_checked(pad_p.name, config[d][2], 1), dilated = 0;
    if (n > 0) dilated = add_checked(pad_p.name, mul_checked(pad_p.name, n - 1, step), 1);
    std::int64_t low_high = add_checked(pad_p.name, config[d][0], config[d][1]);
    shape.push_back(add_checked(pad_p.name, low_high, dilated));
  }
  if (std::any_of(shape.begin(), shape.end(), [](auto d) { return d < 0; }))
    fail<ShapeError>("Dimension size after padding is not at least 0, got result shape ",
                     shape_str(shape), ", for padding_config ", config_str, " and operand shape ",
                     shape_str(x.shape));
  return result(shape, x.dtype, x.weak_type && v.weak_type);
}

std::vector<Array> pad_impl(Ins in, const Params& params, Avals out) {
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
}

// HLO's padding attribute: the (low, high, interior) triples, flattened.
std::vector<std::int64_t> flat_triples(const Param& config) {
  std::vector<std::int64_t> flat;
  for (const Param& t : config.items())
    for (std::int64_t v : t.as_ints()) flat.push_back(v);
  return flat;
}

std::vector<hlo::Instruction*> pad_lower(hlo::Builder& b, Operands ops, const Params& params,
                                         Avals out) {
  return std::vector<hlo::Instruction*>{
      b.op(hlo::Opcode::kPad, out_shape(out), {ops[0], ops[1]},
           attrs_of("padding", flat_triples(params.get("padding_config"))))};
}

// JAX's transpose of pad: the operand's cotangent strips the padding (negative padding, then a
// strided slice over the interior); the padding value's is what the padding positions received.
std::vector<Array> pad_transpose(Cts cts, LinearOps ops, const Params& params) {
  const Array& ct = cts[0];
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

// The batch axis gets no padding. A padding value per example ([B]) is not a scalar pad can
// take: pad with 0, then select each example's value where a padded mask marks padding.
BatchResult pad_batch(Ins args, BDims dims, const Params& params) {
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

const bool kRegistered = [] {
  slice_p.abstract_eval = slice_abstract_eval;
  slice_p.impl = slice_impl;
  slice_p.lower = slice_lower;
  ad::def_linear(slice_p);
  slice_p.transpose = unary_transpose(slice_transpose);
  slice_p.batch = slice_batch;

  dynamic_slice_p.abstract_eval = dynamic_slice_abstract_eval;
  dynamic_slice_p.impl = dynamic_slice_impl;
  dynamic_slice_p.lower = dynamic_slice_lower;
  ad::def_linear(dynamic_slice_p, [](std::size_t k) { return k == 0; });
  dynamic_slice_p.transpose = dynamic_slice_transpose;
  dynamic_slice_p.batch = dynamic_slice_batch;

  dynamic_update_slice_p.abstract_eval = dynamic_update_slice_abstract_eval;
  dynamic_update_slice_p.impl = dynamic_update_slice_impl;
  dynamic_update_slice_p.lower = dynamic_update_slice_lower;
  ad::def_linear(dynamic_update_slice_p, [](std::size_t k) { return k < 2; });
  dynamic_update_slice_p.transpose = dynamic_update_slice_transpose;
  dynamic_update_slice_p.batch = dynamic_update_slice_batch;

  concatenate_p.abstract_eval = concatenate_abstract_eval;
  concatenate_p.impl = concatenate_impl;
  concatenate_p.lower = concatenate_lower;
  ad::def_linear(concatenate_p);
  concatenate_p.transpose = concatenate_transpose;
  concatenate_p.batch = concatenate_batch;

  pad_p.abstract_eval = pad_abstract_eval;
  pad_p.impl = pad_impl;
  pad_p.lower = pad_lower;
  ad::def_linear(pad_p);
  pad_p.transpose = pad_transpose;
  pad_p.batch = pad_batch;
  return true;
}();

}  // namespace

namespace lax {

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

}  // namespace lax
}  // namespace jx
