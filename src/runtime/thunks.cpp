#include "runtime/thunks.hpp"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "core/array_impl.hpp"
#include "core/buffer.hpp"
#include "core/host_callbacks.hpp"
#include "core/sort_rows.hpp"
#include "runtime/kernel_workspaces.hpp"
#include "runtime/parallel.hpp"
#include "support/check.hpp"
#include "support/format.hpp"
#include "support/profiler.hpp"

namespace jx::runtime {

void ExecutionContext::copy(void* dst, const void* src, std::size_t nbytes) const {
  if (device)
    device->copy(dst, src, nbytes);
  else
    std::memcpy(dst, src, nbytes);
}

void ExecutionContext::read(void* host_dst, const void* src, std::size_t nbytes) const {
  if (device)
    device->read(host_dst, src, nbytes);
  else
    std::memcpy(host_dst, src, nbytes);
}

void ExecutionContext::write(void* dst, const void* host_src, std::size_t nbytes) const {
  if (device)
    device->write(dst, host_src, nbytes);
  else
    std::memcpy(dst, host_src, nbytes);
}

KernelThunk::KernelThunk(std::string name, Fn fn, std::vector<Allocation> buffers,
                         std::int64_t rows, std::int64_t scratch_words,
                         std::int64_t workspace_bytes)
    : name_(std::move(name)),
      fn_(fn),
      buffers_(std::move(buffers)),
      rows_(rows),
      scratch_words_(scratch_words),
      workspace_bytes_(workspace_bytes) {}

namespace {

// What each call of a kernel gets: the run's buffers, then, where the kernel has a workspace, one
// of the call's own (kernel_workspaces.hpp: aligned as the others, and a previous run's, so its
// pages come back mapped). All are taken before the calls run, so that running out of memory
// throws on the caller's thread.
class CallBuffers {
 public:
  CallBuffers(std::span<void* const> shared, std::int64_t workspace_bytes, std::int64_t calls)
      : shared_(shared.data()) {
    if (!workspace_bytes) return;
    for (std::int64_t c = 0; c < calls; ++c) {
      void* space =
          workspaces_.emplace_back(take_workspace(static_cast<std::size_t>(workspace_bytes)))
              ->data();
      lists_.emplace_back(shared.begin(), shared.end()).push_back(space);
    }
  }
  ~CallBuffers() {
    for (std::unique_ptr<Buffer>& workspace : workspaces_) release_workspace(std::move(workspace));
  }
  CallBuffers(const CallBuffers&) = delete;
  CallBuffers& operator=(const CallBuffers&) = delete;
  // The buffers of the next call, on whichever thread makes it.
  void* const* take() {
    if (lists_.empty()) return shared_;
    std::size_t call = next_.fetch_add(1, std::memory_order_relaxed);
    JX_CHECK(call < lists_.size());
    return lists_[call].data();
  }

 private:
  void* const* shared_;
  std::vector<std::unique_ptr<Buffer>> workspaces_;
  std::vector<std::vector<void*>> lists_;
  std::atomic<std::size_t> next_{0};
};

}  // namespace

void KernelThunk::execute(const ExecutionContext& ctx) const {
  std::vector<std::uint64_t> scratch(static_cast<std::size_t>(scratch_words_));
  ResolvedBuffers resolved(ctx, buffers_, scratch.empty() ? nullptr : scratch.data());
  void* const* buffers = resolved.data();
  // Every buffer is 64-byte aligned, as a kernel storing a large output with aligned vector
  // stores takes it to be (codegen/cpu/streaming_stores.hpp).
  for (std::size_t k = 0; k < buffers_.size(); ++k)
    JX_CHECK(reinterpret_cast<std::uintptr_t>(buffers[k]) % Buffer::kAlignment == 0);
  int threads = parallelism();  // parallel_for makes a call per thread at most
  CallBuffers calls(resolved.span(), workspace_bytes_,
                    rows_ <= 1 ? 1 : std::min<std::int64_t>(rows_, threads));
  if (rows_ <= 1) return fn_(calls.take(), 0, 1);
  if (!profiler::detail::active())
    return parallel_for(rows_, threads, [&](std::int64_t begin, std::int64_t end) {
      fn_(calls.take(), begin, end);
    });
  // Traced: each thread's share of the rows is a span of its own.
  parallel_for(rows_, threads, [&](std::int64_t begin, std::int64_t end) {
    std::int64_t start = profiler::detail::now_ns();
    fn_(calls.take(), begin, end);
    profiler::detail::record(
        label().empty() ? name_ : label(), "rows", start, profiler::detail::now_ns(),
        "\"rows\": \"" + std::to_string(begin) + ":" + std::to_string(end) + "\"");
  });
}

std::string KernelThunk::str() const {
  std::string s = "kernel " + name_ + "(";
  for (std::size_t i = 0; i < buffers_.size(); ++i) s += (i ? ", " : "") + buffers_[i].str();
  return s + ")" + (rows_ > 1 ? " rows=" + std::to_string(rows_) + " parallel" : "") +
         (scratch_words_ ? " scratch=" + std::to_string(scratch_words_) : "") +
         (workspace_bytes_ ? " workspace=" + std::to_string(workspace_bytes_) : "");
}

namespace {

// out = activation(out + bias), the bias along the last dim; gelu in its tanh form.
template <class T>
void apply_epilogue(T* out, const T* bias, hlo::GemmActivation activation, std::int64_t rows,
                    std::int64_t cols) {
  const T sqrt_2_over_pi = static_cast<T>(0.7978845608028654);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      T& v = out[r * cols + c];
      if (bias) v += bias[c];
      if (activation == hlo::GemmActivation::kRelu)
        v = v <= 0 ? T(0) : v;
      else if (activation == hlo::GemmActivation::kGelu)
        v = v * (T(0.5) * (T(1) + std::tanh(sqrt_2_over_pi * (v + T(0.044715) * v * v * v))));
    }
}

}  // namespace

