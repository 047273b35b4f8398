// jx::optim against plain C++ loops that follow optax's formulas: every optimizer over several
// steps on a two-leaf struct, schedules against their closed forms, clip_by_global_norm on both
// sides of its threshold, chains, and a whole training step under jit equal to the eager one.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "jx/jit.hpp"
#include "jx/nn.hpp"
#include "jx/numpy.hpp"
#include "jx/optim.hpp"
#include "jx/transforms.hpp"
#include "support/error_of.hpp"

namespace jx_optim_test {

struct Params {
  jx::Array w, b;  // w: [2, 2], b: [2]
};
JX_PYTREE(Params, w, b)

}  // namespace jx_optim_test

namespace jx {
namespace {

namespace optim = jx::optim;
using Doubles = std::vector<double>;
using jx_optim_test::Params;

// Leaves in flatten order: w's four values, then b's two.
Params params_of(const Doubles& v, DType dtype) {
  return Params{np::array(Doubles(v.begin(), v.begin() + 4), {2, 2}).astype(dtype),
                np::array(Doubles(v.begin() + 4, v.end())).astype(dtype)};
}
Doubles values_of(const Params& p) {
  Doubles out = p.w.to_vector<double>();
  for (double b : p.b.to_vector<double>()) out.push_back(b);
  return out;
}

const Doubles kStart{0.5, -1, 2, 0.25, -0.5, 1};

// The gradient at step t: fixed values with both signs and magnitudes that change over time.
Doubles grads_at(int t, double scale = 1) {
  Doubles g;
  for (int i = 0; i < 6; ++i) g.push_back(scale * 0.1 * (i + 1) * std::cos(0.7 * t + i));
  return g;
}

void check_close(const Doubles& got, const Doubles& want, double rel) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    CHECK(std::abs(got[i] - want[i]) <= rel * (1e-3 + std::abs(want[i])));
  }
}

// The oracle: updates from (gradient, parameters before the step, step index t).
using Oracle = std::function<Doubles(const Doubles& g, const Doubles& p, int t)>;

// Runs `opt` and the oracle side by side for `steps` steps, comparing updates and parameters.
template <class Opt>
void check_against(const Opt& opt, Oracle oracle, int steps, DType dtype = float64,
                   double rel = 1e-12, double grad_scale = 1) {
  Params p = params_of(kStart, dtype);
  auto state = opt.init(p);
  Doubles pd = kStart;
  for (int t = 0; t < steps; ++t) {
    INFO("step " << t);
    Doubles g = grads_at(t, grad_scale);
    auto [updates, next] = opt.update(params_of(g, dtype), state, p);
    state = next;
    p = optim::apply_updates(p, updates);
    CHECK(p.w.dtype() == dtype);
    CHECK(updates.b.dtype() == dtype);
    Doubles ud = oracle(g, pd, t);
    check_close(values_of(updates), ud, rel);
    for (std::size_t i = 0; i < pd.size(); ++i) pd[i] += ud[i];
    check_close(values_of(p), pd, rel);
  }
}

Oracle sgd_oracle(std::function<double(int)> lr) {
  return [lr](const Doubles& g, const Doubles&, int t) {
    Doubles u;
    for (double gi : g) u.push_back(-lr(t) * gi);
    return u;
  };
}

Oracle momentum_oracle(double lr, double beta, bool nesterov) {
  auto trace = std::make_shared<Doubles>(6, 0.0);
  return [=](const Doubles& g, const Doubles&, int) {
    Doubles u;
    for (std::size_t i = 0; i < g.size(); ++i) {
      (*trace)[i] = g[i] + beta * (*trace)[i];
      u.push_back(-lr * (nesterov ? g[i] + beta * (*trace)[i] : (*trace)[i]));
    }
    return u;
  };
}

Oracle adam_oracle(std::function<double(int)> lr, double b1, double b2, double eps,
                   double weight_decay = 0) {
  auto m = std::make_shared<Doubles>(6, 0.0), v = std::make_shared<Doubles>(6, 0.0);
  return [=](const Doubles& g, const Doubles& p, int t) {
    Doubles u;
    int count = t + 1;
    for (std::size_t i = 0; i < g.size(); ++i) {
      (*m)[i] = (1 - b1) * g[i] + b1 * (*m)[i];
      (*v)[i] = (1 - b2) * g[i] * g[i] + b2 * (*v)[i];
      double m_hat = (*m)[i] / (1 - std::pow(b1, count));
      double v_hat = (*v)[i] / (1 - std::pow(b2, count));
      u.push_back(-lr(t) * (m_hat / (std::sqrt(v_hat) + eps) + weight_decay * p[i]));
    }
    return u;
  };
}

