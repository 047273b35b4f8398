// Loop emission for the CPU backend: counted loops and row-major loop nests over a shape.
#pragma once

#include <functional>
#include <string>

#include "codegen/elemental/elemental.hpp"

namespace jx::codegen::cpu {

// for (i = 0; i < n; ++i) body(i), with i an i64; needs n >= 1 (callers skip empty loops).
void emit_for(llvm::IRBuilder<>& b, std::int64_t n, const std::string& name,
              const std::function<void(llvm::Value*)>& body);

// body(index) for every index of `shape` in row-major order, the innermost dimension innermost;
// nothing for a shape with a 0-sized dimension. Size-1 dimensions get no loop. The index carries
// its linear form, computed incrementally.
void emit_loop_nest(ElementalEmitter& em, const Shape& shape, const std::string& name,
                    const std::function<void(const IrIndex&)>& body);

}  // namespace jx::codegen::cpu
