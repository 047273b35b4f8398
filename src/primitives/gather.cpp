// gather: XLA's gather, as JAX's lax.gather — one slice of the operand per start vector of the
// indices. Linear in the operand; its transpose is scatter-add (scatter.cpp), and a batched
// index array becomes one more batching dim, not a loop.
#include "jx/lax.hpp"
#include "primitives/gather_scatter.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"
#include "transforms/batch_rules.hpp"

namespace jx {

Primitive gather_p("gather");
extern Primitive scatter_add_p;

namespace {

using namespace layout;
using gs::Mode;
using trace::bind1;

// ---- gather[dimension_numbers fill_value indices_are_sorted mode slice_sizes unique_indices] ----
Outs gather_abstract_eval(Avals in, const Params& params) {
  check_arity(gather_p, in, 2);
  const ShapedArray &x = in[0], &idx = in[1];
  lax::GatherDimensionNumbers d = gs::gather_dnums(params);
  SliceMap m = gs::slice_map(d);
  Ints sizes = ints(params, "slice_sizes");
  gs::check_index_dtype(idx.dtype);
  const std::string op = "gather";
  if (idx.ndim() == 0)
    fail<TypeError>(
        "Gather op has 0 elements in start_index_map and the bound of dimension "
        "index_vector_dim=0 of indices is 1. These two numbers must be equal.");
  auto rank = static_cast<std::int64_t>(x.ndim());
  auto out_rank = static_cast<std::int64_t>(d.offset_dims.size()) + idx.ndim() - 1;
  gs::check_sorted(op, "offset_dims", d.offset_dims);
  gs::check_no_duplicates(op, "offset_dims", d.offset_dims);
  for (std::size_t i = 0; i < d.offset_dims.size(); ++i)
    if (d.offset_dims[i] < 0 || d.offset_dims[i] >= out_rank)
      fail<TypeError>("Offset dimension ", i, " in gather op is out of bounds; got ",
                      d.offset_dims[i], ", but should have been in [0, ", out_rank, ")");
  std::int64_t vector = idx.shape.back();
  if (static_cast<std::int64_t>(d.start_index_map.size()) != vector)
    fail<TypeError>(
        "Gather op has ", d.start_index_map.size(),
        " elements in start_index_map and the bound of dimension index_vector_dim=", idx.ndim() - 1,
        " of indices is ", vector, ". These two numbers must be equal.");
  for (std::size_t i = 0; i < d.start_index_map.size(); ++i)
    if (d.start_index_map[i] < 0 || d.start_index_map[i] >= rank)
      fail<TypeError>("Invalid start_index_map; domain is [0, ", rank, "), got: ", i, "->",
                      d.start_index_map[i], ".");
  gs::check_no_duplicates(op, "start_index_map", d.start_index_map);
  gs::check_sorted(op, "collapsed_slice_dims", d.collapsed_slice_dims);
  gs::check_in_range(op, "collapsed_slice_dims", d.collapsed_slice_dims, rank);
  gs::check_no_duplicates(op, "collapsed_slice_dims", d.collapsed_slice_dims);
  gs::check_batching_dims(op, m, x.shape, idx.shape, "collapsed_slice_dims");
  if (static_cast<std::int64_t>(sizes.size()) != rank)
    fail<TypeError>(
        "Gather op must have one slice size for every input dimension; got: "
        "len(slice_sizes)=",
        sizes.size(), ", input_shape.rank=", rank);
  if (sizes.size() !=
      d.offset_dims.size() + d.collapsed_slice_dims.size() + d.operand_batching_dims.size())
    fail<TypeError>(
        "All components of the offset index in a gather op must either be a offset "
        "dimension or explicitly collapsed/batching; got len(slice_sizes)=",
        sizes.size(), ", output_slice_sizes=", tup(d.offset_dims),
        ", collapsed_slice_dims=", tup(d.collapsed_slice_dims),
        ", operand_batching_dims=", tup(d.operand_batching_dims), ".");
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] < 0 || sizes[i] > x.shape[i])
      fail<TypeError>("Slice size at index ", i,
                      " in gather op is out of range, must be within [0, ", x.shape[i],
                      " + 1), got ", sizes[i], ".");
  for (std::size_t i = 0; i < d.collapsed_slice_dims.size(); ++i)
    if (std::int64_t bound = sizes[static_cast<std::size_t>(d.collapsed_slice_dims[i])]; bound != 1)
      fail<TypeError>("Gather op can only collapse slice dims with bound 1, but bound is ", bound,
                      " for index ", d.collapsed_slice_dims[i], " at position ", i, ".");
  for (std::size_t i = 0; i < d.operand_batching_dims.size(); ++i)
    if (std::int64_t bound = sizes[static_cast<std::size_t>(d.operand_batching_dims[i])]; bound > 1)
      fail<TypeError>(
          "Gather op can only have operand batching dims with bound 0/1, but bound "
          "is ",
          bound, " for index ", d.operand_batching_dims[i], " at position ", i, ".");
  gs::mode_of(params);
  // Batch dims in the indices' order where offset_dims leaves room; slice dims at offset_dims.
  Shape out(static_cast<std::size_t>(out_rank));
  Ints walk = window_operand_dims(m, x.shape.size());
  for (std::size_t j = 0; j < d.offset_dims.size(); ++j)
    out[static_cast<std::size_t>(d.offset_dims[j])] = sizes[static_cast<std::size_t>(walk[j])];
  std::size_t next = 0;
  for (std::int64_t k = 0; k < out_rank; ++k)
    if (!contains(d.offset_dims, k)) out[static_cast<std::size_t>(k)] = idx.shape[next++];
  return result(out, x.dtype, x.weak_type);
}

