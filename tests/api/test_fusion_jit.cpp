// jit through the fusion passes: whole models (softmax, layer norm, gelu, a dense layer, ...)
// against plain C++ loops in double, and the kernels their thunk sequences run. Shapes come
// big (the thread-pool path: several rows and at least 256 KiB touched) and tiny.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "codegen/cpu/cpu_isa.hpp"
#include "codegen/cpu/gemm_plan.hpp"
#include "jx/jx.hpp"
#include "runtime/parallel.hpp"
#include "support/config_guard.hpp"

namespace jx {
namespace {

// Reproducible values in [lo, hi), as the f32 the arrays hold.
std::vector<float> uniform(std::int64_t n, float lo, float hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

// |got - want| <= atol + rtol·|want| everywhere; one CHECK, naming the worst element.
void check_close(const Array& got, const std::vector<double>& want, double rtol = 1e-5,
                 double atol = 1e-6) {
  std::vector<double> g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  std::size_t worst = 0;
  double worst_excess = -1;
  for (std::size_t i = 0; i < g.size(); ++i) {
    double excess = std::abs(g[i] - want[i]) - (atol + rtol * std::abs(want[i]));
    if (std::isnan(g[i])) excess = INFINITY;
    if (excess > worst_excess) worst_excess = excess, worst = i;
  }
  INFO("worst element " << worst << ": got " << g[worst] << ", want " << want[worst]);
  CHECK(worst_excess <= 0);
}

// Matrix products (BLAS calls, or kernels whose root is a dot), and the other kernels.
struct ThunkCounts {
  int kernels = 0, products = 0;
  std::vector<std::string> kernel_lines;
};

ThunkCounts count_thunks(const std::string& sequence) {
  ThunkCounts c;
  std::istringstream in(sequence);
  for (std::string line; std::getline(in, line);) {
    bool kernel = line.rfind("kernel ", 0) == 0;
    bool dot_kernel = kernel && line.find("_dot.") != std::string::npos;
    if (line.rfind("gemm ", 0) == 0 || dot_kernel)
      ++c.products;
    else if (kernel)
      ++c.kernels, c.kernel_lines.push_back(line);
  }
  return c;
}

// The buffers a kernel line names, in order: "kernel k(param0, temp[0:64], out0) ..." →
// {"param0", "temp[0:64]", "out0"}.
std::vector<std::string> kernel_buffers(const std::string& line) {
  std::size_t open = line.find('('), close = line.find(')');
  std::vector<std::string> out;
  std::istringstream in(line.substr(open + 1, close - open - 1));
  for (std::string b; std::getline(in, b, ',');) out.push_back(b.substr(b.find_first_not_of(' ')));
  return out;
}

// Rows × cols shapes: the thread-pool path, tiny, and a single long row.
const std::vector<std::pair<std::int64_t, std::int64_t>> kShapes = {{256, 512}, {3, 5}, {1, 4096}};

std::vector<double> softmax_rows(const std::vector<float>& x, std::int64_t rows,
                                 std::int64_t cols) {
  std::vector<double> y(x.size());
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* r = &x[static_cast<std::size_t>(i * cols)];
    double m = *std::max_element(r, r + cols), s = 0;
    for (std::int64_t j = 0; j < cols; ++j) s += std::exp(r[j] - m);
    for (std::int64_t j = 0; j < cols; ++j)
      y[static_cast<std::size_t>(i * cols + j)] = std::exp(r[j] - m) / s;
  }
  return y;
}

Array softmax_fn(const Array& x) {
  Array e = np::exp(x - np::max(x, 1, true));
  return e / np::sum(e, 1, true);
}

const float kEps = 1e-5f;

Array layer_norm_fn(const Array& x, const Array& gamma, const Array& beta) {
  Array mean = np::mean(x, 1, true);
  Array centered = x - mean;
  Array var = np::mean(centered * centered, 1, true);
  return centered / np::sqrt(var + kEps) * gamma + beta;
}

TEST_CASE("fused jit: a reshape that regroups dims around a unit dim keeps row-major order",
          "[jit][fusion]") {
  // [1, 4, 2] → [2, 4]: as many non-unit dims on each side, of other sizes. The transpose
  // before it, fused, reads its operand by dims, so the reshape must hand it the right ones.
  Array y = np::reshape(np::arange(8.0, float32), {2, 4, 1});
  auto f = [](const Array& a) { return np::reshape(lax::transpose(a, {2, 1, 0}), {2, 4}) + 1.0f; };
  std::vector<float> want;  // y[k][j][0] lands at [0][j][k], read row-major
  for (int j = 0; j < 4; ++j)
    for (int k = 0; k < 2; ++k) want.push_back(static_cast<float>(k * 4 + j) + 1.0f);
  CHECK(jit(f)(y).to_vector<float>() == want);
}

TEST_CASE("fused jit: a reshape names its operand's buffer: no kernel, no copy", "[jit][fusion]") {
  // The scan is no producer, so the reshape of its result stays outside any fusion: it reads
  // the scan's output buffer with the output's shape, and the scan writes out0 directly.
  Array x = np::reshape(np::arange(12.0, float32), {3, 4});
  auto scanned = jit([](const Array& a) { return np::reshape(lax::cumsum(a, 1), {2, 6}); });
  auto compiled = scanned.lower(x).compile();
  INFO(compiled.hlo_text() << compiled.thunk_sequence());
  ThunkCounts c = count_thunks(compiled.thunk_sequence());
  REQUIRE(c.kernels == 1);
  CHECK(kernel_buffers(c.kernel_lines[0]).back() == "out0");
  CHECK(compiled.thunk_sequence().find("copy") == std::string::npos);
  CHECK(scanned(x).shape() == Shape{2, 6});
  CHECK(scanned(x).to_vector<float>() ==
        std::vector<float>{0, 1, 3, 6, 4, 9, 15, 22, 8, 17, 27, 38});
  // A reshaped parameter as an output is the parameter copied; a reshaped output as another
  // output is the first copied.
  auto both = jit([](const Array& a) {
    Array e = np::exp(a);
    return std::vector<Array>{np::reshape(a, {12}), e, np::reshape(e, {4, 3})};
  });
  std::vector<Array> got = both(x);
  CHECK(got[0].to_vector<float>() == x.to_vector<float>());
  CHECK(got[2].shape() == Shape{4, 3});
  CHECK(got[2].to_vector<float>() == got[1].to_vector<float>());
  std::vector<double> want;
  for (int k = 0; k < 12; ++k) want.push_back(std::exp(k));
  check_close(got[1], want);
}

TEST_CASE("fused jit: a reshape roots no kernel: a pooled map flattened is a pool's kernel",
          "[jit][fusion]") {
  // relu(x + b), 2x2 max pools, flattened as a dense layer reads it: one kernel looping over the
  // pool's dims (its root the pool, not a reshape that would split a flat index per element),
  // and the reshape naming its buffer.
  const std::int64_t n = 2, hw = 4, c = 3;
  std::vector<float> xv = uniform(n * hw * hw * c, -1, 1, 31), bv = {0.25f, -0.5f, 0.0f};
  Array x = np::array(xv, {n, hw, hw, c}), b = np::array(bv);
  auto flat = jit([](const Array& a, const Array& bias) {
    Array pooled = nn::max_pool(nn::relu(a + bias), {2, 2}, {2, 2});
    return np::reshape(pooled, {pooled.shape()[0], -1});
  });
  auto compiled = flat.lower(x, b).compile();
  std::string hlo = compiled.hlo_text();
  INFO(hlo << compiled.thunk_sequence());
  CHECK(count_thunks(compiled.thunk_sequence()).kernels == 1);
  CHECK(hlo.find("= f32[2,2,2,3]{3,2,1,0} fusion(") != std::string::npos);
  CHECK(hlo.find("= f32[2,12]{1,0} fusion(") == std::string::npos);
  std::vector<double> want;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t y = 0; y < hw / 2; ++y)
      for (std::int64_t z = 0; z < hw / 2; ++z)
        for (std::int64_t f = 0; f < c; ++f) {
          double m = -INFINITY;
          for (std::int64_t dy = 0; dy < 2; ++dy)
            for (std::int64_t dz = 0; dz < 2; ++dz) {
              auto at = ((i * hw + 2 * y + dy) * hw + 2 * z + dz) * c + f;
              m = std::max(m, std::max(0.0, double(xv[static_cast<std::size_t>(at)]) +
                                                bv[static_cast<std::size_t>(f)]));
            }
          want.push_back(m);
        }
  Array got = flat(x, b);
  CHECK(got.shape() == Shape{n, hw / 2 * hw / 2 * c});
  check_close(got, want, 0, 0);
}

TEST_CASE("fused jit: softmax over rows is one kernel and matches the oracle", "[jit][fusion]") {
  auto softmax = jit(softmax_fn);
  for (auto [rows, cols] : kShapes) {
    INFO("f32[" << rows << "," << cols << "]");
    std::vector<float> xv = uniform(rows * cols, -8, 8, 1);
    Array x = np::array(xv, {rows, cols});
    auto compiled = softmax.lower(x).compile();
    INFO(compiled.thunk_sequence());
    // A single row has a test of its own below.
    if (rows > 1) CHECK(count_thunks(compiled.thunk_sequence()).kernels == 1);
    check_close(compiled(x), softmax_rows(xv, rows, cols));
    check_close(softmax(x), softmax_rows(xv, rows, cols));
  }
}

TEST_CASE("fused jit: the big softmax runs row-parallel when there are threads", "[jit][fusion]") {
  auto softmax = jit(softmax_fn);
  std::string big = softmax.lower(np::zeros({256, 512})).compile().thunk_sequence();
  std::string tiny = softmax.lower(np::zeros({3, 5})).compile().thunk_sequence();
  INFO(big);
  // With one core there is no pool to split over.
  CHECK((big.find(" rows=256 parallel") != std::string::npos) == (runtime::parallelism() > 1));
  CHECK(tiny.find(" parallel") == std::string::npos);
}

TEST_CASE("fused jit: layer norm over rows is one kernel and matches the oracle", "[jit][fusion]") {
  auto layer_norm = jit(layer_norm_fn);
  for (auto [rows, cols] : kShapes) {
    INFO("f32[" << rows << "," << cols << "]");
    std::vector<float> xv = uniform(rows * cols, -3, 5, 2), gv = uniform(cols, 0.5f, 2, 3),
                       bv = uniform(cols, -1, 1, 4);
    std::vector<double> want(xv.size());
    for (std::int64_t i = 0; i < rows; ++i) {
      double mean = 0, var = 0;
      for (std::int64_t j = 0; j < cols; ++j) mean += xv[static_cast<std::size_t>(i * cols + j)];
      mean /= static_cast<double>(cols);
      for (std::int64_t j = 0; j < cols; ++j) {
        double c = xv[static_cast<std::size_t>(i * cols + j)] - mean;
        var += c * c;
      }
      var /= static_cast<double>(cols);
      for (std::int64_t j = 0; j < cols; ++j) {
        auto k = static_cast<std::size_t>(i * cols + j);
        want[k] = (xv[k] - mean) / std::sqrt(var + kEps) * gv[static_cast<std::size_t>(j)] +
                  bv[static_cast<std::size_t>(j)];
      }
    }
    Array x = np::array(xv, {rows, cols}), g = np::array(gv, {cols}), b = np::array(bv, {cols});
    auto compiled = layer_norm.lower(x, g, b).compile();
    INFO(compiled.thunk_sequence());
    if (rows > 1) CHECK(count_thunks(compiled.thunk_sequence()).kernels == 1);
    check_close(compiled(x, g, b), want, 1e-4, 1e-5);
  }
}

TEST_CASE("fused jit: gelu (tanh form) is one kernel and matches the oracle", "[jit][fusion]") {
  const float c = 0.7978845608028654f;  // sqrt(2/π)
  auto gelu = jit([c](const Array& x) {
    return 0.5f * x * (1.0f + np::tanh(c * (x + 0.044715f * x * x * x)));
  });
  for (auto [rows, cols] : kShapes) {
    INFO("f32[" << rows << "," << cols << "]");
    std::vector<float> xv = uniform(rows * cols, -6, 6, 5);
    std::vector<double> want;
    for (float v : xv) {
      double x = v;
      want.push_back(0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))));
    }
    Array x = np::array(xv, {rows, cols});
    auto compiled = gelu.lower(x).compile();
    INFO(compiled.thunk_sequence());
    CHECK(count_thunks(compiled.thunk_sequence()).kernels == 1);
    check_close(compiled(x), want, 1e-5, 1e-6);
  }
}

