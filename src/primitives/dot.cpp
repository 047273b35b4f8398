// dot_general: products summed over paired contracting dims, with batch dims, as XLA's DotGeneral.
#include <algorithm>
#include <type_traits>

#include "support/check.hpp"

#include <numeric>

#include "core/element_convert.hpp"
#include "jx/config.hpp"
#include "jx/lax.hpp"
#include "primitives/contraction.hpp"
#include "primitives/elementwise.hpp"
#include "primitives/indexing.hpp"
#include "support/format.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"
#include "transforms/batch_rules.hpp"

namespace jx {

Primitive dot_general_p("dot_general");

namespace {

using Dims = std::vector<std::int64_t>;

struct DimNumbers {
  Dims lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
};

std::string list_str(const Dims& d) { return Param::int_list(d).str(); }

Dims take(const Shape& s, const Dims& dims) {
  Dims out;
  for (auto d : dims) out.push_back(s[static_cast<std::size_t>(d)]);
  return out;
}

bool contains(const Dims& dims, std::int64_t d) {
  return std::find(dims.begin(), dims.end(), d) != dims.end();
}

bool distinct(const Dims& dims) {
  Dims s = dims;
  std::sort(s.begin(), s.end());
  return std::adjacent_find(s.begin(), s.end()) == s.end();
}

// The dims that are neither contracted nor batch, in order: they follow the batch dims in the
// output, lhs's before rhs's.
Dims free_dims(std::size_t ndim, const Dims& contracting, const Dims& batch) {
  Dims out;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(ndim); ++d)
    if (!contains(contracting, d) && !contains(batch, d)) out.push_back(d);
  return out;
}

// dimension_numbers = ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)), as JAX.
DimNumbers dim_numbers(const Params& params) {
  const Param& all = params.get("dimension_numbers");
  auto pair = [&all](const Param& p) -> const std::vector<Param>& {
    bool seq = p.kind() == Param::Kind::kTuple || p.kind() == Param::Kind::kList;
    if (!seq || p.items().size() != 2)
      throw TypeError(
          "dot_general dimension_numbers must be ((lhs_contracting, "
          "rhs_contracting), (lhs_batch, rhs_batch)), got " +
          all.str());
    return p.items();
  };
  const auto& contracting = pair(pair(all)[0]);
  const auto& batch = pair(pair(all)[1]);
  return {contracting[0].as_ints(), contracting[1].as_ints(), batch[0].as_ints(),
          batch[1].as_ints()};
}

// JAX's checks, in JAX's order and words (as ShapeError).
void check_dims(const ShapedArray& lhs, const ShapedArray& rhs, const DimNumbers& dn) {
  auto in_range = [](const Dims& dims, int ndim) {
    return std::all_of(dims.begin(), dims.end(), [ndim](auto d) { return d >= 0 && d < ndim; });
  };
  if (!in_range(dn.lhs_contracting, lhs.ndim()) || !in_range(dn.lhs_batch, lhs.ndim()))
    throw ShapeError(
        "dot_general requires lhs dimension numbers to be nonnegative and less than "
        "the number of axes of the lhs value, got lhs_batch of " +
        list_str(dn.lhs_batch) + " and lhs_contracting of " + list_str(dn.lhs_contracting) +
        " for lhs of rank " + std::to_string(lhs.ndim()));
  if (!in_range(dn.rhs_contracting, rhs.ndim()) || !in_range(dn.rhs_batch, rhs.ndim()))
    throw ShapeError(
        "dot_general requires rhs dimension numbers to be nonnegative and less than "
        "the number of axes of the rhs value, got rhs_batch of " +
        list_str(dn.rhs_batch) + " and rhs_contracting of " + list_str(dn.rhs_contracting) +
        " for rhs of rank " + std::to_string(rhs.ndim()));
  if (dn.lhs_batch.size() != dn.rhs_batch.size())
    throw ShapeError(
        "dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, "
        "got lhs_batch " +
        list_str(dn.lhs_batch) + " and rhs_batch " + list_str(dn.rhs_batch) + ".");
  for (auto [side, kind, dims] :
       {std::tuple{"lhs", "batch", &dn.lhs_batch}, std::tuple{"rhs", "batch", &dn.rhs_batch},
        std::tuple{"lhs", "contracting", &dn.lhs_contracting},
        std::tuple{"rhs", "contracting", &dn.rhs_contracting}})
    if (!distinct(*dims))
      throw ShapeError(std::string("dot_general requires ") + side + " " + kind +
                       " dimensions to be distinct, got " + side + "_" + kind + " " +
                       list_str(*dims) + ".");
  for (auto [side, batch, contracting] : {std::tuple{"lhs", &dn.lhs_batch, &dn.lhs_contracting},
                                          std::tuple{"rhs", &dn.rhs_batch, &dn.rhs_contracting}})
    for (auto d : *batch)
      if (contains(*contracting, d))
        throw ShapeError(std::string("dot_general requires ") + side +
                         " batch dimensions to be disjoint from contracting dimensions, got " +
                         side + "_batch " + list_str(*batch) + " and " + side + "_contracting " +
                         list_str(*contracting) + ".");
  Dims lb = take(lhs.shape, dn.lhs_batch), rb = take(rhs.shape, dn.rhs_batch);
  if (lb != rb)
    throw ShapeError(
        "dot_general requires lhs batch dimensions and rhs batch dimensions to have "
        "the same shape, got " +
        shape_str(lb) + " and " + shape_str(rb) + ".");
  Dims lc = take(lhs.shape, dn.lhs_contracting), rc = take(rhs.shape, dn.rhs_contracting);
  if (lc != rc)
    throw ShapeError("dot_general requires contracting dimensions to have the same shape, got " +
                     shape_str(lc) + " and " + shape_str(rc) + ".");
}

std::vector<ShapedArray> dot_general_rule(std::span<const ShapedArray> in, const Params& params) {
  if (in.size() != 2)
    throw TypeError("dot_general takes 2 operands, got " + std::to_string(in.size()));
  const ShapedArray &lhs = in[0], &rhs = in[1];
  DimNumbers dn = dim_numbers(params);
  DType dtype = contraction::out_dtype(
      "dot_general", lhs.dtype, rhs.dtype,
      params.has("preferred_element_type") ? params.get("preferred_element_type") : Param());
  check_dims(lhs, rhs, dn);
  Shape out = take(lhs.shape, dn.lhs_batch);
  for (auto d : take(lhs.shape, free_dims(lhs.shape.size(), dn.lhs_contracting, dn.lhs_batch)))
    out.push_back(d);
  for (auto d : take(rhs.shape, free_dims(rhs.shape.size(), dn.rhs_contracting, dn.rhs_batch)))
    out.push_back(d);
  return {{out, dtype, lhs.weak_type && rhs.weak_type}};
}

// A plain loop: for every output index, sum over every contracting index, in the output type's
// computation type (16-bit floats accumulate in float and round once, as XLA's dots).
Array dot_general_impl(const Array& lhs, const Array& rhs, const DimNumbers& dn,
                       const ShapedArray& out) {
  Dims ls = strides(lhs.shape()), rs = strides(rhs.shape());
  // Each output dim's stride in lhs and in rhs (0 in the operand it does not come from).
  Dims out_l, out_r;
  for (std::size_t k = 0; k < dn.lhs_batch.size(); ++k) {
    out_l.push_back(ls[static_cast<std::size_t>(dn.lhs_batch[k])]);
    out_r.push_back(rs[static_cast<std::size_t>(dn.rhs_batch[k])]);
  }
  for (auto d : free_dims(ls.size(), dn.lhs_contracting, dn.lhs_batch)) {
    out_l.push_back(ls[static_cast<std::size_t>(d)]);
    out_r.push_back(0);
  }
  for (auto d : free_dims(rs.size(), dn.rhs_contracting, dn.rhs_batch)) {
    out_l.push_back(0);
    out_r.push_back(rs[static_cast<std::size_t>(d)]);
  }
  Shape contracted = take(lhs.shape(), dn.lhs_contracting);
  Dims con_l = take(ls, dn.lhs_contracting), con_r = take(rs, dn.rhs_contracting);

  Array r = make_array(out);
  const Buffer& lb = concrete_buffer(lhs, "impl");
  const Buffer& rb = concrete_buffer(rhs, "impl");
  dispatch(lhs.dtype(), [&]<class T>() {
    dispatch(out.dtype, [&]<class O>() {
      const T* a = lb.as<T>();
      const T* b = rb.as<T>();
      O* o = r.impl()->buffer->as<O>();
      using C = compute_t<O>;
      std::int64_t j = 0;
      for_each_index(out.shape, [&](const Dims& index) {
        std::int64_t base_l = offset_of(index, out_l), base_r = offset_of(index, out_r);
        C acc = C(0);
        for_each_index(contracted, [&](const Dims& c) {
          acc = mul_add(acc, static_cast<C>(static_cast<O>(a[base_l + offset_of(c, con_l)])),
                        static_cast<C>(static_cast<O>(b[base_r + offset_of(c, con_r)])));
        });
        o[j++] = convert_element<O>(acc);
      });
    });
  });
  return r;
}

// ---- differentiation: bilinear ----

// The permutation that sorts `v`: v[argsort(v)[0]] is the smallest.
Dims argsort(const Dims& v) {
  Dims idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](auto a, auto b) { return v[a] < v[b]; });
  return idx;
}

