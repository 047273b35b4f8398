// The autodiff API over flat leaves: each entry traces the function to a jaxpr, transforms it
// (src/transforms) and evaluates the result, so under an enclosing trace it is staged there.
#include <algorithm>

#include "core/array_impl.hpp"
#include "jaxpr/dce.hpp"
#include "jx/detail/autodiff_impl.hpp"
#include "jx/lax.hpp"
#include "jx/transforms.hpp"
#include "support/check.hpp"
#include "support/format.hpp"
#include "trace/staging.hpp"
#include "transforms/ad_rules.hpp"
#include "transforms/jvp.hpp"
#include "transforms/vjp.hpp"
#include "transforms/vmap.hpp"

namespace jx::detail {
namespace {

ClosedJaxprData trace(const FlatFn& f, const std::vector<Array>& primals, const char* who) {
  return trace::trace_to_jaxpr(f, avals_of(primals), who);
}

std::vector<Array> concat(std::vector<Array> a, const std::vector<Array>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void check_real_input(const char* who, DType d) {
  if (is_floating(d)) return;
  throw TypeError(std::string(who) +
                  " requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                  "np.inexact), but got " +
                  std::string(dtype_name(d)) +
                  ". If you want to use Boolean- or integer-valued inputs, use vjp or set "
                  "allow_int to True.");
}

void check_real_output(const char* who, DType d) {
  if (is_floating(d)) return;
  throw TypeError(std::string(who) +
                  " requires real-valued outputs (output dtype that is a sub-dtype of "
                  "np.floating), but got " +
                  std::string(dtype_name(d)) +
                  ". For differentiation of functions with integer outputs, use jx::vjp "
                  "directly.");
}

// Of the primals `wrt` asks for (each passed to `check`, which rejects a dtype by throwing),
// those really differentiated: with allow_int, integer and bool ones are differentiated only
// nominally, their derivatives zeros spliced in at the end.
std::vector<bool> with_tangents(const std::vector<Array>& primals, std::vector<bool> wrt,
                                const std::function<void(DType)>& check) {
  for (std::size_t i = 0; i < primals.size(); ++i) {
    if (!wrt[i]) continue;
    check(primals[i].dtype());
    wrt[i] = ad::has_tangent(primals[i].dtype());
  }
  return wrt;
}

std::vector<bool> differentiable(const std::vector<Array>& xs) {
  std::vector<bool> out;
  for (const Array& x : xs) out.push_back(ad::has_tangent(x.dtype()));
  return out;
}

// A cotangent or tangent must match its primal's type: JAX's messages.
void check_like(const Array& t, const ShapedArray& primal, const char* what) {
  if (t.shape() != primal.shape)
    throw ShapeError(std::string(what) + " shape " + shape_str(t.shape()) +
                     " must be the same as the shape of the corresponding primal " +
                     shape_str(primal.shape) + ".");
  if (ad::has_tangent(primal.dtype) && t.dtype() != primal.dtype)
    throw TypeError(std::string(what) + " dtype " + std::string(dtype_name(t.dtype())) +
                    " is not the expected tangent dtype " + std::string(dtype_name(primal.dtype)) +
                    " of the corresponding primal.");
}

}  // namespace

std::pair<std::vector<Array>, std::vector<Array>> jvp_flat(const FlatFn& f,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents) {
  JX_CHECK(primals.size() == tangents.size(), "jvp_flat");
  std::vector<bool> nonzero = differentiable(primals);
  std::vector<Array> args = primals;
  for (std::size_t i = 0; i < primals.size(); ++i) {
    check_like(tangents[i], primals[i].aval(), "jvp tangent of");
    if (nonzero[i]) args.push_back(tangents[i]);
  }
  ClosedJaxprData j = dce_jaxpr(jvp_jaxpr(trace(f, primals, "jvp"), nonzero)).jaxpr;
  std::vector<Array> outs = eval_jaxpr(j.jaxpr, j.consts, args);
  std::size_t m = outs.size() / 2;
  std::vector<Array> out_tangents(outs.begin() + static_cast<std::ptrdiff_t>(m), outs.end());
  outs.resize(m);
  return {std::move(outs), std::move(out_tangents)};
}

struct VjpState {
  VjpJaxprs jaxprs;
  std::vector<Array> residuals;
  std::vector<ShapedArray> out_avals, in_avals;
};

std::vector<Array> Pullback::operator()(const std::vector<Array>& cts) const {
  const VjpState& s = *state_;
  if (cts.size() != s.out_avals.size())
    throw TypeError("vjp pullback takes one cotangent per output: the function has " +
                    std::to_string(s.out_avals.size()) + " outputs, got " +
                    std::to_string(cts.size()) + " cotangents.");
  for (std::size_t i = 0; i < cts.size(); ++i)
    check_like(cts[i], s.out_avals[i], "Cotangent input to vjp pullback function:");
  const ClosedJaxprData& b = s.jaxprs.backward;
  std::vector<Array> in_cts = eval_jaxpr(b.jaxpr, b.consts, concat(s.residuals, cts));
  // Inputs without tangents (integers, bools) get zero cotangents of their own type.
  std::vector<Array> out;
  for (std::size_t i = 0, k = 0; i < s.in_avals.size(); ++i)
    out.push_back(ad::has_tangent(s.in_avals[i].dtype) ? in_cts[k++] : ad::zeros(s.in_avals[i]));
  return out;
}

std::pair<std::vector<Array>, Pullback> vjp_flat(const FlatFn& f,
                                                 const std::vector<Array>& primals) {
  auto state = std::make_shared<VjpState>();
  state->in_avals = avals_of(primals);
  state->jaxprs = vjp_jaxpr(trace(f, primals, "vjp"), differentiable(primals));
  const ClosedJaxprData& fwd = state->jaxprs.forward;
  std::vector<Array> outs = eval_jaxpr(fwd.jaxpr, fwd.consts, primals);
  std::size_t m = state->jaxprs.num_outputs;
  state->residuals.assign(outs.begin() + static_cast<std::ptrdiff_t>(m), outs.end());
  outs.resize(m);
  state->out_avals = avals_of(outs);
  return {std::move(outs), Pullback(std::move(state))};
}

std::vector<int> check_argnums(const std::vector<int>& argnums, bool is_list,
                               std::size_t num_args) {
  const auto n = static_cast<int>(num_args);
  if (!argnums.empty()) {
    int most = *std::max_element(argnums.begin(), argnums.end());
    if (most >= n)
      throw TypeError(std::string("differentiating with respect to argnums=") +
                      (is_list ? tuple_str(argnums) : std::to_string(argnums[0])) +
                      " requires at least " + std::to_string(most + 1) +
                      " positional arguments to be passed by the caller, but got only " +
                      std::to_string(n) + " positional arguments.");
  }
  std::vector<int> out;
  for (int a : argnums) {
    if (a < -n)
      throw ValueError(
          "Positional argument indices, e.g. for `static_argnums`, must have value greater than "
          "or equal to -len(args) and less than len(args), but got value " +
          std::to_string(a) + " for len(args) == " + std::to_string(n) + ".");
    out.push_back(a < 0 ? a + n : a);
  }
  return out;
}

GradFlat grad_flat(const FlatFn& f, const std::vector<Array>& primals,
                   const std::vector<bool>& wrt_in, bool keep_value, bool keep_aux, const char* who,
                   bool allow_int) {
  std::vector<bool> wrt = with_tangents(primals, wrt_in, [&](DType d) {
    if (!allow_int) check_real_input(who, d);
  });
  ClosedJaxprData fj = trace(f, primals, who);
  ShapedArray out = fj.jaxpr.outvars.at(0).aval();
  if (out.ndim() != 0)
    throw TypeError("Gradient only defined for scalar-output functions. Output had shape: " +
                    shape_str(out.shape) + ".");
  check_real_output(who, out.dtype);
  Linearized lin = linearize_jaxpr(fj, wrt);
  // Forward then backward, seeded with d out / d out = 1, staged into any current trace as JAX
  // stages them: the primal equations all kept (the value too, printed `_` when unused).
  auto program = [&](const std::vector<Array>& args) {
    std::vector<Array> outs = eval_jaxpr(lin.forward.jaxpr, lin.forward.consts, args);
    std::vector<Array> residuals(outs.begin() + static_cast<std::ptrdiff_t>(lin.num_outputs),
                                 outs.end());
    outs.resize(lin.num_outputs);
    std::vector<Array> cts(outs.size());
    cts[0] = make_scalar(1.0, out.dtype);
    std::vector<Array> kept;
    if (keep_value) kept.push_back(outs[0]);
    if (keep_aux) kept.insert(kept.end(), outs.begin() + 1, outs.end());
    return concat(kept, pullback(lin, residuals, cts));
  };
  std::vector<Array> results = program(primals);
  GradFlat r;
  auto next = results.begin();
  if (keep_value) r.value = *next++;
  if (keep_aux) {
    r.aux.assign(next, next + static_cast<std::ptrdiff_t>(lin.num_outputs - 1));
    next += static_cast<std::ptrdiff_t>(lin.num_outputs - 1);
  }
  r.grads.assign(next, results.end());
  if (wrt != wrt_in) {
    std::vector<Array> grads;
    for (std::size_t i = 0, k = 0; i < primals.size(); ++i) {
      if (wrt[i])
        grads.push_back(r.grads[k++]);
      else if (wrt_in[i])
        grads.push_back(ad::zeros(primals[i].aval()));
    }
    r.grads = std::move(grads);
  }
  return r;
}

namespace {

// x as an array of `aval`'s dtype and weak type.
Array as_type(const Array& x, const ShapedArray& aval) {
  if (x.dtype() == aval.dtype && x.weak_type() == aval.weak_type) return x;
  return lax::convert_element_type(x, aval.dtype, aval.weak_type);
}

std::int64_t total_size(const std::vector<ShapedArray>& avals) {
  std::int64_t n = 0;
  for (const ShapedArray& a : avals) n += a.size();
  return n;
}

Shape concat_shapes(const Shape& a, const Shape& b) {
  Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  return s;
}

Array reshaped(const Array& x, const Shape& shape) {
  return x.shape() == shape ? x : lax::reshape(x, shape);
}

// JAX's _std_basis: the rows of one identity of size n (the avals' total size), split into an
// array per aval, of shape (n,) + aval.shape, in its dtype. The identity is iota == iota.
std::vector<Array> standard_basis(const std::vector<ShapedArray>& avals) {
  std::int64_t n = total_size(avals), at = 0;
  Array eye = lax::eq(lax::iota(int32, {n, n}, 0), lax::iota(int32, {n, n}, 1));
  std::vector<Array> out;
  for (const ShapedArray& a : avals) {
    Array block = a.size() == n ? eye : lax::slice(eye, {0, at}, {n, at + a.size()});
    out.push_back(as_type(reshaped(block, concat_shapes({n}, a.shape)), a));
    at += a.size();
  }
  return out;
}

// The part of `x` along `axis` that belongs to aval number k of `avals` (laid end to end along
// it), reshaped to lead + avals[k].shape + trail: JAX's _unravel_array_into_pytree.
Array unravel(const Array& x, std::size_t axis, const std::vector<ShapedArray>& avals,
              std::size_t k) {
  std::int64_t at = 0;
  for (std::size_t i = 0; i < k; ++i) at += avals[i].size();
  Array part = x;
  if (avals[k].size() != x.shape()[axis]) {
    std::vector<std::int64_t> start(x.shape().size(), 0), limit = x.shape();
    start[axis] = at;
    limit[axis] = at + avals[k].size();
    part = lax::slice(x, start, limit);
  }
  Shape lead(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(axis));
  Shape trail(x.shape().begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.shape().end());
  return reshaped(part, concat_shapes(concat_shapes(lead, avals[k].shape), trail));
}

void check_jacfwd_input(DType d) {
  if (is_floating(d)) return;
  throw TypeError(
      "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), but "
      "got " +
      std::string(dtype_name(d)) +
      ". For holomorphic differentiation, pass holomorphic=True. For differentiation of "
      "non-holomorphic functions involving complex inputs or integer inputs, use jx::jvp "
      "directly.");
}

// What a Jacobian program is run on: f's outputs are its m values, then its aux outputs;
// `ins` are the types of the primals differentiated.
struct JacobianProblem {
  const ClosedJaxprData& f;
  const std::vector<Array>& primals;
  const std::vector<bool>& wrt;
  std::size_t m;
  std::vector<ShapedArray> values, ins;
};

// With an empty basis (a size-0 input or output) every Jacobian is empty: only aux is computed.
// Their dtype is the output's (jacfwd) or the input's (jacrev), as JAX's.
JacobianFlat empty_jacobians(const JacobianProblem& p, bool forward) {
  std::vector<bool> aux(p.f.jaxpr.outvars.size(), true);
  std::fill_n(aux.begin(), p.m, false);
  ClosedJaxprData j = dce_jaxpr(p.f, aux).jaxpr;
  JacobianFlat r;
  r.aux = eval_jaxpr(j.jaxpr, j.consts, p.primals);
  for (const ShapedArray& v : p.values)
    for (const ShapedArray& x : p.ins)
      r.jacobians.push_back(ad::zeros({concat_shapes(v.shape, x.shape), forward ? v.dtype : x.dtype,
                                       forward ? v.weak_type : x.weak_type}));
  return r;
}

// jacfwd: f's jvp mapped over the inputs' standard basis, the tangents batched along a last axis
// of each value's tangent (JAX's vmap(pushfwd, out_axes=(None, -1))).
JacobianFlat forward_jacobians(const JacobianProblem& p) {
  std::size_t n = p.f.jaxpr.outvars.size(), num_aux = n - p.m;
  std::int64_t size = total_size(p.ins);
  if (size == 0) return empty_jacobians(p, true);
  // The jvp's outputs are f's, then their tangents: keep aux, then the values' tangents.
  std::vector<bool> used(2 * n, false);
  std::fill(used.begin() + static_cast<std::ptrdiff_t>(p.m),
            used.begin() + static_cast<std::ptrdiff_t>(n + p.m), true);
  ClosedJaxprData jvp = dce_jaxpr(jvp_jaxpr(p.f, p.wrt), used).jaxpr;
  std::vector<BatchDim> in_dims(p.primals.size() + p.ins.size(), std::nullopt);
  std::fill(in_dims.begin() + static_cast<std::ptrdiff_t>(p.primals.size()), in_dims.end(), 0);
  std::vector<BatchDim> out_dims(num_aux, std::nullopt);
  for (const ShapedArray& v : p.values) out_dims.push_back(v.ndim());
  ClosedJaxprData batched = vmap_jaxpr(jvp, in_dims, size, out_dims);
  std::vector<Array> outs =
      eval_jaxpr(batched.jaxpr, batched.consts, concat(p.primals, standard_basis(p.ins)));
  JacobianFlat r;
  r.aux.assign(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(num_aux));
  for (std::size_t j = 0; j < p.m; ++j)
    for (std::size_t i = 0; i < p.ins.size(); ++i)
      r.jacobians.push_back(
          as_type(unravel(outs[num_aux + j], p.values[j].shape.size(), p.ins, i), p.values[j]));
  return r;
}

// jacrev: the forward pass once, then its pullback mapped over the values' standard basis
// (JAX's vmap(pullback)(_std_basis(y))); each input's cotangent is batched along axis 0.
JacobianFlat reverse_jacobians(const JacobianProblem& p) {
  std::int64_t size = total_size(p.values);
  if (size == 0) return empty_jacobians(p, false);
  VjpJaxprs v = vjp_jaxpr(p.f, p.wrt, p.m);
  std::size_t num_aux = v.num_outputs - p.m;
  // The values themselves are not needed, only aux and the residuals.
  std::vector<bool> used(v.num_outputs + v.num_residuals, true);
  std::fill_n(used.begin(), p.m, false);
  ClosedJaxprData forward = dce_jaxpr(v.forward, used).jaxpr;
  std::vector<Array> outs = eval_jaxpr(forward.jaxpr, forward.consts, p.primals);
  JacobianFlat r;
  r.aux.assign(outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(num_aux));
  std::vector<Array> args(outs.begin() + static_cast<std::ptrdiff_t>(num_aux), outs.end());
  std::vector<BatchDim> in_dims(args.size() + p.m, std::nullopt);
  std::fill(in_dims.begin() + static_cast<std::ptrdiff_t>(args.size()), in_dims.end(), 0);
  ClosedJaxprData batched =
      vmap_jaxpr(v.backward, in_dims, size, std::vector<BatchDim>(p.ins.size(), 0));
  std::vector<Array> cts =
      eval_jaxpr(batched.jaxpr, batched.consts, concat(args, standard_basis(p.values)));
  for (std::size_t j = 0; j < p.m; ++j)
    for (std::size_t i = 0; i < p.ins.size(); ++i)
      r.jacobians.push_back(as_type(unravel(cts[i], 0, p.values, j), p.ins[i]));
  return r;
}

}  // namespace

JacobianFlat jacobian_flat(const FlatFn& f, const std::vector<Array>& primals,
                           const std::vector<bool>& wrt_in, bool forward,
                           const std::function<std::size_t()>& num_values, bool allow_int) {
  const char* who = forward ? "jacfwd" : "jacrev";
  std::vector<bool> wrt = with_tangents(primals, wrt_in, [&](DType d) {
    if (forward)
      check_jacfwd_input(d);
    else if (!allow_int)
      check_real_input(who, d);
  });
  ClosedJaxprData fj = trace(f, primals, who);
  std::size_t m = num_values();
  std::vector<ShapedArray> outs = fj.jaxpr.out_avals();
  JacobianProblem p{
      fj, primals, wrt, m, {outs.begin(), outs.begin() + static_cast<std::ptrdiff_t>(m)}, {}};
  if (!forward)
    for (const ShapedArray& v : p.values) check_real_output(who, v.dtype);
  for (std::size_t i = 0; i < primals.size(); ++i)
    if (wrt[i]) p.ins.push_back(primals[i].aval());
  JacobianFlat r = forward ? forward_jacobians(p) : reverse_jacobians(p);
  if (wrt == wrt_in) return r;
  std::vector<Array> jacobians;
  for (std::size_t j = 0, k = 0; j < m; ++j)
    for (std::size_t i = 0; i < primals.size(); ++i) {
      if (wrt[i])
        jacobians.push_back(r.jacobians[k++]);
      else if (wrt_in[i])
        jacobians.push_back(ad::zeros({concat_shapes(p.values[j].shape, primals[i].shape()),
                                       primals[i].dtype(), primals[i].weak_type()}));
    }
  r.jacobians = std::move(jacobians);
  return r;
}

}  // namespace jx::detail
