// Thunks: the steps of an executable. Each reads and writes buffers named by Allocations.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hlo/convolution.hpp"
#include "hlo/gemm.hpp"
#include "runtime/buffer_assignment.hpp"
#include "runtime/device_runtime.hpp"

namespace jx::runtime {

// The buffers one execution sees.
struct ExecutionContext {
  std::vector<void*> parameters;
  std::vector<const void*> constants;
  std::vector<void*> outputs;
  std::byte* arena = nullptr;
  const DeviceRuntime* device = nullptr;  // where the buffers live; null: the host

  // Moving bytes between buffers of this execution, and to and from the host, wherever the
  // buffers live.
  void copy(void* dst, const void* src, std::size_t nbytes) const;
  void read(void* host_dst, const void* src, std::size_t nbytes) const;
  void write(void* dst, const void* host_src, std::size_t nbytes) const;

  // Inline: kernels resolve their buffers on every run, and a loop body runs often.
  void* resolve(const Allocation& a) const {
    switch (a.kind) {
      case Allocation::Kind::kParameter:
        return parameters[static_cast<std::size_t>(a.index)];
      case Allocation::Kind::kConstant:
        return const_cast<void*>(constants[static_cast<std::size_t>(a.index)]);
      case Allocation::Kind::kOutput:
        return outputs[static_cast<std::size_t>(a.index)];
      case Allocation::Kind::kTemp:
        return arena + a.offset;
    }
    return nullptr;
  }
};

// The buffers of a list of allocations, resolved: on the stack for up to 16, so that a kernel
// or a branch run on every iteration of a loop allocates nothing.
class ResolvedBuffers {
 public:
  // `extra`, when given, follows them.
  ResolvedBuffers(const ExecutionContext& ctx, const std::vector<Allocation>& as,
                  void* extra = nullptr)
      : size_(as.size() + (extra != nullptr)) {
    if (size_ > std::size(small_)) heap_.resize(size_);
    void** p = data();
    for (std::size_t i = 0; i < as.size(); ++i) p[i] = ctx.resolve(as[i]);
    if (extra) p[as.size()] = extra;
  }
  ResolvedBuffers(const ResolvedBuffers&) = delete;
  ResolvedBuffers& operator=(const ResolvedBuffers&) = delete;
  void** data() { return heap_.empty() ? small_ : heap_.data(); }
  std::span<void* const> span() { return {data(), size_}; }

 private:
  std::size_t size_;
  void* small_[16];
  std::vector<void*> heap_;
};

class Thunk {
 public:
  virtual ~Thunk() = default;
  virtual void execute(const ExecutionContext& ctx) const = 0;
  virtual std::string str() const = 0;  // one line of the .thunk_sequence.txt dump
  // Whether it waits for the device to read values back to the host (a loop's condition, a
  // sort): such a sequence cannot be recorded and replayed as a whole.
  virtual bool reads_back() const { return false; }
  // The HLO instruction it runs ("fusion.3"), as profiler traces name it; empty for a copy of
  // outputs.
  const std::string& label() const { return label_; }
  void set_label(std::string label) { label_ = std::move(label); }

 private:
  std::string label_;
};

// A compiled kernel: fn(buffers, begin, end) with the operands' buffers first and the outputs'
// last. A partitioned kernel (rows > 1) runs its rows split over the thread pool.
// A kernel's rows split over the CPU's threads; a kernel with scratch gets `scratch_words`
// zeroed words after its buffers, new for each run, and one with a workspace
// `workspace_bytes` of each call's own after them (codegen/cpu/cpu_compiler.hpp).
class KernelThunk : public Thunk {
 public:
  using Fn = void (*)(void* const* buffers, std::int64_t begin, std::int64_t end);
  KernelThunk(std::string name, Fn fn, std::vector<Allocation> buffers, std::int64_t rows,
              std::int64_t scratch_words = 0, std::int64_t workspace_bytes = 0);
  void execute(const ExecutionContext& ctx) const override;
  std::string str() const override;

 private:
  std::string name_;
  Fn fn_;
  std::vector<Allocation> buffers_;
  std::int64_t rows_;
  std::int64_t scratch_words_;
  std::int64_t workspace_bytes_;
};

// A batched matrix product through BLAS.
// A library GEMM: out = activation(op(lhs) · op(rhs) + bias) for each batch, row-major; the
// bias, when there is one, holds one element per output column. What both the BLAS and the
// cuBLAS thunks run.
struct LibraryGemm {
  std::string name;
  hlo::GemmShape shape;
  Allocation lhs, rhs, out;
  hlo::GemmActivation activation = hlo::GemmActivation::kNone;
  std::optional<Allocation> bias;

  bool has_epilogue() const { return bias || activation != hlo::GemmActivation::kNone; }
  // "name(lhs, rhs, out) f32 batch=1 m=.. n=.. k=..", then " lhs^T", " rhs^T", " bias=<buffer>"
  // and " relu" or " gelu" where they apply.
  std::string str() const;
};

// A convolution through a DNN library (cuDNN): out = conv(lhs, rhs) in the library's layouts.
struct LibraryConvolution {
  std::string name;
  hlo::DnnConvolution conv;
  Allocation lhs, rhs, out;
  // "name(lhs, rhs, out) f32 NHWC lhs=[8, 3, 32, 32] rhs=[16, 3, 3, 3] out=[8, 16, 32, 32]
  // pad=1,1 stride=1,1 dilation=1,1", then " groups=2" where there are several: dims in
  // (batch, feature, spatial...) order whatever the layout.
  std::string str() const;
};

// The GEMM through BLAS; an epilogue is a pass over the output after it.
class GemmThunk : public Thunk {
 public:
  explicit GemmThunk(LibraryGemm gemm) : gemm_(std::move(gemm)) {}
  void execute(const ExecutionContext& ctx) const override;
  std::string str() const override { return "gemm " + gemm_.str(); }

 private:
  LibraryGemm gemm_;
};

// An HLO sort, run on the host with std::stable_sort per row: sorting is not a loop nest that
// codegen emits. On a device, the operands go to the host and the results come back.
class SortThunk : public Thunk {
 public:
  SortThunk(const hlo::Instruction& sort, std::vector<Allocation> operands,
            std::vector<Allocation> outputs);
  void execute(const ExecutionContext& ctx) const override;
  std::string str() const override;
  bool reads_back() const override { return true; }

 private:
  std::string name_;
  Shape shape_;
  std::int64_t dimension_;
  std::size_t num_keys_;
  std::vector<DType> dtypes_;
  std::vector<Allocation> operands_, outputs_;
};

// A host-callback: the operands' values, brought to the host where they live on a device, passed
// to the host function as arrays.
class HostCallbackThunk : public Thunk {
 public:
  HostCallbackThunk(const hlo::Instruction& call, std::vector<Allocation> operands);
  void execute(const ExecutionContext& ctx) const override;
  std::string str() const override;
  bool reads_back() const override { return true; }

 private:
  std::string name_;
  std::int64_t callback_;
  std::vector<ShapedArray> avals_;
  std::vector<Allocation> operands_;
};

class CopyThunk : public Thunk {
 public:
  CopyThunk(Allocation src, Allocation dst) : src_(src), dst_(dst) {}
  void execute(const ExecutionContext& ctx) const override;
  std::string str() const override;

 private:
  Allocation src_, dst_;
};

}  // namespace jx::runtime
