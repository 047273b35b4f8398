// cuBLAS and cuBLASLt loading: the exact messages when they are missing or are not cuBLAS, and
// every declared entry point resolving in the installed libraries (a warning where there are
// none).
#include <catch2/catch.hpp>

#include <string>

#include "jx/errors.hpp"
#include "runtime/cuda/cublas.hpp"
#include "runtime/cuda/cublas_lt.hpp"
#include "support/error_of.hpp"
#include "support/shared_libraries.hpp"

namespace jx::runtime::cuda {
namespace {

using jx::testing::dlopen_error;
using jx::testing::error_of;
using jx::testing::zlib_path;

TEST_CASE("load_cublas: missing libraries and a library that is not cuBLAS", "[cuda]") {
  const std::string a = "/nonexistent/libcublas.so.13", b = "/nonexistent/libcublas.so";
  std::string reason = dlopen_error(a);
  CHECK(error_of<Error>([&] { load_cublas({a}); }) ==
        "cuBLAS unavailable: cannot load " + a + ": " + reason);
  CHECK(error_of<Error>([&] {
          load_cublas({a, b});
        }) == "cuBLAS unavailable: cannot load " + a + ": " + reason + " (nor " + b + ")");
  std::string zlib = zlib_path();
  CHECK(error_of<Error>([&] {
          load_cublas({a, zlib});
        }) == "cuBLAS unavailable: " + zlib + " has no cublasCreate_v2");
  CHECK(error_of<Error>([&] { load_cublas_lt({zlib}); }) ==
        "cuBLASLt unavailable: " + zlib + " has no cublasLtCreate");
}

TEST_CASE("cublas: the installed cuBLAS has every declared entry point", "[cuda]") {
  std::string message = error_of<Error>([] { cublas(); });
  if (message != "<no exception>") {
    WARN("no cuBLAS here: " << message);
    CHECK(message.rfind("cuBLAS unavailable: cannot load " + cublas_libraries()[0] + ": ", 0) == 0);
    CHECK(error_of<Error>([] { cublas(); }) == message);
    return;
  }
  const CublasApi& api = cublas();
#define JX_CHECK_BOUND(field, symbol, signature) CHECK(api.field != nullptr);
  JX_CUBLAS_FUNCTIONS(JX_CHECK_BOUND)
#undef JX_CHECK_BOUND
  // Every release jx finds (11.4 on) names its statuses; naming one needs no GPU.
  CHECK(describe(api, CUBLAS_STATUS_NOT_SUPPORTED).rfind("CUBLAS_STATUS_NOT_SUPPORTED: ", 0) == 0);
  CHECK(error_of<Error>([&] { check(api, CUBLAS_STATUS_INVALID_VALUE, "cublasSgemm"); }) ==
        "cuBLAS error in cublasSgemm: " + describe(api, CUBLAS_STATUS_INVALID_VALUE));
  CHECK(describe(CublasApi{}, CUBLAS_STATUS_NOT_SUPPORTED) == "cuBLAS status 15");
}

TEST_CASE("cublas_lt: the installed cuBLASLt has every declared entry point", "[cuda]") {
  std::string message = error_of<Error>([] { cublas_lt(); });
  if (message != "<no exception>") {
    WARN("no cuBLASLt here: " << message);
    CHECK(!has_cublas_lt());
    CHECK(message.rfind("cuBLASLt unavailable: cannot load " + cublas_lt_libraries()[0] + ": ",
                        0) == 0);
    return;
  }
  CHECK(has_cublas_lt());
  const CublasLtApi& api = cublas_lt();
#define JX_CHECK_BOUND(field, symbol, signature) CHECK(api.field != nullptr);
  JX_CUBLASLT_FUNCTIONS(JX_CHECK_BOUND)
#undef JX_CHECK_BOUND
  CHECK(error_of<Error>([&] {
          check(api, CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmul");
        }).rfind("cuBLASLt error in cublasLtMatmul: CUBLAS_STATUS_NOT_SUPPORTED", 0) == 0);
}

TEST_CASE("lt_epilogue: an activation and a bias make one epilogue", "[cuda]") {
  CHECK(lt_epilogue(GemmActivation::kNone, false) == CUBLASLT_EPILOGUE_DEFAULT);
  CHECK(lt_epilogue(GemmActivation::kNone, true) == CUBLASLT_EPILOGUE_BIAS);
  CHECK(lt_epilogue(GemmActivation::kRelu, false) == CUBLASLT_EPILOGUE_RELU);
  CHECK(lt_epilogue(GemmActivation::kRelu, true) == CUBLASLT_EPILOGUE_RELU_BIAS);
  CHECK(lt_epilogue(GemmActivation::kGelu, false) == CUBLASLT_EPILOGUE_GELU);
  CHECK(lt_epilogue(GemmActivation::kGelu, true) == CUBLASLT_EPILOGUE_GELU_BIAS);
}

}  // namespace
}  // namespace jx::runtime::cuda
