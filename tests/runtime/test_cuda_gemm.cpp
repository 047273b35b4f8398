// The row-major GEMM as a column-major cuBLAS call: the call's arguments, run through a naive
// column-major GEMM (BLAS's definition), give the row-major product for every transpose
// combination and batch, so the mapping is proven without a GPU. Where a GPU is present,
// GpuContext::gemm is checked against the same product.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "hlo/gemm.hpp"
#include "jx/errors.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/cublas.hpp"
#include "runtime/cuda/cublas_lt.hpp"
#include "runtime/cuda/driver.hpp"
#include "support/error_of.hpp"

namespace jx::runtime::cuda {
namespace {

using jx::testing::error_of;

// BLAS gemm with alpha = 1, beta = 0, for each batch: C = op(A) · op(B), column-major. It also
// checks what cuBLAS would: each leading dimension covers its matrix's rows.
void column_major_gemm(const CublasGemmCall& c) {
  const bool ta = c.transa == CUBLAS_OP_T, tb = c.transb == CUBLAS_OP_T;
  CHECK(c.lda >= std::max(1, ta ? c.k : c.m));
  CHECK(c.ldb >= std::max(1, tb ? c.n : c.k));
  CHECK(c.ldc >= std::max(1, c.m));
  for (int batch = 0; batch < c.batch; ++batch) {
    const double* a = static_cast<const double*>(c.a) + batch * c.stride_a;
    const double* b = static_cast<const double*>(c.b) + batch * c.stride_b;
    double* out = static_cast<double*>(c.c) + batch * c.stride_c;
    for (int i = 0; i < c.m; ++i)
      for (int j = 0; j < c.n; ++j) {
        double sum = 0;
        for (int l = 0; l < c.k; ++l)
          sum += (ta ? a[l + i * c.lda] : a[i + l * c.lda]) *
                 (tb ? b[j + l * c.ldb] : b[l + j * c.ldb]);
        out[i + j * c.ldc] = sum;
      }
  }
}

// hlo::GemmShape's definition: out[b] = op(lhs[b]) · op(rhs[b]), row-major.
std::vector<double> row_major_product(const hlo::GemmShape& s, const std::vector<double>& lhs,
                                      const std::vector<double>& rhs) {
  std::vector<double> out(static_cast<std::size_t>(s.batch * s.m * s.n));
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        const double* x = lhs.data() + b * s.m * s.k;
        const double* y = rhs.data() + b * s.k * s.n;
        double sum = 0;
        for (std::int64_t l = 0; l < s.k; ++l)
          sum += (s.transpose_lhs ? x[l * s.m + i] : x[i * s.k + l]) *
                 (s.transpose_rhs ? y[j * s.k + l] : y[l * s.n + j]);
        out[static_cast<std::size_t>((b * s.m + i) * s.n + j)] = sum;
      }
  return out;
}

// Small integers: every product and sum is exact.
std::vector<double> values(std::int64_t n, int seed) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 5 + seed) % 11) - 5;
  return v;
}

std::vector<hlo::GemmShape> shapes() {
  std::vector<hlo::GemmShape> out;
  for (auto [m, n, k] : {std::array<int, 3>{2, 3, 4}, {1, 5, 1}, {3, 1, 2}, {5, 2, 3}, {4, 4, 0}})
    for (int batch : {1, 3})
      for (bool tl : {false, true})
        for (bool tr : {false, true})
          out.push_back({.dtype = float64,
                         .batch = batch,
                         .m = m,
                         .n = n,
                         .k = k,
                         .transpose_lhs = tl,
                         .transpose_rhs = tr});
  return out;
}

TEST_CASE("cublas_gemm_call: the column-major call computes the row-major product", "[cuda]") {
  for (const hlo::GemmShape& s : shapes()) {
    INFO("batch " << s.batch << " m " << s.m << " n " << s.n << " k " << s.k << " transposes "
                  << s.transpose_lhs << s.transpose_rhs);
    std::vector<double> lhs = values(s.batch * s.m * s.k, 1), rhs = values(s.batch * s.k * s.n, 2);
    std::vector<double> out(static_cast<std::size_t>(s.batch * s.m * s.n),
                            std::numeric_limits<double>::quiet_NaN());
    CublasGemmCall call = cublas_gemm_call(s, lhs.data(), rhs.data(), out.data());
    column_major_gemm(call);
    CHECK(out == row_major_product(s, lhs, rhs));
  }
}

