#include "support/check_grads.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <tuple>

namespace jx::testing {
namespace {

using Arrays = std::vector<Array>;
using Fn = std::function<Arrays(const Arrays&)>;

struct Tol {
  double eps, atol, rtol;
};

std::vector<double> values(const Array& x) { return x.to_vector<double>(); }

Array like(const Array& proto, const std::vector<double>& v) {
  return np::array(v, proto.shape()).astype(proto.dtype());
}

Arrays random_like(const Arrays& xs, std::mt19937& rng) {
  std::normal_distribution<double> normal;
  Arrays out;
  for (const Array& x : xs) {
    std::vector<double> v(static_cast<std::size_t>(x.size()));
    for (double& e : v) e = normal(rng);
    out.push_back(like(x, v));
  }
  return out;
}

// x + a * t, computed in double on the host.
Arrays axpy(const Arrays& x, double a, const Arrays& t) {
  Arrays out;
  for (std::size_t k = 0; k < x.size(); ++k) {
    std::vector<double> xv = values(x[k]), tv = values(t[k]);
    for (std::size_t i = 0; i < xv.size(); ++i) xv[i] += a * tv[i];
    out.push_back(like(x[k], xv));
  }
  return out;
}

// The central difference of f at x along t, in double.
Arrays numerical_jvp(const Fn& f, const Arrays& x, const Arrays& t, double eps) {
  Arrays plus = f(axpy(x, eps, t)), minus = f(axpy(x, -eps, t)), out;
  for (std::size_t k = 0; k < plus.size(); ++k) {
    std::vector<double> p = values(plus[k]), m = values(minus[k]), d(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) d[i] = (p[i] - m[i]) / (2 * eps);
    out.push_back(np::array(d, plus[k].shape()));
  }
  return out;
}

// sum_i a_i b_i over all arrays, and sum_i |a_i b_i| (the scale its rounding error is relative to).
std::pair<double, double> inner(const Arrays& a, const Arrays& b) {
  double sum = 0, scale = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    std::vector<double> av = values(a[k]), bv = values(b[k]);
    for (std::size_t i = 0; i < av.size(); ++i) {
      sum += av[i] * bv[i];
      scale += std::abs(av[i] * bv[i]);
    }
  }
  return {sum, scale};
}

// A non-finite expected value fails too: the point is too close to a singularity to check.
bool close(double got, double want, double atol, double rtol) {
  return std::isfinite(want) && std::abs(got - want) <= atol + rtol * std::abs(want);
}
// Primal values: the same infinity, or NaN for NaN, counts as equal.
bool same_value(double got, double want, double atol, double rtol) {
  if (std::isnan(want)) return std::isnan(got);
  return std::isinf(want) ? got == want : close(got, want, atol, rtol);
}

// Where f's value is not finite (an empty reduce_max is -inf) finite differences are NaN: those
// elements are not checked, and the cotangent is 0 there.
std::vector<std::vector<bool>> finite_mask(const Arrays& y) {
  std::vector<std::vector<bool>> mask;
  for (const Array& a : y) {
    mask.emplace_back();
    for (double v : values(a)) mask.back().push_back(std::isfinite(v));
  }
  return mask;
}
Arrays masked(const Arrays& xs, const std::vector<std::vector<bool>>& mask) {
  Arrays out;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    std::vector<double> v = values(xs[k]);
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!mask[k][i]) v[i] = 0;
    out.push_back(like(xs[k], v));
  }
  return out;
}

std::string index_str(const Shape& shape, std::size_t flat) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = static_cast<std::int64_t>(flat) % shape[d];
    flat /= static_cast<std::size_t>(shape[d]);
  }
  std::ostringstream os;
  os << "[";
  for (std::size_t d = 0; d < index.size(); ++d) os << (d ? ", " : "") << index[d];
  os << "] of " << shape_str(shape);
  return os.str();
}

// got against want elementwise; one CHECK per array, naming the first element that differs.
// Elements where `checked` is false are skipped; `primal` compares as same_value.
void check_close(const Arrays& got, const Arrays& want, const Tol& tol, const std::string& what,
                 const char* want_name, const std::vector<std::vector<bool>>& checked,
                 bool primal = false) {
  INFO(what);
  CHECK(got.size() == want.size());
  for (std::size_t k = 0; k < std::min(got.size(), want.size()); ++k) {
    INFO("output " << k);
    CHECK(shape_str(got[k].shape()) == shape_str(want[k].shape()));
    if (got[k].shape() != want[k].shape()) continue;
    std::vector<double> g = values(got[k]), w = values(want[k]);
    std::size_t bad = 0;
    std::ostringstream first;
    first.precision(17);
    for (std::size_t i = 0; i < g.size(); ++i) {
      if (!checked[k][i] || (primal ? same_value : close)(g[i], w[i], tol.atol, tol.rtol)) continue;
      if (bad++ == 0)
        first << "; first at element " << index_str(got[k].shape(), i) << ": jx " << g[i] << ", "
              << want_name << " " << w[i];
    }
    INFO(bad << " of " << g.size() << " elements differ" << first.str());
    CHECK(bad == 0);
  }
}