std::string LibraryConvolution::str() const {
  using jx::detail::join;
  std::string s = name + "(" + lhs.str() + ", " + rhs.str() + ", " + out.str() + ") " +
                  std::string(dtype_name(conv.dtype)) + (conv.features_last ? " NHWC" : " NCHW") +
                  " lhs=[" + join(conv.lhs, ", ") + "] rhs=[" + join(conv.rhs, ", ") + "] out=[" +
                  join(conv.out, ", ") + "] pad=" + join(conv.padding, ",") +
                  " stride=" + join(conv.strides, ",") +
                  " dilation=" + join(conv.rhs_dilation, ",");
  return conv.groups > 1 ? s + " groups=" + std::to_string(conv.groups) : s;
}

std::string LibraryGemm::str() const {
  const hlo::GemmShape& g = shape;
  std::string s = name + "(" + lhs.str() + ", " + rhs.str() + ", " + out.str() + ") " +
                  std::string(dtype_name(g.dtype)) + " batch=" + std::to_string(g.batch) +
                  " m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) +
                  " k=" + std::to_string(g.k) + (g.transpose_lhs ? " lhs^T" : "") +
                  (g.transpose_rhs ? " rhs^T" : "");
  if (bias) s += " bias=" + bias->str();
  if (activation == hlo::GemmActivation::kRelu) s += " relu";
  if (activation == hlo::GemmActivation::kGelu) s += " gelu";
  return s;
}

void GemmThunk::execute(const ExecutionContext& ctx) const {
  const hlo::GemmShape& g = gemm_.shape;
  auto* a = static_cast<std::byte*>(ctx.resolve(gemm_.lhs));
  auto* b = static_cast<std::byte*>(ctx.resolve(gemm_.rhs));
  auto* c = static_cast<std::byte*>(ctx.resolve(gemm_.out));
  const void* bias = gemm_.bias ? ctx.resolve(*gemm_.bias) : nullptr;
  auto ta = g.transpose_lhs ? CblasTrans : CblasNoTrans;
  auto tb = g.transpose_rhs ? CblasTrans : CblasNoTrans;
  auto lda = static_cast<int>(g.transpose_lhs ? g.m : g.k);
  auto ldb = static_cast<int>(g.transpose_rhs ? g.k : g.n);
  auto m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
  std::size_t es = itemsize(g.dtype), operand_es = itemsize(g.operand_dtype);
  // 16-bit operands of an f32 product (a plan made for a GPU library) are widened first.
  std::vector<float> wide_a, wide_b;
  auto f32_operand = [&](std::byte* x, std::int64_t size, std::vector<float>& wide) {
    if (g.operand_dtype == g.dtype) return reinterpret_cast<float*>(x);
    wide.resize(static_cast<std::size_t>(size));
    for (std::int64_t j = 0; j < size; ++j)
      wide[static_cast<std::size_t>(j)] =
          g.operand_dtype == bfloat16 ? static_cast<float>(reinterpret_cast<BFloat16*>(x)[j])
                                      : static_cast<float>(reinterpret_cast<Float16*>(x)[j]);
    return wide.data();
  };
  for (std::int64_t i = 0; i < g.batch; ++i) {
    std::byte* ai = a + i * g.m * g.k * operand_es;
    std::byte* bi = b + i * g.k * g.n * operand_es;
    std::byte* ci = c + i * g.m * g.n * es;
    if (g.dtype == float32) {
      auto* out = reinterpret_cast<float*>(ci);
      cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, f32_operand(ai, g.m * g.k, wide_a), lda,
                  f32_operand(bi, g.k * g.n, wide_b), ldb, 0.0f, out, n);
      if (gemm_.has_epilogue())
        apply_epilogue(out, static_cast<const float*>(bias), gemm_.activation, g.m, g.n);
    } else {
      auto* out = reinterpret_cast<double*>(ci);
      cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, reinterpret_cast<double*>(ai), lda,
                  reinterpret_cast<double*>(bi), ldb, 0.0, out, n);
      if (gemm_.has_epilogue())
        apply_epilogue(out, static_cast<const double*>(bias), gemm_.activation, g.m, g.n);
    }
  }
}