double cosine_decay(double init, int decay_steps, double alpha, int t) {
  double c = std::min(t, decay_steps);
  return init * ((1 - alpha) * 0.5 * (1 + std::cos(std::numbers::pi * c / decay_steps)) + alpha);
}

double warmup_cosine(double init, double peak, int warmup, int decay_steps, double end, int t) {
  if (t < warmup) return init + (peak - init) * t / warmup;
  return cosine_decay(peak, decay_steps - warmup, end / peak, t - warmup);
}

TEST_CASE("optim: sgd, momentum and Nesterov momentum against loops", "[optim]") {
  check_against(optim::sgd(0.1), sgd_oracle([](int) { return 0.1; }), 4);
  check_against(optim::momentum(0.1), momentum_oracle(0.1, 0.9, false), 4);
  check_against(optim::momentum(0.05, 0.5, true), momentum_oracle(0.05, 0.5, true), 4);
  check_against(optim::momentum(0.1), momentum_oracle(0.1, 0.9, false), 4, float32, 1e-5);
}

TEST_CASE("optim: adam and adamw against loops with optax's formulas", "[optim]") {
  auto lr = [](int) { return 0.01; };
  check_against(optim::adam(0.01), adam_oracle(lr, 0.9, 0.999, 1e-8), 3);
  check_against(optim::adam(0.01, 0.8, 0.99, 1e-3), adam_oracle(lr, 0.8, 0.99, 1e-3), 5);
  check_against(optim::adamw(0.01, 0.9, 0.999, 1e-8, 0.1), adam_oracle(lr, 0.9, 0.999, 1e-8, 0.1),
                4);
  // float32 parameters stay float32; b2 = 0.999 rounds to float32 there, as in optax.
  check_against(optim::adam(0.01), adam_oracle(lr, 0.9, 0.999, 1e-8), 3, float32, 1e-4);
  // bfloat16 parameters: 1 - 0.999^t in bfloat16 would be 0 (0.999 rounds to 1), and every
  // update 0. Computed in float32, the first update is -lr g/|g| to bfloat16's precision.
  CHECK(optim::detail::bias_correction(0.999, np::array(1), bfloat16).item<float>() ==
        Approx(0.001).epsilon(0.01));
  Array p = np::array({1.0f, -2.0f, 0.5f}).astype(bfloat16);
  Array g = np::array({0.1f, -0.3f, 2.0f}).astype(bfloat16);
  auto adam = optim::adam(1.0);
  Array update = adam.update(g, adam.init(p), p).first;
  CHECK(update.dtype() == bfloat16);
  std::vector<float> u = update.astype(float32).to_vector<float>();
  for (std::size_t i = 0; i < u.size(); ++i)
    CHECK(u[i] == Approx(i == 1 ? 1.0 : -1.0).epsilon(0.02));
}

TEST_CASE("optim: schedules against their closed forms", "[optim]") {
  auto at = [](const optim::Schedule& s, int t) { return s(np::array(t)).item<double>(); };
  optim::Schedule c = optim::constant_schedule(0.3);
  CHECK(c(np::array(7)).aval() == ShapedArray{{}, float32, false});
  CHECK(at(c, 7) == Approx(0.3).epsilon(1e-7));

  optim::Schedule lin = optim::linear_schedule(1.0, 0.2, 4, 2);
  for (int t : {0, 2, 3, 5, 6, 9})
    CHECK(at(lin, t) == Approx(1.0 - 0.8 * std::clamp(t - 2, 0, 4) / 4.0).epsilon(1e-6));

  optim::Schedule cos = optim::cosine_decay_schedule(0.5, 10, 0.1);
  for (int t : {0, 1, 5, 9, 10, 15}) {
    INFO("step " << t);
    CHECK(cos(np::array(t)).dtype() == float32);
    CHECK(at(cos, t) == Approx(cosine_decay(0.5, 10, 0.1, t)).epsilon(1e-6));
  }
  CHECK(at(cos, 0) == Approx(0.5).epsilon(1e-7));
  CHECK(at(cos, 10) == Approx(0.05).epsilon(1e-6));  // alpha * init_value from decay_steps on

  optim::Schedule wc = optim::warmup_cosine_decay_schedule(0.0, 1.0, 4, 20, 0.1);
  for (int t : {0, 1, 3, 4, 5, 12, 19, 20, 30}) {
    INFO("step " << t);
    CHECK(at(wc, t) == Approx(warmup_cosine(0.0, 1.0, 4, 20, 0.1, t)).epsilon(1e-6).margin(1e-7));
  }
  CHECK(at(wc, 4) == Approx(1.0));
  CHECK(at(wc, 20) == Approx(0.1));

  // Schedules trace: under jit with the count as an argument.
  auto jitted = jit([&](const Array& t) { return wc(t); });
  for (int t : {2, 7, 25})
    CHECK(jitted(np::array(t)).item<double>() == Approx(at(wc, t)).epsilon(1e-6));

  CHECK(testing::exact_error_of<ValueError>([] { optim::cosine_decay_schedule(1.0, 0); }) ==
        "cosine_decay_schedule requires positive decay_steps, got decay_steps=0");
  CHECK(testing::exact_error_of<ValueError>(
            [] { optim::warmup_cosine_decay_schedule(0, 1, 5, 5); }) ==
        "warmup_cosine_decay_schedule: decay_steps (5) must exceed warmup_steps (5)");
}