Dims range(std::int64_t begin, std::size_t n) {
  Dims r(n);
  std::iota(r.begin(), r.end(), begin);
  return r;
}

// JAX's transpose of dot_general in its lhs x: contract the cotangent's y-dims with y's free
// dims. The operands go in the order that yields x's dim order directly when one does (a weight
// gradient x^T·ct comes out as dW, not dW^T); otherwise the result is transposed into it.
// `swap_ans`: the output lists y's free dims before x's (the rhs transpose reuses this one).
Array transpose_lhs(const Array& ct, const ShapedArray& x, const Array& y, const DimNumbers& dn,
                    bool swap_ans, std::optional<lax::Precision> precision) {
  Dims x_kept = free_dims(x.shape.size(), dn.lhs_contracting, dn.lhs_batch);
  Dims y_kept = free_dims(y.shape().size(), dn.rhs_contracting, dn.rhs_batch);
  std::int64_t nb = static_cast<std::int64_t>(dn.lhs_batch.size());
  Dims ans_batch = range(0, dn.lhs_batch.size());
  Dims ans_y = range(swap_ans ? nb : nb + static_cast<std::int64_t>(x_kept.size()), y_kept.size());
  Dims x_contract_by_y;
  for (auto i : argsort(dn.rhs_contracting)) x_contract_by_y.push_back(dn.lhs_contracting[i]);
  // dot(ct, y) gives x's dims in the order batch, free, contracting; dot(y, ct) in the order
  // batch, contracting, free. Whichever is already x's order needs no transpose after it.
  auto concat = [](Dims a, const Dims& b, const Dims& c) {
    a.insert(a.end(), b.begin(), b.end());
    a.insert(a.end(), c.begin(), c.end());
    return a;
  };
  Dims ct_first = concat(dn.lhs_batch, x_kept, x_contract_by_y);
  Dims y_first = concat(dn.lhs_batch, x_contract_by_y, x_kept);
  // The cotangent has the output's dtype (maybe a preferred_element_type wider than y's).
  Array yc = y.dtype() == ct.dtype() ? y : lax::convert_element_type(y, ct.dtype());
  Array x_bar;
  if (!std::is_sorted(ct_first.begin(), ct_first.end()) &&
      std::is_sorted(y_first.begin(), y_first.end())) {
    x_bar = lax::dot_general(yc, ct, {y_kept, ans_y, dn.rhs_batch, ans_batch}, {}, precision);
  } else {
    x_bar = lax::dot_general(ct, yc, {ans_y, y_kept, ans_batch, dn.rhs_batch}, {}, precision);
    Dims perm = argsort(ct_first);
    if (!std::is_sorted(perm.begin(), perm.end())) x_bar = lax::transpose(x_bar, perm);
  }
  return x_bar.dtype() == x.dtype ? x_bar : lax::convert_element_type(x_bar, x.dtype);
}

