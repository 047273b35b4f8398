// Buffer assignment: where every HLO value of the entry computation lives at run time.
// Temporaries share one arena, reusing space by liveness; outputs get fresh buffers.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "hlo/ir.hpp"

namespace jx::runtime {

struct Allocation {
  enum class Kind { kParameter, kConstant, kOutput, kTemp };
  Kind kind = Kind::kTemp;
  int index = 0;            // parameter, constant or output number
  std::int64_t offset = 0;  // into the arena, for temporaries
  std::int64_t size = 0;    // bytes
  std::string str() const;
};

struct BufferAssignment {
  std::unordered_map<const hlo::Instruction*, Allocation> of;  // array-shaped values only
  std::vector<const hlo::Instruction*> constants;              // in constant-number order
  std::vector<const hlo::Instruction*> outputs;  // the root's elements, in output order
  std::int64_t arena_bytes = 0;
};

// `order` is the execution order of the entry computation's instructions. A tuple has no
// buffer; get-tuple-element aliases its element.
BufferAssignment assign_buffers(const hlo::Computation& entry,
                                const std::vector<hlo::Instruction*>& order);

}  // namespace jx::runtime
