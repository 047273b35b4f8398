#include "hlo/fusion.hpp"

#include <functional>
#include <unordered_map>

namespace jx::hlo {

std::vector<const HloShape*> output_shapes(const Instruction& inst) {
  std::vector<const HloShape*> out;
  if (inst.shape.is_tuple)
    for (const HloShape& s : inst.shape.tuple_shapes) out.push_back(&s);
  else
    out.push_back(&inst.shape);
  return out;
}

std::optional<Shape> common_output_dims(const Instruction& inst) {
  std::vector<const HloShape*> shapes = output_shapes(inst);
  for (const HloShape* s : shapes)
    if (s->is_tuple || s->dims != shapes.front()->dims) return std::nullopt;
  return shapes.front()->dims;
}

const Instruction* fused_output(const Instruction& fusion, int output) {
  const Instruction* root = fusion.called.at(0)->root();
  return root->opcode == Opcode::kTuple ? root->operands.at(static_cast<std::size_t>(output))
                                        : root;
}

bool reads_only_at_output_index(const Instruction& inst, int operand, int output) {
  if (inst.opcode == Opcode::kScatter) return operand == 0;  // its result starts as the operand
  if (inst.opcode != Opcode::kFusion)
    return has_trait(inst.opcode, kElementwise) &&
           inst.operands[static_cast<std::size_t>(operand)]->shape.dims == inst.shape.dims;
  const Computation& c = *inst.called[0];
  const Instruction* out = fused_output(inst, output);
  // A loop kernel computes every output of a shape at an index before it stores any of them
  // there, so the parameter may also reach out's users and other outputs of out's shape; other
  // kernels store their outputs at different times, so there it must reach out alone.
  const bool loop = inst.attrs.get_string("kind") == "kLoop";
  // Every path from the parameter runs through same-shape elementwise ops to the outputs. Each
  // instruction is judged once: paths rejoin (threefry's rounds), exponentially many of them.
  std::unordered_map<const Instruction*, bool> judged;
  std::function<bool(const Instruction*)> ok = [&](const Instruction* i) {
    if (auto it = judged.find(i); it != judged.end()) return it->second;
    auto judge = [&] {
      std::vector<Instruction*> users = c.users(i);
      if (users.empty()) return i == out;
      if (!loop && i == out) return users.size() == 1 && users[0] == c.root();
      for (const Instruction* u : users) {
        if (u == c.root() && u->opcode == Opcode::kTuple) {
          if (i != out && !loop) return false;
          continue;
        }
        if (!has_trait(u->opcode, kElementwise) || u->shape.dims != out->shape.dims || !ok(u))
          return false;
      }
      return true;
    };
    return judged[i] = judge();
  };
  return ok(c.parameters().at(static_cast<std::size_t>(operand)));
}

}  // namespace jx::hlo
