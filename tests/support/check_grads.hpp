// check_grads: jx's derivatives of f checked against finite differences, in the spirit of JAX's
// jax.test_util.check_grads. Failures are reported with Catch (CHECK), naming the mode (JVP /
// VJP, nested for order 2), the order and the element that differs.
#pragma once

#include <functional>
#include <vector>

#include <jx/jx.hpp>

namespace jx::testing {

// At `args`, for order 1:
//  - forward mode: jx::jvp along a random tangent t against the central difference
//    (f(x + eps t) - f(x - eps t)) / (2 eps), elementwise;
//  - reverse mode: jx::vjp with a random cotangent c against the identity
//    <t, vjp(c)> = <central difference along t, c>.
// Order 2 also runs both checks on x -> jvp(f, x, t).tangent and on x -> vjp(f, x)(c).
// Only floating arguments are perturbed and differentiated; the others (bool or integer, such
// as select_n's `which`) are passed through unchanged. Random draws come from a fixed seed.
// Elements compare as |got - want| <= atol + rtol * |want|, the identity with rtol times
// sum_i |difference_i c_i|. Where f's value is not finite (an empty reduce_max is -inf) central
// differences are NaN: those elements are not compared and get a zero cotangent.
void check_grads(const std::function<Array(const std::vector<Array>&)>& f,
                 const std::vector<Array>& args, int order, double eps = 1e-4, double atol = 1e-5,
                 double rtol = 1e-5);

}  // namespace jx::testing