TEST_CASE("optim: learning rates from schedules count steps in the state", "[optim]") {
  optim::Schedule cos = optim::cosine_decay_schedule(0.2, 3);
  auto lr = [](int t) { return cosine_decay(0.2, 3, 0, t); };
  check_against(optim::sgd(cos), sgd_oracle(lr), 5, float64, 1e-6);
  optim::Schedule wc = optim::warmup_cosine_decay_schedule(0.001, 0.01, 2, 6);
  check_against(
      optim::adam(wc),
      adam_oracle([](int t) { return warmup_cosine(0.001, 0.01, 2, 6, 0, t); }, 0.9, 0.999, 1e-8),
      6, float64, 1e-6);
}

TEST_CASE("optim: clip_by_global_norm below and above the threshold", "[optim]") {
  auto clip = optim::clip_by_global_norm(1.0);
  Params p = params_of(kStart, float64);
  auto state = clip.init(p);
  for (double scale : {1.0, 10.0}) {
    INFO("scale " << scale);
    Doubles g = grads_at(0, scale);
    double norm = 0;
    for (double gi : g) norm += gi * gi;
    norm = std::sqrt(norm);
    CHECK((scale == 1.0 ? norm < 1.0 : norm > 1.0));
    Doubles want;
    for (double gi : g) want.push_back(norm < 1.0 ? gi : gi / norm);
    auto [u, s] = clip.update(params_of(g, float64), state, p);
    check_close(values_of(u), want, 1e-12);
    CHECK(optim::global_norm(u).item<double>() == Approx(std::min(norm, 1.0)));
  }

  // Chained before sgd: the clipped gradient is what sgd scales.
  auto opt = optim::chain(optim::clip_by_global_norm(0.5), optim::sgd(0.1));
  Oracle clipped_sgd = [](const Doubles& g, const Doubles&, int) {
    double norm = 0;
    for (double gi : g) norm += gi * gi;
    norm = std::sqrt(norm);
    Doubles u;
    for (double gi : g) u.push_back(-0.1 * (norm < 0.5 ? gi : gi * 0.5 / norm));
    return u;
  };
  check_against(opt, clipped_sgd, 4, float64, 1e-12, 3.0);
  check_against(opt, clipped_sgd, 4, float64, 1e-12, 0.2);
}

TEST_CASE("optim: states are pytrees of the parameters' structure", "[optim]") {
  Params p = params_of(kStart, float32);
  auto state = optim::adamw(0.1).init(p);
  CHECK(tree::structure(state).str() ==
        "PyTreeDef((CustomNode(ScaleByAdamState[('count', 'mu', 'nu')], [*, "
        "CustomNode(Params[('w', 'b')], [*, *]), CustomNode(Params[('w', 'b')], [*, *])]), "
        "CustomNode(EmptyState[()], []), CustomNode(ScaleByScheduleState[('count',)], [*])))");
  CHECK(std::get<0>(state).count.aval() == ShapedArray{{}, int32, false});
  CHECK(std::get<0>(state).mu.w.aval() == ShapedArray{{2, 2}, float32, false});
  CHECK(tree::structure(optim::momentum(0.1).init(p)).num_leaves() == 3);

  // Any pytree: a map of vectors, with a scalar leaf.
  using Tree = std::map<std::string, std::vector<Array>>;
  Tree params{{"a", {np::array({1.f, 2.f})}}, {"b", {np::array(3.f), np::array({4.f})}}};
  auto opt = optim::sgd(0.5);
  auto [u, s] = opt.update(params, opt.init(params), params);
  Tree next = optim::apply_updates(params, u);
  CHECK(next.at("a")[0].to_vector<float>() == std::vector<float>{0.5f, 1.f});
  CHECK(next.at("b")[0].item<float>() == 1.5f);
  CHECK(s.count.item<int>() == 1);
}