TEST_CASE("fused jit: (exp(x), 2x) is one kernel with two outputs", "[jit][fusion]") {
  auto f = jit([](const Array& x) { return std::make_pair(np::exp(x), x * 2.0f); });
  for (auto [rows, cols] : kShapes) {
    INFO("f32[" << rows << "," << cols << "]");
    std::vector<float> xv = uniform(rows * cols, -10, 10, 6);
    std::vector<double> e, twice;
    for (float v : xv) e.push_back(std::exp(double(v))), twice.push_back(2.0 * v);
    Array x = np::array(xv, {rows, cols});
    auto compiled = f.lower(x).compile();
    INFO(compiled.thunk_sequence());
    CHECK(count_thunks(compiled.thunk_sequence()).kernels == 1);
    auto [ey, ty] = compiled(x);
    check_close(ey, e, 1e-6, 0);
    check_close(ty, twice, 0, 0);
  }
}

// A dense layer's epilogue, as the oracle computes it.
double apply_activation(const std::string& activation, double s) {
  if (activation == "relu") return std::max(s, 0.0);
  if (activation == "gelu")
    return 0.5 * s * (1 + std::tanh(0.7978845608028654 * (s + 0.044715 * s * s * s)));
  return s;
}

// activation(x @ W + bias) in double, for x [m, k] and W [k, n] (or stored [n, k]: `w_nk`); an
// empty bias adds none.
std::vector<double> dense_oracle(const std::vector<float>& x, const std::vector<float>& w,
                                 const std::vector<float>& bias, std::int64_t m, std::int64_t k,
                                 std::int64_t n, const std::string& activation, bool w_nk = false) {
  std::vector<double> want;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(j)];
      for (std::int64_t p = 0; p < k; ++p)
        s += double(x[static_cast<std::size_t>(i * k + p)]) *
             w[static_cast<std::size_t>(w_nk ? j * k + p : p * n + j)];
      want.push_back(apply_activation(activation, s));
    }
  return want;
}

