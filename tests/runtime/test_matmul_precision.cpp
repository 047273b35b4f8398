// Matmul precision as JAX names it: --default_matmul_precision and a per-call precision on
// lax::dot_general and np::matmul, printed in the jaxpr as JAX prints it (and read back), kept
// by grad and vmap,
// lowered to HLO's operand_precision, and reaching the GPU's GEMM as cuBLAS's compute type
// (TF32 below highest), while the CPU computes every precision in full.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>

#include <jx/jx.hpp>

#include "api/compile.hpp"
#include "jaxpr/jaxpr.hpp"
#include "support/config_guard.hpp"
#include "support/error_of.hpp"
#include "support/fake_cuda.hpp"

namespace jx::testing {
namespace {

using lax::Precision;
using runtime::cuda::cublasComputeType_t;

const lax::DotDimensionNumbers kMatmul{{1}, {0}, {}, {}};

std::string jaxpr_of(const std::function<Array(const Array&, const Array&)>& f) {
  std::ostringstream os;
  os << make_jaxpr(f)(np::ones({2, 3}), np::ones({3, 4}));
  return os.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("matmul precision: the flag takes default high or highest", "[precision]") {
  Config c;
  CHECK(c.default_matmul_precision.empty());  // JAX's None
  parse_flags("--default_matmul_precision=highest", c);
  CHECK(c.default_matmul_precision == "highest");
  parse_flags("--default_matmul_precision=default", c);
  CHECK(c.default_matmul_precision == "default");
  CHECK(error_of<Error>([&] { parse_flags("--default_matmul_precision=float32", c); }) ==
        "Bad value for --default_matmul_precision in JX_FLAGS: 'float32' (expected default, high "
        "or highest)");
  CHECK(c.default_matmul_precision == "default");  // a bad flag changes nothing
}

TEST_CASE("matmul precision: the jaxpr shows it as JAX does", "[precision]") {
  ConfigGuard guard;
  auto plain = [](const Array& a, const Array& b) { return lax::dot_general(a, b, kMatmul); };
  CHECK(jaxpr_of(plain) ==
        "{ lambda ; a:f32[2,3] b:f32[3,4]. let\n"
        "    c:f32[2,4] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b\n"
        "  in (c,) }");
  auto highest = [](const Array& a, const Array& b) {
    return lax::dot_general(a, b, kMatmul, std::nullopt, Precision::kHighest);
  };
  CHECK(jaxpr_of(highest) ==
        "{ lambda ; a:f32[2,3] b:f32[3,4]. let\n"
        "    c:f32[2,4] = dot_general[\n"
        "      dimension_numbers=(([1], [0]), ([], []))\n"
        "      precision=(Precision.HIGHEST, Precision.HIGHEST)\n"
        "    ] a b\n"
        "  in (c,) }");
  const std::string text = jaxpr_of(highest);  // reads back
  CHECK(to_string(read_jaxpr(text)) == text);
  auto matmul_high = [](const Array& a, const Array& b) {
    return np::matmul(a, b, Precision::kHigh);
  };
  CHECK(count(jaxpr_of(matmul_high), "precision=(Precision.HIGH, Precision.HIGH)") == 1);
  // The flag is read when a dot is traced, as jax_default_matmul_precision.
  config().default_matmul_precision = "default";
  CHECK(count(jaxpr_of(plain), "precision=(Precision.DEFAULT, Precision.DEFAULT)") == 1);
  CHECK(count(jaxpr_of(highest), "precision=(Precision.HIGHEST, Precision.HIGHEST)") == 1);
  config().default_matmul_precision = "fast";
  CHECK(error_of<ValueError>([&] { jaxpr_of(plain); }) ==
        "default_matmul_precision must be one of default, high or highest, got 'fast'");
}

TEST_CASE("matmul precision: a pair of different precisions is an error", "[precision]") {
  // jx takes one precision for both operands; JAX's pair form reaches it only as text.
  auto jaxpr = std::make_shared<const ClosedJaxprData>(
      ClosedJaxprData{read_jaxpr("{ lambda ; a:f32[2,3] b:f32[3,4]. let\n"
                                  "    c:f32[2,4] = dot_general[\n"
                                  "      dimension_numbers=(([1], [0]), ([], []))\n"
                                  "      precision=(Precision.HIGHEST, Precision.DEFAULT)\n"
                                  "    ] a b\n"
                                  "  in (c,) }"),
                      {}});
  CHECK(error_of<TypeError>([&] { api::lower_program(jaxpr, "jit_f"); }) ==
        "dot_general precision must be None or a pair of equal lax.Precision values, got "
        "(Precision.HIGHEST, Precision.DEFAULT)");
}

TEST_CASE("matmul precision: grad and vmap keep it on every product", "[precision]") {
  auto loss = [](const Array& w, const Array& x) {
    return np::sum(np::tanh(np::matmul(x, w, Precision::kHighest)));
  };
  std::ostringstream g;
  g << make_jaxpr(grad(loss))(np::ones({3, 4}), np::ones({2, 3}));
  CHECK(count(g.str(), "dot_general[") == 2);  // forward and the weight gradient
  CHECK(count(g.str(), "precision=(Precision.HIGHEST, Precision.HIGHEST)") == 2);
  std::ostringstream v;
  v << make_jaxpr(vmap([](const Array& a, const Array& b) {
    return np::matmul(a, b, Precision::kHighest);
  }))(np::ones({5, 2, 3}), np::ones({5, 3, 4}));
  CHECK(count(v.str(), "precision=(Precision.HIGHEST, Precision.HIGHEST)") == 1);
}

TEST_CASE("matmul precision: HLO carries it and the CPU computes every precision in full",
          "[precision]") {
  Array a = random::normal(random::key(0), {64, 96}), b = random::normal(random::key(1), {96, 80});
  auto at = [](Precision p) {
    return jit([p](const Array& x, const Array& y) { return np::matmul(x, y, p); });
  };
  CHECK(at(Precision::kHighest).lower(a, b).hlo_text().find("operand_precision=highest") !=
        std::string::npos);
  CHECK(jit([](const Array& x, const Array& y) { return np::matmul(x, y); })
            .lower(a, b)
            .hlo_text()
            .find("operand_precision") == std::string::npos);
  std::vector<float> full = at(Precision::kHighest)(a, b).to_vector<float>();
  CHECK(at(Precision::kDefault)(a, b).to_vector<float>() == full);
  CHECK(at(Precision::kHigh)(a, b).to_vector<float>() == full);
}

// The compute type of the one GEMM `f` makes on a fake CUDA GPU.
template <class F>
cublasComputeType_t gpu_compute_type(F f, DType dtype = float32) {
  FakeCudaGpus gpus;
  const Device gpu{Platform::gpu, 7};
  Array a = np::ones({64, 96}, dtype), b = np::ones({96, 80}, dtype), bias = np::ones({80}, dtype);
  jit(f, {.device = gpu})(a, b, bias);
  std::vector<GemmRecord> gemms = gpus.fake().gemms();
  REQUIRE(gemms.size() == 1);
  return gemms[0].compute_type;
}

TEST_CASE("matmul precision: it reaches the GPU's GEMM as cuBLAS's compute type",
          "[precision][fake]") {
  using namespace runtime::cuda;
  ConfigGuard guard;
  auto matmul = [](std::optional<Precision> p) {
    return [p](const Array& x, const Array& w, const Array&) { return np::matmul(x, w, p); };
  };
  auto dense = [](std::optional<Precision> p) {  // one cuBLASLt call with a bias epilogue
    return [p](const Array& x, const Array& w, const Array& b) {
      return nn::relu(np::matmul(x, w, p) + b);
    };
  };
  CHECK(gpu_compute_type(matmul(std::nullopt)) == CUBLAS_COMPUTE_32F_FAST_TF32);  // XLA's default
  CHECK(gpu_compute_type(matmul(Precision::kDefault)) == CUBLAS_COMPUTE_32F_FAST_TF32);
  CHECK(gpu_compute_type(matmul(Precision::kHigh)) == CUBLAS_COMPUTE_32F_FAST_TF32);
  CHECK(gpu_compute_type(matmul(Precision::kHighest)) == CUBLAS_COMPUTE_32F);
  CHECK(gpu_compute_type(dense(std::nullopt)) == CUBLAS_COMPUTE_32F_FAST_TF32);
  CHECK(gpu_compute_type(dense(Precision::kHighest)) == CUBLAS_COMPUTE_32F);
  CHECK(gpu_compute_type(matmul(std::nullopt), float64) == CUBLAS_COMPUTE_64F);
  config().default_matmul_precision = "highest";
  CHECK(gpu_compute_type(matmul(std::nullopt)) == CUBLAS_COMPUTE_32F);
  CHECK(gpu_compute_type(dense(std::nullopt)) == CUBLAS_COMPUTE_32F);
}

}  // namespace
}  // namespace jx::testing