TEST_CASE("optim: a whole training step under jit equals the eager steps", "[optim]") {
  Array x = np::array(std::vector<float>{1, 2, -1, 0.5f, 0, 1, 2, -2}, {4, 2});
  Array y = np::array(std::vector<float>{1, 0, 0, 1, 1, 1, -1, 0}, {4, 2});
  auto loss = [](const Params& p, const Array& xs, const Array& ys) {
    return nn::mse(np::matmul(xs, p.w) + p.b, ys);
  };
  auto opt = optim::chain(optim::clip_by_global_norm(1.0),
                          optim::adam(optim::warmup_cosine_decay_schedule(0.01, 0.1, 2, 10)));
  auto step = [&](const Params& p, const auto& state, const Array& xs, const Array& ys) {
    auto [l, g] = value_and_grad(loss)(p, xs, ys);
    auto [u, s] = opt.update(g, state, p);
    return std::tuple{optim::apply_updates(p, u), s, l};
  };
  auto jitted = jit(step);

  Params pe = params_of(kStart, float32), pj = pe;
  auto se = opt.init(pe), sj = se;
  for (int t = 0; t < 4; ++t) {
    INFO("step " << t);
    auto [pe2, se2, le] = step(pe, se, x, y);
    auto [pj2, sj2, lj] = jitted(pj, sj, x, y);
    pe = pe2, se = se2, pj = pj2, sj = sj2;
    CHECK(lj.item<double>() == Approx(le.item<double>()).epsilon(1e-5));
    check_close(values_of(pj), values_of(pe), 1e-5);
    const auto& adam_e = std::get<0>(std::get<1>(se));
    const auto& adam_j = std::get<0>(std::get<1>(sj));
    check_close(values_of(adam_j.mu), values_of(adam_e.mu), 1e-5);
    check_close(values_of(adam_j.nu), values_of(adam_e.nu), 1e-5);
  }
  CHECK(std::get<0>(std::get<1>(sj)).count.item<int>() == 4);
  CHECK(std::get<1>(std::get<1>(sj)).count.item<int>() == 4);
  // The state keeps its types from step to step: one trace serves every step.
  CHECK(jitted.cache_info().traces == 1);
  // And training trains: the loss after the steps is below the first.
  CHECK(loss(pj, x, y).item<double>() < loss(params_of(kStart, float32), x, y).item<double>());
}

}  // namespace
}  // namespace jx

namespace jx {
namespace {

// loss = sum(x @ w + b) computed in bfloat16 from float32 master weights w, b. Its gradient is
// x's column sums for each row of w and the row count for b: whole numbers, exact in every dtype,
// worked out by hand.
TEST_CASE("optim: MixedPrecision computes in bfloat16 and returns float32 gradients",
          "[optim]") {
  optim::MixedPrecision policy;  // float32 params, bfloat16 compute, float32 output
  jx_optim_test::Params p{np::array(std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f}, {2, 2}),
                          np::array(std::vector<float>{0.5f, -0.5f})};
  Array x = np::array(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});
  auto loss = [&](const jx_optim_test::Params& q, const Array& in) {
    jx_optim_test::Params c = policy.cast_to_compute(q);
    CHECK(c.w.dtype() == bfloat16);
    CHECK(c.b.dtype() == bfloat16);
    Array y = np::matmul(policy.cast_to_compute(in), c.w) + c.b;
    CHECK(y.dtype() == bfloat16);
    return policy.cast_to_output(np::sum(y));
  };
  auto [value, grads] = jit(value_and_grad(loss))(p, x);
  CHECK(value.dtype() == float32);
  // x @ w + b summed: bf16(0.1) etc. are what the compute sees; the sum is checked within bf16.
  double want = 0;
  const double w[4] = {0.1, 0.2, 0.3, 0.4}, b[2] = {0.5, -0.5};
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 2; ++j)
      want += (r * 2 + 1) * w[j] + (r * 2 + 2) * w[2 + j] + b[j];
  CHECK(value.item<double>() == Approx(want).epsilon(0x1p-6));
  CHECK(grads.w.dtype() == float32);
  CHECK(grads.b.dtype() == float32);
  CHECK(grads.w.to_vector<float>() == std::vector<float>{9, 9, 12, 12});
  CHECK(grads.b.to_vector<float>() == std::vector<float>{3, 3});
  // Integer leaves (labels, step counts) keep their dtype.
  CHECK(policy.cast_to_compute(np::array({1, 2})).dtype() == int32);
}

}  // namespace
}  // namespace jx