TEST_CASE(
    "fused jit: activation(x @ W + b) is one kernel, applying bias and activation as it "
    "stores",
    "[jit][fusion]") {
  testing::ConfigGuard guard;
  struct Case {
    std::int64_t m, k, n;
    const char* activation;
    bool bias;
  };
  // m·n·k ≥ 4096: the blocked kernel. Partial tiles in both directions, several blocks of the
  // contraction (whose last alone applies the epilogue), a bias alone, relu and gelu; products
  // of few rows split by columns, rhs read in place (one and four rows) or packed (twenty).
  const Case cases[] = {{64, 128, 32, "relu", true},  {37, 300, 45, "relu", true},
                        {50, 600, 70, "gelu", true},  {33, 100, 17, "none", true},
                        {130, 70, 50, "gelu", false}, {20, 520, 300, "relu", false},
                        {1, 300, 1000, "gelu", true}, {4, 200, 777, "relu", true}};
  for (const char* isa : {"avx2", "native"})
    for (const Case& c : cases) {
      INFO("--cpu_isa=" << isa << ", [" << c.m << "," << c.k << "] @ [" << c.k << "," << c.n
                        << "], " << c.activation << (c.bias ? " with bias" : ""));
      config().cpu_isa = isa;
      std::string activation = c.activation;
      auto dense =
          jit([activation, with_bias = c.bias](const Array& x, const Array& w, const Array& b) {
            Array s = np::matmul(x, w);
            if (with_bias) s = s + b;
            if (activation == "relu") return nn::relu(s);
            if (activation == "gelu") return nn::gelu(s);
            return s;
          });
      std::vector<float> xv = uniform(c.m * c.k, -1, 1, 7), wv = uniform(c.k * c.n, -1, 1, 8),
                         bv = uniform(c.n, -0.5f, 0.5f, 9);
      std::vector<double> want =
          dense_oracle(xv, wv, c.bias ? bv : std::vector<float>{}, c.m, c.k, c.n, activation);
      Array x = np::array(xv, {c.m, c.k}), w = np::array(wv, {c.k, c.n}), b = np::array(bv, {c.n});
      auto compiled = dense.lower(x, w, b).compile();
      std::string thunks = compiled.thunk_sequence();
      INFO(thunks);
      ThunkCounts counts = count_thunks(thunks);
      CHECK(counts.products + counts.kernels == 1);
      CHECK(thunks.find("fusion") != std::string::npos);
      Array y = compiled(x, w, b);
      check_close(y, want, 1e-5, 1e-5);
      // Some outputs are clamped and some are not, or relu would go untested.
      std::vector<float> yv = y.to_vector<float>();
      if (activation == "relu") {
        CHECK(std::count(yv.begin(), yv.end(), 0.0f) > 0);
        CHECK(std::count_if(yv.begin(), yv.end(), [](float v) { return v > 0; }) > 0);
      }
    }
}

using V = std::vector<Array>;

// Two dense layers reading one input (as a model's projections do) stay two matrix kernels: a
// dot fused with its epilogue is no loop kernel to join with a sibling (a joined one computed
// each output as a loop of its own, 136x slower at n = 512).
TEST_CASE("fused jit: dense layers sharing their input stay matrix kernels", "[jit][fusion]") {
  const std::int64_t n = 64, k = 96;
  std::vector<float> xv = uniform(n * k, -1, 1, 51), av = uniform(k * n, -1, 1, 52),
                     bv = uniform(k * n, -1, 1, 53), cv = uniform(n, -0.5f, 0.5f, 54);
  Array x = np::array(xv, {n, k}), a = np::array(av, {k, n}), b = np::array(bv, {k, n}),
        c = np::array(cv, {n});
  auto layers = jit([](const V& v) {
    return V{nn::relu(np::matmul(v[0], v[1]) + v[3]), nn::relu(np::matmul(v[0], v[2]) + v[3])};
  });
  auto compiled = layers.lower(V{x, a, b, c}).compile();
  INFO(compiled.thunk_sequence());
  CHECK(count_thunks(compiled.thunk_sequence()).kernels == 2);
  V out = compiled(V{x, a, b, c});
  for (int layer = 0; layer < 2; ++layer) {
    check_close(out[static_cast<std::size_t>(layer)],
                dense_oracle(xv, layer ? bv : av, cv, n, k, n, "relu"), 1e-5, 1e-5);
  }
}

