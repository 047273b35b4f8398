// cuBLASLt, loaded at run time where present: a GEMM with a fused epilogue, so that a dense
// layer's act(x · w + b) is one kernel.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "hlo/gemm.hpp"
#include "runtime/cuda/cublas_api.hpp"

namespace jx::runtime::cuda {

// The first of `candidates` that loads, with every entry point looked up. Throws jx::Error
// "cuBLASLt unavailable: ..." as load_cublas does.
CublasLtApi load_cublas_lt(const std::vector<std::string>& candidates);

// libcublasLt.so.13, .12, .11, then libcublasLt.so.
const std::vector<std::string>& cublas_lt_libraries();

// The process's cuBLASLt, loaded once; a failure is remembered and rethrown by every call.
const CublasLtApi& cublas_lt();
bool has_cublas_lt();

// GELU is the tanh approximation, jax.nn.gelu's default.
using hlo::GemmActivation;

// The epilogue applying `activation` after adding a bias (when there is one).
cublasLtEpilogue_t lt_epilogue(GemmActivation activation, bool bias);

// As describe(CublasApi, status), with cuBLASLt's names.
std::string describe(const CublasLtApi& api, cublasStatus_t status);

// Throws jx::Error "cuBLASLt error in <what>: <describe(api, status)>" unless it succeeded.
void check(const CublasLtApi& api, cublasStatus_t status, const char* what);

// Enqueues out[b] = activation(op(lhs[b]) · op(rhs[b]) + bias) on `stream`, row-major, f32 or
// f64. `bias` (null for none) holds n elements, one per output column, the same for every row
// and batch. Nothing is enqueued for an empty output; an empty contraction (k == 0) is the
// caller's. Throws jx::Error when cuBLASLt has no algorithm for the problem.
void gemm_lt(const CublasLtApi& api, cublasLtHandle_t handle, cudaStream_t stream,
             const hlo::GemmShape& shape, GemmActivation activation, const void* bias,
             const void* lhs, const void* rhs, void* out, void* workspace,
             std::size_t workspace_bytes);

}  // namespace jx::runtime::cuda
