// MathTable: how each math function is computed at each float type. The CPU emits branch-free
// IR for the common transcendentals (vector_math.hpp), so that loops of them vectorize, and uses
// LLVM intrinsics or libm for the rest; the GPU backend swaps in libdevice's __nv_*.
#pragma once

#include <array>
#include <cstddef>

#include "codegen/llvm_headers.hpp"

namespace jx::codegen {

enum class MathFn {
  kExp,
  kExpNonPositive,  // e^x where the caller knows x <= 0 (or NaN): nothing overflows
  kLog,
  kLog1p,
  kExpm1,
  kSin,
  kCos,
  kTan,
  kTanh,
  kSqrt,
  kPow,
  kFloor,
  kCeil,
  kRound,
  kRoundEven,
  kFabs,
  kErf,
  kAtan2,
  kMaximum,
  kMinimum,
  kExp2,
  kCbrt,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kCount
};

// Emits fn(args...) inline at the type of args[0].
using MathEmitter = llvm::Value* (*)(llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> args);

// Per float type, an inline emitter if there is one; otherwise an intrinsic (overloaded on the
// float type), or else a function name.
struct MathEntry {
  llvm::Intrinsic::ID intrinsic = llvm::Intrinsic::not_intrinsic;
  const char* f32 = nullptr;
  const char* f64 = nullptr;
  MathEmitter emit_f32 = nullptr;
  MathEmitter emit_f64 = nullptr;
};

// Which of target_calls.hpp's calls the backend lowers, and so the table emits.
struct TargetCalls {
  bool ldexp = false;       // exp scales by ldexp
  bool round_bf16 = false;  // rounding to bfloat16 is a call, not narrow_float's integer form
};

class MathTable {
 public:
  MathTable& set(MathFn fn, MathEntry entry) {
    entries_[static_cast<std::size_t>(fn)] = entry;
    return *this;
  }
  const MathEntry& entry(MathFn fn) const { return entries_[static_cast<std::size_t>(fn)]; }
  // fn(args...) at the type of args[0] (f32 or f64); throws jx::CompileError if unmapped.
  llvm::Value* call(llvm::IRBuilder<>& b, MathFn fn, llvm::ArrayRef<llvm::Value*> args) const;

  MathTable& set_target_calls(TargetCalls calls) {
    target_calls_ = calls;
    return *this;
  }
  const TargetCalls& target_calls() const { return target_calls_; }

 private:
  std::array<MathEntry, static_cast<std::size_t>(MathFn::kCount)> entries_{};
  TargetCalls target_calls_;
};

// The CPU's table: float32 exp, tanh and erf in their fast forms, or with `precise` their 1-ULP
// forms (--precise_math); with calls.ldexp, exp scales by ldexp.
MathTable cpu_math_table(bool precise, TargetCalls calls);

}  // namespace jx::codegen