// A bf16 layer: its f32 product of bf16 operands rounds to bf16, adds the bias and applies relu
// in f32, and rounds again as it stores. Where AMX's tile unit computes the product (native on a
// CPU with AMX-BF16), all of it is one kernel, bit for bit the product alone followed by those
// steps (the oracle takes the product from jx, computed the same way, and does the rest); the
// vector kernel (avx512, avx2) keeps the epilogue a kernel of its own, with the same values.
TEST_CASE("fused jit: a bf16 layer rounds its product, then adds its bias and applies relu",
          "[jit][fusion]") {
  testing::ConfigGuard guard;
  auto one_kernel = [](const std::string& thunks) {
    ThunkCounts c = count_thunks(thunks);
    return c.kernels + c.products == 1;
  };
  // Edge tiles every way, an odd panel of columns; few rows, whose sums the tile unit carries
  // between blocks of steps.
  for (auto [m, k, n] :
       {std::tuple<std::int64_t, std::int64_t, std::int64_t>{70, 90, 45}, {6, 801, 1000}}) {
    INFO(m << " x " << k << " x " << n);
    Array x = np::array(uniform(m * k, -1, 1, 41), {m, k}).astype(bfloat16);
    Array w = np::array(uniform(k * n, -1, 1, 42), {k, n}).astype(bfloat16);
    Array b = np::array(uniform(n, -0.5f, 0.5f, 43), {n}).astype(bfloat16);
    std::vector<float> bias = b.astype(float32).to_vector<float>();
    auto layer = jit([](const Array& x, const Array& w, const Array& b) {
      return nn::relu(np::matmul(x, w) + b);
    });
    auto product = jit([](const Array& x, const Array& w) {
      return lax::dot_general(x, w, {{1}, {0}, {}, {}}, float32);
    });
    for (const char* isa : {"avx2", "avx512", "native"}) {
      INFO("--cpu_isa=" << isa);
      config().cpu_isa = isa;
      auto compiled = layer.lower(x, w, b).compile();
      std::string thunks = compiled.thunk_sequence();
      INFO(thunks);
      bool tiles = codegen::cpu::configured_cpu_isa().amx_bf16;
      CHECK(one_kernel(thunks) == tiles);
      std::vector<float> sums = product(x, w).to_vector<float>();
      std::vector<BFloat16> got = compiled(x, w, b).to_vector<BFloat16>();
      std::size_t clamped = 0;
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
          auto at = static_cast<std::size_t>(i * n + j);
          float rounded = static_cast<float>(BFloat16(sums[at]));
          float want = std::max(rounded + bias[static_cast<std::size_t>(j)], 0.0f);
          clamped += want == 0;
          INFO("out[" << i << ", " << j << "]");
          REQUIRE(got[at].bits == BFloat16(want).bits);
        }
      CHECK(clamped > 0);
      CHECK(clamped < got.size());

      // The product alone, rounded to bf16: one kernel on the tile unit too, bit for bit.
      auto matmul = jit([](const Array& x, const Array& w) { return np::matmul(x, w); });
      auto matmul_compiled = matmul.lower(x, w).compile();
      INFO(matmul_compiled.thunk_sequence());
      CHECK(one_kernel(matmul_compiled.thunk_sequence()) == tiles);
      std::vector<BFloat16> rounded = matmul_compiled(x, w).to_vector<BFloat16>();
      for (std::size_t i = 0; i < sums.size(); ++i) {
        INFO("out " << i);
        REQUIRE(rounded[i].bits == BFloat16(sums[i]).bits);
      }

      // The f32 product of the same operands, an f32 bias and gelu: one kernel on the tile unit
      // too, in f32 throughout (gelu's fast tanh against the oracle's).
      Array b32 = b.astype(float32);
      auto wide = jit([](const Array& x, const Array& w, const Array& b) {
        return nn::gelu(lax::dot_general(x, w, {{1}, {0}, {}, {}}, float32) + b);
      });
      auto wide_compiled = wide.lower(x, w, b32).compile();
      INFO(wide_compiled.thunk_sequence());
      CHECK(one_kernel(wide_compiled.thunk_sequence()) == tiles);
      std::vector<double> want(sums.size());
      for (std::size_t i = 0; i < sums.size(); ++i)
        want[i] = apply_activation("gelu", double(sums[i]) + bias[i % static_cast<std::size_t>(n)]);
      check_close(wide_compiled(x, w, b32), want, 1e-5, 1e-6);
    }
  }
}

