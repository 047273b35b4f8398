// Denormal floats are flushed to zero while jx computes on the CPU, compiled programs and eager
// operations alike, as XLA's CPU client runs JAX's: a jx program computes what the same JAX
// program computes there, jitted or not. It also keeps training fast: gradients and their
// squares drift into the denormal range as a loss falls, and x86 takes a microcode assist,
// about a hundred cycles, for each operation that meets one. Config::cpu_flush_denormals = false
// keeps IEEE 754's gradual underflow instead.
#pragma once

namespace jx::detail {

// The calling thread's floating-point control word (x86's MXCSR, AArch64's FPCR; 0 elsewhere):
// the pool's workers take on their caller's, so a kernel computes alike on every thread.
unsigned long float_control();
void set_float_control(unsigned long control);

// Flush-to-zero and denormals-are-zero on the calling thread for its lifetime, when `flush`
// (Config::cpu_flush_denormals by default); the thread's previous mode comes back after.
class ScopedFlushDenormals {
 public:
  ScopedFlushDenormals();
  explicit ScopedFlushDenormals(bool flush);
  ~ScopedFlushDenormals();
  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;

 private:
  unsigned long saved_;
  bool changed_ = false;
};

}  // namespace jx::detail
