// The CPU backend's emitter table: the shared elemental emitters plus reduce, argmax/argmin and
// dot, whose generators emit their inner loops at the point of use.
#pragma once

#include "codegen/elemental/elemental.hpp"

namespace jx::codegen::cpu {

void add_reduction_emitters(EmitterTable& table);  // reduce.cpp: reduce, argmax, argmin
void add_dot_emitter(EmitterTable& table);         // dot.cpp
const EmitterTable& cpu_emitters();                // kernel.cpp

}  // namespace jx::codegen::cpu