TEST_CASE(
    "fused jit: products up to 2^28 multiply-adds are kernels, larger ones too where the kernel "
    "beats BLAS at any size (f32 with AVX2, full-width AVX-512), else BLAS calls",
    "[jit][fusion]") {
  // lhs = u·v^T + s·t^T, so each product's oracle costs O(k·n): out = u·(v^T rhs) + s·(t^T rhs).
  const std::int64_t m = 1024, k = 1024;
  std::vector<float> u = uniform(m, -1, 1, 21), v = uniform(k, -1, 1, 22),
                     s = uniform(m, -1, 1, 23), t = uniform(k, -1, 1, 24);
  std::vector<float> lhs(static_cast<std::size_t>(m * k));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t p = 0; p < k; ++p)
      lhs[static_cast<std::size_t>(i * k + p)] =
          u[static_cast<std::size_t>(i)] * v[static_cast<std::size_t>(p)] +
          s[static_cast<std::size_t>(i)] * t[static_cast<std::size_t>(p)];
  Array a = np::array(lhs, {m, k});
  for (auto [isa, n, rhs_transposed, large, dtype] :
       {std::tuple{"avx2", std::int64_t{512}, false, true, float32},
        std::tuple{"avx2", std::int64_t{512}, true, true, float32},
        std::tuple{"avx2", std::int64_t{256}, true, false, float32},
        std::tuple{"avx2", std::int64_t{512}, false, true, float64},
        std::tuple{"avx2", std::int64_t{512}, true, true, float64},
        std::tuple{"native", std::int64_t{512}, true, true, float32}}) {
    INFO("--cpu_isa=" << isa << ", " << dtype_name(dtype) << ", n = " << n
                      << (rhs_transposed ? ", rhs stored [n, k]" : ""));
    testing::ConfigGuard guard;
    config().cpu_isa = isa;
    bool blas =
        large && !codegen::cpu::kernel_at_any_size(codegen::cpu::configured_cpu_isa(), dtype);
    std::vector<float> rhs = uniform(k * n, -1, 1, 25);
    auto at = [&](std::int64_t p, std::int64_t j) {
      return double(rhs[static_cast<std::size_t>(rhs_transposed ? j * k + p : p * n + j)]);
    };
    std::vector<double> vb(static_cast<std::size_t>(n)), tb(static_cast<std::size_t>(n));
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t p = 0; p < k; ++p) {
        vb[static_cast<std::size_t>(j)] += v[static_cast<std::size_t>(p)] * at(p, j);
        tb[static_cast<std::size_t>(j)] += t[static_cast<std::size_t>(p)] * at(p, j);
      }
    std::vector<double> want;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        want.push_back(u[static_cast<std::size_t>(i)] * vb[static_cast<std::size_t>(j)] +
                       s[static_cast<std::size_t>(i)] * tb[static_cast<std::size_t>(j)]);
    Array x = a.astype(dtype);
    Array b = (rhs_transposed ? np::array(rhs, {n, k}) : np::array(rhs, {k, n})).astype(dtype);
    auto product = jit([rhs_transposed](const Array& x, const Array& y) {
      return lax::dot_general(x, y, {{1}, {rhs_transposed ? 1 : 0}, {}, {}});
    });
    auto compiled = product.lower(x, b).compile();
    std::string thunks = compiled.thunk_sequence();
    INFO(thunks);
    CHECK((thunks.rfind("gemm ", 0) == 0) == blas);
    CHECK((thunks.find("rhs^T") != std::string::npos) == (blas && rhs_transposed));
    check_close(compiled(x, b), want, 1e-4, 1e-4);
  }
}

TEST_CASE("fused jit: nn::relu's zeros are an immediate, not an array its kernel reads",
          "[jit][fusion]") {
  // where(x <= 0, 0, x) stages the broadcast of the literal 0: the kernel's one input is x.
  auto relu = jit([](const Array& x) { return nn::relu(x * 2.0f); });
  std::vector<float> xv = uniform(48 * 40, -1, 1, 11);
  Array x = np::array(xv, {48, 40});
  auto compiled = relu.lower(x).compile();
  ThunkCounts counts = count_thunks(compiled.thunk_sequence());
  REQUIRE(counts.kernels == 1);
  INFO(counts.kernel_lines.front());
  CHECK(kernel_buffers(counts.kernel_lines.front()) == std::vector<std::string>{"param0", "out0"});
  std::vector<double> want;
  for (float v : xv) want.push_back(std::max(2.0 * v, 0.0));
  check_close(compiled(x), want, 0, 0);
}

TEST_CASE("fused jit: x / sum(x, axis 0) keeps the column sum a kernel of its own",
          "[jit][fusion]") {
  auto normalize = jit([](const Array& x) { return x / np::sum(x, 0, true); });
  for (auto [rows, cols] : kShapes) {
    INFO("f32[" << rows << "," << cols << "]");
    std::vector<float> xv = uniform(rows * cols, 0.5f, 2, 10);
    std::vector<double> colsum(static_cast<std::size_t>(cols), 0.0), want(xv.size());
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        colsum[static_cast<std::size_t>(j)] += xv[static_cast<std::size_t>(i * cols + j)];
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        auto k = static_cast<std::size_t>(i * cols + j);
        want[k] = xv[k] / colsum[static_cast<std::size_t>(j)];
      }
    Array x = np::array(xv, {rows, cols});
    auto compiled = normalize.lower(x).compile();
    INFO(compiled.thunk_sequence());
    // Fusing the column sum into the divide would recompute it per row; with one row the
    // simplifier may fold the reduce away, so only an upper bound holds there.
    int kernels = count_thunks(compiled.thunk_sequence()).kernels;
    CHECK((rows > 1 ? kernels == 2 : kernels <= 2));
    check_close(compiled(x), want, 1e-5, 1e-7);
  }
}

TEST_CASE("fused jit: bias gradients (column sums of a relu mask) match loops, on every thread",
          "[jit][fusion]") {
  // The backward pass's sum over the batch of where(h > 0, g, 0), for two layers at once (a
  // multi-output kernel of two shapes) and alone at sizes that split the columns over threads.
  auto grads = jit([](const Array& h1, const Array& g1, const Array& h2, const Array& g2) {
    return std::tuple{np::sum(np::where(h1 > 0.0f, g1, 0.0f), 0),
                      np::sum(np::where(h2 > 0.0f, g2, 0.0f), 0)};
  });
  auto masked_column_sums = [](const std::vector<float>& h, const std::vector<float>& g,
                               std::int64_t rows, std::int64_t cols) {
    std::vector<double> out(static_cast<std::size_t>(cols), 0.0);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        auto k = static_cast<std::size_t>(i * cols + j);
        if (h[k] > 0) out[static_cast<std::size_t>(j)] += g[k];
      }
    return out;
  };
  for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{128, 512}, {300, 2048}, {3, 5}}) {
    INFO("f32[" << rows << "," << cols << "] and f32[" << rows << ",10]");
    std::vector<float> h1 = uniform(rows * cols, -1, 1, 21), g1 = uniform(rows * cols, -1, 1, 22),
                       h2 = uniform(rows * 10, -1, 1, 23), g2 = uniform(rows * 10, -1, 1, 24);
    auto compiled = grads
                        .lower(np::array(h1, {rows, cols}), np::array(g1, {rows, cols}),
                               np::array(h2, {rows, 10}), np::array(g2, {rows, 10}))
                        .compile();
    INFO(compiled.thunk_sequence());
    auto [s1, s2] = compiled(np::array(h1, {rows, cols}), np::array(g1, {rows, cols}),
                             np::array(h2, {rows, 10}), np::array(g2, {rows, 10}));
    check_close(s1, masked_column_sums(h1, g1, rows, cols), 1e-5, 1e-5);
    check_close(s2, masked_column_sums(h2, g2, rows, 10), 1e-5, 1e-5);
  }
  // One column sum big enough to split: its thunk runs the columns in parallel.
  auto one =
      jit([](const Array& h, const Array& g) { return np::sum(np::where(h > 0.0f, g, 0.0f), 0); });
  std::vector<float> h = uniform(300 * 2048, -1, 1, 25), g = uniform(300 * 2048, -1, 1, 26);
  auto compiled = one.lower(np::array(h, {300, 2048}), np::array(g, {300, 2048})).compile();
  INFO(compiled.thunk_sequence());
  CHECK((compiled.thunk_sequence().find(" rows=2048 parallel") != std::string::npos) ==
        (runtime::parallelism() > 1));
  check_close(compiled(np::array(h, {300, 2048}), np::array(g, {300, 2048})),
              masked_column_sums(h, g, 300, 2048), 1e-5, 1e-5);
}

