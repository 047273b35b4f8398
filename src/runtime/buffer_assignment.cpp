#include "runtime/buffer_assignment.hpp"

#include <algorithm>
#include <map>

#include "core/buffer.hpp"
#include "support/check.hpp"

namespace jx::runtime {
namespace {

using hlo::Instruction;
using hlo::Opcode;

std::int64_t aligned(std::int64_t n) {
  constexpr auto a = static_cast<std::int64_t>(Buffer::kAlignment);
  return (n + a - 1) / a * a;
}

// The instruction whose buffer holds `i`'s value (get-tuple-element of a tuple aliases).
const Instruction* source_of(const Instruction* i) {
  while (i->opcode == Opcode::kGetTupleElement && i->operands[0]->opcode == Opcode::kTuple)
    i = i->operands[0]->operands[static_cast<std::size_t>(i->attrs.get_int("index"))];
  return i;
}

// First-fit allocator over the arena: free ranges are merged when released.
class Arena {
 public:
  std::int64_t allocate(std::int64_t size) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < size) continue;
      std::int64_t off = it->first, left = it->second - size;
      free_.erase(it);
      if (left) free_[off + size] = left;
      return off;
    }
    std::int64_t off = top_;
    top_ += size;
    return off;
  }
  void release(std::int64_t off, std::int64_t size) {
    auto it = free_.emplace(off, size).first;
    if (auto next = std::next(it); next != free_.end() && off + size == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }
  std::int64_t size() const { return top_; }

 private:
  std::map<std::int64_t, std::int64_t> free_;  // offset → size
  std::int64_t top_ = 0;
};

}  // namespace

std::string Allocation::str() const {
  switch (kind) {
    case Kind::kParameter:
      return "param" + std::to_string(index);
    case Kind::kConstant:
      return "const" + std::to_string(index);
    case Kind::kOutput:
      return "out" + std::to_string(index);
    case Kind::kTemp:
      return "temp[" + std::to_string(offset) + ":" + std::to_string(offset + size) + "]";
  }
  return "?";
}

BufferAssignment assign_buffers(const hlo::Computation& entry,
                                const std::vector<Instruction*>& order) {
  BufferAssignment ba;
  const Instruction* root = entry.root();
  if (root->opcode == Opcode::kTuple)
    for (const Instruction* e : root->operands) ba.outputs.push_back(source_of(e));
  else
    ba.outputs.push_back(source_of(root));

  // Last use of each value (by position in `order`); outputs live to the end.
  std::unordered_map<const Instruction*, std::size_t> last_use;
  for (std::size_t t = 0; t < order.size(); ++t)
    for (const Instruction* op : order[t]->operands) last_use[source_of(op)] = t;

  Arena arena;
  for (std::size_t t = 0; t < order.size(); ++t) {
    const Instruction* i = order[t];
    if (i->opcode == Opcode::kTuple || i->opcode == Opcode::kGetTupleElement) continue;
    Allocation a;
    a.size = i->shape.byte_size();
    if (i->opcode == Opcode::kParameter) {
      a.kind = Allocation::Kind::kParameter;
      a.index = static_cast<int>(i->parameter_number);
    } else if (i->opcode == Opcode::kConstant) {
      a.kind = Allocation::Kind::kConstant;
      a.index = static_cast<int>(ba.constants.size());
      ba.constants.push_back(i);
    } else if (auto it = std::find(ba.outputs.begin(), ba.outputs.end(), i);
               it != ba.outputs.end()) {
      a.kind = Allocation::Kind::kOutput;
      a.index = static_cast<int>(it - ba.outputs.begin());
    } else {
      a.offset = arena.allocate(aligned(a.size));
    }
    ba.of[i] = a;
    // Operands whose last use is here give their space back — after this instruction's
    // output was placed, so an output never overlaps its own inputs.
    std::vector<const Instruction*> sources;
    for (const Instruction* op : i->operands)
      if (std::find(sources.begin(), sources.end(), source_of(op)) == sources.end())
        sources.push_back(source_of(op));
    for (const Instruction* src : sources) {
      auto found = ba.of.find(src);
      if (found == ba.of.end() || found->second.kind != Allocation::Kind::kTemp) continue;
      if (last_use[src] == t) arena.release(found->second.offset, aligned(found->second.size));
    }
    // A value nobody reads is dead at once.
    if (a.kind == Allocation::Kind::kTemp && !last_use.count(i))
      arena.release(a.offset, aligned(a.size));
  }
  ba.arena_bytes = arena.size();
  return ba;
}

}  // namespace jx::runtime