// The value a kFillOrDrop gather gives slices that leave the operand: fill_value, or JAX's
// default (NaN for inexact dtypes, the lowest signed, the highest unsigned, true).
Array fill_of(const Params& params, DType d) {
  const Param& f = params.get("fill_value");
  if (!f.is_none()) return make_scalar(f.as_float(), d);
  if (is_floating(d)) return make_scalar(std::numeric_limits<double>::quiet_NaN(), d);
  return identity_of(is_integral(d) && !is_unsigned(d) ? Identity::kLowest : Identity::kHighest, d);
}

std::vector<Array> gather_impl(Ins in, const Params& params, Avals out) {
  const Array &x = in[0], &idx = in[1];
  SliceMap m = gs::slice_map(gs::gather_dnums(params));
  bool fill = gs::mode_of(params) == Mode::kFillOrDrop;
  Array fill_value = fill_of(params, x.dtype());
  std::vector<std::int64_t> indices = index_values(idx);
  Array r = make_array(out[0]);
  const std::size_t w = itemsize(out[0].dtype);
  const auto* src = static_cast<const std::byte*>(concrete_buffer(x, "impl").data());
  const auto* pad = static_cast<const std::byte*>(concrete_buffer(fill_value, "impl").data());
  auto* dst = static_cast<std::byte*>(r.impl()->buffer->data());
  for_each_slice_element(m, out[0].shape, x.shape(), ints(params, "slice_sizes"), idx.shape(),
                         indices, [&](std::int64_t k, std::int64_t at, bool in_bounds) {
                           const std::byte* from = fill && !in_bounds ? pad : src + at * w;
                           std::memcpy(dst + k * w, from, w);
                         });
  return {r};
}

hlo::Attrs gather_attrs(const lax::GatherDimensionNumbers& d, const Ints& sizes,
                        std::int64_t index_vector_dim) {
  hlo::Attrs a;
  a.set("offset_dims", d.offset_dims);
  a.set("collapsed_slice_dims", d.collapsed_slice_dims);
  a.set("start_index_map", d.start_index_map);
  a.set("operand_batching_dims", d.operand_batching_dims);
  a.set("start_indices_batching_dims", d.start_indices_batching_dims);
  a.set("index_vector_dim", index_vector_dim);
  a.set("slice_sizes", sizes);
  return a;
}

// HLO's gather clamps start vectors into the operand, which is kClip and kPromiseInBounds;
// kFillOrDrop then selects the fill value where a start vector was out of bounds.
std::vector<hlo::Instruction*> gather_lower(hlo::Builder& b, Operands ops, const Params& params,
                                            Avals out) {
  lax::GatherDimensionNumbers d = gs::gather_dnums(params);
  Ints sizes = ints(params, "slice_sizes");
  hlo::Instruction *x = ops[0], *idx = ops[1];
  const Shape& is = idx->shape.dims;
  auto vector_dim = static_cast<std::int64_t>(is.size()) - 1;
  hlo::Instruction* g =
      b.op(hlo::Opcode::kGather, out_shape(out), {x, idx}, gather_attrs(d, sizes, vector_dim));
  if (gs::mode_of(params) != Mode::kFillOrDrop) return {g};
  // Compared in int64: a bound past the index dtype's range must not wrap.
  DType it = int64;
  if (idx->shape.dtype != it) idx = b.convert(idx, it);  // uint64 past int64's range: negative
  Array hi = make_array(ShapedArray{{is.back()}, it, false});
  for (std::size_t k = 0; k < d.start_index_map.size(); ++k) {
    auto dim = static_cast<std::size_t>(d.start_index_map[k]);
    hi.impl()->buffer->as<std::int64_t>()[k] = x->shape.dims[dim] - sizes[dim];
  }
  hlo::Instruction* ok = b.binary(
      hlo::Opcode::kAnd, b.compare(idx, b.broadcast(b.constant(make_scalar(0, it)), is, {}), "GE"),
      b.compare(idx, b.broadcast(b.constant(hi), is, {vector_dim}), "LE"));
  ok = b.reduce(ok, b.constant(make_scalar(1, bool_)), {vector_dim}, hlo::Opcode::kAnd);
  Ints batch;
  for (std::int64_t k = 0; k < static_cast<std::int64_t>(out[0].shape.size()); ++k)
    if (!contains(d.offset_dims, k)) batch.push_back(k);
  hlo::Instruction* fill = b.broadcast(b.constant(fill_of(params, out[0].dtype)), out[0].shape, {});
  return {
      b.op(hlo::Opcode::kSelect, out_shape(out), {b.broadcast(ok, out[0].shape, batch), g, fill})};
}