// ---- batching (vmap): no transposes. Two batched operands pair their batch axes as a new
// leading batch dim; a single one's batch axis is one more free dim of that operand ----
Dims shifted(const Dims& dims, int bdim) {
  Dims out;
  for (auto d : dims) out.push_back(batching::shift(d, bdim));
  return out;
}

// Where an operand's free dim `d` lands among its free dims (they keep their order).
std::int64_t free_index(std::size_t ndim, const Dims& contracting, const Dims& batch,
                        std::int64_t d) {
  Dims free = free_dims(ndim, contracting, batch);
  return std::find(free.begin(), free.end(), d) - free.begin();
}

BatchResult batch_dot_general(std::span<const Array> args, std::span<const BatchDim> dims,
                              const Params& params) {
  DimNumbers dn = dim_numbers(params);
  const BatchDim &lb = dims[0], &rb = dims[1];
  lax::DotDimensionNumbers out{dn.lhs_contracting, dn.rhs_contracting, dn.lhs_batch, dn.rhs_batch};
  if (lb) {
    out.lhs_contracting = shifted(dn.lhs_contracting, *lb);
    out.lhs_batch = shifted(dn.lhs_batch, *lb);
  }
  if (rb) {
    out.rhs_contracting = shifted(dn.rhs_contracting, *rb);
    out.rhs_batch = shifted(dn.rhs_batch, *rb);
  }
  // Output dims: batch dims, then lhs free dims, then rhs free dims.
  std::int64_t out_dim = static_cast<std::int64_t>(dn.lhs_batch.size());
  if (lb && rb) {
    out.lhs_batch.insert(out.lhs_batch.begin(), *lb);
    out.rhs_batch.insert(out.rhs_batch.begin(), *rb);
    out_dim = 0;
  } else if (lb) {
    out_dim += free_index(args[0].shape().size(), out.lhs_contracting, out.lhs_batch, *lb);
  } else {
    out_dim += static_cast<std::int64_t>(
        free_dims(args[0].shape().size(), dn.lhs_contracting, dn.lhs_batch).size());
    out_dim += free_index(args[1].shape().size(), out.rhs_contracting, out.rhs_batch, *rb);
  }
  std::optional<DType> preferred;
  if (params.has("preferred_element_type") && !params.get("preferred_element_type").is_none())
    preferred = params.get("preferred_element_type").as_dtype();
  return {{lax::dot_general(args[0], args[1], out, preferred,
                            contraction::precision_of("dot_general", params))},
          {static_cast<int>(out_dim)}};
}

