// Helpers for the CPU codegen tests: build a one-computation HLO module, compile one kernel,
// run it on host vectors. Pred buffers are std::uint8_t (0/1): std::vector<bool> has no data().
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "codegen/cpu/cpu_compiler.hpp"
#include "hlo/builder.hpp"

namespace jx::codegen::testing {

using Ints = std::vector<std::int64_t>;
using pred = std::uint8_t;

// The dtype of a test buffer's element type: pred (std::uint8_t) holds bool_.
template <class T>
constexpr DType dtype_for() {
  if constexpr (std::is_same_v<T, pred>)
    return bool_;
  else
    return dtype_of<T>();
}

inline hlo::Attrs attrs(std::initializer_list<std::pair<std::string, hlo::AttrValue>> entries) {
  hlo::Attrs a;
  for (const auto& [name, value] : entries) a.set(name, value);
  return a;
}

inline hlo::HloShape shape(DType d, Shape dims) { return hlo::HloShape::array(d, std::move(dims)); }

// A module with an entry computation and a builder on it.
struct Hlo {
  hlo::Module module{"test"};
  hlo::Computation* main = module.add_computation("main", /*entry=*/true);
  hlo::Builder b{main};

  hlo::Instruction* param(std::int64_t n, DType d, Shape dims) {
    return b.parameter(n, shape(d, std::move(dims)));
  }
  hlo::Instruction* op(hlo::Opcode opcode, DType d, Shape dims, std::vector<hlo::Instruction*> ops,
                       hlo::Attrs a = {}, std::vector<hlo::Computation*> called = {}) {
    return b.op(opcode, shape(d, std::move(dims)), std::move(ops), std::move(a), std::move(called));
  }
  // A scalar computation (a, b) → a `combiner` b, as reduce's to_apply.
  hlo::Computation* binary_region(hlo::Opcode combiner, DType d) {
    hlo::Computation* c = module.add_computation("region");
    hlo::Builder rb(c);
    auto* x = rb.parameter(0, shape(d, {}));
    auto* y = rb.parameter(1, shape(d, {}));
    c->set_root(rb.binary(combiner, x, y));
    return c;
  }
};

using KernelFn = void (*)(void* const*, std::int64_t, std::int64_t);

// The kernel `name` compiled for `root`, called on all of its rows.
inline std::function<void(void* const*)> kernel_fn(const CompiledKernels& code,
                                                   const std::string& name,
                                                   const hlo::Instruction* root) {
  auto fn = reinterpret_cast<KernelFn>(code.symbol(name));
  std::int64_t rows = kernel_rows(*root);
  return [fn, rows](void* const* buffers) { fn(buffers, 0, rows); };
}

// A kernel's workspace (kernel_workspace_bytes) as the runtime gives it: 64-byte aligned, for one
// call at a time. Filled with NaNs, so that a kernel reading what it has not written shows, and
// followed by guard words, which the destructor checks.
class Workspace {
 public:
  Workspace(const hlo::Instruction& root, const CpuCompileOptions& options)
      : bytes_(kernel_workspace_bytes(root, options)) {
    if (bytes_)  // 56 bytes more to align it, and the guard
      words_.assign(static_cast<std::size_t>(bytes_ + 56) / 8 + kGuard, kNaNs);
  }
  ~Workspace() {
    if (words_.empty()) return;
    const std::uint64_t* end = start() + bytes_ / 8;
    CHECK(std::vector<std::uint64_t>(end, end + kGuard) ==
          std::vector<std::uint64_t>(kGuard, kNaNs));
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  // `buffers` with the workspace after them, where the kernel has one.
  std::vector<void*> after(std::vector<void*> buffers) {
    if (!words_.empty()) buffers.push_back(start());
    return buffers;
  }

 private:
  static constexpr std::size_t kGuard = 8;
  static constexpr std::uint64_t kNaNs = 0x7ff8dead7fc0deadull;  // f64 and two f32 NaNs
  std::uint64_t* start() {
    auto address = reinterpret_cast<std::uintptr_t>(words_.data());
    return words_.data() + (0 - address) % 64 / 8;
  }
  std::int64_t bytes_;
  std::vector<std::uint64_t> words_;
};

// Compiles `root` alone and runs it on `inputs` (one pointer per operand, in operand order).
// The output vector has guard elements past its end; the run checks that none was written.
template <class O>
std::vector<O> run(const hlo::Instruction* root, std::vector<const void*> inputs,
                   const CpuCompileOptions& options = {}) {
  auto code = compile_kernels({{root, "kernel"}}, options);
  constexpr std::size_t kGuard = 8;
  auto n = static_cast<std::size_t>(root->shape.size());
  std::vector<O> out(n + kGuard);
  std::vector<unsigned char> guard(kGuard * sizeof(O), 0xA5);
  std::memcpy(out.data() + n, guard.data(), guard.size());
  std::vector<void*> buffers;
  for (const void* p : inputs) buffers.push_back(const_cast<void*>(p));
  buffers.push_back(out.data());
  std::vector<std::uint64_t> scratch(static_cast<std::size_t>(kernel_scratch_words(*root)));
  if (!scratch.empty()) buffers.push_back(scratch.data());
  Workspace workspace(*root, options);
  buffers = workspace.after(buffers);
  kernel_fn(*code, "kernel", root)(buffers.data());
  CHECK(std::memcmp(out.data() + n, guard.data(), guard.size()) == 0);
  out.resize(n);
  return out;
}

// Equal, NaN equal to NaN, within a relative tolerance for floats. The 16-bit floats compare
// bit for bit (so -0 is not +0), any NaN matching a NaN.
template <class T>
bool same(T got, T want, double rtol = 0) {
  if constexpr (std::is_same_v<T, BFloat16> || std::is_same_v<T, Float16>) {
    if (std::isnan(static_cast<float>(want))) return std::isnan(static_cast<float>(got));
    if (rtol == 0) return got.bits == want.bits;
    return same(static_cast<double>(got), static_cast<double>(want), rtol);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(want)) return std::isnan(got);
    if (std::isinf(want) || rtol == 0) return got == want;
    return std::abs(got - want) <= rtol * std::max<double>(1.0, std::abs(want));
  } else {
    return got == want;
  }
}

// IEEE maximum and minimum: NaN if either is, and -0 below +0.
template <class T>
T ieee_max(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  if (a == 0 && b == 0) return std::signbit(a) ? b : a;
  return std::max(a, b);
}
template <class T>
T ieee_min(T a, T b) {
  return -ieee_max(-a, -b);
}

template <class T>
void check_all(const std::vector<T>& got, const std::vector<T>& want, double rtol = 0) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << +got[i] << ", want " << +want[i]);
    CHECK(same(got[i], want[i], rtol));
  }
}

// Row-major strides and index walking for the oracles.
inline Ints strides_of(const Shape& s) {
  Ints st(s.size(), 1);
  for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * s[d + 1];
  return st;
}

template <class F>
void for_each(const Shape& shape, F f) {
  if (shape_size(shape) == 0) return;
  Ints index(shape.size(), 0);
  while (true) {
    f(static_cast<const Ints&>(index));
    int d = static_cast<int>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

inline std::int64_t offset(const Ints& index, const Ints& strides) {
  std::int64_t o = 0;
  for (std::size_t d = 0; d < index.size(); ++d) o += index[d] * strides[d];
  return o;
}

// 0, 1, 2, ... as T.
template <class T>
std::vector<T> ramp(std::int64_t n, double start = 0, double step = 1) {
  std::vector<T> v;
  for (std::int64_t i = 0; i < n; ++i)
    v.push_back(static_cast<T>(start + step * static_cast<double>(i)));
  return v;
}

}  // namespace jx::codegen::testing
