// PTX kernels the CUDA runtime tests load: small enough to read, valid for any recent driver.
#pragma once

namespace jx::testing {

// A kernel adding 1 to each of n floats (PTX ISA 7.0: any recent driver compiles it).
inline const char* const kAddOnePtx = R"(
.version 7.0
.target sm_70
.address_size 64
.visible .entry add_one(.param .u64 add_one_x, .param .u32 add_one_n)
{
  .reg .pred %p<2>;
  .reg .f32 %f<3>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [add_one_x];
  ld.param.u32 %r2, [add_one_n];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r1, %r3, %r4, %r5;
  setp.ge.s32 %p1, %r1, %r2;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.s32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  add.f32 %f2, %f1, 0f3F800000;
  st.global.f32 [%rd4], %f2;
DONE:
  ret;
}
)";

}  // namespace jx::testing
