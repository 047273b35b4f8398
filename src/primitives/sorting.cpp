// Sorting: sort, as JAX's lax.sort: n operands of one shape sorted together along a dimension by
// the lexicographic order of the first num_keys, ascending and stable (is_stable only prints); and
// top_k, the k largest entries along the last axis and their indices, in sort's total order.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>

#include "core/sort_rows.hpp"
#include "jx/lax.hpp"
#include "transforms/ad_rules.hpp"
#include "transforms/batch_rules.hpp"
#include "primitives/layout.hpp"
#include "support/check.hpp"
#include "trace/tracer.hpp"

namespace jx {

Primitive sort_p("sort"), top_k_p("top_k");

namespace {

using namespace layout;

std::int64_t dimension_of(const Params& params) { return params.get("dimension").as_int(); }
std::size_t num_keys_of(const Params& params) {
  return static_cast<std::size_t>(params.get("num_keys").as_int());
}

Params sort_params(std::int64_t dimension, bool is_stable, std::int64_t num_keys) {
  return {{"dimension", Param::integer(dimension)},
          {"is_stable", Param::boolean(is_stable)},
          {"num_keys", Param::integer(num_keys)}};
}

// The wrapper's checks (JAX's lax.sort): they come before the shapes are compared.
void check_operands(std::size_t n, std::int64_t num_keys) {
  if (n == 0) fail<TypeError>("Sort requires at least one operand");
  if (num_keys < 1 || num_keys > static_cast<std::int64_t>(n))
    fail<TypeError>("num_keys=", num_keys, " must be between 1 and len(operand)=", n);
}

[[noreturn]] void axis_error(std::int64_t dimension, int ndim) {
  fail<ShapeError>("axis ", dimension, " is out of bounds for array of dimension ", ndim);
}

// ---- abstract_eval and impl: the outputs have the operands' types ----
Outs sort_abstract_eval(Avals in, const Params& params) {
  check_operands(in.size(), params.get("num_keys").as_int());
  params.get("is_stable").as_bool();              // present and a bool
  std::int64_t dimension = dimension_of(params);  // canonical: the wrapper made it so
  if (dimension < 0 || dimension >= in[0].ndim()) axis_error(dimension, in[0].ndim());
  if (any_of_n(in.size(), [&](auto k) { return in[k].shape != in[0].shape; })) {
    std::vector<std::string> shapes;
    for (const ShapedArray& a : in) shapes.push_back(shape_str(a.shape));
    fail<TypeError>("Arguments to sort must have equal shapes, got: ", detail::join(shapes, " "));
  }
  return Outs(in.begin(), in.end());
}

std::vector<Array> sort_impl(Ins in, const Params& params, Avals out) {
  std::vector<Array> outs;
  std::vector<DType> dtypes;
  std::vector<const void*> src;
  std::vector<void*> dst;
  for (std::size_t k = 0; k < in.size(); ++k) {
    outs.push_back(make_array(out[k]));
    dtypes.push_back(in[k].dtype());
    src.push_back(concrete_buffer(in[k], "impl").data());
    dst.push_back(outs.back().impl()->buffer->data());
  }
  sort_rows(in[0].shape(), dimension_of(params), num_keys_of(params), dtypes, src, dst);
  return outs;
}

// ---- lowering: one HLO sort with a tuple result, an element per output ----
std::vector<hlo::Instruction*> sort_lower(hlo::Builder& b, Operands ops, const Params& params,
                                          Avals out) {
  std::vector<hlo::HloShape> shapes;
  for (const ShapedArray& a : out) shapes.push_back(hlo::HloShape::array(a.dtype, a.shape));
  hlo::Attrs attrs;
  attrs.set("dimensions", Ints{dimension_of(params)});
  attrs.set("is_stable", std::string(params.get("is_stable").as_bool() ? "true" : "false"));
  attrs.set("num_keys", params.get("num_keys").as_int());
  hlo::Instruction* sorted =
      b.op(hlo::Opcode::kSort, hlo::HloShape::tuple(shapes), {ops.begin(), ops.end()}, attrs);
  std::vector<hlo::Instruction*> elements;
  for (std::size_t k = 0; k < shapes.size(); ++k)
    elements.push_back(b.op(hlo::Opcode::kGetTupleElement, shapes[k], {sorted},
                            attrs_of("index", static_cast<std::int64_t>(k))));
  return elements;
}

// ---- differentiation ----
// A sort only permutes: each output's tangent is its operand's tangent permuted as the operands
// were, which a second sort computes with the tangents as values under the same keys. It is a
// separate equation so the primal outputs never depend on tangents (partial evaluation keeps
// them known), and it is linear in the values, whose transpose is below.
JvpResult sort_jvp(Ins primals, Ins tangents, const Params& params) {
  std::size_t num_keys = num_keys_of(params);
  JvpResult r{trace::bind(sort_p, {primals.begin(), primals.end()}, params), {}};
  r.tangents.resize(primals.size());
  std::vector<Array> operands(primals.begin(), primals.begin() + num_keys);
  std::vector<std::size_t> which;
  for (std::size_t k = 0; k < tangents.size(); ++k) {
    if (ad::is_zero(tangents[k])) continue;
    operands.push_back(tangents[k]);
    which.push_back(k);
  }
  if (which.empty()) return r;
  std::vector<Array> sorted = trace::bind(sort_p, std::move(operands), params);
  for (std::size_t i = 0; i < which.size(); ++i) r.tangents[which[i]] = sorted[num_keys + i];
  return r;
}

// With the keys known, sort is linear in its other operands: output position j holds the input
// at perm[j], where perm is an iota sorted under the keys. The cotangent goes back by sorting it
// by perm, which sends position j to position perm[j] (no scatter needed). The keys' outputs do
// not depend on the linear operands, so their cotangents contribute nothing.
std::vector<Array> sort_transpose(Cts cts, LinearOps ops, const Params& params) {
  std::size_t num_keys = num_keys_of(params);
  std::int64_t dimension = dimension_of(params);
  std::vector<Array> out(ops.size());
  std::vector<Array> keyed;
  for (std::size_t k = 0; k < num_keys; ++k) {
    JX_CHECK(!ops[k].is_linear(), "sort is linear in its non-key operands only");
    keyed.push_back(ops[k].value);
  }
  std::vector<std::size_t> which;
  for (std::size_t k = num_keys; k < ops.size(); ++k)
    if (ops[k].is_linear() && !ad::is_zero(cts[k])) which.push_back(k);
  if (which.empty()) return out;
  const Shape& shape = ops[0].aval.shape;
  DType index =
      shape[static_cast<std::size_t>(dimension)] <= std::numeric_limits<std::int32_t>::max()
          ? int32
          : int64;
  keyed.push_back(lax::iota(index, shape, dimension));
  Array perm = trace::bind(sort_p, std::move(keyed), params).back();
  std::vector<Array> operands{perm};
  for (std::size_t k : which) operands.push_back(cts[k]);
  bool is_stable = params.get("is_stable").as_bool();
  std::vector<Array> back =
      trace::bind(sort_p, std::move(operands), sort_params(dimension, is_stable, 1));
  for (std::size_t i = 0; i < which.size(); ++i) out[which[i]] = back[1 + i];
  return out;
}

// ---- batching: every operand gets its batch axis where the first batched one has it, and the
// sorted dimension shifts past it ----
BatchResult sort_batch(Ins args, BDims dims, const Params& params) {
  std::int64_t size = batching::batch_size(args, dims);
  int b = **std::find_if(dims.begin(), dims.end(), [](auto d) { return d.has_value(); });
  std::vector<Array> operands;
  for (std::size_t k = 0; k < args.size(); ++k)
    operands.push_back(batch_at(args[k], dims[k], size, b));
  Params shifted = params;
  shifted.set("dimension", Param::integer(shift(dimension_of(params), b)));
  std::vector<Array> outs = trace::bind(sort_p, std::move(operands), shifted);
  return {outs, std::vector<BatchDim>(outs.size(), b)};
}

// ---- top_k: the k largest along the last axis, largest first, in sort's order reversed (NaN
// above +inf, -0.0 equal to 0.0); among equals the lower index comes first ----
std::int64_t k_of(const Params& params) { return params.get("k").as_int(); }

[[noreturn]] void negative_k(std::int64_t k) {
  fail<ValueError>("k argument to top_k must be nonnegative, got ", k);
}

Outs top_k_abstract_eval(Avals in, const Params& params) {
  check_arity(top_k_p, in, 1);
  std::int64_t k = k_of(params);
  if (k < 0) negative_k(k);
  const Shape& s = in[0].shape;
  if (s.empty()) fail<TypeError>("top_k operand must have >= 1 dimension, got ()");
  if (s.back() < k)
    fail<ValueError>("k argument to top_k must be no larger than minor dimension; ", k, " vs [",
                     detail::join(s, ", "), "]");
  constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
  if (s.back() > kInt32Max + 1)
    fail<ValueError>(
        "top_k returns int32 indices, which will overflow for array dimensions larger than the "
        "maximum int32 (",
        kInt32Max, "). Got operand.shape=", shape_str(s));
  Shape out = s;
  out.back() = k;
  return {ShapedArray{out, in[0].dtype, in[0].weak_type}, ShapedArray{out, int32, false}};
}

// Per row, a partial sort of the positions: a strict total order (ties broken by position), so
// the result is the one the lowering's stable sort gives.
std::vector<Array> top_k_impl(Ins in, const Params& params, Avals out) {
  Array values = make_array(out[0]), indices = make_array(out[1]);
  const Shape& s = in[0].shape();
  const std::int64_t n = s.back(), k = k_of(params), rows = n == 0 ? 0 : shape_size(s) / n;
  const Buffer& src = concrete_buffer(in[0], "impl");
  auto* idx = indices.impl()->buffer->as<std::int32_t>();
  dispatch(in[0].dtype(), [&]<class T>() {
    const T* x = src.as<T>();
    T* v = values.impl()->buffer->as<T>();
    std::vector<std::int32_t> perm(static_cast<std::size_t>(n));
    for (std::int64_t r = 0; r < rows; ++r) {
      const T* row = x + r * n;
      std::iota(perm.begin(), perm.end(), 0);
      std::partial_sort(perm.begin(), perm.begin() + k, perm.end(),
                        [&](std::int32_t a, std::int32_t b) {
                          int c = sort_compare(row[a], row[b]);
                          return c != 0 ? c > 0 : a < b;
                        });
      for (std::int64_t j = 0; j < k; ++j) {
        idx[r * k + j] = perm[static_cast<std::size_t>(j)];
        v[r * k + j] = row[perm[static_cast<std::size_t>(j)]];
      }
    }
  });
  return {values, indices};
}

// One ascending HLO sort by keys that reverse the order (NaNs first: `x == x` is false for them;
// then -x for floats, ~x for integers and bools, which never overflows), then the positions, so
// ties keep the lower index first; the values ride along. Both outputs are its first k columns.
std::vector<hlo::Instruction*> top_k_lower(hlo::Builder& b, Operands ops, const Params& params,
                                           Avals out) {
  hlo::Instruction* x = ops[0];
  const Shape& s = x->shape.dims;
  const auto last = static_cast<std::int64_t>(s.size()) - 1;
  DType d = out[0].dtype;
  std::vector<hlo::Instruction*> operands;
  if (is_floating(d)) {
    operands.push_back(b.compare(x, x, "EQ"));
    operands.push_back(b.unary(hlo::Opcode::kNegate, x));
  } else {
    operands.push_back(b.unary(hlo::Opcode::kNot, x));
  }
  operands.push_back(b.op(hlo::Opcode::kIota, hlo::HloShape::array(int32, s), {},
                          attrs_of("iota_dimension", last)));
  const auto num_keys = static_cast<std::int64_t>(operands.size());
  operands.push_back(x);
  std::vector<hlo::HloShape> shapes;
  for (hlo::Instruction* op : operands) shapes.push_back(op->shape);
  hlo::Attrs attrs;
  attrs.set("dimensions", Ints{last});
  attrs.set("is_stable", std::string("true"));
  attrs.set("num_keys", num_keys);
  hlo::Instruction* sorted =
      b.op(hlo::Opcode::kSort, hlo::HloShape::tuple(shapes), std::move(operands), attrs);
  Ints slice;
  for (std::size_t i = 0; i < s.size(); ++i)
    slice.insert(slice.end(), {0, static_cast<std::int64_t>(i) == last ? k_of(params) : s[i], 1});
  auto first_k = [&](std::int64_t element, const ShapedArray& aval) {
    hlo::HloShape full = shapes[static_cast<std::size_t>(element)];
    hlo::Instruction* e =
        b.op(hlo::Opcode::kGetTupleElement, full, {sorted}, attrs_of("index", element));
    return b.op(hlo::Opcode::kSlice, hlo::HloShape::array(aval.dtype, aval.shape), {e},
                attrs_of("slice", slice));
  };
  return {first_k(num_keys, out[0]), first_k(num_keys - 1, out[1])};
}

// The tangent at the selected indices: a gather along the last axis, each row of the indices
// reading its own row of the tangent (the leading dims are batching dims).
JvpResult top_k_jvp(Ins primals, Ins tangents, const Params& params) {
  std::vector<Array> outs = trace::bind(top_k_p, {primals[0]}, params);
  const Array& indices = outs[1];
  if (indices.size() == 0) return {outs, {ad::zeros(outs[0].aval()), Array()}};
  const auto last = static_cast<std::int64_t>(indices.ndim()) - 1;
  Ints batch(static_cast<std::size_t>(last));
  std::iota(batch.begin(), batch.end(), 0);
  Shape starts = indices.shape();
  starts.push_back(1);
  Array t = lax::gather(tangents[0], lax::reshape(indices, starts),
                        {{}, {last}, {last}, batch, batch},
                        Ints(static_cast<std::size_t>(last + 1), 1), false, false,
                        lax::GatherScatterMode::kPromiseInBounds);
  return {outs, {t, Array()}};
}

// Batching: the batch axis may stay anywhere but last, where top_k's axis must be.
BatchResult top_k_batch(Ins args, BDims dims, const Params& params) {
  int b = *dims[0];
  Array x = args[0];
  if (b == x.ndim() - 1) {
    x = batching::move_axis(x, b, 0);
    b = 0;
  }
  return {trace::bind(top_k_p, {x}, params), {b, b}};
}

const bool kRegistered = [] {
  sort_p.abstract_eval = sort_abstract_eval;
  sort_p.impl = sort_impl;
  sort_p.lower = sort_lower;
  sort_p.jvp = sort_jvp;
  sort_p.transpose = sort_transpose;
  sort_p.batch = sort_batch;

  top_k_p.abstract_eval = top_k_abstract_eval;
  top_k_p.impl = top_k_impl;
  top_k_p.lower = top_k_lower;
  top_k_p.jvp = top_k_jvp;
  top_k_p.batch = top_k_batch;
  return true;
}();

}  // namespace

namespace lax {

std::vector<Array> sort(const std::vector<Array>& operands, int dimension, bool is_stable,
                        int num_keys) {
  check_operands(operands.size(), num_keys);
  int ndim = operands[0].ndim();
  if (dimension < -ndim || dimension >= ndim) axis_error(dimension, ndim);
  std::int64_t d = dimension < 0 ? dimension + ndim : dimension;
  return trace::bind(sort_p, operands, sort_params(d, is_stable, num_keys));
}

Array sort(const Array& x, int dimension, bool is_stable) {
  return sort(std::vector<Array>{x}, dimension, is_stable, 1)[0];
}

std::pair<Array, Array> sort_key_val(const Array& keys, const Array& values, int dimension,
                                     bool is_stable) {
  std::vector<Array> out = sort({keys, values}, dimension, is_stable, 1);
  return {out[0], out[1]};
}

std::pair<Array, Array> top_k(const Array& x, int k) {
  if (k < 0) negative_k(k);
  std::vector<Array> out = trace::bind(top_k_p, {x}, {{"k", Param::integer(k)}});
  return {out[0], out[1]};
}

}  // namespace lax
}  // namespace jx
