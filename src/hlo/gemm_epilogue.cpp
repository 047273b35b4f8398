// Recognizing a dense layer's epilogue: activation(x · w + b) as the fusion passes leave it. Sums
// and products are flattened into their terms and factors, so that any grouping and order of
// them matches; what each term must be is checked structurally, never by evaluating.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <unordered_set>

#include "hlo/gemm.hpp"

namespace jx::hlo {
namespace {

using Pattern = std::function<bool(const Instruction*)>;

// A constant equal to `value` as float32 rounds it (a relative 1e-6).
Pattern constant(double value) {
  return [value](const Instruction* i) {
    std::optional<double> v = splat(i);
    return v && std::abs(*v - value) <= 1e-6 * std::abs(value);
  };
}

Pattern is(const Instruction* value) {
  return [value](const Instruction* i) { return i == value; };
}

// The operands of nested `op` instructions under `i` (i itself when it is no `op`), not looking
// into `atom`, the activation's argument, which may itself be a sum.
void flatten(const Instruction* i, Opcode op, const Instruction* atom,
             std::vector<const Instruction*>& out) {
  if (i->opcode != op || i == atom) {
    out.push_back(i);
    return;
  }
  for (const Instruction* o : i->operands) flatten(o, op, atom, out);
}

// An `op` (add or multiply) whose flattened operands are matched one to one by `parts`, in any
// order. Parts are tried in order and each takes the first operand it matches: patterns here
// never match each other's operands, so no other assignment could succeed.
Pattern all_of(Opcode op, const Instruction* atom, std::vector<Pattern> parts) {
  return [op, atom, parts = std::move(parts)](const Instruction* i) {
    if (i->opcode != op || i == atom) return false;
    std::vector<const Instruction*> left;
    flatten(i, op, atom, left);
    if (left.size() != parts.size()) return false;
    for (const Pattern& p : parts) {
      auto it = std::find_if(left.begin(), left.end(), p);
      if (it == left.end()) return false;
      left.erase(it);
    }
    return true;
  };
}

Pattern unary(Opcode op, Pattern x) {
  return
      [op, x = std::move(x)](const Instruction* i) { return i->opcode == op && x(i->operands[0]); };
}

// relu(a): where(a <= 0, 0, a) (jx::nn::relu) or maximum(a, 0) either way round.
bool is_relu_of(const Instruction* i, const Instruction* a) {
  Pattern zero = constant(0.0);
  if (i->opcode == Opcode::kMaximum)
    return (i->operands[0] == a && zero(i->operands[1])) ||
           (i->operands[1] == a && zero(i->operands[0]));
  if (i->opcode != Opcode::kSelect || i->operands[2] != a || !zero(i->operands[1])) return false;
  const Instruction* c = i->operands[0];
  return c->opcode == Opcode::kCompare && c->attrs.get_string("direction") == "LE" &&
         c->operands[0] == a && zero(c->operands[1]);
}

// gelu(a) = a · 0.5 · (1 + tanh(√(2/π) · (a + 0.044715 · a³))).
bool is_gelu_of(const Instruction* i, const Instruction* a) {
  Pattern cube = all_of(Opcode::kMultiply, a, {constant(0.044715), is(a), is(a), is(a)});
  Pattern inner =
      all_of(Opcode::kMultiply, a,
             {constant(std::sqrt(2.0 / std::numbers::pi)), all_of(Opcode::kAdd, a, {is(a), cube})});
  Pattern one_plus_tanh = all_of(Opcode::kAdd, a, {constant(1.0), unary(Opcode::kTanh, inner)});
  return all_of(Opcode::kMultiply, a, {is(a), constant(0.5), one_plus_tanh})(i);
}

// value + broadcast(b) with b a vector along value's last dim; the bias is b.
const Instruction* bias_of(const Instruction* sum, const Instruction* value) {
  if (sum->opcode != Opcode::kAdd || value->shape.rank() != 2) return nullptr;
  for (int k : {0, 1}) {
    const Instruction* b = sum->operands[static_cast<std::size_t>(1 - k)];
    if (sum->operands[static_cast<std::size_t>(k)] != value || b->opcode != Opcode::kBroadcast)
      continue;
    const Instruction* v = b->operands[0];
    if (v->shape.rank() == 1 && b->attrs.get_ints("dimensions") == std::vector<std::int64_t>{1})
      return v;
  }
  return nullptr;
}

// `root` and every instruction it reads, directly or not.
void reachable(const Instruction* root, std::unordered_set<const Instruction*>& out) {
  if (!out.insert(root).second) return;
  for (const Instruction* o : root->operands) reachable(o, out);
}

}  // namespace

std::optional<EpilogueMatch> match_epilogue(const Instruction& root, const Instruction& value) {
  bool rounds = value.opcode == Opcode::kConvert && k16BitFloating.contains(value.shape.dtype);
  if (&root == &value && rounds) return EpilogueMatch{};  // the rounding alone
  // The activation's argument `a`: the value, or its sum with a bias.
  std::unordered_set<const Instruction*> candidates;
  reachable(&root, candidates);
  for (const Instruction* a : candidates) {
    const Instruction* bias = bias_of(a, &value);
    if (!bias && a != &value) continue;
    if (a == &root) {
      if (bias) return EpilogueMatch{GemmActivation::kNone, bias};
      continue;
    }
    if (is_relu_of(&root, a)) return EpilogueMatch{GemmActivation::kRelu, bias};
    if (is_gelu_of(&root, a)) return EpilogueMatch{GemmActivation::kGelu, bias};
  }
  return std::nullopt;
}

bool fits_gemm_epilogue(const Instruction& dot) {
  std::optional<GemmShape> shape = as_gemm(dot);
  return shape && shape->dtype == float32 && shape->batch == 1 && dot.shape.rank() == 2;
}

const Instruction& epilogue_value(const Computation& c, const Instruction& product) {
  const Instruction* reader = nullptr;
  for (const Instruction* i : c.instructions())
    for (const Instruction* o : i->operands)
      if (o == &product) {
        if (reader) return product;
        reader = i;
      }
  bool rounds =
      reader && reader->opcode == Opcode::kConvert && k16BitFloating.contains(reader->shape.dtype);
  return rounds ? *reader : product;
}

std::optional<GemmEpilogue> as_gemm_epilogue(const Instruction& fusion) {
  if (fusion.opcode != Opcode::kFusion || fusion.shape.is_tuple) return std::nullopt;
  const Computation& c = *fusion.called[0];
  const Instruction* dot = nullptr;
  for (const Instruction* i : c.instructions()) {
    if (i->opcode != Opcode::kDot) continue;
    if (dot) return std::nullopt;
    dot = i;
  }
  if (!dot || !fits_gemm_epilogue(*dot) || dot->operands[0]->opcode != Opcode::kParameter ||
      dot->operands[1]->opcode != Opcode::kParameter)
    return std::nullopt;
  const Instruction& value = epilogue_value(c, *dot);
  std::optional<EpilogueMatch> m = match_epilogue(*c.root(), value);
  if (!m || (m->bias && m->bias->opcode != Opcode::kParameter)) return std::nullopt;
  auto operand = [](const Instruction* p) { return static_cast<int>(p->parameter_number); };
  return GemmEpilogue{*as_gemm(*dot),
                      m->activation,
                      operand(dot->operands[0]),
                      operand(dot->operands[1]),
                      m->bias ? operand(m->bias) : -1,
                      value.shape.dtype};
}

}  // namespace jx::hlo