TEST_CASE("fused jit: a convolution's bias gradient sums an entry of the batch per part",
          "[jit][fusion]") {
  // where(h > 0, g, 0) summed over all but the channels of f32[32, 32, 32, 8]: 32-byte rows, so
  // the sum splits into one part per image (a kernel over the 32 images) and the parts' sum.
  const std::int64_t n = 32, hw = 32, c = 8;
  auto grad = jit([](const Array& h, const Array& g) {
    return np::sum(np::where(h > 0.0f, g, 0.0f), std::vector<int>{0, 1, 2});
  });
  std::vector<float> h = uniform(n * hw * hw * c, -1, 1, 41),
                     g = uniform(n * hw * hw * c, -1, 1, 42);
  Array ha = np::array(h, {n, hw, hw, c}), ga = np::array(g, {n, hw, hw, c});
  auto compiled = grad.lower(ha, ga).compile();
  std::string thunks = compiled.thunk_sequence();
  INFO(thunks);
  ThunkCounts counts = count_thunks(thunks);
  REQUIRE(counts.kernels == 2);
  CHECK((counts.kernel_lines[0].find(" rows=32 parallel") != std::string::npos) ==
        (runtime::parallelism() > 1));
  std::vector<double> want(static_cast<std::size_t>(c), 0.0);
  for (std::size_t k = 0; k < h.size(); ++k)
    if (h[k] > 0) want[k % static_cast<std::size_t>(c)] += g[k];
  check_close(compiled(ha, ga), want, 1e-5, 1e-5);
}

TEST_CASE("fused jit: a batch of one splits its rows over the threads", "[jit][fusion]") {
  // f32[1, 512, 256]: the kernel's rows are the 512 after the size-1 batch dim, for an
  // elementwise kernel, a softmax over the last dim and a cumulative sum along it.
  auto f = jit([](const Array& x) { return np::tanh(x) * 2.0f + 1.0f; });
  auto softmax = jit([](const Array& x) { return nn::softmax(x, -1); });
  std::vector<float> xv = uniform(512 * 256, -2, 2, 51);
  Array x = np::array(xv, {1, 512, 256});
  auto split = [](const std::string& thunks) {
    INFO(thunks);
    CHECK((thunks.find(" rows=512 parallel") != std::string::npos) == (runtime::parallelism() > 1));
  };
  auto compiled = f.lower(x).compile();
  split(compiled.thunk_sequence());
  std::vector<double> want;
  for (float v : xv) want.push_back(std::tanh(static_cast<double>(v)) * 2.0 + 1.0);
  check_close(compiled(x), want, 1e-5, 1e-5);
  auto rows = softmax.lower(x).compile();
  split(rows.thunk_sequence());
  check_close(rows(x), softmax_rows(xv, 512, 256));
  // A scan along the last dim: its rows are the dims before it.
  auto scanned = jit([](const Array& a) { return np::cumsum(a, -1); }).lower(x).compile();
  split(scanned.thunk_sequence());
  std::vector<double> sums;
  for (std::size_t i = 0; i < xv.size(); ++i) sums.push_back((i % 256 ? sums.back() : 0.0) + xv[i]);
  check_close(scanned(x), sums, 1e-5, 1e-4);
}

TEST_CASE("fused jit: relu(x @ W.T + b) reads W as it lies, in one kernel", "[jit][fusion]") {
  // W stored [n, k], as a framework's linear layers keep it: one kernel, its rhs read
  // transposed, against loops; for one row (dot products along W's rows), four and many.
  const std::int64_t k = 300, n = 200;
  auto linear = jit([](const Array& x, const Array& w, const Array& b) {
    return nn::relu(np::matmul(x, np::transpose(w)) + b);
  });
  std::vector<float> wv = uniform(n * k, -1, 1, 61), bv = uniform(n, -0.5f, 0.5f, 63);
  for (std::int64_t m : {1, 4, 70}) {
    INFO("m = " << m);
    std::vector<float> xv = uniform(m * k, -1, 1, 62);
    Array x = np::array(xv, {m, k}), w = np::array(wv, {n, k}), b = np::array(bv, {n});
    auto compiled = linear.lower(x, w, b).compile();
    std::string thunks = compiled.thunk_sequence();
    INFO(thunks);
    ThunkCounts counts = count_thunks(thunks);
    CHECK(counts.kernels + counts.products == 1);
    CHECK(thunks.find("transpose") == std::string::npos);
    check_close(compiled(x, w, b), dense_oracle(xv, wv, bv, m, k, n, "relu", /*w_nk=*/true), 1e-5,
                1e-5);
  }
}

