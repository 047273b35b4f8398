// The autodiff API over flat leaves: each entry traces the function to a jaxpr, transforms it
// (src/transforms) and evaluates the result, so under an enclosing trace it is staged there.
#include <algorithm>
#include <numeric>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "jaxpr/dce.hpp"
#include "jx/detail/autodiff_impl.hpp"
#include "jx/lax.hpp"
#include "jx/numpy.hpp"
#include "jx/transforms.hpp"
#include "transforms/ad_rules.hpp"
#include "support/check.hpp"
#include "support/format.hpp"
#include "trace/staging.hpp"
#include "transforms/jvp.hpp"
#include "transforms/vjp.hpp"

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
  // With allow_int, integer and bool primals are differentiated only nominally: their gradients
  // are zeros, spliced in at the end.
  std::vector<bool> wrt = wrt_in;
  for (std::size_t i = 0; i < primals.size(); ++i) {
    if (!wrt[i]) continue;
    if (!allow_int) check_real_input(who, primals[i].dtype());
    wrt[i] = ad::has_tangent(primals[i].dtype());
  }
  ClosedJaxprData fj = trace(f, primals, who);
  ShapedArray out = fj.jaxpr.outvars.at(0).aval();
  if (out.ndim() != 0)
    throw TypeError("Gradient only defined for scalar-output functions. Output had shape: " +
                    shape_str(out.shape) + ".");
  if (!is_floating(out.dtype))
    throw TypeError(std::string(who) +
                    " requires real-valued outputs (output dtype that is a sub-dtype of "
                    "np.floating), but got " +
                    std::string(dtype_name(out.dtype)) +
                    ". For differentiation of functions with integer outputs, use jx::vjp "
                    "directly.");
  Linearized lin = linearize_jaxpr(fj, wrt);
  // One program, forward then backward, seeded with d out / d out = 1; dead code (the value,
  // when only the gradient is wanted) is removed before it runs.
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
  ClosedJaxprData j = dce_jaxpr(trace(program, primals, who)).jaxpr;
  std::vector<Array> results = eval_jaxpr(j.jaxpr, j.consts, primals);
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

// The unit vectors of x's type, one per element, as arrays of x's shape.
Array basis(const ShapedArray& x, std::int64_t i) {
  Array e = make_array(x);
  dispatch(x.dtype, [&]<class T>() { e.impl()->buffer->as<T>()[i] = T(1); });
  return e;
}

// Stacks arrays of type `row` into an array of shape lead + row.shape (zeros when there are none).
Array stack_as(const std::vector<Array>& rows, Shape lead, const ShapedArray& row) {
  Shape s = lead;
  s.insert(s.end(), row.shape.begin(), row.shape.end());
  if (rows.empty()) return ad::zeros({s, row.dtype, false});
  return lax::reshape(np::stack(rows, 0), s);
}

void check_jacobian_input(const char* who, const std::vector<Array>& primals, std::size_t arg) {
  if (!is_floating(primals.at(arg).dtype()))
    throw TypeError(std::string(who) +
                    " requires real-valued inputs (input dtype that is a sub-dtype of "
                    "np.floating), but got " +
                    std::string(dtype_name(primals[arg].dtype())) +
                    ". For differentiation of functions with integer inputs, use jx::jvp "
                    "directly.");
}

void check_single_output(const char* who, std::size_t n) {
  if (n != 1)
    throw TypeError(std::string(who) + " takes a function returning one array, got one returning " +
                    std::to_string(n) + " arrays.");
}

std::vector<bool> only(std::size_t n, std::size_t arg) {
  std::vector<bool> v(n, false);
  v[arg] = true;
  return v;
}

}  // namespace

namespace {

// Runs `forward` (primals → one output, residuals) once, then `map` on the residuals and each
// unit vector of type `unit`; the results stack along leading axes shaped like `unit`.
Array map_unit_vectors(const ClosedJaxprData& forward, const ClosedJaxprData& map,
                       const std::vector<Array>& primals, const ShapedArray& unit) {
  // The output itself is not needed: only the residuals are computed.
  std::vector<bool> used(forward.jaxpr.outvars.size(), true);
  used[0] = false;
  ClosedJaxprData needed = dce_jaxpr(forward, used).jaxpr;
  std::vector<Array> residuals = eval_jaxpr(needed.jaxpr, needed.consts, primals);
  std::vector<Array> rows;
  for (std::int64_t i = 0; i < unit.size(); ++i)
    rows.push_back(eval_jaxpr(map.jaxpr, map.consts, concat(residuals, {basis(unit, i)}))[0]);
  return stack_as(rows, unit.shape, map.jaxpr.out_avals()[0]);
}

}  // namespace

// jacfwd: the linear part once per input unit vector (a column of the Jacobian).
Array jacfwd_flat(const FlatFn& f, const std::vector<Array>& primals, std::size_t arg) {
  check_jacobian_input("jacfwd", primals, arg);
  Linearized lin = linearize_jaxpr(trace(f, primals, "jacfwd"), only(primals.size(), arg));
  check_single_output("jacfwd", lin.num_outputs);
  const ShapedArray& x = primals[arg].aval();
  Array columns = map_unit_vectors(lin.forward, lin.linear, primals, x);
  // The columns stack along leading axes; the Jacobian puts the input's axes last.
  std::vector<std::int64_t> perm(static_cast<std::size_t>(columns.ndim()));
  std::size_t nx = x.shape.size(), ny = perm.size() - nx;
  for (std::size_t d = 0; d < ny; ++d) perm[d] = static_cast<std::int64_t>(nx + d);
  for (std::size_t d = 0; d < nx; ++d) perm[ny + d] = static_cast<std::int64_t>(d);
  return lax::transpose(columns, perm);
}

// jacrev: the backward pass once per output unit vector (a row of the Jacobian).
Array jacrev_flat(const FlatFn& f, const std::vector<Array>& primals, std::size_t arg) {
  check_jacobian_input("jacrev", primals, arg);
  VjpJaxprs v = vjp_jaxpr(trace(f, primals, "jacrev"), only(primals.size(), arg));
  check_single_output("jacrev", v.num_outputs);
  return map_unit_vectors(v.forward, v.backward, primals, v.forward.jaxpr.outvars[0].aval());
}

}  // namespace jx::detail