// After a failed VJP identity: each cotangent element against <central difference along the
// unit vector e_i, c>, to name the element that is wrong (two evaluations of f per element).
std::string locate_vjp_error(const Fn& f, const Arrays& x, const Arrays& c, const Arrays& ct,
                             const Tol& tol, const std::vector<std::vector<bool>>& finite) {
  std::size_t n = 0;
  for (const Array& a : x) n += static_cast<std::size_t>(a.size());
  if (n > 256) return "(too many elements to check one by one)";
  std::ostringstream os;
  os.precision(17);
  for (std::size_t k = 0; k < x.size(); ++k) {
    std::vector<double> got = values(ct[k]);
    for (std::size_t i = 0; i < got.size(); ++i) {
      Arrays e;
      for (std::size_t j = 0; j < x.size(); ++j) {
        std::vector<double> v(static_cast<std::size_t>(x[j].size()), 0.0);
        if (j == k) v[i] = 1;
        e.push_back(like(x[j], v));
      }
      double want = inner(masked(numerical_jvp(f, x, e, tol.eps), finite), c).first;
      if (!close(got[i], want, tol.atol, tol.rtol))
        os << "\n  argument " << k << " element " << index_str(x[k].shape(), i) << ": jx " << got[i]
           << ", central differences " << want;
    }
  }
  std::string s = os.str();
  return s.empty() ? "(no single element differs beyond tolerance)" : s;
}

// The first-order derivative functions that order 2 checks in turn.
Fn jvp_of(const Fn& f, const Arrays& t) {
  return [f, t](const Arrays& x) { return jx::jvp(f, std::tuple{x}, std::tuple{t}).second; };
}
Fn vjp_of(const Fn& f, const Arrays& c) {
  return [f, c](const Arrays& x) {
    auto [out, pullback] = jx::vjp(f, x);
    return std::get<0>(pullback(c));
  };
}

void check_at(const Fn& f, const Arrays& x, int order, const Tol& tol, std::mt19937& rng,
              const std::string& name, int level) {
  Arrays y = f(x);
  for (const Array& out : y) {
    INFO("check_grads differentiates floating outputs only; " << name << " gives "
                                                              << dtype_name(out.dtype()));
    CHECK(is_floating(out.dtype()));
    if (!is_floating(out.dtype())) return;
  }
  std::vector<std::vector<bool>> finite = finite_mask(y), all = finite;
  for (auto& m : all) std::fill(m.begin(), m.end(), true);
  Arrays t = random_like(x, rng), c = masked(random_like(y, rng), finite);
  Arrays fd = numerical_jvp(f, x, t, tol.eps);
  std::string where = "order " + std::to_string(level) + ", ";

  auto [y_jvp, t_out] = jx::jvp(f, std::tuple{x}, std::tuple{t});
  check_close(y_jvp, y, tol, where + "JVP of " + name + " (primal)", "f(x)", all, true);
  check_close(t_out, fd, tol, where + "JVP of " + name + " (tangent)", "central difference",
              finite);

  auto [y_vjp, pullback] = jx::vjp(f, x);
  check_close(y_vjp, y, tol, where + "VJP of " + name + " (primal)", "f(x)", all, true);
  Arrays ct = std::get<0>(pullback(c));
  CHECK(ct.size() == x.size());
  if (ct.size() != x.size()) return;
  double lhs = inner(t, ct).first;
  auto [rhs, rhs_scale] = inner(masked(fd, finite), c);
  if (!(std::abs(lhs - rhs) <= tol.atol + tol.rtol * rhs_scale)) {
    INFO(where << "VJP of " << name << ": <t, vjp(c)> = " << lhs
               << " but <central difference along t, c> = " << rhs
               << "; elements that differ:" << locate_vjp_error(f, x, c, ct, tol, finite));
    CHECK(std::abs(lhs - rhs) <= tol.atol + tol.rtol * rhs_scale);
  }

  if (order > 1) {
    check_at(jvp_of(f, t), x, order - 1, tol, rng, "x -> jvp(" + name + ", x, t).tangent",
             level + 1);
    check_at(vjp_of(f, c), x, order - 1, tol, rng, "x -> vjp(" + name + ", x)(c)", level + 1);
  }
}

}  // namespace

void check_grads(const std::function<Array(const std::vector<Array>&)>& f,
                 const std::vector<Array>& args, int order, double eps, double atol, double rtol) {
  CHECK((order == 1 || order == 2));
  // Only floating arguments are differentiated: the others stay fixed inside the closure.
  std::vector<std::size_t> floats;
  Arrays x;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (is_floating(args[i].dtype())) {
      floats.push_back(i);
      x.push_back(args[i]);
    }
  Fn g = [f, args, floats](const Arrays& xs) {
    Arrays all = args;
    for (std::size_t k = 0; k < floats.size(); ++k) all[floats[k]] = xs[k];
    return Arrays{f(all)};
  };
  std::mt19937 rng(0);
  check_at(g, x, order, Tol{eps, atol, rtol}, rng, "f", 1);
}

}  // namespace jx::testing
