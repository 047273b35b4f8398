// scatter, scatter-add, scatter-mul, scatter-min, scatter-max: XLA's scatter, as JAX's
// lax.scatter*. Each update element combines with the operand element it lands on, in update
// order; they share every rule but their derivatives, which follow JAX's.
#include <limits>
#include <numeric>

#include "jx/lax.hpp"
#include "jx/numpy.hpp"
#include "primitives/elementwise.hpp"
#include "primitives/gather_scatter.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"
#include "transforms/batch_rules.hpp"

namespace jx {

Primitive scatter_p("scatter"), scatter_add_p("scatter-add"), scatter_mul_p("scatter-mul"),
    scatter_min_p("scatter-min"), scatter_max_p("scatter-max");

namespace {

using namespace layout;
using gs::Mode;
using trace::bind1;

// How each primitive combines an update with the element it lands on: an HLO opcode, or none
// (the update replaces it).
std::optional<hlo::Opcode> combiner_of(const Primitive& p) {
  if (&p == &scatter_add_p) return hlo::Opcode::kAdd;
  if (&p == &scatter_mul_p) return hlo::Opcode::kMultiply;
  if (&p == &scatter_min_p) return hlo::Opcode::kMinimum;
  if (&p == &scatter_max_p) return hlo::Opcode::kMaximum;
  return std::nullopt;
}

// Operands (operand, indices, updates).
Outs scatter_abstract_eval(const Primitive& p, Avals in, const Params& params) {
  check_arity(p, in, 3);
  const ShapedArray &x = in[0], &idx = in[1], &u = in[2];
  const std::string op = "scatter";
  gs::check_index_dtype(idx.dtype);
  ShapedArray pair[] = {x, u};
  check_same_dtypes(p.name, pair);
  if (auto c = combiner_of(p)) check_dtype(p.name, x.dtype, hlo::info(*c).dtypes);
  lax::ScatterDimensionNumbers d = gs::scatter_dnums(params);
  SliceMap m = gs::slice_map(d);
  auto rank = static_cast<std::int64_t>(x.ndim());
  if (idx.ndim() == 0)
    fail<TypeError>("Scatter op has ", d.scatter_dims_to_operand_dims.size(),
                    " elements in scatter_dims_to_operand_dims and the bound of dimension "
                    "index_vector_dim=0 of indices is 1. These two numbers must be equal");
  gs::check_sorted(op, "update_window_dims", d.update_window_dims);
  gs::check_no_duplicates(op, "update_window_dims", d.update_window_dims);
  gs::check_in_range(op, "update_window_dims", d.update_window_dims, u.ndim());
  gs::check_sorted(op, "inserted_window_dims", d.inserted_window_dims);
  gs::check_no_duplicates(op, "inserted_window_dims", d.inserted_window_dims);
  gs::check_in_range(op, "inserted_window_dims", d.inserted_window_dims, rank);
  gs::check_batching_dims(op, m, x.shape, idx.shape, "inserted_window_dims");
  std::size_t window =
      d.update_window_dims.size() + d.inserted_window_dims.size() + d.operand_batching_dims.size();
  if (static_cast<std::size_t>(rank) != window)
    fail<TypeError>("Scatter op has window of size ", window, "; doesn't match operand of rank ",
                    rank, ".");
  std::int64_t vector = idx.shape.back();
  if (static_cast<std::int64_t>(d.scatter_dims_to_operand_dims.size()) != vector)
    fail<TypeError>("Scatter op has ", d.scatter_dims_to_operand_dims.size(),
                    " elements in scatter_dims_to_operand_dims and the bound of dimension "
                    "index_vector_dim=",
                    idx.ndim() - 1, " of indices is ", vector, ". These two numbers must be equal");
  for (std::size_t i = 0; i < d.scatter_dims_to_operand_dims.size(); ++i)
    if (d.scatter_dims_to_operand_dims[i] < 0 || d.scatter_dims_to_operand_dims[i] >= rank)
      fail<TypeError>("Invalid scatter_dims_to_operand_dims mapping; domain is [0, ", rank,
                      "), got: ", i, "->", d.scatter_dims_to_operand_dims[i], ".");
  gs::check_no_duplicates(op, "scatter_dims_to_operand_dims", d.scatter_dims_to_operand_dims);
  auto expected = static_cast<std::int64_t>(d.update_window_dims.size()) + idx.ndim() - 1;
  if (u.ndim() != expected)
    fail<TypeError>("Updates tensor must be of rank ", expected, "; got ", u.ndim(), ".");
  Ints walk = window_operand_dims(m, x.shape.size());
  for (std::size_t i = 0; i < d.update_window_dims.size(); ++i) {
    std::int64_t dim = d.update_window_dims[i];
    std::int64_t bound = x.shape[static_cast<std::size_t>(walk[i])];
    if (u.shape[static_cast<std::size_t>(dim)] > bound)
      fail<TypeError>(
          "Bounds of the window dimensions of updates must not exceed the bounds of "
          "the corresponding dimensions of operand. For dimension ",
          dim, ", updates bound is ", u.shape[static_cast<std::size_t>(dim)], ", operand bound is ",
          bound, ".");
  }
  std::size_t seen = 0;
  for (std::int64_t i : batch_dims_of(m, u.shape.size())) {
    std::int64_t have = u.shape[static_cast<std::size_t>(i)], want = idx.shape[seen++];
    if (have != want)
      fail<TypeError>(
          "Bounds of the scatter dimensions of updates must be the same as the bounds "
          "of the corresponding dimensions of scatter indices. For scatter dimension ",
          i, ", updates bound is ", have, ", indices bound is ", want, ".");
  }
  gs::mode_of(params);
  return result(x.shape, x.dtype, x.weak_type);
}

// Updates combine in order (repeated indices accumulate), each rounded to the dtype as it is
// stored; out-of-bounds windows are dropped, or, under kClip, clamped into the operand.
std::vector<Array> scatter_impl(const Primitive& p, Ins in, const Params& params, Avals out) {
  const Array &x = in[0], &idx = in[1], &u = in[2];
  SliceMap m = gs::slice_map(gs::scatter_dnums(params));
  bool clip = gs::mode_of(params) == Mode::kClip;
  std::vector<std::int64_t> indices = index_values(idx);
  Array r = make_array(out[0]);
  std::memcpy(r.impl()->buffer->data(), concrete_buffer(x, "impl").data(),
              static_cast<std::size_t>(out[0].size()) * itemsize(out[0].dtype));
  std::optional<hlo::Opcode> combiner = combiner_of(p);
  dispatch(x.dtype(), [&]<class T>() {
    using C = compute_t<T>;
    T* o = r.impl()->buffer->as<T>();
    const T* v = concrete_buffer(u, "impl").as<T>();
    auto combine = [&](C a, C b) -> C {
      switch (combiner.value_or(hlo::Opcode::kParameter)) {
        case hlo::Opcode::kAdd:
          return hlo::Scalar<hlo::Opcode::kAdd>{}(a, b);
        case hlo::Opcode::kMultiply:
          return hlo::Scalar<hlo::Opcode::kMultiply>{}(a, b);
        case hlo::Opcode::kMinimum:
          return hlo::Scalar<hlo::Opcode::kMinimum>{}(a, b);
        case hlo::Opcode::kMaximum:
          return hlo::Scalar<hlo::Opcode::kMaximum>{}(a, b);
        default:
          return b;
      }
    };
    Shape window = scatter_window(m, x.shape(), u.shape());
    // Clamping needs room for the window: an operand dim smaller than it takes no update.
    bool fits = true;
    for (std::size_t d = 0; d < window.size(); ++d) fits = fits && window[d] <= x.shape()[d];
    for_each_slice_element(
        m, u.shape(), x.shape(), window, idx.shape(), indices,
        [&](std::int64_t k, std::int64_t at, bool in) {
          if (in || (clip && fits))
            o[at] = static_cast<T>(combine(static_cast<C>(o[at]), static_cast<C>(v[k])));
        });
  });
  return {r};
}

// Under kClip the start vectors are clamped into the operand first: HLO's scatter drops
// out-of-bounds windows, which is kFillOrDrop and kPromiseInBounds.
std::vector<hlo::Instruction*> scatter_lower(const Primitive& p, hlo::Builder& b, Operands ops,
                                             const Params& params, Avals out) {
  lax::ScatterDimensionNumbers d = gs::scatter_dnums(params);
  hlo::Instruction *x = ops[0], *idx = ops[1], *u = ops[2];
  const Shape& is = idx->shape.dims;
  auto vector_dim = static_cast<std::int64_t>(is.size()) - 1;
  if (gs::mode_of(params) == Mode::kClip) {
    Shape window = scatter_window(gs::slice_map(d), x->shape.dims, u->shape.dims);
    DType it = idx->shape.dtype;
    Array hi = make_array(ShapedArray{{is.back()}, it, false});
    dispatch(it, [&]<class T>() {
      for (std::size_t k = 0; k < d.scatter_dims_to_operand_dims.size(); ++k) {
        auto dim = static_cast<std::size_t>(d.scatter_dims_to_operand_dims[k]);
        // Capped at the index type's largest value, which a bound past it cannot be reached by.
        std::int64_t bound = x->shape.dims[dim] - window[dim];
        if constexpr (std::is_integral_v<T>)
          if (static_cast<std::uint64_t>(std::max<std::int64_t>(bound, 0)) >
              static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
            bound = static_cast<std::int64_t>(std::numeric_limits<T>::max());
        hi.impl()->buffer->as<T>()[k] = static_cast<T>(bound);
      }
    });
    idx = b.op(hlo::Opcode::kClamp, idx->shape,
               {b.broadcast(b.constant(make_scalar(0, it)), is, {}), idx,
                b.broadcast(b.constant(hi), is, {vector_dim})});
  }
  hlo::Attrs a;
  a.set("update_window_dims", d.update_window_dims);
  a.set("inserted_window_dims", d.inserted_window_dims);
  a.set("scatter_dims_to_operand_dims", d.scatter_dims_to_operand_dims);
  a.set("input_batching_dims", d.operand_batching_dims);
  a.set("scatter_indices_batching_dims", d.scatter_indices_batching_dims);
  a.set("index_vector_dim", vector_dim);
  return {b.op(hlo::Opcode::kScatter, out_shape(out), {x, idx, u}, std::move(a),
               {b.combiner(out[0].dtype, combiner_of(p))})};
}

// The gather that reads, for every update element, the operand element it lands on.
Array gather_landing(const Array& from, const Array& indices, const ShapedArray& updates,
                     const Params& params, std::optional<double> fill = std::nullopt) {
  lax::ScatterDimensionNumbers d = gs::scatter_dnums(params);
  lax::GatherDimensionNumbers g{d.update_window_dims, d.inserted_window_dims,
                                d.scatter_dims_to_operand_dims, d.operand_batching_dims,
                                d.scatter_indices_batching_dims};
  return lax::gather(from, indices, g,
                     scatter_window(gs::slice_map(d), from.shape(), updates.shape),
                     params.get("indices_are_sorted").as_bool(),
                     params.get("unique_indices").as_bool(), gs::mode_of(params), fill);
}

// Binds `p` again with the params of the equation being differentiated or batched.
Array rebind(const Primitive& p, const Array& x, const Array& idx, const Array& u,
             const Params& params) {
  return bind1(p, {x, idx, u}, params);
}

void require_unique(const Params& params, const char* what) {
  if (!params.get("unique_indices").as_bool())
    throw Error(std::string(what) + " is only implemented where unique_indices=True");
}

// ---- derivatives, as JAX's ----

// scatter-add: linear in the operand and the updates; the updates' cotangent is gathered.
std::vector<Array> scatter_add_transpose(Cts cts, LinearOps ops, const Params& params) {
  std::vector<Array> out(3);
  if (!cts[0].valid()) return out;
  const Array& ct = cts[0];
  if (ops[0].is_linear()) out[0] = ct;
  if (ops[2].is_linear()) out[2] = gather_landing(ct, ops[1].value, ops[2].aval, params, 0.0);
  return out;
}

// scatter: where an update lands, its tangent replaces the operand's. With unique indices that
// is the scatter of the tangents (linear; transposed below). Otherwise which of the updates
// landing on one element wins is unspecified, so, as JAX does, each update gets an id, the ids
// are scattered and gathered back, and the primal and tangent are the scatter-adds of what won:
// both then agree on the winner wherever the scatter runs.
JvpResult scatter_jvp(Ins primals, Ins tangents, const Params& params) {
  const Array &x = primals[0], &idx = primals[1], &u = primals[2];
  Array tx = ad::instantiate(tangents[0], x.aval()), tu = ad::instantiate(tangents[2], u.aval());
  if (params.get("unique_indices").as_bool())
    return {{rebind(scatter_p, x, idx, u, params)}, {rebind(scatter_p, tx, idx, tu, params)}};
  lax::ScatterDimensionNumbers d = gs::scatter_dnums(params);
  Shape per_update = u.shape();  // one id per start vector: 1 along the window dims
  for (std::int64_t w : d.update_window_dims) per_update[static_cast<std::size_t>(w)] = 1;
  auto count = static_cast<std::int64_t>(shape_size(per_update));
  Ints all(u.shape().size());
  std::iota(all.begin(), all.end(), 0);
  Array ids = lax::broadcast_in_dim(
      lax::reshape(lax::add(lax::iota(int64, {count}, 0), make_scalar(1, int64)), per_update),
      u.shape(), all);
  Array landed = rebind(scatter_p, lax::broadcast_in_dim(make_scalar(0, int64), x.shape(), {}), idx,
                        ids, params);
  Array won = lax::eq(ids, gather_landing(landed, idx, u.aval(), params, 0.0));
  Array kept = lax::eq(landed, lax::broadcast_in_dim(make_scalar(0, int64), x.shape(), {}));
  auto masked = [](const Array& keep, const Array& v) {
    return lax::select_n(keep, {ad::zeros(v.aval()), v});
  };
  Array y = rebind(scatter_add_p, masked(kept, x), idx, masked(won, u), params);
  Array t = rebind(scatter_add_p, masked(kept, tx), idx, masked(won, tu), params);
  return {{y}, {t}};
}

std::vector<Array> scatter_transpose(Cts cts, LinearOps ops, const Params& params) {
  require_unique(params, "scatter transpose");
  std::vector<Array> out(3);
  if (!cts[0].valid()) return out;
  const Array& ct = cts[0];
  if (ops[0].is_linear())
    out[0] = rebind(scatter_p, ct, ops[1].value, ad::zeros(ops[2].aval), params);
  if (ops[2].is_linear()) out[2] = gather_landing(ct, ops[1].value, ops[2].aval, params, 0.0);
  return out;
}

// scatter-mul: x · Π u over the updates landing there; with unique indices, d(x·u) = dx·u + x·du.
JvpResult scatter_mul_jvp(Ins primals, Ins tangents, const Params& params) {
  const Array &x = primals[0], &idx = primals[1], &u = primals[2];
  Array y = rebind(scatter_mul_p, x, idx, u, params);
  Array t;
  if (tangents[0].valid()) t = rebind(scatter_mul_p, tangents[0], idx, u, params);
  if (tangents[2].valid()) {
    require_unique(params, "scatter_mul gradient");
    t = ad::add(t,
                lax::mul(x, rebind(scatter_add_p, ad::zeros(x.aval()), idx, tangents[2], params)));
  }
  return {{y}, {t}};
}

std::vector<Array> scatter_mul_transpose(Cts cts, LinearOps ops, const Params& params) {
  if (ops[2].is_linear()) require_unique(params, "scatter_mul transpose for the updates");
  std::vector<Array> out(3);
  if (!cts[0].valid()) return out;
  const Array& ct = cts[0];
  if (ops[0].is_linear()) out[0] = rebind(scatter_mul_p, ct, ops[1].value, ops[2].value, params);
  return out;
}

// scatter-min/max: the result is the operand element or some updates; the elements that equal
// it share its tangent equally, as JAX's reduce_max does.
JvpResult scatter_extremal_jvp(const Primitive& p, Ins primals, Ins tangents,
                               const Params& params) {
  const Array &x = primals[0], &idx = primals[1], &u = primals[2];
  Array y = rebind(p, x, idx, u, params);
  Array tx = ad::instantiate(tangents[0], x.aval()), tu = ad::instantiate(tangents[2], u.aval());
  Array kept = lax::convert_element_type(lax::eq(x, y), x.dtype());
  Array won =
      lax::convert_element_type(lax::eq(u, gather_landing(y, idx, u.aval(), params)), x.dtype());
  Array count = lax::add(kept, rebind(scatter_add_p, ad::zeros(x.aval()), idx, won, params));
  Array sum = lax::add(lax::mul(tx, kept),
                       rebind(scatter_add_p, ad::zeros(x.aval()), idx, lax::mul(tu, won), params));
  return {{y}, {lax::div(sum, count)}};
}

// The batch runs along dim 0 of the operand and updates (added where one has none); indices
// without it leave each example's scatter as it was, batched ones pair it as a batching dim.
BatchResult scatter_batch(const Primitive& p, Ins args, BDims dims, const Params& params) {
  std::int64_t size = batching::batch_size(args, dims);
  lax::ScatterDimensionNumbers d = gs::scatter_dnums(params);
  auto shifted = [](Ints v) {
    for (auto& x : v) ++x;
    return v;
  };
  Array x = batch_at(args[0], dims[0], size, 0), u = batch_at(args[2], dims[2], size, 0);
  Array idx = args[1];
  d.inserted_window_dims = shifted(d.inserted_window_dims);
  d.scatter_dims_to_operand_dims = shifted(d.scatter_dims_to_operand_dims);
  d.operand_batching_dims = shifted(d.operand_batching_dims);
  d.update_window_dims = shifted(d.update_window_dims);
  if (!dims[1]) {
    d.update_window_dims.insert(d.update_window_dims.begin(), 0);
  } else {
    idx = batch_at(idx, dims[1], size, 0);
    d.operand_batching_dims.insert(d.operand_batching_dims.begin(), 0);
    d.scatter_indices_batching_dims = shifted(d.scatter_indices_batching_dims);
    d.scatter_indices_batching_dims.insert(d.scatter_indices_batching_dims.begin(), 0);
  }
  Params q = params;
  q.set("dimension_numbers", gs::scatter_dnums_param(d));
  return one(rebind(p, x, idx, u, q), 0);
}

void def_scatter(Primitive& p) {
  p.abstract_eval = [&p](Avals in, const Params& params) {
    return scatter_abstract_eval(p, in, params);
  };
  p.impl = [&p](Ins in, const Params& params, Avals out) {
    return scatter_impl(p, in, params, out);
  };
  p.lower = [&p](hlo::Builder& b, Operands ops, const Params& params, Avals out) {
    return scatter_lower(p, b, ops, params, out);
  };
  p.batch = [&p](Ins args, BDims dims, const Params& params) {
    return scatter_batch(p, args, dims, params);
  };
}

const bool kRegistered = [] {
  for (Primitive* p : {&scatter_p, &scatter_add_p, &scatter_mul_p, &scatter_min_p, &scatter_max_p})
    def_scatter(*p);
  ad::def_linear(scatter_add_p, [](std::size_t k) { return k != 1; });
  scatter_add_p.transpose = scatter_add_transpose;
  scatter_p.jvp = scatter_jvp;
  scatter_p.transpose = scatter_transpose;
  scatter_mul_p.jvp = scatter_mul_jvp;
  scatter_mul_p.transpose = scatter_mul_transpose;
  for (Primitive* p : {&scatter_min_p, &scatter_max_p})
    p->jvp = [p](Ins primals, Ins tangents, const Params& params) {
      return scatter_extremal_jvp(*p, primals, tangents, params);
    };
  return true;
}();

Array bind_scatter(const Primitive& p, const Array& operand, const Array& indices,
                   const Array& updates, const lax::ScatterDimensionNumbers& dimension_numbers,
                   bool indices_are_sorted, bool unique_indices,
                   std::optional<lax::GatherScatterMode> mode) {
  return bind1(p, {operand, indices, updates},
               {{"dimension_numbers", gs::scatter_dnums_param(dimension_numbers)},
                {"indices_are_sorted", Param::boolean(indices_are_sorted)},
                {"mode", gs::mode_param(mode.value_or(Mode::kFillOrDrop))},
                {"unique_indices", Param::boolean(unique_indices)},
                {"update_consts", Param::tuple({})},
                {"update_jaxpr", Param()}});
}

}  // namespace

namespace lax {

#define JX_SCATTER_WRAPPER(name, prim)                                                          \
  Array name(const Array& operand, const Array& indices, const Array& updates,                  \
             const ScatterDimensionNumbers& dimension_numbers, bool indices_are_sorted,         \
             bool unique_indices, std::optional<GatherScatterMode> mode) {                      \
    return bind_scatter(prim, operand, indices, updates, dimension_numbers, indices_are_sorted, \
                        unique_indices, mode);                                                  \
  }
JX_SCATTER_WRAPPER(scatter, scatter_p)
JX_SCATTER_WRAPPER(scatter_add, scatter_add_p)
JX_SCATTER_WRAPPER(scatter_mul, scatter_mul_p)
JX_SCATTER_WRAPPER(scatter_min, scatter_min_p)
JX_SCATTER_WRAPPER(scatter_max, scatter_max_p)
#undef JX_SCATTER_WRAPPER

}  // namespace lax
}  // namespace jx
