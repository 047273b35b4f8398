// The public vmap API: in_axes (int, jx::none, per-argument and per-leaf lists, negative axes),
// out_axes (per leaf too), pytree arguments, nesting, composition with jit and grad, the batched
// jaxpr, and the exact type and message of every bad-input error. Every result is checked against
// an explicit loop of per-example calls (examples built on the host, not with jx) or a closed form.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "jx/jx.hpp"
#include "support/error_of.hpp"
#include "support/host_batches.hpp"
#include "support/test_pytrees.hpp"

namespace jx {
namespace {

using jx::testing::Dense;
using jx::testing::error_of;
using jx::testing::exact_error_of;
using jx::testing::Mlp;
using testing::Arrays;
using testing::host_array;
using testing::Ints;
using testing::require_close;
using testing::stack_at;
using testing::take_at;
using testing::values;

std::vector<double> random_values(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (double& e : v) e = u(rng);
  return v;
}

Array random_array(const Shape& shape, std::mt19937& rng, DType dtype = float64) {
  return host_array(random_values(static_cast<std::size_t>(shape_size(shape)), rng), shape, dtype);
}

// A small function with several primitives: elementwise ops, a broadcast scalar, a reduction.
Array f2(const Array& x, const Array& y) {
  return np::sin(x) * y + x / (1.0 + y * y) - np::sum(x * y);
}

}  // namespace

// ---- in_axes ---------------------------------------------------------------------------------

TEST_CASE("vmap: in_axes 0 for every argument equals the loop", "[vmap]") {
  std::mt19937 rng(1);
  Arrays xs, ys, outs;
  for (int i = 0; i < 4; ++i) {
    xs.push_back(random_array({3}, rng));
    ys.push_back(random_array({3}, rng));
    outs.push_back(f2(xs.back(), ys.back()));
  }
  require_close(vmap(f2)(stack_at(xs, 0), stack_at(ys, 0)), stack_at(outs, 0));
  require_close(vmap(f2, 0)(stack_at(xs, 0), stack_at(ys, 0)), stack_at(outs, 0));
}

TEST_CASE("vmap: in_axes 1 for every argument maps over the second axis", "[vmap]") {
  std::mt19937 rng(2);
  Arrays xs, ys, outs;
  for (int i = 0; i < 5; ++i) {
    xs.push_back(random_array({2, 3}, rng));
    ys.push_back(random_array({2, 3}, rng));
    outs.push_back(f2(xs.back(), ys.back()));
  }
  Array x = stack_at(xs, 1), y = stack_at(ys, 1);
  REQUIRE(x.shape() == Shape{2, 5, 3});
  require_close(vmap(f2, 1)(x, y), stack_at(outs, 0));
}

TEST_CASE("vmap: a per-argument in_axes list with jx::none broadcasts unbatched arguments",
          "[vmap]") {
  std::mt19937 rng(3);
  Array w = random_array({3, 4}, rng);
  auto matvec = [](const Array& m, const Array& v) { return np::matmul(m, v); };
  Arrays vs, outs;
  for (int i = 0; i < 6; ++i) {
    vs.push_back(random_array({4}, rng));
    outs.push_back(matvec(w, vs.back()));
  }
  SECTION("{none, 0}") {
    require_close(vmap(matvec, {none, 0})(w, stack_at(vs, 0)), stack_at(outs, 0));
  }
  SECTION("{none, 1}: the batch axis last") {
    require_close(vmap(matvec, {none, 1})(w, stack_at(vs, 1)), stack_at(outs, 0));
  }
  SECTION("{1, none}: a batch of matrices times one vector") {
    Arrays ms, outs2;
    Array v = random_array({4}, rng);
    for (int i = 0; i < 3; ++i) {
      ms.push_back(random_array({3, 4}, rng));
      outs2.push_back(matvec(ms.back(), v));
    }
    require_close(vmap(matvec, {1, none})(stack_at(ms, 1), v), stack_at(outs2, 0));
  }
}

TEST_CASE("vmap: negative in_axes count from the end", "[vmap]") {
  std::mt19937 rng(4);
  Arrays xs, ys, outs;
  for (int i = 0; i < 3; ++i) {
    xs.push_back(random_array({2, 4}, rng));
    ys.push_back(random_array({2, 4}, rng));
    outs.push_back(f2(xs.back(), ys.back()));
  }
  Array want = stack_at(outs, 0);
  require_close(vmap(f2, -1)(stack_at(xs, 2), stack_at(ys, 2)), want);
  require_close(vmap(f2, {-2, -3})(stack_at(xs, 1), stack_at(ys, 0)), want);
  require_close(vmap(f2, {-1, none})(stack_at(xs, 2), ys[0]),
                stack_at({f2(xs[0], ys[0]), f2(xs[1], ys[0]), f2(xs[2], ys[0])}, 0));
}

// ---- out_axes --------------------------------------------------------------------------------

TEST_CASE("vmap: out_axes places the batch axis of every output", "[vmap]") {
  std::mt19937 rng(5);
  auto f = [](const Array& x) { return np::exp(x) * 2.0 + 1.0; };
  Arrays xs, outs;
  for (int i = 0; i < 4; ++i) {
    xs.push_back(random_array({2, 3}, rng));
    outs.push_back(f(xs.back()));
  }
  Array x = stack_at(xs, 0);
  require_close(vmap(f, 0, 0)(x), stack_at(outs, 0));
  require_close(vmap(f, 0, 1)(x), stack_at(outs, 1));
  require_close(vmap(f, 0, 2)(x), stack_at(outs, 2));
  require_close(vmap(f, 0, -1)(x), stack_at(outs, 2));
  require_close(vmap(f, 0, -2)(x), stack_at(outs, 1));
  // in and out axes together: batch axis in the middle in, last out.
  require_close(vmap(f, 1, -1)(stack_at(xs, 1)), stack_at(outs, 2));
}

TEST_CASE("vmap: out_axes with pytree outputs applies to every leaf", "[vmap]") {
  std::mt19937 rng(6);
  auto f = [](const Array& x) { return Arrays{np::sin(x), np::sum(x), x * x}; };
  Arrays xs, o0, o1, o2;
  for (int i = 0; i < 3; ++i) {
    xs.push_back(random_array({4}, rng));
    Arrays o = f(xs.back());
    o0.push_back(o[0]);
    o1.push_back(o[1]);
    o2.push_back(o[2]);
  }
  Arrays got = vmap(f, 0, -1)(stack_at(xs, 0));
  REQUIRE(got.size() == 3);
  require_close(got[0], stack_at(o0, 1));
  require_close(got[1], stack_at(o1, 0));  // a 0-d output: the batch axis is its only axis
  require_close(got[2], stack_at(o2, 1));
}

TEST_CASE("vmap: out_axes none returns an unbatched output as it is", "[vmap]") {
  std::mt19937 rng(7);
  Array w = random_array({2, 3}, rng), x = random_array({5, 3}, rng);
  auto f = [](const Array& x_, const Array& w_) {
    (void)x_;
    return w_ * 3.0 + 1.0;
  };
  Array want = host_array(
      [&] {
        std::vector<double> v;
        for (double e : values(w)) v.push_back(e * 3.0 + 1.0);
        return v;
      }(),
      {2, 3});
  require_close(vmap(f, {0, none}, none)(x, w), want);
  // With out_axes 0 the same unbatched output is broadcast along the batch.
  require_close(vmap(f, {0, none}, 0)(x, w), stack_at(Arrays(5, want), 0));
  require_close(vmap(f, {0, none}, 1)(x, w), stack_at(Arrays(5, want), 1));
}

// ---- pytrees ---------------------------------------------------------------------------------

TEST_CASE("vmap: a std::vector<Array> argument is batched per leaf", "[vmap]") {
  std::mt19937 rng(8);
  auto f = [](const Arrays& xs) { return xs[0] * xs[1] + np::sum(xs[2]); };
  std::vector<Arrays> examples;
  Arrays outs;
  for (int i = 0; i < 4; ++i) {
    examples.push_back({random_array({3}, rng), random_array({3}, rng), random_array({2}, rng)});
    outs.push_back(f(examples.back()));
  }
  Arrays leaves0, leaves1, leaves2;
  for (const Arrays& e : examples) {
    leaves0.push_back(e[0]);
    leaves1.push_back(e[1]);
    leaves2.push_back(e[2]);
  }
  Arrays batched{stack_at(leaves0, 0), stack_at(leaves1, 0), stack_at(leaves2, 0)};
  require_close(vmap(f)(batched), stack_at(outs, 0));
  // in_axes 1 applies to every leaf too.
  Arrays batched1{stack_at(leaves0, 1), stack_at(leaves1, 1), stack_at(leaves2, 1)};
  require_close(vmap(f, 1)(batched1), stack_at(outs, 0));
}

TEST_CASE("vmap: JX_PYTREE struct arguments and results are batched per leaf", "[vmap]") {
  std::mt19937 rng(9);
  auto layer = [](const Dense& p, const Array& x) { return np::tanh(np::matmul(x, p.w) + p.b); };
  Dense shared{random_array({3, 2}, rng), random_array({2}, rng)};
  SECTION("shared parameters, a batch of inputs: {none, 0}") {
    Arrays xs, outs;
    for (int i = 0; i < 5; ++i) {
      xs.push_back(random_array({3}, rng));
      outs.push_back(layer(shared, xs.back()));
    }
    require_close(vmap(layer, {none, 0})(shared, stack_at(xs, 0)), stack_at(outs, 0));
  }
  SECTION("an ensemble of parameters, one input: {0, none}") {
    Array x = random_array({3}, rng);
    Arrays ws, bs, outs;
    for (int i = 0; i < 4; ++i) {
      ws.push_back(random_array({3, 2}, rng));
      bs.push_back(random_array({2}, rng));
      outs.push_back(layer(Dense{ws.back(), bs.back()}, x));
    }
    require_close(vmap(layer, {0, none})(Dense{stack_at(ws, 0), stack_at(bs, 0)}, x),
                  stack_at(outs, 0));
  }
  SECTION("a struct result") {
    auto scale = [](const Dense& p, const Array& s) { return Dense{p.w * s, p.b + s}; };
    Arrays ss, w_out, b_out;
    for (int i = 0; i < 3; ++i) {
      ss.push_back(random_array({}, rng));
      Dense d = scale(shared, ss.back());
      w_out.push_back(d.w);
      b_out.push_back(d.b);
    }
    Dense got = vmap(scale, {none, 0}, 1)(shared, stack_at(ss, 0));
    require_close(got.w, stack_at(w_out, 1));
    require_close(got.b, stack_at(b_out, 1));
  }
}

TEST_CASE("vmap: per-leaf in_axes, a tree prefix of a struct argument", "[vmap]") {
  std::mt19937 rng(21);
  auto layer = [](const Dense& p, const Array& x) { return np::tanh(np::matmul(x, p.w) + p.b); };
  // Shared weights, a bias per example (batched along its last axis), a batch of inputs.
  Array w = random_array({3, 2}, rng);
  Arrays bs, xs, outs;
  for (int i = 0; i < 4; ++i) {
    bs.push_back(random_array({2}, rng));
    xs.push_back(random_array({3}, rng));
    outs.push_back(layer(Dense{w, bs.back()}, xs.back()));
  }
  Dense params{w, stack_at(bs, 1)};
  require_close(vmap(layer, {{none, -1}, 0})(params, stack_at(xs, 0)), stack_at(outs, 0));
  // A list entry for a container argument, and an int for all of another's leaves.
  auto g = [](const Arrays& v, const std::pair<Array, Array>& p) {
    return v[0] * p.first + v[1] * p.second;
  };
  Arrays v0s, v1s, firsts, gouts;
  Array v1 = random_array({2}, rng), second = random_array({2}, rng);
  for (int i = 0; i < 3; ++i) {
    v0s.push_back(random_array({2}, rng));
    firsts.push_back(random_array({2}, rng));
    gouts.push_back(g(Arrays{v0s.back(), v1}, {firsts.back(), second}));
  }
  require_close(vmap(g, {{0, none}, {1, none}})(Arrays{stack_at(v0s, 0), v1},
                                                std::pair{stack_at(firsts, 1), second}),
                stack_at(gouts, 0));
}

TEST_CASE("vmap: per-leaf out_axes, a tree prefix of the result", "[vmap]") {
  std::mt19937 rng(22);
  auto f = [](const Array& x, const Array& w) {
    return std::tuple{x * w, Arrays{w * 2.0, np::sum(x)}};
  };
  Array w = random_array({3}, rng);
  Arrays xs, prods, sums;
  for (int i = 0; i < 5; ++i) {
    xs.push_back(random_array({3}, rng));
    prods.push_back(xs.back() * w);
    sums.push_back(np::sum(xs.back()));
  }
  auto [prod, rest] = vmap(f, {0, none}, {1, {none, 0}})(stack_at(xs, 0), w);
  require_close(prod, stack_at(prods, 1));
  require_close(rest[0], w * 2.0);  // unbatched, returned as it is
  require_close(rest[1], stack_at(sums, 0));
}

// ---- nesting and composition -------------------------------------------------------------------

TEST_CASE("vmap: nested vmap over two arguments equals a double loop", "[vmap]") {
  std::mt19937 rng(10);
  auto f = [](const Array& x, const Array& y) { return np::sum(np::sin(x) * y); };
  Array xs = random_array({3, 4}, rng), ys = random_array({5, 4}, rng);
  // inner maps over x: out[i] = f(x_i, y); outer over y: out[j][i] = f(x_i, y_j).
  Array got = vmap(vmap(f, {0, none}), {none, 0})(xs, ys);
  Arrays rows;
  for (std::int64_t j = 0; j < 5; ++j) {
    Arrays row;
    for (std::int64_t i = 0; i < 3; ++i) row.push_back(f(take_at(xs, 0, i), take_at(ys, 0, j)));
    rows.push_back(stack_at(row, 0));
  }
  require_close(got, stack_at(rows, 0));
}

TEST_CASE("vmap: nested vmap over two axes of one array equals a double loop", "[vmap]") {
  std::mt19937 rng(11);
  auto g = [](const Array& v) { return np::sum(np::sin(v) * v); };
  Array x = random_array({2, 4, 3}, rng);
  // The outer vmap takes axis 0; the inner one axis 1 of what is left, (4, 3): out[i][j] =
  // g(x[i, :, j]).
  Array got = vmap(vmap(g, 1), 0)(x);
  Arrays rows;
  for (std::int64_t i = 0; i < 2; ++i) {
    Arrays row;
    for (std::int64_t j = 0; j < 3; ++j) row.push_back(g(take_at(take_at(x, 0, i), 1, j)));
    rows.push_back(stack_at(row, 0));
  }
  require_close(got, stack_at(rows, 0));
  // The inner vmap over axis 0, the outer over axis 2: out[j][i] = g(x[i, :, j]).
  Array got2 = vmap(vmap(g, 0), 2)(x);
  Arrays cols;
  for (std::int64_t j = 0; j < 3; ++j) {
    Arrays col;
    for (std::int64_t i = 0; i < 2; ++i) col.push_back(g(take_at(take_at(x, 0, i), 1, j)));
    cols.push_back(stack_at(col, 0));
  }
  require_close(got2, stack_at(cols, 0));
}

TEST_CASE("vmap: jit(vmap(f)) == vmap(jit(f)) == the loop", "[vmap]") {
  std::mt19937 rng(12);
  Array z = random_array({3}, rng);
  auto f = [z](const Array& x, const Array& y) { return f2(np::matmul(x, y), z); };
  Arrays xs, ys, outs;
  for (int i = 0; i < 4; ++i) {
    xs.push_back(random_array({3, 2}, rng));
    ys.push_back(random_array({2}, rng));
    outs.push_back(f(xs.back(), ys.back()));
  }
  Array x = stack_at(xs, 2), y = stack_at(ys, 0), want = stack_at(outs, 0);
  Array a = jit(vmap(f, {2, 0}))(x, y);
  Array b = vmap(jit(f), {2, 0})(x, y);
  Array c = vmap(f, {2, 0})(x, y);
  require_close(a, want);
  require_close(b, want);
  require_close(c, want);
}

namespace {

Array mlp_loss(const Mlp& p, const Array& x, const Array& y) {
  Array h = np::tanh(np::matmul(x, p.w1) + p.b1);
  Array out = np::matmul(h, p.w2) + p.b2;
  return np::sum((out - y) * (out - y));
}

}  // namespace

TEST_CASE("vmap: vmap(grad(f)) gives per-example gradients equal to a loop of grad calls",
          "[vmap]") {
  std::mt19937 rng(13);
  Mlp p{random_array({3, 4}, rng), random_array({4}, rng), random_array({4, 2}, rng),
        random_array({2}, rng)};
  const int n = 5;
  Arrays xs, ys;
  Arrays gw1, gb1, gw2, gb2;
  for (int i = 0; i < n; ++i) {
    xs.push_back(random_array({3}, rng));
    ys.push_back(random_array({2}, rng));
    Mlp g = grad(mlp_loss)(p, xs.back(), ys.back());
    gw1.push_back(g.w1);
    gb1.push_back(g.b1);
    gw2.push_back(g.w2);
    gb2.push_back(g.b2);
  }
  // The loop's gradients are not all the same (the test can fail by broadcasting one of them).
  CHECK(values(gw1[0]) != values(gw1[1]));
  Mlp got = vmap(grad(mlp_loss), {none, 0, 0})(p, stack_at(xs, 0), stack_at(ys, 0));
  require_close(got.w1, stack_at(gw1, 0), 1e-10);
  require_close(got.b1, stack_at(gb1, 0), 1e-10);
  require_close(got.w2, stack_at(gw2, 0), 1e-10);
  require_close(got.b2, stack_at(gb2, 0), 1e-10);
  SECTION("under jit") {
    Mlp j = jit(vmap(grad(mlp_loss), {none, 0, 0}))(p, stack_at(xs, 0), stack_at(ys, 0));
    require_close(j.w1, stack_at(gw1, 0), 1e-10);
    require_close(j.b2, stack_at(gb2, 0), 1e-10);
  }
}

TEST_CASE("vmap: grad of a function that calls vmap matches the closed form", "[vmap]") {
  std::mt19937 rng(14);
  Array w = random_array({3}, rng), xs = random_array({6, 3}, rng);
  // h(w) = sum_i tanh(w . x_i); dh/dw = sum_i (1 - tanh(w . x_i)^2) x_i.
  auto h = [](const Array& w_, const Array& xs_) {
    auto one = [&w_](const Array& x) { return np::tanh(np::sum(w_ * x)); };
    return np::sum(vmap(one)(xs_));
  };
  std::vector<double> wv = values(w), xv = values(xs), want(3, 0.0);
  double value = 0;
  for (int i = 0; i < 6; ++i) {
    double dot = 0;
    for (int k = 0; k < 3; ++k) dot += wv[k] * xv[static_cast<std::size_t>(i * 3 + k)];
    value += std::tanh(dot);
    for (int k = 0; k < 3; ++k)
      want[static_cast<std::size_t>(k)] +=
          (1 - std::tanh(dot) * std::tanh(dot)) * xv[static_cast<std::size_t>(i * 3 + k)];
  }
  CHECK(values(h(w, xs))[0] == Approx(value).epsilon(1e-12));
  require_close(grad(h)(w, xs), host_array(want, {3}));
  // With respect to the batched argument: d/dx_i = (1 - tanh(w . x_i)^2) w.
  Array gx = grad<1>(h)(w, xs);
  std::vector<double> want_x;
  for (int i = 0; i < 6; ++i) {
    double dot = 0;
    for (int k = 0; k < 3; ++k) dot += wv[k] * xv[static_cast<std::size_t>(i * 3 + k)];
    for (int k = 0; k < 3; ++k) want_x.push_back((1 - std::tanh(dot) * std::tanh(dot)) * wv[k]);
  }
  require_close(gx, host_array(want_x, {6, 3}));
  require_close(jit(grad(h))(w, xs), host_array(want, {3}));
}

TEST_CASE("vmap: make_jaxpr(vmap(matmul)) has one batched dot_general and no loop", "[vmap]") {
  auto matmul = [](const Array& a, const Array& b) { return np::matmul(a, b); };
  Array a = np::zeros({5, 2, 3}, float32), b = np::zeros({5, 3, 4}, float32);
  std::string text = make_jaxpr(vmap(matmul))(a, b).str();
  INFO(text);
  CHECK(text.find("f32[5,2,4]") != std::string::npos);
  std::size_t first = text.find("dot_general");
  REQUIRE(first != std::string::npos);
  CHECK(text.find("dot_general", first + 1) == std::string::npos);
  // dimension_numbers=((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)) with a
  // non-empty batch pair.
  std::string params = text.substr(first);
  CHECK(std::regex_search(params,
                          std::regex(R"(^dot_general\[\s*dimension_numbers=\(\(\[[0-9, ]*\], )"
                                     R"(\[[0-9, ]*\]\), \(\[[0-9]+\], \[[0-9]+\]\)\))")));
  for (const char* absent : {"concatenate", "slice", "while", "scan", "pjit"}) {
    INFO("absent: " << absent);
    CHECK(text.find(absent) == std::string::npos);
  }
  // The same program gives the loop's values.
  std::mt19937 rng(15);
  Arrays as, bs, outs;
  for (int i = 0; i < 5; ++i) {
    as.push_back(random_array({2, 3}, rng, float32));
    bs.push_back(random_array({3, 4}, rng, float32));
    outs.push_back(matmul(as.back(), bs.back()));
  }
  require_close(vmap(matmul)(stack_at(as, 0), stack_at(bs, 0)), stack_at(outs, 0), 1e-5);
}

TEST_CASE("vmap: custom_jvp and custom_vjp functions batch as the loop", "[vmap]") {
  std::mt19937 rng(16);
  auto f =
      custom_jvp([](const Array& x) { return np::sin(x) * x; },
                 [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                   const Array& x = std::get<0>(p);
                   return std::pair{np::sin(x) * x, (np::cos(x) * x + np::sin(x)) * std::get<0>(t)};
                 });
  Arrays xs, outs, grads;
  auto loss = [&f](const Array& x) { return np::sum(f(x)); };
  for (int i = 0; i < 4; ++i) {
    xs.push_back(random_array({3}, rng));
    outs.push_back(f(xs.back()));
    grads.push_back(grad(loss)(xs.back()));
  }
  require_close(vmap(f)(stack_at(xs, 0)), stack_at(outs, 0));
  require_close(vmap(grad(loss))(stack_at(xs, 0)), stack_at(grads, 0));
}

// ---- errors ----------------------------------------------------------------------------------

TEST_CASE("vmap errors: inconsistent batch sizes are a ShapeError", "[vmap]") {
  auto f = [](const Array& x, const Array& y) { return x + y; };
  Array x = np::zeros({3, 2}, float32), y = np::zeros({4, 2}, float32);
  std::string msg = error_of<ShapeError>([&] { vmap(f)(x, y); });
  CHECK(msg.rfind("vmap got inconsistent sizes for array axes to be mapped:", 0) == 0);
  CHECK(msg ==
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * argument 0 of type f32[3,2] has size 3 along axis 0\n"
        "  * argument 1 of type f32[4,2] has size 4 along axis 0");
  // Axes of equal size are consistent wherever they are.
  auto sums = [](const Array& a, const Array& b) { return np::sum(a) + np::sum(b); };
  CHECK(error_of<ShapeError>([&] { vmap(sums, {1, 1})(x, y); }) == "<no exception>");
  CHECK(error_of<ShapeError>([&] {
          vmap(sums, {0, 1})(x, np::zeros({2, 3}, float32));
        }) == "<no exception>");
  CHECK(error_of<ShapeError>([&] {
          vmap(sums, {1, 0})(x, y);
        }).rfind("vmap got inconsistent sizes for array axes to be mapped:", 0) == 0);
  // Leaves of one pytree argument must agree too.
  auto g = [](const Arrays& xs) { return xs[0] + xs[1]; };
  CHECK(error_of<ShapeError>([&] {
          vmap(g)(Arrays{x, y});
        }).rfind("vmap got inconsistent sizes for array axes to be mapped:", 0) == 0);
}

TEST_CASE("vmap errors: an in_axes entry out of range is a ShapeError", "[vmap]") {
  auto f = [](const Array& x, const Array& y) { return x * y; };
  Array x = np::zeros({3, 2}, float32);
  CHECK(error_of<ShapeError>([&] { vmap(f, 2)(x, x); }) ==
        "vmap was requested to map its argument 0 along axis 2, which implies that its rank "
        "should be at least 3, but is only 2 (its shape is (3, 2))");
  CHECK(error_of<ShapeError>([&] {
          vmap(f, {0, -3})(x, x);
        }) ==
        "vmap was requested to map its argument 1 along axis -3, which implies that its rank "
        "should be at least 3, but is only 2 (its shape is (3, 2))");
  CHECK(error_of<ShapeError>([&] {
          vmap(f, {none, 0})(x, np::zeros({}, float32));
        }) ==
        "vmap was requested to map its argument 1 along axis 0, which implies that its rank "
        "should be at least 1, but is only 0 (its shape is ())");
}

TEST_CASE("vmap errors: every in_axes none is a ShapeError", "[vmap]") {
  auto f = [](const Array& x, const Array& y) { return x * y; };
  Array x = np::zeros({3}, float32);
  CHECK(error_of<ShapeError>([&] { vmap(f, none)(x, x); }) ==
        "vmap must have at least one non-None value in in_axes");
  CHECK(error_of<ShapeError>([&] {
          vmap(f, {none, none})(x, x);
        }) == "vmap must have at least one non-None value in in_axes");
}

TEST_CASE("vmap errors: an in_axes list of the wrong length is a TypeError", "[vmap]") {
  auto f = [](const Array& x, const Array& y) { return x * y; };
  Array x = np::zeros({3}, float32);
  CHECK(error_of<TypeError>([&] {
          vmap(f, {0, none, 0})(x, x);
        }) ==
        "vmap in_axes must be an int, jx::none, or a list with one entry per positional "
        "argument, but got 3 entries for 2 arguments.");
  CHECK(error_of<TypeError>([&] { vmap(f, {0})(x, x); }) ==
        "vmap in_axes must be an int, jx::none, or a list with one entry per positional "
        "argument, but got 1 entries for 2 arguments.");
}

TEST_CASE("vmap errors: an axes list that is not a tree prefix is a TypeError", "[vmap]") {
  auto layer = [](const Dense& p, const Array& x) { return np::matmul(x, p.w) + p.b; };
  Dense p{np::zeros({3, 2}), np::zeros({2})};
  Array x = np::zeros({4, 3});
  CHECK(error_of<TypeError>([&] {
          vmap(layer, {{none, 0, 0}, 0})(p, x);
        }) ==
        "vmap in_axes specification must be a tree prefix of the corresponding value, got a "
        "list of 3 entries for a value with 2 children.");
  CHECK(error_of<TypeError>([&] {
          vmap(layer, {none, {0}})(p, x);
        }) ==
        "vmap in_axes specification must be a tree prefix of the corresponding value, got a "
        "list of 1 entries for a leaf.");
  CHECK(error_of<TypeError>([&] {
          vmap(layer, {none, 0}, {0, 0})(p, x);
        }) ==
        "vmap out_axes specification must be a tree prefix of the corresponding value, got a "
        "list of 2 entries for a leaf.");
}

TEST_CASE("vmap errors: out_axes none with a batched output is a jx::Error", "[vmap]") {
  auto f = [](const Array& x, const Array& w) { return Arrays{w * 2.0, x + w}; };
  Array x = np::zeros({4, 3}, float32), w = np::zeros({3}, float32);
  CHECK(exact_error_of<Error>([&] {
          vmap(f, {0, none}, none)(x, w);
        }) == "vmap has mapped output but out_axes is none");
}

TEST_CASE("vmap errors: out_axes out of range is a ShapeError", "[vmap]") {
  auto f = [](const Array& x) { return x * 2.0; };
  Array x = np::zeros({4, 2, 3}, float32);
  CHECK(error_of<ShapeError>([&] { vmap(f, 0, 3)(x); }) ==
        "vmap out_axes 3 is out of range for an output of rank 3 (f32[2,3] with the batch axis)");
  CHECK(error_of<ShapeError>([&] { vmap(f, 0, -4)(x); }) ==
        "vmap out_axes -4 is out of range for an output of rank 3 (f32[2,3] with the batch axis)");
}

}  // namespace jx