TEST_CASE("fused jit: a batch of a few splits its rows over dims past the first", "[jit][fusion]") {
  // f32[2, 3, 11, 512]: a softmax's and a layer norm's rows take in dims 0 to 2 (66 rows), each
  // thread's range crossing dims 0 and 1 within a row of dim 2.
  const Shape shape{2, 3, 11, 512};
  const std::int64_t rows = 66, cols = 512;
  auto softmax = jit([](const Array& x) { return nn::softmax(x, -1); });
  auto layer_norm = jit([](const Array& x) {
    Array centered = x - np::mean(x, -1, true);
    return centered / np::sqrt(np::mean(centered * centered, -1, true) + kEps);
  });
  std::vector<float> xv = uniform(rows * cols, -3, 5, 52);
  Array x = np::array(xv, shape);
  std::vector<double> normalized(xv.size());
  for (std::int64_t i = 0; i < rows; ++i) {
    double mean = 0, var = 0;
    for (std::int64_t j = 0; j < cols; ++j) mean += xv[static_cast<std::size_t>(i * cols + j)];
    mean /= static_cast<double>(cols);
    for (std::int64_t j = 0; j < cols; ++j)
      var += std::pow(xv[static_cast<std::size_t>(i * cols + j)] - mean, 2);
    var /= static_cast<double>(cols);
    for (std::int64_t j = 0; j < cols; ++j) {
      auto k = static_cast<std::size_t>(i * cols + j);
      normalized[k] = (xv[k] - mean) / std::sqrt(var + kEps);
    }
  }
  auto check = [&](auto compiled, const std::vector<double>& want) {
    std::string thunks = compiled.thunk_sequence();
    INFO(thunks);
    CHECK(count_thunks(thunks).kernels == 1);
    CHECK((thunks.find(" rows=66 parallel") != std::string::npos) == (runtime::parallelism() > 1));
    check_close(compiled(x), want, 1e-4, 1e-5);
  };
  check(softmax.lower(x).compile(), softmax_rows(xv, rows, cols));
  check(layer_norm.lower(x).compile(), normalized);
}

// (chain(x @ w1)) @ w2 for n × n matrices, in double.
std::vector<double> between_matmuls(const std::vector<float>& x, const std::vector<float>& w1,
                                    const std::vector<float>& w2, std::int64_t n,
                                    double (*chain)(double)) {
  auto at = [n](std::int64_t i, std::int64_t j) { return static_cast<std::size_t>(i * n + j); };
  std::vector<double> t(x.size()), out(x.size());
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double h = 0;
      for (std::int64_t p = 0; p < n; ++p) h += double(x[at(i, p)]) * w1[at(p, j)];
      t[at(i, j)] = chain(h);
    }
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t p = 0; p < n; ++p) s += t[at(i, p)] * w2[at(p, j)];
      out[at(i, j)] = s;
    }
  return out;
}

// The long chain: h dies in its kernel, which may write the result over h.
Array long_chain(const Array& x, const Array& w1, const Array& w2) {
  Array h = np::matmul(x, w1);
  return np::matmul(np::tanh(h) * 0.5f + h * h * 0.25f - np::sin(h) + 1.0f, w2);
}
double long_chain_oracle(double h) { return std::tanh(h) * 0.5 + h * h * 0.25 - std::sin(h) + 1; }

// Whether the only kernel of `thunks` writes its result over its one operand, a temporary.
void check_single_kernel_in_place(const std::string& thunks) {
  INFO(thunks);
  ThunkCounts counts = count_thunks(thunks);
  REQUIRE(counts.kernels == 1);
  std::vector<std::string> buffers = kernel_buffers(counts.kernel_lines[0]);
  REQUIRE(buffers.size() == 2);
  CHECK(buffers[0].rfind("temp[", 0) == 0);
  CHECK(buffers[1] == buffers[0]);
}

const std::int64_t kN = 64;  // 64³ multiply-adds: both matmuls are matrix kernels

TEST_CASE("fused jit: a long elementwise chain between two matmuls runs in place",
          "[jit][fusion]") {
  std::vector<float> xv = uniform(kN * kN, -1, 1, 11), w1 = uniform(kN * kN, -0.2f, 0.2f, 12),
                     w2 = uniform(kN * kN, -0.2f, 0.2f, 13);
  std::vector<double> want = between_matmuls(xv, w1, w2, kN, long_chain_oracle);
  Array x = np::array(xv, {kN, kN}), a = np::array(w1, {kN, kN}), b = np::array(w2, {kN, kN});
  auto compiled = jit(long_chain).lower(x, a, b).compile();
  CHECK(count_thunks(compiled.thunk_sequence()).products == 2);
  check_single_kernel_in_place(compiled.thunk_sequence());
  check_close(compiled(x, a, b), want, 1e-4, 1e-5);
  check_close(compiled(x, a, b), want, 1e-4, 1e-5);  // the temporaries are reused across runs
}

TEST_CASE("fused jit: one elementwise op between two matmuls runs in place", "[jit][fusion]") {
  auto f = jit([](const Array& x, const Array& w1, const Array& w2) {
    return np::matmul(np::tanh(np::matmul(x, w1)), w2);
  });
  std::vector<float> xv = uniform(kN * kN, -1, 1, 17), w1 = uniform(kN * kN, -0.5f, 0.5f, 18),
                     w2 = uniform(kN * kN, -0.5f, 0.5f, 19);
  std::vector<double> want = between_matmuls(xv, w1, w2, kN, [](double h) { return std::tanh(h); });
  Array x = np::array(xv, {kN, kN}), a = np::array(w1, {kN, kN}), b = np::array(w2, {kN, kN});
  auto compiled = f.lower(x, a, b).compile();
  check_single_kernel_in_place(compiled.thunk_sequence());
  check_close(compiled(x, a, b), want, 1e-4, 1e-5);
}

TEST_CASE("fused jit: softmax and layer norm of a single row are one kernel", "[jit][fusion]") {
  Array x = np::array(uniform(4096, -8, 8, 20), {1, 4096});
  Array g = np::ones({4096}), b = np::zeros({4096});
  std::string softmax = jit(softmax_fn).lower(x).compile().thunk_sequence();
  std::string layer_norm = jit(layer_norm_fn).lower(x, g, b).compile().thunk_sequence();
  INFO(softmax);
  INFO(layer_norm);
  CHECK(count_thunks(softmax).kernels == 1);
  CHECK(count_thunks(layer_norm).kernels == 1);
}

TEST_CASE("fused jit: 0-d outputs (a full reduction, and a scalar function)", "[jit][fusion]") {
  auto total = jit([](const Array& x) { return np::sum(np::exp(x) * x) / 2.0f; });
  for (auto [rows, cols] : kShapes) {
    INFO("f32[" << rows << "," << cols << "]");
    std::vector<float> xv = uniform(rows * cols, -1, 1, 14);
    double want = 0;
    for (float v : xv) want += std::exp(double(v)) * v;
    Array y = total(np::array(xv, {rows, cols}));
    CHECK(y.shape() == Shape{});
    check_close(y, {want / 2}, 1e-4, 1e-4);
  }
  auto scalar = jit([](const Array& x) { return np::tanh(x) * 3.0f + 1.0f; });
  auto compiled = scalar.lower(np::array(0.25f)).compile();
  CHECK(count_thunks(compiled.thunk_sequence()).kernels == 1);
  check_close(compiled(np::array(0.25f)), {std::tanh(0.25) * 3 + 1});
}