const bool kRegistered = [] {
  dot_general_p.abstract_eval = dot_general_rule;
  dot_general_p.impl = [](std::span<const Array> in, const Params& params,
                          std::span<const ShapedArray> out) {
    return std::vector<Array>{dot_general_impl(in[0], in[1], dim_numbers(params), out[0])};
  };
  // HLO's dot computes in its output type: operands are converted to it first, except 16-bit
  // floats into an f32 product, which upcast-16bit-dots places (a GPU library reads them).
  dot_general_p.lower = [](hlo::Builder& b, std::span<hlo::Instruction* const> ops,
                           const Params& params, std::span<const ShapedArray> out) {
    DimNumbers dn = dim_numbers(params);
    hlo::Attrs attrs;
    attrs.set("lhs_batch_dims", dn.lhs_batch);
    attrs.set("lhs_contracting_dims", dn.lhs_contracting);
    attrs.set("rhs_batch_dims", dn.rhs_batch);
    attrs.set("rhs_contracting_dims", dn.rhs_contracting);
    if (std::optional<lax::Precision> p = contraction::precision_of("dot_general", params))
      attrs.set("operand_precision", std::string(contraction::precision_word(*p)));
    DType in = ops[0]->shape.dtype;
    bool sixteen_bit = k16BitFloating.contains(in) && out[0].dtype == float32;
    hlo::Instruction* lhs = sixteen_bit ? ops[0] : b.convert(ops[0], out[0].dtype);
    hlo::Instruction* rhs = sixteen_bit ? ops[1] : b.convert(ops[1], out[0].dtype);
    return std::vector<hlo::Instruction*>{b.op(hlo::Opcode::kDot,
                                               hlo::HloShape::array(out[0].dtype, out[0].shape),
                                               {lhs, rhs}, std::move(attrs))};
  };
  ad::def_bilinear(dot_general_p);
  dot_general_p.transpose = [](std::span<const Array> cts, std::span<const LinearOperand> ops,
                               const Params& params) {
    DimNumbers dn = dim_numbers(params);
    JX_CHECK(ops[0].is_linear() != ops[1].is_linear(), "dot_general is linear in one operand");
    std::vector<Array> out(2);
    if (ops[0].is_linear()) {
      out[0] = transpose_lhs(cts[0], ops[0].aval, ops[1].value, dn, false,
                             contraction::precision_of("dot_general", params));
    } else {
      DimNumbers swapped{dn.rhs_contracting, dn.lhs_contracting, dn.rhs_batch, dn.lhs_batch};
      out[1] = transpose_lhs(cts[0], ops[1].aval, ops[0].value, swapped, true,
                             contraction::precision_of("dot_general", params));
    }
    return out;
  };
  dot_general_p.batch = batch_dot_general;
  return true;
}();

}  // namespace

namespace lax {

Array dot_general(const Array& lhs, const Array& rhs, const DotDimensionNumbers& dimension_numbers,
                  std::optional<DType> preferred_element_type, std::optional<Precision> precision) {
  const auto& dn = dimension_numbers;
  Param dims = Param::tuple(
      {Param::tuple({Param::int_list(dn.lhs_contracting), Param::int_list(dn.rhs_contracting)}),
       Param::tuple({Param::int_list(dn.lhs_batch), Param::int_list(dn.rhs_batch)})});
  // As JAX prints it: the preferred type only when one is asked for (jnp.dot always does).
  Params params{{"dimension_numbers", dims}};
  if (preferred_element_type)
    params.set("preferred_element_type", Param::dtype(*preferred_element_type));
  // JAX prints precision=None as nothing; a precision, given or from the flag, as the pair.
  if (!precision) precision = contraction::default_precision();
  if (precision) params.set("precision", contraction::precision_param(*precision));
  return trace::bind1(dot_general_p, {lhs, rhs}, params);
}

}  // namespace lax
}  // namespace jx