SortThunk::SortThunk(const hlo::Instruction& sort, std::vector<Allocation> operands,
                     std::vector<Allocation> outputs)
    : name_(sort.name),
      dimension_(sort.attrs.get_ints("dimensions").at(0)),
      num_keys_(static_cast<std::size_t>(sort.attrs.get_int("num_keys"))),
      operands_(std::move(operands)),
      outputs_(std::move(outputs)) {
  JX_CHECK(sort.opcode == hlo::Opcode::kSort && !sort.operands.empty() &&
           operands_.size() == sort.operands.size() && outputs_.size() == operands_.size());
  shape_ = sort.operands[0]->shape.dims;
  for (const hlo::Instruction* op : sort.operands) dtypes_.push_back(op->shape.dtype);
}

void SortThunk::execute(const ExecutionContext& ctx) const {
  std::vector<const void*> in;
  std::vector<void*> out;
  for (const Allocation& a : operands_) in.push_back(ctx.resolve(a));
  for (const Allocation& a : outputs_) out.push_back(ctx.resolve(a));
  if (!ctx.device) return sort_rows(shape_, dimension_, num_keys_, dtypes_, in, out);
  std::vector<std::vector<std::byte>> host_in, host_out;
  std::vector<const void*> hin;
  std::vector<void*> hout;
  for (std::size_t k = 0; k < in.size(); ++k) {
    auto n = static_cast<std::size_t>(operands_[k].size);
    ctx.read(host_in.emplace_back(n).data(), in[k], n);
    hin.push_back(host_in.back().data());
    hout.push_back(host_out.emplace_back(n).data());
  }
  sort_rows(shape_, dimension_, num_keys_, dtypes_, hin, hout);
  for (std::size_t k = 0; k < out.size(); ++k) ctx.write(out[k], hout[k], host_out[k].size());
}

std::string SortThunk::str() const {
  std::string s = "sort " + name_ + "(";
  for (std::size_t i = 0; i < operands_.size(); ++i) s += (i ? ", " : "") + operands_[i].str();
  s += " -> ";
  for (std::size_t i = 0; i < outputs_.size(); ++i) s += (i ? ", " : "") + outputs_[i].str();
  return s + ") dimension=" + std::to_string(dimension_) + " num_keys=" + std::to_string(num_keys_);
}

HostCallbackThunk::HostCallbackThunk(const hlo::Instruction& call, std::vector<Allocation> operands)
    : name_(call.name), callback_(call.attrs.get_int("callback")), operands_(std::move(operands)) {
  JX_CHECK(call.opcode == hlo::Opcode::kHostCallback && operands_.size() == call.operands.size());
  for (const hlo::Instruction* op : call.operands)
    avals_.push_back({op->shape.dims, op->shape.dtype, false});
}

void HostCallbackThunk::execute(const ExecutionContext& ctx) const {
  std::vector<Array> args;
  for (std::size_t k = 0; k < operands_.size(); ++k) {
    Array a = make_array(avals_[k]);
    auto n = static_cast<std::size_t>(operands_[k].size);
    if (n > 0) ctx.read(a.impl()->buffer->data(), ctx.resolve(operands_[k]), n);
    args.push_back(std::move(a));
  }
  host_callback(callback_)(args);
}

std::string HostCallbackThunk::str() const {
  std::string s = "host-callback " + name_ + "(";
  for (std::size_t i = 0; i < operands_.size(); ++i) s += (i ? ", " : "") + operands_[i].str();
  return s + ") callback=" + std::to_string(callback_);
}

void CopyThunk::execute(const ExecutionContext& ctx) const {
  ctx.copy(ctx.resolve(dst_), ctx.resolve(src_), static_cast<std::size_t>(src_.size));
}

std::string CopyThunk::str() const { return "copy " + src_.str() + " -> " + dst_.str(); }

}  // namespace jx::runtime
