// checkpoint (jax.checkpoint): values and derivatives are the function's, in every composition;
// reverse mode keeps only its inputs and recomputes the rest behind an opt-barrier, which
// memory_analysis shows on a deep model.
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "hlo/ir.hpp"
#include "jx/jx.hpp"

namespace jx {
namespace {

Array layer_fn(const Array& x) { return np::sin(np::sin(x)) * x; }

// d/dx sin(sin x)·x = cos(sin x)·cos x·x + sin(sin x)
double layer_derivative(double x) {
  return std::cos(std::sin(x)) * std::cos(x) * x + std::sin(std::sin(x));
}

Array inputs() { return np::linspace(-2, 2, 7).astype(float32); }

// got against want, element by element, within a relative `epsilon` (or `margin` near 0).
void check_close(const std::vector<float>& got, const std::vector<float>& want, double epsilon,
                 double margin) {
  REQUIRE(got.size() == want.size());
  for (std::size_t k = 0; k < got.size(); ++k)
    CHECK(got[k] == Approx(want[k]).epsilon(epsilon).margin(margin));
}

std::size_t occurrences(const std::string& text, const std::string& word) {
  std::size_t n = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

TEST_CASE("checkpoint: the function's value and gradient, eager and jitted",
          "[transforms][checkpoint]") {
  auto loss = [](const Array& x) { return np::sum(layer_fn(x)); };
  auto remat_loss = [](const Array& x) { return np::sum(checkpoint(layer_fn)(x)); };
  Array x = inputs();
  std::vector<double> xs = x.to_vector<double>();
  CHECK(remat_loss(x).item<float>() == loss(x).item<float>());
  for (const Array& g : {grad(remat_loss)(x), jit(grad(remat_loss))(x)}) {
    std::vector<double> got = g.to_vector<double>();
    REQUIRE(got.size() == xs.size());
    for (std::size_t k = 0; k < xs.size(); ++k)
      CHECK(got[k] == Approx(layer_derivative(xs[k])).epsilon(1e-5).margin(1e-6));
  }
  // A pytree in and out, a closed-over value, and both outputs differentiated.
  Array scale = np::array(std::vector<float>{3.0f});
  auto pair_fn = checkpoint([&](const Array& a, const std::vector<Array>& bs) {
    return std::make_pair(np::sin(a) * bs[0] * scale, np::cos(bs[1]));
  });
  auto pair_loss = [&](const Array& a, const Array& b) {
    auto [u, v] = pair_fn(a, std::vector<Array>{b, b});
    return np::sum(u) + np::sum(v);
  };
  std::vector<Array> g = grad(pair_loss, {0, 1})(np::array(0.5f), np::array(0.25f));
  REQUIRE(g.size() == 2);
  CHECK(g[0].item<float>() == Approx(std::cos(0.5) * 0.25 * 3).epsilon(1e-6));
  CHECK(g[1].item<float>() == Approx(std::sin(0.5) * 3 - std::sin(0.25)).epsilon(1e-6));
}

TEST_CASE("checkpoint: jvp, vmap and second derivatives compose with it",
          "[transforms][checkpoint]") {
  Array x = inputs();
  auto [y, t] = jvp(checkpoint(layer_fn), std::make_tuple(x), std::make_tuple(np::ones_like(x)));
  CHECK(y.to_vector<float>() == layer_fn(x).to_vector<float>());
  std::vector<double> xs = x.to_vector<double>(), ts = t.to_vector<double>();
  for (std::size_t k = 0; k < xs.size(); ++k)
    CHECK(ts[k] == Approx(layer_derivative(xs[k])).epsilon(1e-5).margin(1e-6));
  // vmap over rows equals the function on the whole batch.
  Array batch = np::reshape(np::linspace(-1, 1, 12).astype(float32), {3, 4});
  CHECK(vmap(checkpoint(layer_fn))(batch).to_vector<float>() == layer_fn(batch).to_vector<float>());
  // d²/dx² of x³ is 6x, through a checkpoint inside grad inside grad.
  auto cube = checkpoint([](const Array& a) { return a * a * a; });
  auto second = grad(grad([&](const Array& a) { return cube(a); }));
  CHECK(second(np::array(1.5f)).item<float>() == Approx(9.0));
  CHECK(jit(second)(np::array(-2.0f)).item<float>() == Approx(-12.0));
}

TEST_CASE("checkpoint: printed as JAX prints it; its recomputation is differentiated",
          "[transforms][checkpoint]") {
  Array x = inputs();
  std::string forward = make_jaxpr(checkpoint(layer_fn))(x).str();
  INFO(forward);
  CHECK_THAT(forward, Catch::Contains("checkpoint[") && Catch::Contains("differentiated=False") &&
                          Catch::Contains("prevent_cse=True"));
  auto remat_loss = [](const Array& a) { return np::sum(checkpoint(layer_fn)(a)); };
  std::string backward = make_jaxpr(grad(remat_loss))(x).str();
  INFO(backward);
  CHECK_THAT(backward, Catch::Contains("differentiated=True"));
  // Compiled, the recomputation reads its inputs through an opt-barrier; without prevent_cse
  // there is none.
  std::string hlo = jit(grad(remat_loss)).lower(x).compile().hlo_text();
  CHECK_THAT(hlo, Catch::Contains("opt-barrier"));
  CHECK(hlo::to_string(*hlo::parse_module(hlo)) == hlo);  // as the compilation cache reads it
  auto merged_loss = [](const Array& a) {
    return np::sum(checkpoint(layer_fn, {.prevent_cse = false})(a));
  };
  CHECK_THAT(jit(grad(merged_loss)).lower(x).compile().hlo_text(), !Catch::Contains("opt-barrier"));
}

// A deep model: each layer sin(h @ W). Reverse mode keeps each layer's input and cos(h @ W);
// checkpointed layers keep only their inputs and compute h @ W and its cosine again.
TEST_CASE("checkpoint: a checkpointed deep model keeps fewer bytes alive",
          "[transforms][checkpoint]") {
  constexpr int kLayers = 8;
  constexpr std::int64_t kBatch = 64, kWidth = 64;
  auto model = [](bool remat) {
    return [remat](const std::vector<Array>& ws, const Array& x) {
      Array h = x;
      for (const Array& w : ws) {
        auto layer = [&w](const Array& a) { return np::sin(np::matmul(a, w)); };
        h = remat ? checkpoint(layer)(h) : layer(h);
      }
      return np::sum(h * h);
    };
  };
  std::vector<Array> ws;
  for (int l = 0; l < kLayers; ++l)
    ws.push_back(random::normal(random::key(static_cast<std::uint64_t>(l)), {kWidth, kWidth}) *
                 0.2f);
  Array x = random::normal(random::key(99), {kBatch, kWidth});
  auto plain = jit(grad(model(false)));
  auto remat = jit(grad(model(true)));
  MemoryAnalysis kept = plain.lower(ws, x).compile().memory_analysis();
  MemoryAnalysis recomputed = remat.lower(ws, x).compile().memory_analysis();
  const std::int64_t activation = kBatch * kWidth * 4;
  INFO("temp bytes: plain " << kept.temp_bytes << ", checkpointed " << recomputed.temp_bytes);
  // One activation per layer fewer, at least, stays alive between the passes.
  CHECK(recomputed.temp_bytes + (kLayers - 2) * activation <= kept.temp_bytes);
  // The same gradients.
  std::vector<Array> g1 = plain(ws, x), g2 = remat(ws, x);
  for (int l = 0; l < kLayers; ++l)
    check_close(g2[l].to_vector<float>(), g1[l].to_vector<float>(), 1e-4, 1e-5);
}

// A policy (jax.checkpoint_policies) lets reverse mode keep some values instead of computing them
// again: with dots saved, the backward pass has one dot_general fewer, and the gradients are the
// same under every policy.
TEST_CASE("checkpoint: policies choose what the backward pass computes again",
          "[transforms][checkpoint]") {
  Array x = random::normal(random::key(1), {4, 8}), w = random::normal(random::key(2), {8, 3});
  Array xb = random::normal(random::key(3), {2, 4, 8}),
        wb = random::normal(random::key(4), {2, 8, 3});
  auto loss_with = [](std::optional<CheckpointPolicy> policy) {
    return [policy](const Array& a, const Array& b) {
      auto layer = [](const Array& u, const Array& v) { return np::sin(np::matmul(u, v)); };
      Array y = policy ? checkpoint(layer, {.policy = *policy})(a, b) : layer(a, b);
      return np::sum(y * y);
    };
  };
  using P = CheckpointPolicy;
  struct Case {
    P policy;
    const char* printed;
    std::size_t dots, batched_dots;  // dot_generals in grad's jaxpr: [4, 8] @ [8, 3], batched
  };
  // Forward: one dot; backward: the cotangent's one, and the forward's again unless saved. A
  // batched product is no dot without batch dims.
  for (Case c : {Case{P::nothing_saveable, "policy=None", 3, 3},
                 Case{P::everything_saveable, "policy=everything_saveable", 2, 2},
                 Case{P::dots_saveable, "policy=dots_saveable", 2, 2},
                 Case{P::dots_with_no_batch_dims_saveable,
                      "policy=dots_with_no_batch_dims_saveable", 2, 3}}) {
    INFO(c.printed);
    auto g = grad(loss_with(c.policy), 1);
    std::string text = make_jaxpr(g)(x, w).str(), batched = make_jaxpr(g)(xb, wb).str();
    INFO(text);
    CHECK_THAT(text, Catch::Contains(c.printed));
    CHECK(occurrences(text, "dot_general[") == c.dots);
    CHECK(occurrences(batched, "dot_general[") == c.batched_dots);
    // The gradients are the plain function's, eagerly and compiled.
    auto plain = grad(loss_with(std::nullopt), 1);
    for (auto [a, b] : {std::pair{x, w}, std::pair{xb, wb}}) {
      std::vector<float> want = plain(a, b).to_vector<float>();
      for (const Array& got : {g(a, b), jit(g)(a, b)})
        check_close(got.to_vector<float>(), want, 1e-5, 1e-6);
    }
  }
}

// A policy composes as checkpoint does: vmap of grad, grad of grad and jvp through a layer whose
// saved values include an integer one (argmax, under everything_saveable).
TEST_CASE("checkpoint: policies compose with vmap, jvp and second derivatives",
          "[transforms][checkpoint]") {
  Array x = random::normal(random::key(7), {4, 8}), w = random::normal(random::key(8), {8, 3});
  Array xs = random::normal(random::key(9), {2, 4, 8});
  auto layer = [](const Array& u, const Array& v) {
    Array h = np::matmul(u, v);
    return np::sin(h) * np::expand_dims(np::argmax(h, 1).astype(float32), 1);
  };
  // Per policy (none: no checkpoint): vmap of grad, grad of grad's sum, and a jvp, flattened.
  auto derivatives = [&](std::optional<CheckpointPolicy> policy) {
    auto f = [&, policy](const Array& a, const Array& b) {
      Array y = policy ? checkpoint(layer, {.policy = *policy})(a, b) : layer(a, b);
      return np::sum(np::cos(y));
    };
    auto dw = [&](const Array& a, const Array& b) { return grad(f, 1)(a, b); };
    std::vector<float> out = vmap([&](const Array& a) { return dw(a, w); })(xs).to_vector<float>();
    for (float v : grad([&](const Array& b) { return np::sum(dw(x, b)); })(w).to_vector<float>())
      out.push_back(v);
    auto [y, t] = jvp([&](const Array& b) { return f(x, b); }, std::make_tuple(w),
                      std::make_tuple(np::ones_like(w)));
    out.push_back(t.item<float>());
    return out;
  };
  std::vector<float> want = derivatives(std::nullopt);
  for (CheckpointPolicy p : {CheckpointPolicy::everything_saveable, CheckpointPolicy::dots_saveable,
                             CheckpointPolicy::nothing_saveable})
    check_close(derivatives(p), want, 1e-5, 1e-5);
}

// The policies on names save what checkpoint_name named: sin(x @ w) with the product named
// "proj" keeps it when the policy lists it.
TEST_CASE("checkpoint: policies on names save the values checkpoint_name named",
          "[transforms][checkpoint]") {
  Array x = random::normal(random::key(5), {4, 8}), w = random::normal(random::key(6), {8, 3});
  auto loss_with = [](CheckpointOptions options) {
    return [options](const Array& a, const Array& b) {
      auto layer = [](const Array& u, const Array& v) {
        return np::sin(checkpoint_name(np::matmul(u, v), "proj"));
      };
      Array y = checkpoint(layer, options)(a, b);
      return np::sum(y * y);
    };
  };
  using P = CheckpointPolicy;
  struct Case {
    CheckpointOptions options;
    const char* printed;
    std::size_t dots;
  };
  for (const Case& c : {Case{{.policy = P::save_only_these_names, .names = {"proj"}},
                             "policy=save_only_these_names(names=(proj,))",
                             2},
                        Case{{.policy = P::save_only_these_names, .names = {"other"}},
                             "policy=save_only_these_names(names=(other,))",
                             3},
                        Case{{.policy = P::save_any_names_but_these, .names = {"other"}},
                             "policy=save_any_names_but_these(names=(other,))",
                             2},
                        Case{{.policy = P::save_any_names_but_these, .names = {"proj"}},
                             "policy=save_any_names_but_these(names=(proj,))",
                             3}}) {
    INFO(c.printed);
    auto g = grad(loss_with(c.options), 1);
    std::string text = make_jaxpr(g)(x, w).str();
    INFO(text);
    CHECK_THAT(text, Catch::Contains(c.printed) && Catch::Contains("name[name=proj]"));
    CHECK(parse_jaxpr(text).str() == text);  // the policy reads back
    CHECK(occurrences(text, "dot_general[") == c.dots);
    check_close(jit(g)(x, w).to_vector<float>(), grad(loss_with({}), 1)(x, w).to_vector<float>(),
                1e-5, 1e-6);
  }
}

}  // namespace
}  // namespace jx