// The transpose adds each slice's cotangent back where the slice came from.
std::vector<Array> gather_transpose(Cts cts, LinearOps ops, const Params& params) {
  std::vector<Array> out(2);
  if (!ops[0].is_linear() || !cts[0].valid()) return out;
  lax::GatherDimensionNumbers d = gs::gather_dnums(params);
  lax::ScatterDimensionNumbers s{d.offset_dims, d.collapsed_slice_dims, d.start_index_map,
                                 d.operand_batching_dims, d.start_indices_batching_dims};
  out[0] = lax::scatter_add(ad::zeros(ops[0].aval), ops[1].value, cts[0], s,
                            params.get("indices_are_sorted").as_bool(),
                            params.get("unique_indices").as_bool(), gs::mode_of(params));
  return out;
}

Ints shifted(const Ints& dims) {
  Ints out;
  for (auto d : dims) out.push_back(d + 1);
  return out;
}

// The batch runs along dim 0 of everything: of the operand, it is one more slice dim (taken
// whole) or, when the indices are batched too, a batching dim paired with theirs; of the
// indices alone, one more batch dim of the result.
BatchResult gather_batch(Ins args, BDims dims, const Params& params) {
  std::int64_t size = batching::batch_size(args, dims);
  lax::GatherDimensionNumbers d = gs::gather_dnums(params);
  Ints sizes = ints(params, "slice_sizes");
  Array x = args[0], idx = args[1];
  d.offset_dims = shifted(d.offset_dims);  // the result's dim 0 is the batch
  if (dims[0]) {
    x = batch_at(x, dims[0], size, 0);
    d.collapsed_slice_dims = shifted(d.collapsed_slice_dims);
    d.start_index_map = shifted(d.start_index_map);
    d.operand_batching_dims = shifted(d.operand_batching_dims);
  }
  if (dims[1]) {
    idx = batch_at(idx, dims[1], size, 0);
    d.start_indices_batching_dims = shifted(d.start_indices_batching_dims);
  }
  if (dims[0] && !dims[1]) {
    d.offset_dims.insert(d.offset_dims.begin(), 0);
    sizes.insert(sizes.begin(), size);
  } else if (dims[0]) {
    d.operand_batching_dims.insert(d.operand_batching_dims.begin(), 0);
    d.start_indices_batching_dims.insert(d.start_indices_batching_dims.begin(), 0);
    sizes.insert(sizes.begin(), 1);
  }
  const Param& fill = params.get("fill_value");
  return one(lax::gather(x, idx, d, sizes, params.get("indices_are_sorted").as_bool(),
                         params.get("unique_indices").as_bool(), gs::mode_of(params),
                         fill.is_none() ? std::nullopt : std::optional(fill.as_float())),
             0);
}

const bool kRegistered = [] {
  gather_p.abstract_eval = gather_abstract_eval;
  gather_p.impl = gather_impl;
  gather_p.lower = gather_lower;
  ad::def_linear(gather_p, [](std::size_t k) { return k == 0; });
  gather_p.transpose = gather_transpose;
  gather_p.batch = gather_batch;
  return true;
}();

}  // namespace

namespace lax {

Array gather(const Array& operand, const Array& start_indices,
             const GatherDimensionNumbers& dimension_numbers, const Ints& slice_sizes,
             bool indices_are_sorted, bool unique_indices, std::optional<GatherScatterMode> mode,
             std::optional<double> fill_value) {
  GatherScatterMode m = mode.value_or(GatherScatterMode::kFillOrDrop);
  return bind1(
      gather_p, {operand, start_indices},
      {{"dimension_numbers", gs::gather_dnums_param(dimension_numbers)},
       {"fill_value",
        m == GatherScatterMode::kFillOrDrop && fill_value ? Param::floating(*fill_value) : Param()},
       {"indices_are_sorted", Param::boolean(indices_are_sorted)},
       {"mode", gs::mode_param(m)},
       {"slice_sizes", Param::ints(slice_sizes)},
       {"unique_indices", Param::boolean(unique_indices)}});
}

}  // namespace lax
}  // namespace jx
