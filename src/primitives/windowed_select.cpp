// Max-pool's derivatives, as JAX's: select_and_gather_add (per window, the tangent at the
// element the select chooses: reduce_window_max's and _min's jvp) and select_and_scatter_add
// (each window's source element added at its chosen position: the transpose of the other). Both
// are linear in their first operand and transpose to each other. They lower with no opcode of
// their own, as elementwise HLO that fuses into one loop kernel: the padded operand's window taps
// as strided slices, a running select over the taps, and (scatter) each tap's share padded back
// to the operand positions it came from.
#include "core/array_impl.hpp"
#include "hlo/scalar_ops.hpp"
#include "jx/lax.hpp"
#include "primitives/elementwise.hpp"
#include "primitives/layout.hpp"
#include "primitives/sub_jaxprs.hpp"
#include "primitives/windowed.hpp"
#include "support/check.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"

namespace jx {

Primitive select_and_gather_add_p("select_and_gather_add"),
    select_and_scatter_add_p("select_and_scatter_add");

namespace {

using namespace layout;
using namespace windowed;
using hlo::Opcode;
using lax::SelectPrim;
using trace::bind1;

// What padding and holes hold: nothing the select prefers to a real element.
Identity select_identity(SelectPrim select) {
  return select == SelectPrim::kGe ? Identity::kLowest : Identity::kHighest;
}

// ---- eager: one walk over the windows, sharing the window's index map with the evaluator ----

// Calls f(window, k) for each window (row-major) with k the operand offset of the element the
// select chose there, or -1 where it chose padding or a hole.
template <class T, class F>
void for_each_choice(const Array& operand, const hlo::Window& window, const Shape& windows,
                     SelectPrim select, F f) {
  using C = compute_t<T>;
  const T* x = concrete_buffer(operand, "impl").as<T>();
  C fill = identity_value<C>(select_identity(select));
  std::int64_t w = 0;
  for_each_index(windows, [&](const Ints& o) {
    bool first = true;
    C best{};
    std::int64_t chosen = -1;
    hlo::for_each_window_tap(window, operand.shape(), o, [&](std::int64_t k) {
      C v = k < 0 ? fill : static_cast<C>(x[k]);
      bool keep = select == SelectPrim::kGe ? best >= v : best <= v;
      if (first || !keep) best = v, chosen = k, first = false;
    });
    f(w++, chosen);
  });
}

std::vector<Array> gather_impl(Ins in, const Params& params, Avals out) {
  hlo::Window window = hlo_window(window_params(params));
  Array r = make_array(out[0]);
  dispatch(in[0].dtype(), [&]<class T>() {
    const T* t = concrete_buffer(in[0], "impl").as<T>();
    T* dst = r.impl()->buffer->as<T>();
    for_each_choice<T>(in[1], window, out[0].shape, select_of(params),
                       [&](std::int64_t w, std::int64_t k) {
                         dst[w] = k < 0 ? convert_element<T>(compute_t<T>(0)) : t[k];
                       });
  });
  return {r};
}

std::vector<Array> scatter_impl(Ins in, const Params& params, Avals out) {
  hlo::Window window = hlo_window(window_params(params));
  Shape windows = hlo::window_output_dims(in[1].shape(), window);
  Array r = make_array(out[0]);
  dispatch(in[0].dtype(), [&]<class T>() {
    using C = compute_t<T>;
    const T* s = concrete_buffer(in[0], "impl").as<T>();
    std::vector<C> acc(static_cast<std::size_t>(out[0].size()), C(0));
    for_each_choice<T>(
        in[1], window, windows, select_of(params), [&](std::int64_t w, std::int64_t k) {
          if (k < 0) return;
          C sum = hlo::Scalar<Opcode::kAdd>{}(static_cast<C>(acc[k]), static_cast<C>(s[w]));
          acc[k] = sum;
        });
    T* dst = r.impl()->buffer->as<T>();
    for (C v : acc) *dst++ = convert_element<T>(v);
  });
  return {r};
}

// ---- with lax ops: what the lowering traces (and the transpose of a window-dilated gather) ----

Array zeros(const Shape& shape, DType d) {
  return lax::broadcast_in_dim(make_scalar(0, d), shape, {});
}

// taps[k], for each tap k of the window (row-major), holds every window's element at that tap:
// a strided slice of x padded with `fill` (base dilation as interior padding). Every window dim
// must be at least 1.
std::vector<Array> window_taps(const Array& x, const Array& fill, const hlo::Window& window) {
  lax::PaddingConfig config;
  Shape sizes;
  for (const hlo::WindowDim& w : window) {
    config.push_back({w.pad_lo, w.pad_hi, w.base_dilation - 1});
    sizes.push_back(w.size);
  }
  Array padded = lax::pad(x, fill, config);
  Shape windows = hlo::window_output_dims(x.shape(), window);
  std::vector<Array> taps;
  for_each_index(sizes, [&](const Ints& tap) {
    Ints start, limit, strides;
    for (std::size_t d = 0; d < window.size(); ++d) {
      start.push_back(tap[d] * window[d].window_dilation);
      limit.push_back(start.back() + (windows[d] - 1) * window[d].stride + 1);
      strides.push_back(window[d].stride);
    }
    taps.push_back(lax::slice(padded, start, limit, strides));
  });
  return taps;
}

// The select run over the taps of x: the tap each window chose (int32), and, given taps of a
// payload, the payload there.
struct Choice {
  Array tap, payload;
};
Choice choose(const std::vector<Array>& xs, const std::vector<Array>& payloads, SelectPrim select) {
  Array best = xs[0];
  Choice c;
  if (payloads.empty())
    c.tap = zeros(best.shape(), int32);
  else
    c.payload = payloads[0];
  for (std::size_t k = 1; k < xs.size(); ++k) {
    Array keep = select_holds(select, best, xs[k]);
    best = lax::select_n(keep, {xs[k], best});
    if (payloads.empty()) {
      Array tap =
          lax::broadcast_in_dim(make_scalar(static_cast<double>(k), int32), best.shape(), {});
      c.tap = lax::select_n(keep, {tap, c.tap});
    } else {
      c.payload = lax::select_n(keep, {payloads[k], c.payload});
    }
  }
  return c;
}

Array gather_by_taps(const Array& t, const Array& x, SelectPrim select, const hlo::Window& window) {
  Shape windows = hlo::window_output_dims(x.shape(), window);
  if (shape_size(windows) == 0) return zeros(windows, t.dtype());
  std::vector<Array> xs = window_taps(x, identity_of(select_identity(select), x.dtype()), window);
  std::vector<Array> ts = window_taps(t, make_scalar(0, t.dtype()), window);
  return choose(xs, ts, select).payload;
}

// Whether the windows tile the padded operand (stride = size, no dilation): each position lies
// in at most one window, at one tap (max-pooling's usual 2x2 at stride 2).
bool tiles(const hlo::Window& window) {
  return std::all_of(window.begin(), window.end(), [](const hlo::WindowDim& w) {
    return w.stride == w.size && w.base_dilation == 1 && w.window_dilation == 1;
  });
}

// Tiling windows' scatter: each position's share computed where it lies, as the source of its
// window where the window chose its tap, on the windows laid out [windows_0, size_0, windows_1,
// size_1, ...], merged back into the operand's dims and cut to them (the padding's positions
// dropped, positions past the last window zero). One choice per position, where the taps'
// scatter evaluates every tap's.
Array scatter_tiled(const Array& s, const Array& chosen, const Shape& operand,
                    const hlo::Window& window) {
  Shape tiled, merged;
  Ints window_dims;
  for (std::size_t d = 0; d < window.size(); ++d) {
    window_dims.push_back(static_cast<std::int64_t>(tiled.size()));
    tiled.insert(tiled.end(), {s.shape()[d], window[d].size});
    merged.push_back(s.shape()[d] * window[d].size);
  }
  // The tap each position lies at, numbered row-major over the window as `choose` numbers them.
  Array tap = zeros(tiled, int32);
  std::int64_t weight = 1;
  for (std::size_t d = window.size(); d-- > 0;) {
    if (window[d].size > 1)
      tap = lax::add(tap, lax::mul(lax::iota(int32, tiled, window_dims[d] + 1),
                                   make_scalar(static_cast<double>(weight), int32)));
    weight *= window[d].size;
  }
  Array mine =
      lax::select_n(lax::eq(lax::broadcast_in_dim(chosen, tiled, window_dims), tap),
                    {zeros(tiled, s.dtype()), lax::broadcast_in_dim(s, tiled, window_dims)});
  lax::PaddingConfig config;
  for (std::size_t d = 0; d < window.size(); ++d)
    config.push_back({-window[d].pad_lo, operand[d] + window[d].pad_lo - merged[d], 0});
  return lax::pad(lax::reshape(mine, merged), make_scalar(0, s.dtype()), config);
}

// Each tap's share (the source where the window chose that tap) padded back onto the operand
// positions the tap read: interior padding undoes the stride, the low pad is the tap's offset
// less the operand's padding (negative crops what fell in the padding). No base dilation.
Array scatter_by_taps(const Array& s, const Array& x, SelectPrim select,
                      const hlo::Window& window) {
  Shape windows = hlo::window_output_dims(x.shape(), window);
  Array result = zeros(x.shape(), s.dtype());
  if (shape_size(windows) == 0 || x.size() == 0) return result;
  std::vector<Array> xs = window_taps(x, identity_of(select_identity(select), x.dtype()), window);
  Array chosen = choose(xs, {}, select).tap;
  if (tiles(window)) return scatter_tiled(s, chosen, x.shape(), window);
  Array none = zeros(windows, s.dtype());
  Shape sizes;
  for (const hlo::WindowDim& w : window) sizes.push_back(w.size);
  std::int64_t k = 0;
  for_each_index(sizes, [&](const Ints& tap) {
    Array mine =
        lax::select_n(lax::eq(chosen, make_scalar(static_cast<double>(k++), int32)), {none, s});
    lax::PaddingConfig config;
    for (std::size_t d = 0; d < window.size(); ++d) {
      const hlo::WindowDim& w = window[d];
      std::int64_t lo = tap[d] * w.window_dilation - w.pad_lo;
      std::int64_t span = (windows[d] - 1) * w.stride + 1;
      config.push_back({lo, x.shape()[d] - lo - span, w.stride - 1});
    }
    result = lax::add(result, lax::pad(mine, make_scalar(0, s.dtype()), config));
  });
  return result;
}

// Lowers f(a, b), traced with lax ops, inline.
template <class F>
std::vector<hlo::Instruction*> lower_traced(hlo::Builder& b, Operands ops, const std::string& name,
                                            F f) {
  return sub::lower_traced(
      b, ops, [f](const std::vector<Array>& a) { return std::vector<Array>{f(a[0], a[1])}; }, name);
}

// ---- shared rule pieces ----

void check_operands(const Primitive& p, Avals in) {
  check_arity(p, in, 2);
  check_same_dtypes(p.name, in);
  check_dtype(p.name, in[0].dtype, kNumeric);
}

// Both operands' batch dims go in front, where the window gets a dim of 1 (JAX's rules).
BatchResult batch_in_front(const Primitive& p, Ins args, BDims dims, const Params& params) {
  std::int64_t size = batching::batch_size(args, dims);
  WindowParams w = with_unit_dim(window_params(params), 0);
  Params batched = params_of(w);
  batched.set("select_prim", params.get("select_prim"));
  return one(
      bind1(p, {batch_at(args[0], dims[0], size, 0), batch_at(args[1], dims[1], size, 0)}, batched),
      0);
}

// ---- select_and_gather_add ----

Outs gather_abstract_eval(Avals in, const Params& params) {
  check_arity(select_and_gather_add_p, in, 2);
  if (in[0].shape != in[1].shape)
    fail<TypeError>("select_and_gather_add tangents and operand shapes must match, got ",
                    shape_str(in[0].shape), " and ", shape_str(in[1].shape), ".");
  check_operands(select_and_gather_add_p, in);
  select_of(params);
  Shape shape = window_shape_rule("reduce_window", in[1], window_params(params));
  return result(shape, in[0].dtype, in[0].weak_type && in[1].weak_type);
}

// JAX's _select_and_gather_add_transpose: a select_and_scatter_add over the operand, base
// dilation as holes holding the select's identity, then only the real positions kept. Where JAX
// stops at window dilation (NotImplementedError), the taps' scatter takes it.
std::vector<Array> gather_transpose(Cts cts, LinearOps ops, const Params& params) {
  JX_CHECK(ops[0].is_linear() && !ops[1].is_linear(),
           "select_and_gather_add transposes in its tangents only");
  const Array& ct = cts[0];
  WindowParams w = window_params(params);
  SelectPrim select = select_of(params);
  Array x = ops[1].value;
  std::size_t n = w.dimensions.size();
  bool holes = std::any_of(w.base_dilation.begin(), w.base_dilation.end(),
                           [](std::int64_t d) { return d != 1; });
  if (holes) {
    lax::PaddingConfig config;
    for (std::int64_t d : w.base_dilation) config.push_back({0, 0, d - 1});
    x = lax::pad(x, identity_of(select_identity(select), x.dtype()), config);
  }
  Array r;
  if (has_window_dilation(w)) {
    WindowParams undilated = w;
    undilated.base_dilation = Ints(n, 1);
    r = scatter_by_taps(ct, x, select, hlo_window(undilated));
  } else {
    r = lax::select_and_scatter_add(ct, x, select, w.dimensions, w.strides, w.padding);
  }
  if (holes) r = lax::slice(r, Ints(n, 0), r.shape(), w.base_dilation);
  return {r, Array()};
}

// ---- select_and_scatter_add ----

Outs scatter_abstract_eval(Avals in, const Params& params) {
  const Primitive& p = select_and_scatter_add_p;
  check_operands(p, in);
  select_of(params);
  Shape windows = window_shape_rule(p.name, in[1], window_params(params));
  if (in[0].shape != windows)
    fail<TypeError>(p.name,
                    " source shape must be the shape of the operand's windows, got source shape ",
                    shape_str(in[0].shape), " for windows of shape ", shape_str(windows), ".");
  return result(in[1].shape, in[0].dtype, in[0].weak_type && in[1].weak_type);
}

// JAX's _select_and_scatter_add_transpose.
std::vector<Array> scatter_transpose(Cts cts, LinearOps ops, const Params& params) {
  JX_CHECK(ops[0].is_linear() && !ops[1].is_linear(),
           "select_and_scatter_add transposes in its source only");
  WindowParams w = window_params(params);
  Ints ones(w.dimensions.size(), 1);
  return {lax::select_and_gather_add(cts[0], ops[1].value, select_of(params), w.dimensions,
                                     w.strides, w.padding, ones, ones),
          Array()};
}

const bool kRegistered = [] {
  Primitive& g = select_and_gather_add_p;
  g.abstract_eval = gather_abstract_eval;
  g.impl = gather_impl;
  g.lower = [](hlo::Builder& b, Operands ops, const Params& params, Avals) {
    SelectPrim select = select_of(params);
    hlo::Window window = hlo_window(window_params(params));
    return lower_traced(b, ops, g.name, [=](const Array& t, const Array& x) {
      return gather_by_taps(t, x, select, window);
    });
  };
  ad::def_linear(g, [](std::size_t k) { return k == 0; });
  g.transpose = gather_transpose;
  g.batch = [&g](Ins args, BDims dims, const Params& params) {
    return batch_in_front(g, args, dims, params);
  };

  Primitive& s = select_and_scatter_add_p;
  s.abstract_eval = scatter_abstract_eval;
  s.impl = scatter_impl;
  s.lower = [](hlo::Builder& b, Operands ops, const Params& params, Avals) {
    SelectPrim select = select_of(params);
    hlo::Window window = hlo_window(window_params(params));
    return lower_traced(b, ops, s.name, [=](const Array& src, const Array& x) {
      return scatter_by_taps(src, x, select, window);
    });
  };
  ad::def_linear(s, [](std::size_t k) { return k == 0; });
  s.transpose = scatter_transpose;
  s.batch = [&s](Ins args, BDims dims, const Params& params) {
    return batch_in_front(s, args, dims, params);
  };
  return true;
}();

Params select_params(SelectPrim select, WindowParams w) {
  Params p = params_of(w);
  p.set("select_prim", select_param(select));
  return p;
}

}  // namespace

namespace lax {

Array select_and_gather_add(const Array& tangents, const Array& operand, SelectPrim select,
                            const Ints& window_dimensions, const Ints& window_strides,
                            const PadPairs& padding, const Ints& base_dilation,
                            const Ints& window_dilation) {
  Ints ones(window_dimensions.size(), 1);
  return bind1(select_and_gather_add_p, {tangents, operand},
               select_params(select, {window_dimensions, window_strides, padding,
                                      base_dilation.empty() ? ones : base_dilation,
                                      window_dilation.empty() ? ones : window_dilation}));
}

Array select_and_scatter_add(const Array& source, const Array& operand, SelectPrim select,
                             const Ints& window_dimensions, const Ints& window_strides,
                             const PadPairs& padding) {
  Ints ones(window_dimensions.size(), 1);
  return bind1(select_and_scatter_add_p, {source, operand},
               select_params(select, {window_dimensions, window_strides, padding, ones, ones,
                                      /*dilations=*/false}));
}

}  // namespace lax
}  // namespace jx
