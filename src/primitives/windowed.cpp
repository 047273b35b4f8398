// Windowed reductions: reduce_window_sum reduce_window_max reduce_window_min, as JAX's, and
// lax.reduce_window over them. Each output element folds one window of the operand into the
// identity; all lower to an HLO reduce-window. reduce_window_sum is linear (its transpose pads
// the cotangent and sums its windows again); max and min differentiate through
// select_and_gather_add (windowed_select.cpp). Also the window params both families share.
#include <algorithm>

#include "core/array_impl.hpp"
#include "hlo/scalar_ops.hpp"
#include "jx/lax.hpp"
#include "primitives/elementwise.hpp"
#include "primitives/layout.hpp"
#include "primitives/windowed.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"

namespace jx {

Primitive reduce_window_sum_p("reduce_window_sum"), reduce_window_max_p("reduce_window_max"),
    reduce_window_min_p("reduce_window_min");

namespace windowed {

using layout::fail;
using layout::tup;

namespace {

Param pairs_param(const PadPairs& pads) {
  std::vector<Param> items;
  for (auto [lo, hi] : pads) items.push_back(Param::ints({lo, hi}));
  return Param::tuple(std::move(items));
}

std::string pairs_str(const PadPairs& pads) { return pairs_param(pads).str(); }

// JAX's _check_shapelike, then a dilation of 0, which JAX leaves to XLA to reject.
void check_shapelike(const std::string& op, const char* what, const Ints& v, bool positive) {
  auto below = [&v](std::int64_t bound) {
    return std::any_of(v.begin(), v.end(), [bound](std::int64_t d) { return d < bound; });
  };
  if (below(positive ? 1 : 0))
    fail<TypeError>(op, " ", what, " must have every element be ",
                    positive ? "strictly positive" : "nonnegative", ", got ", tup(v), ".");
  if (below(1))
    fail<TypeError>(op, " ", what, " must have every element be at least 1, got ", tup(v), ".");
}

void check_length(const std::string& op, const char* what, std::size_t n, const std::string& v,
                  const Ints& dims) {
  if (n != dims.size())
    fail<TypeError>(op, " got inconsistent ", what, " and window_dimensions: got ", what, " ", v,
                    " and window_dimensions ", tup(dims), ".");
}

}  // namespace

WindowParams window_params(const Params& params) {
  WindowParams w;
  w.dimensions = params.get("window_dimensions").as_ints();
  w.strides = params.get("window_strides").as_ints();
  for (const Param& pair : params.get("padding").items()) {
    Ints lo_hi = pair.as_ints();
    w.padding.emplace_back(lo_hi.at(0), lo_hi.at(1));
  }
  w.dilations = params.has("base_dilation");
  w.base_dilation =
      w.dilations ? params.get("base_dilation").as_ints() : Ints(w.dimensions.size(), 1);
  w.window_dilation =
      w.dilations ? params.get("window_dilation").as_ints() : Ints(w.dimensions.size(), 1);
  return w;
}

Params params_of(const WindowParams& w) {
  Params p{{"window_dimensions", Param::ints(w.dimensions)},
           {"window_strides", Param::ints(w.strides)},
           {"padding", pairs_param(w.padding)}};
  if (w.dilations) {
    p.set("base_dilation", Param::ints(w.base_dilation));
    p.set("window_dilation", Param::ints(w.window_dilation));
  }
  return p;
}

WindowParams with_unit_dim(WindowParams w, int axis) {
  auto at = [axis](auto& v) { return v.begin() + axis; };
  w.dimensions.insert(at(w.dimensions), 1);
  w.strides.insert(at(w.strides), 1);
  w.padding.insert(at(w.padding), {0, 0});
  w.base_dilation.insert(at(w.base_dilation), 1);
  w.window_dilation.insert(at(w.window_dilation), 1);
  return w;
}

hlo::Window hlo_window(const WindowParams& w) {
  hlo::Window window;
  for (std::size_t d = 0; d < w.dimensions.size(); ++d)
    window.push_back({w.dimensions[d], w.strides[d], w.padding[d].first, w.padding[d].second,
                      w.base_dilation[d], w.window_dilation[d]});
  return window;
}

bool has_window_dilation(const WindowParams& w) {
  return std::any_of(w.window_dilation.begin(), w.window_dilation.end(),
                     [](std::int64_t d) { return d != 1; });
}

Shape window_shape_rule(const std::string& op, const ShapedArray& operand, const WindowParams& w) {
  check_shapelike(op, "window_dimensions", w.dimensions, true);
  check_shapelike(op, "window_strides", w.strides, true);
  check_shapelike(op, "base_dilation", w.base_dilation, false);
  check_shapelike(op, "window_dilation", w.window_dilation, false);
  if (static_cast<std::size_t>(operand.ndim()) != w.dimensions.size())
    fail<TypeError>(op,
                    " got the wrong number of window_dimensions for operand: got operand shape ",
                    shape_str(operand.shape), " with window_dimensions ", tup(w.dimensions), ".");
  check_length(op, "window_strides", w.strides.size(), tup(w.strides), w.dimensions);
  check_length(op, "base_dilation", w.base_dilation.size(), tup(w.base_dilation), w.dimensions);
  check_length(op, "window_dilation", w.window_dilation.size(), tup(w.window_dilation),
               w.dimensions);
  // JAX zips the padding with the dims, silently dropping any extra; jx says so.
  check_length(op, "padding", w.padding.size(), pairs_str(w.padding), w.dimensions);
  return hlo::window_output_dims(operand.shape, hlo_window(w));
}

lax::SelectPrim select_of(const Params& params) {
  const std::string& name = params.get("select_prim").as_name();
  if (name == "ge") return lax::SelectPrim::kGe;
  if (name == "le") return lax::SelectPrim::kLe;
  fail<ValueError>("select_prim must be ge or le, got ", name, ".");
}

Param select_param(lax::SelectPrim select) {
  return Param::name(select == lax::SelectPrim::kGe ? "ge" : "le");
}

Array select_holds(lax::SelectPrim select, const Array& current, const Array& candidate) {
  return select == lax::SelectPrim::kGe ? lax::ge(current, candidate) : lax::le(current, candidate);
}

}  // namespace windowed

namespace {

using namespace layout;
using namespace windowed;
using hlo::Opcode;
using trace::bind1;

// Each output element folds `fold` over the operand elements its window covers, from the
// identity, in the compute type; it rounds once.
template <class Fold>
std::vector<Array> reduce_window_impl(Identity identity, Fold fold, Ins in, const Params& params,
                                      Avals out) {
  const Array& x = in[0];
  hlo::Window window = hlo_window(window_params(params));
  Array r = make_array(out[0]);
  const Buffer& xb = concrete_buffer(x, "impl");
  dispatch(x.dtype(), [&]<class T>() {
    using C = compute_t<T>;
    const T* src = xb.as<T>();
    T* dst = r.impl()->buffer->as<T>();
    for_each_index(out[0].shape, [&](const Ints& o) {
      C acc = identity_value<C>(identity);
      hlo::for_each_window_tap(window, x.shape(), o, [&](std::int64_t k) {
        if (k >= 0) acc = fold(acc, static_cast<C>(src[k]));
      });
      *dst++ = convert_element<T>(acc);
    });
  });
  return {r};
}

// JAX's _reduce_window_sum_transpose_rule: the cotangent, dilated by the strides and padded so
// that each window's taps fall back on the operand positions they read, summed over windows
// again (with the base dilation as the stride).
std::vector<Array> reduce_window_sum_transpose(Cts cts, LinearOps ops, const Params& params) {
  const Array& ct = cts[0];
  WindowParams w = window_params(params);
  const Shape& in = ops[0].aval.shape;
  auto dilate = [](std::int64_t n, std::int64_t by) { return n == 0 ? 0 : 1 + by * (n - 1); };
  lax::PaddingConfig config;
  for (std::size_t d = 0; d < in.size(); ++d) {
    std::int64_t lhs = dilate(in[d], w.base_dilation[d]);
    std::int64_t rhs = dilate(w.dimensions[d], w.window_dilation[d]);
    std::int64_t out = dilate(ct.shape()[d], w.strides[d]);
    std::int64_t before = rhs - w.padding[d].first - 1;
    config.push_back({before, lhs + rhs - 1 - out - before, w.strides[d] - 1});
  }
  Array padded = lax::pad(ct, make_scalar(0, ct.dtype()), config);
  Array r =
      lax::reduce_window_sum(padded, w.dimensions, w.base_dilation, PadPairs(in.size(), {0, 0}),
                             Ints(in.size(), 1), w.window_dilation);
  return {r};
}

// JAX's _reduce_window_chooser_jvp_rule: the tangent at each window's max (min).
JvpResult chooser_jvp(const Primitive& p, lax::SelectPrim select, std::span<const Array> primals,
                      std::span<const Array> tangents, const Params& params) {
  WindowParams w = window_params(params);
  Array t = lax::select_and_gather_add(tangents[0], primals[0], select, w.dimensions, w.strides,
                                       w.padding, w.base_dilation, w.window_dilation);
  return {{bind1(p, {primals[0]}, params)}, {t}};
}

// Fills a windowed reduction's rules but its derivative. Its lowering is a reduce-window from
// the identity, `combiner` folding (`bool_combiner` on bool); the batch dim gets a window of 1.
template <class Fold>
void def_reduce_window(Primitive& p, bool numbers_only, Identity identity, Opcode combiner,
                       Opcode bool_combiner, Fold fold) {
  p.abstract_eval = [&p, numbers_only](Avals in, const Params& params) {
    check_arity(p, in, 1);
    if (numbers_only && !kNumeric.contains(in[0].dtype))
      fail<TypeError>("operand to ", p.name, " must have a number dtype, got ",
                      dtype_name(in[0].dtype));
    Shape shape = window_shape_rule("reduce_window", in[0], window_params(params));
    return result(shape, in[0].dtype, in[0].weak_type);
  };
  p.impl = [identity, fold](Ins in, const Params& params, Avals out) {
    return reduce_window_impl(identity, fold, in, params, out);
  };
  p.lower = [=](hlo::Builder& b, Operands ops, const Params& params, Avals) {
    DType d = ops[0]->shape.dtype;
    hlo::Instruction* init = b.constant(identity_of(identity, d));
    hlo::Computation* region = b.combiner(d, d == bool_ ? bool_combiner : combiner);
    return std::vector<hlo::Instruction*>{
        b.reduce_window(ops[0], init, hlo_window(window_params(params)), region)};
  };
  p.batch = [&p](Ins args, BDims dims, const Params& params) {
    int b = *dims[0];
    return one(bind1(p, {args[0]}, params_of(with_unit_dim(window_params(params), b))), b);
  };
}

const bool kRegistered = [] {
  def_reduce_window(reduce_window_sum_p, /*numbers_only=*/true, Identity::kZero, Opcode::kAdd,
                    Opcode::kOr, hlo::Scalar<Opcode::kAdd>{});
  ad::def_linear(reduce_window_sum_p);
  reduce_window_sum_p.transpose = reduce_window_sum_transpose;

  def_reduce_window(reduce_window_max_p, false, Identity::kLowest, Opcode::kMaximum, Opcode::kOr,
                    FoldMax{});
  reduce_window_max_p.jvp = [](auto primals, auto tangents, const Params& params) {
    return chooser_jvp(reduce_window_max_p, lax::SelectPrim::kGe, primals, tangents, params);
  };

  def_reduce_window(reduce_window_min_p, false, Identity::kHighest, Opcode::kMinimum, Opcode::kAnd,
                    FoldMin{});
  reduce_window_min_p.jvp = [](auto primals, auto tangents, const Params& params) {
    return chooser_jvp(reduce_window_min_p, lax::SelectPrim::kLe, primals, tangents, params);
  };
  return true;
}();

Params reduce_window_params(const Ints& dims, const Ints& strides, const PadPairs& padding,
                            const Ints& base_dilation, const Ints& window_dilation) {
  auto ones_if_empty = [&dims](const Ints& v) { return v.empty() ? Ints(dims.size(), 1) : v; };
  return params_of(
      {dims, strides, padding, ones_if_empty(base_dilation), ones_if_empty(window_dilation)});
}

// Whether a concrete 0-d init is the identity (JAX's _get_monoid_window_reducer).
bool is_identity(const Array& init, Identity identity) {
  if (init.is_tracer()) return false;
  bool same = false;
  dispatch(init.dtype(), [&]<class T>() {
    using C = compute_t<T>;
    same = static_cast<C>(*concrete_buffer(init, "reduce_window").as<T>()) ==
           static_cast<C>(identity_value<T>(identity));
  });
  return same;
}

std::string dtype_repr(DType d) { return "[dtype('" + std::string(dtype_name(d)) + "')]"; }

}  // namespace

namespace lax {

Array reduce_window_sum(const Array& operand, const Ints& window_dimensions,
                        const Ints& window_strides, const PadPairs& padding,
                        const Ints& base_dilation, const Ints& window_dilation) {
  return bind1(reduce_window_sum_p, {operand},
               reduce_window_params(window_dimensions, window_strides, padding, base_dilation,
                                    window_dilation));
}
Array reduce_window_max(const Array& operand, const Ints& window_dimensions,
                        const Ints& window_strides, const PadPairs& padding,
                        const Ints& base_dilation, const Ints& window_dilation) {
  return bind1(reduce_window_max_p, {operand},
               reduce_window_params(window_dimensions, window_strides, padding, base_dilation,
                                    window_dilation));
}
Array reduce_window_min(const Array& operand, const Ints& window_dimensions,
                        const Ints& window_strides, const PadPairs& padding,
                        const Ints& base_dilation, const Ints& window_dilation) {
  return bind1(reduce_window_min_p, {operand},
               reduce_window_params(window_dimensions, window_strides, padding, base_dilation,
                                    window_dilation));
}

Array reduce_window(const Array& operand, const Array& init_value, WindowComputation computation,
                    const Ints& window_dimensions, const Ints& window_strides,
                    const Padding& padding, const Ints& base_dilation,
                    const Ints& window_dilation) {
  using Monoid = decltype(&reduce_window_sum);
  Monoid monoid = computation == lax::add   ? reduce_window_sum
                  : computation == lax::max ? reduce_window_max
                  : computation == lax::min ? reduce_window_min
                                            : nullptr;
  if (!monoid)
    fail<ValueError>(
        "reduce_window takes lax::add, lax::max or lax::min as its computation; "
        "got another function.");
  Identity identity = computation == lax::add   ? Identity::kZero
                      : computation == lax::max ? Identity::kLowest
                                                : Identity::kHighest;
  std::size_t n = window_dimensions.size();
  Ints strides = window_strides.empty() ? Ints(n, 1) : window_strides;
  Ints base = base_dilation.empty() ? Ints(n, 1) : base_dilation;
  Ints dilation = window_dilation.empty() ? Ints(n, 1) : window_dilation;
  // A named padding places windows of the dilated size.
  Ints dilated = window_dimensions;
  for (std::size_t d = 0; d < n && d < dilation.size(); ++d)
    if (dilated[d] > 0) dilated[d] = 1 + dilation[d] * (dilated[d] - 1);
  PadPairs pads = padding.pads(operand.shape(), dilated, strides);

  // JAX's checks of the init value (its generic reduce_window's); a weak scalar takes the
  // operand's dtype, as a Python scalar would.
  Array init = init_value;
  if (init.weak_type() && init.dtype() != operand.dtype())
    init = lax::convert_element_type(init, operand.dtype());
  if (init.dtype() != operand.dtype())
    fail<TypeError>(
        "reduce_window got inconsistent dtypes for operands and init_values: got "
        "operand dtypes ",
        dtype_repr(operand.dtype()), " and init_value dtypes ", dtype_repr(init.dtype()), ".");
  if (init.ndim() != 0)
    fail<TypeError>(
        "reduce_window expected init_values to be scalars but init_values have "
        "shapes [",
        shape_str(init.shape()), "].");
  if (is_identity(init, identity))
    return monoid(operand, window_dimensions, strides, pads, base, dilation);
  // XLA's semantics: padding and holes hold init, and each window folds init once more.
  window_shape_rule("reduce_window", operand.aval(),
                    {window_dimensions, strides, pads, base, dilation});  // JAX's errors first
  lax::PaddingConfig config;
  for (std::size_t d = 0; d < n; ++d)
    config.push_back({pads[d].first, pads[d].second, base[d] - 1});
  Array padded = lax::pad(operand, init, config);
  Array folded =
      monoid(padded, window_dimensions, strides, PadPairs(n, {0, 0}), Ints(n, 1), dilation);
  return computation(folded, init);
}

}  // namespace lax
}  // namespace jx