TEST_CASE("cublas_gemm_call: dimensions beyond a 32-bit int are an error", "[cuda]") {
  hlo::GemmShape s{.m = 2, .n = std::int64_t{1} << 31, .k = 3};
  CHECK(error_of<Error>([&] { cublas_gemm_call(s, nullptr, nullptr, nullptr); }) ==
        "cuBLAS GEMM n 2147483648 does not fit a 32-bit int");
}

TEST_CASE("GpuContext::gemm matches the row-major product", "[cuda]") {
  if (device_count() == 0) {
    WARN("no GPU: skipped");
    return;
  }
  GpuContext& gpu = gpu_context(0);
  for (hlo::GemmShape s : shapes()) {
    for (DType dtype : {float32, float64}) {
      s.dtype = dtype;
      s.precision = hlo::GemmPrecision::kHighest;  // full f32: no TF32 rounding
      std::vector<double> lhs = values(s.batch * s.m * s.k, 1);
      std::vector<double> rhs = values(s.batch * s.k * s.n, 2);
      std::vector<double> want = row_major_product(s, lhs, rhs);
      auto upload = [&](const std::vector<double>& v) {
        DeviceBuffer buffer(0, v.size() * itemsize(dtype));
        std::vector<float> f(v.begin(), v.end());
        gpu.copy_to_device(buffer.data(),
                           dtype == float32 ? static_cast<const void*>(f.data()) : v.data(),
                           buffer.bytes());
        return buffer;
      };
      DeviceBuffer x = upload(lhs), y = upload(rhs),
                   out = upload(std::vector<double>(want.size(), NAN));
      gpu.gemm(s, x.data(), y.data(), out.data());
      std::vector<double> got(want.size());
      if (dtype == float32) {
        std::vector<float> f(want.size());
        gpu.copy_to_host(f.data(), out.data(), out.bytes());
        got.assign(f.begin(), f.end());
      } else {
        gpu.copy_to_host(got.data(), out.data(), out.bytes());
      }
      CHECK(got == want);
    }
  }
}

TEST_CASE("GpuContext::gemm_epilogue adds the bias per column then the activation", "[cuda]") {
  if (device_count() == 0 || !has_cublas_lt()) {
    WARN("no GPU or no cuBLASLt: skipped");
    return;
  }
  GpuContext& gpu = gpu_context(0);
  hlo::GemmShape s{.dtype = float32,
                   .precision = hlo::GemmPrecision::kHighest,  // full f32: no TF32 rounding
                   .batch = 2,
                   .m = 3,
                   .n = 5,
                   .k = 4,
                   .transpose_rhs = true};
  std::vector<double> lhs = values(s.batch * s.m * s.k, 1), rhs = values(s.batch * s.k * s.n, 2);
  std::vector<double> product = row_major_product(s, lhs, rhs);
  std::vector<float> bias = {-3, 0.5f, 2, -1, 0};
  auto upload = [&](const auto& v) {
    std::vector<float> f(v.begin(), v.end());
    DeviceBuffer buffer(0, f.size() * sizeof(float));
    gpu.copy_to_device(buffer.data(), f.data(), buffer.bytes());
    return buffer;
  };
  DeviceBuffer x = upload(lhs), y = upload(rhs), b = upload(bias), out(0, product.size() * 4);
  for (GemmActivation act : {GemmActivation::kNone, GemmActivation::kRelu, GemmActivation::kGelu}) {
    gpu.gemm_epilogue(s, x.data(), y.data(), out.data(), act, b.data());
    std::vector<float> got(product.size());
    gpu.copy_to_host(got.data(), out.data(), out.bytes());
    for (std::size_t i = 0; i < got.size(); ++i) {
      double v = product[i] + bias[i % 5];
      if (act == GemmActivation::kRelu) v = std::max(v, 0.0);
      if (act == GemmActivation::kGelu)
        v = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
      CHECK(got[i] == Approx(v).margin(1e-5));
    }
  }
}

}  // namespace
}  // namespace jx::runtime::cuda