TEST_CASE("fused jit: a multi-output fusion writing one output in place keeps the other right",
          "[jit][fusion]") {
  // a = exp(2·(x @ w)) feeds a matmul and log(a) + 1; multi-output fusion puts both
  // elementwise parts in one kernel, which reads the dying x @ w.
  auto f = jit([](const Array& x, const Array& w) {
    Array a = np::exp(np::matmul(x, w) * 2.0f);
    return std::make_pair(np::matmul(a, w), np::log(a) + 1.0f);
  });
  const std::int64_t n = 64;
  std::vector<float> xv = uniform(n * n, -0.1f, 0.1f, 15), wv = uniform(n * n, -0.1f, 0.1f, 16);
  auto at = [n](std::int64_t i, std::int64_t j) { return static_cast<std::size_t>(i * n + j); };
  std::vector<double> a(xv.size()), first(xv.size()), second(xv.size());
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double d = 0;
      for (std::int64_t p = 0; p < n; ++p) d += double(xv[at(i, p)]) * wv[at(p, j)];
      a[at(i, j)] = std::exp(2 * d);
      second[at(i, j)] = 2 * d + 1;  // log(exp(2d)) + 1
    }
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t p = 0; p < n; ++p) s += a[at(i, p)] * wv[at(p, j)];
      first[at(i, j)] = s;
    }
  Array x = np::array(xv, {n, n}), w = np::array(wv, {n, n});
  auto compiled = f.lower(x, w).compile();
  INFO(compiled.hlo_text());
  INFO(compiled.thunk_sequence());
  auto [y0, y1] = compiled(x, w);
  check_close(y0, first, 1e-4, 1e-5);
  check_close(y1, second, 1e-4, 1e-5);
}

TEST_CASE("fused jit: a value copied into every reader, whose reader is copied too, roots nothing",
          "[jit][fusion]") {
  // value_and_grad of sum(relu(w)): w's readers are all duplicated into their consumers, and
  // one of them only through a reader that was itself duplicated away.
  auto f = jit(value_and_grad([](const Array& w) { return np::sum(np::maximum(w, 0.0f)); }));
  Array w = np::array({-1.5f, 0.0f, 2.0f, 3.0f});
  auto [value, g] = f(w);
  CHECK(value.item<float>() == 5.0f);
  // JAX's convention at the tie w = 0: half the gradient.
  CHECK(g.to_vector<float>() == std::vector<float>{0.0f, 0.5f, 1.0f, 1.0f});
}

TEST_CASE("fused jit: y + sum(y * y) over rows, y = exp(x), adds y itself", "[jit][fusion]") {
  // Both y and y * y are math values a row sum reads; the output's row can hold only one of
  // them between the sum and the output's loop, and the output reads y.
  auto f = [](const Array& x) {
    Array y = np::exp(x);
    return y + np::sum(y * y, 1, /*keepdims=*/true);
  };
  const std::int64_t rows = 3, cols = 37;
  std::vector<float> xv = uniform(rows * cols, -2, 2, 11);
  std::vector<double> want(xv.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(2.0 * xv[r * cols + c]);
    for (std::int64_t c = 0; c < cols; ++c) want[r * cols + c] = std::exp(xv[r * cols + c]) + sum;
  }
  check_close(jit(f)(np::array(xv, {rows, cols})), want);
}

TEST_CASE(
    "fused jit: a deep chain whose every value is read twice, then row-reduced, is one kernel",
    "[jit][fusion]") {
  // y <- sin(y) / 2 + tanh(y) / 4, forty times, then y + sum(y * y) over each row. Each value
  // has two readers, so the paths from x to the root double with every step: compiling must
  // look at each value once, not at each path.
  constexpr int kSteps = 40;
  auto f = [](const Array& x) {
    Array y = x;
    for (int k = 0; k < kSteps; ++k) y = np::sin(y) * 0.5f + np::tanh(y) * 0.25f;
    return y + np::sum(y * y, 1, /*keepdims=*/true);
  };
  const std::int64_t rows = 4, cols = 40;
  std::vector<float> xv = uniform(rows * cols, -3, 3, 7);
  auto compiled = jit(f).lower(np::array(xv, {rows, cols})).compile();
  INFO(compiled.thunk_sequence());
  CHECK(count_thunks(compiled.thunk_sequence()).kernels == 1);
  std::vector<double> want(xv.begin(), xv.end());
  for (double& y : want)
    for (int k = 0; k < kSteps; ++k) y = std::sin(y) * 0.5 + std::tanh(y) * 0.25;
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::int64_t c = 0; c < cols; ++c) sum += want[r * cols + c] * want[r * cols + c];
    for (std::int64_t c = 0; c < cols; ++c) want[r * cols + c] += sum;
  }
  check_close(compiled(np::array(xv, {rows, cols})), want, 1e-5, 1e-6);
}

// A matrix kernel splits its rows over the cores as a streaming kernel of a byte per 4
// multiply-adds would (--cpu_parallel_min_bytes, 128 KiB): small products run whole, where the
// split's own costs exceeded its gain (docs/performance.md).
TEST_CASE("fused jit: a matrix product splits over the cores from 2^19 multiply-adds",
          "[jit][fusion]") {
  auto product = jit([](const Array& a, const Array& b) { return np::matmul(a, b); });
  auto splits = [&](std::int64_t m, std::int64_t k, std::int64_t n) {
    std::string thunks =
        product.lower(np::ones({m, k}), np::ones({k, n})).compile().thunk_sequence();
    INFO(thunks);
    return thunks.find("parallel") != std::string::npos;
  };
  const bool cores = codegen::cpu::host_cores() > 1;
  CHECK_FALSE(splits(64, 64, 64));      // 2^18 multiply-adds, 48 KiB of buffers
  CHECK_FALSE(splits(80, 80, 80));      // 512,000: 125 KiB
  CHECK(splits(256, 32, 64) == cores);  // 2^19
  CHECK(splits(128, 128, 128) == cores);
}

}  // namespace
}  // namespace jx
