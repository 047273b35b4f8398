#include "support/float_environment.hpp"

#include "jx/config.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace jx::detail {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// MXCSR: FTZ (bit 15) flushes denormal results, DAZ (bit 6) reads denormal inputs as zero.
constexpr unsigned long kFlushBits = 0x8040;
#elif defined(__aarch64__)
// FPCR.FZ (bit 24) does both, in single and double precision.
constexpr unsigned long kFlushBits = 1ul << 24;
#else
constexpr unsigned long kFlushBits = 0;  // elsewhere denormals stay as IEEE 754 has them
#endif

}  // namespace

unsigned long float_control() {
#if defined(__x86_64__) || defined(__i386__)
  return _mm_getcsr();
#elif defined(__aarch64__)
  unsigned long v;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
  return v;
#else
  return 0;
#endif
}

void set_float_control([[maybe_unused]] unsigned long control) {
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(static_cast<unsigned>(control));
#elif defined(__aarch64__)
  __asm__ __volatile__("msr fpcr, %0" : : "r"(control));
#endif
}

ScopedFlushDenormals::ScopedFlushDenormals() : ScopedFlushDenormals(config().cpu_flush_denormals) {}

ScopedFlushDenormals::ScopedFlushDenormals(bool flush) : saved_(float_control()) {
  unsigned long want = flush ? saved_ | kFlushBits : saved_ & ~kFlushBits;
  if (want != saved_) set_float_control(want), changed_ = true;
}

ScopedFlushDenormals::~ScopedFlushDenormals() {
  if (changed_) set_float_control(saved_);
}

}  // namespace jx::detail
