// The algebraic simplifier: one rule per opcode (a table), applied in operand-before-user
// order; a rule returns the instruction that replaces its input, or nullptr.
#include "passes/algebraic_simplifier.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "hlo/builder.hpp"
#include "hlo/evaluator.hpp"
#include "hlo/gemm.hpp"
#include "passes/constant_folding.hpp"

namespace jx::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using Ints = std::vector<std::int64_t>;

using hlo::splat;

bool is_one(const Instruction* i) { return splat(i) == 1.0; }
// A zero that is an identity of addition: -0.0 for floats (x + -0.0 == x for every x, -0.0
// included; x + 0.0 turns -0.0 into 0.0), and for subtraction +0.0. Integers have one zero.
bool is_additive_identity(const Instruction* i, bool negative) {
  std::optional<double> v = splat(i);
  if (!v || *v != 0.0) return false;
  return !is_floating(i->shape.dtype) || std::signbit(*v) == negative;
}

// a → b keeps every value of a exactly (so a later conversion may start from a instead).
bool lossless(DType a, DType b) {
  if (a == b || a == bool_) return true;
  switch (a) {
    case int32:
      return b == int64 || b == float64;
    case uint32:
      return b == int64 || b == float64;
    case float32:
      return b == float64;
    default:
      return false;
  }
}

bool is_identity(const Ints& perm) {
  for (std::size_t k = 0; k < perm.size(); ++k)
    if (perm[k] != static_cast<std::int64_t>(k)) return false;
  return true;
}

using Rule = Instruction* (*)(Instruction&, hlo::Builder&);

Instruction* simplify_multiply(Instruction& i, hlo::Builder&) {
  if (is_one(i.operands[1])) return i.operands[0];
  if (is_one(i.operands[0])) return i.operands[1];
  return nullptr;
}

// The one dim a pad widens by zeros (+0.0 or -0.0), without interior or negative padding: a
// slice's transpose, the cotangent it passes back. -1 for any other pad.
int zero_pad_dim(const Instruction& pad) {
  if (pad.opcode != Opcode::kPad || splat(pad.operands[1]) != 0.0) return -1;
  const Ints& p = pad.attrs.get_ints("padding");
  int dim = -1;
  for (std::size_t d = 0; 3 * d < p.size(); ++d) {
    std::int64_t low = p[3 * d], high = p[3 * d + 1];
    if (p[3 * d + 2] != 0 || low < 0 || high < 0) return -1;
    if (low == 0 && high == 0) continue;
    if (dim >= 0) return -1;
    dim = static_cast<int>(d);
  }
  return dim;
}

// +0.0 (an integer's zero): what adding turns -0.0 into.
bool is_positive_zero(const Instruction* i) { return is_additive_identity(i, /*negative=*/false); }

// x + (+0.0) as a value, which turns -0.0 into +0.0: x itself where that already happened (a
// sum with +0.0, a +0.0 splat) or cannot change it (integers); a concatenation's operands each
// (so that it stays one concatenation).
Instruction* plus_zero(Instruction* x, Instruction* zero, hlo::Builder& b) {
  if (!is_floating(x->shape.dtype) || is_positive_zero(x) ||
      (x->opcode == Opcode::kAdd &&
       (is_positive_zero(x->operands[0]) || is_positive_zero(x->operands[1]))))
    return x;
  if (x->opcode != Opcode::kConcatenate)
    return b.binary(Opcode::kAdd, x, b.broadcast(zero, x->shape.dims, {}));
  std::vector<Instruction*> pieces;
  for (Instruction* o : x->operands) pieces.push_back(plus_zero(o, zero, b));
  if (pieces == x->operands) return x;
  return b.op(Opcode::kConcatenate, x->shape, std::move(pieces), x->attrs);
}

// pad(x, 0) + pad(y, 0) along one dim, x and y in disjoint places: x and y side by side, zeros
// between and around, so each element reads one operand rather than every pad's (autodiff sums
// the cotangents of slices of one array so: attention's q, k and v). Exactly: an element gains
// the other pad's zero, which keeps it unless that zero is +0.0 and it is -0.0.
Instruction* add_of_disjoint_pads(Instruction& i, hlo::Builder& b) {
  Instruction* first = i.operands[0];
  Instruction* second = i.operands[1];
  int d = zero_pad_dim(*first);
  if (d < 0 || zero_pad_dim(*second) != d) return nullptr;
  auto low = [d](const Instruction* pad) { return pad->attrs.get_ints("padding")[3 * d]; };
  auto size = [d](const Instruction* pad) { return pad->operands[0]->shape.dims[d]; };
  if (low(second) < low(first)) std::swap(first, second);
  std::int64_t gap = low(second) - (low(first) + size(first));
  if (gap < 0) return nullptr;
  Instruction* zero_a = first->operands[1];
  Instruction* zero_b = second->operands[1];
  Instruction* zero = is_positive_zero(zero_a) ? zero_a : zero_b;  // the zero of their sum
  std::vector<Instruction*> pieces;
  pieces.push_back(is_positive_zero(zero_b) ? plus_zero(first->operands[0], zero_b, b)
                                            : first->operands[0]);
  Shape between = i.shape.dims;
  between[d] = gap;
  if (gap > 0) pieces.push_back(b.broadcast(zero, between, {}));
  pieces.push_back(is_positive_zero(zero_a) ? plus_zero(second->operands[0], zero_a, b)
                                            : second->operands[0]);
  Shape joined = i.shape.dims;
  joined[d] = size(first) + gap + size(second);
  hlo::Attrs concat;
  concat.set("dimensions", Ints{d});
  Ints padding(3 * i.shape.dims.size(), 0);
  padding[3 * d] = low(first);
  padding[3 * d + 1] = i.shape.dims[d] - low(first) - joined[d];
  hlo::Attrs pad;
  pad.set("padding", padding);
  return b.op(Opcode::kPad, i.shape,
              {b.op(Opcode::kConcatenate, hlo::HloShape::array(i.shape.dtype, joined), pieces,
                    std::move(concat)),
               zero},
              std::move(pad));
}

Instruction* simplify_add(Instruction& i, hlo::Builder& b) {
  if (is_additive_identity(i.operands[1], true)) return i.operands[0];
  if (is_additive_identity(i.operands[0], true)) return i.operands[1];
  return add_of_disjoint_pads(i, b);
}

// A pad that pads nothing is its operand.
Instruction* simplify_pad(Instruction& i, hlo::Builder&) {
  const Ints& p = i.attrs.get_ints("padding");
  return std::all_of(p.begin(), p.end(), [](std::int64_t v) { return v == 0; }) ? i.operands[0]
                                                                                : nullptr;
}

// Concatenations along the same dim inside a concatenation are their operands.
Instruction* simplify_concatenate(Instruction& i, hlo::Builder& b) {
  const Ints& dim = i.attrs.get_ints("dimensions");
  std::vector<Instruction*> flat;
  for (Instruction* o : i.operands) {
    if (o->opcode == Opcode::kConcatenate && o->attrs.get_ints("dimensions") == dim)
      flat.insert(flat.end(), o->operands.begin(), o->operands.end());
    else
      flat.push_back(o);
  }
  if (flat.size() == i.operands.size()) return i.operands.size() == 1 ? i.operands[0] : nullptr;
  return b.op(Opcode::kConcatenate, i.shape, std::move(flat), i.attrs);
}

Instruction* simplify_subtract(Instruction& i, hlo::Builder&) {
  return is_additive_identity(i.operands[1], false) ? i.operands[0] : nullptr;
}

Instruction* simplify_divide(Instruction& i, hlo::Builder&) {
  return is_one(i.operands[1]) ? i.operands[0] : nullptr;
}

// neg(neg x) → x; not(not x) → x.
Instruction* simplify_involution(Instruction& i, hlo::Builder&) {
  Instruction* x = i.operands[0];
  return x->opcode == i.opcode ? x->operands[0] : nullptr;
}

// A reshape that only drops size-1 dims of a broadcast the broadcast did not map an operand dim
// to is that broadcast: size-1 broadcasting in binary ops lowers to such chains.
Instruction* squeezed_broadcast(Instruction& i, Instruction* x, hlo::Builder& b) {
  const Shape& from = x->shape.dims;
  const Shape& to = i.shape.dims;
  std::vector<std::int64_t> kept(from.size(), -1);  // x's dim → our dim, -1 where dropped
  std::size_t j = 0;
  for (std::size_t d = 0; d < from.size(); ++d) {
    if (j < to.size() && from[d] == to[j])
      kept[d] = static_cast<std::int64_t>(j++);
    else if (from[d] != 1)
      return nullptr;
  }
  if (j != to.size()) return nullptr;
  Ints dims;
  for (std::int64_t d : x->attrs.get_ints("dimensions")) {
    if (kept[static_cast<std::size_t>(d)] < 0) return nullptr;
    dims.push_back(kept[static_cast<std::size_t>(d)]);
  }
  return b.broadcast(x->operands[0], to, dims);
}

Instruction* simplify_reshape(Instruction& i, hlo::Builder& b) {
  Instruction* x = i.operands[0];
  if (x->shape == i.shape) return x;
  if (x->opcode == Opcode::kReshape) return b.reshape(x->operands[0], i.shape.dims);
  if (x->opcode == Opcode::kBroadcast) return squeezed_broadcast(i, x, b);
  return nullptr;
}

// Whether the transpose keeps its operand's dims of more than one element in order: then it
// moves only size-1 dims, and is a reshape.
bool moves_only_unit_dims(const Instruction& transpose) {
  const Shape& x = transpose.operands[0]->shape.dims;
  std::int64_t last = -1;
  for (std::int64_t d : transpose.attrs.get_ints("dimensions")) {
    if (x[static_cast<std::size_t>(d)] == 1) continue;
    if (d < last) return false;
    last = d;
  }
  return true;
}

Instruction* simplify_transpose(Instruction& i, hlo::Builder& b) {
  Instruction* x = i.operands[0];
  const Ints& perm = i.attrs.get_ints("dimensions");
  if (is_identity(perm)) return x;
  if (moves_only_unit_dims(i)) return b.reshape(x, i.shape.dims);
  if (x->opcode != Opcode::kTranspose) return nullptr;
  // Result dim k is x's dim perm[k], which is x's operand's dim inner[perm[k]].
  const Ints& inner = x->attrs.get_ints("dimensions");
  Ints composed;
  for (std::int64_t p : perm) composed.push_back(inner[p]);
  if (is_identity(composed)) return x->operands[0];
  hlo::Attrs attrs;
  attrs.set("dimensions", composed);
  return b.op(Opcode::kTranspose, i.shape, {x->operands[0]}, std::move(attrs));
}

// A dot of a transposed operand reads that operand as it lies, through its dimension numbers
// (XLA's transpose folding), where the transpose keeps the operand's free dims in order (they
// are the product's dims, in order) and the dot is then a matrix product the GEMM paths read
// with a transposed operand (hlo::as_gemm): `x @ W.T` reads W, not a transposed copy of it. The
// dot canonicalizer's own transposes stay: without them the dot would not be a GEMM.
Instruction* simplify_dot(Instruction& i, hlo::Builder& b) {
  if (!hlo::as_gemm(i)) return nullptr;
  Instruction folded = i;
  bool any = false;
  for (std::size_t side = 0; side < 2; ++side) {
    const Instruction* t = i.operands[side];
    if (t->opcode != Opcode::kTranspose) continue;
    // Operand dim d of the dot is the transpose's operand's dim perm[d].
    const Ints& perm = t->attrs.get_ints("dimensions");
    std::string prefix = side == 0 ? "lhs" : "rhs";
    Instruction candidate = folded;
    candidate.operands[side] = t->operands[0];
    std::vector<bool> bound(perm.size(), false);
    for (const char* kind : {"_batch_dims", "_contracting_dims"}) {
      Ints dims = i.attrs.get_ints(prefix + kind);
      for (std::int64_t& d : dims) {
        bound[static_cast<std::size_t>(d)] = true;
        d = perm[static_cast<std::size_t>(d)];
      }
      candidate.attrs.set(prefix + kind, dims);
    }
    std::int64_t last = -1;
    bool in_order = true;
    for (std::size_t d = 0; d < perm.size(); ++d) {
      if (bound[d]) continue;
      in_order = in_order && perm[d] > last;
      last = perm[d];
    }
    if (!in_order || !hlo::as_gemm(candidate)) continue;
    folded = std::move(candidate);
    any = true;
  }
  return any ? b.op(Opcode::kDot, i.shape, folded.operands, folded.attrs) : nullptr;
}

Instruction* simplify_broadcast(Instruction& i, hlo::Builder& b) {
  Instruction* x = i.operands[0];
  const Ints& dims = i.attrs.get_ints("dimensions");
  if (x->shape == i.shape && is_identity(dims)) return x;
  if (x->opcode == Opcode::kConstant && x->shape.dims.empty() &&
      i.shape.size() <= kMaxFoldedElements) {
    Array value = *x->literal;
    return b.constant(hlo::evaluate(i, std::span<const Array>(&value, 1)));
  }
  if (x->opcode != Opcode::kBroadcast) return nullptr;
  // x's operand dim k went to x's dim inner[k], which goes to our dim dims[inner[k]].
  Ints composed;
  for (std::int64_t d : x->attrs.get_ints("dimensions")) composed.push_back(dims[d]);
  return b.broadcast(x->operands[0], i.shape.dims, composed);
}

Instruction* simplify_convert(Instruction& i, hlo::Builder& b) {
  Instruction* x = i.operands[0];
  if (x->shape.dtype == i.shape.dtype) return x;
  if (x->opcode == Opcode::kConvert && lossless(x->operands[0]->shape.dtype, x->shape.dtype))
    return b.convert(x->operands[0], i.shape.dtype);
  return nullptr;
}

// A reduce over size-1 dims only (as many elements out as in) combines each element with the
// init value once: that elementwise op on the reshaped operand, which the rules above drop where
// the init is the op's identity. Autodiff's sums over broadcast dims leave such reduces.
Instruction* simplify_reduce(Instruction& i, hlo::Builder& b) {
  Instruction* x = i.operands[0];
  if (i.operands.size() != 2 || i.shape.is_tuple || x->shape.size() != i.shape.size())
    return nullptr;
  const hlo::Computation& f = *i.called.at(0);
  const Instruction* op = f.root();
  if (op->opcode == Opcode::kCompare || !hlo::has_trait(op->opcode, hlo::kElementwise) ||
      op->operands.size() != 2 || op->operands[0] != f.parameters().at(0) ||
      op->operands[1] != f.parameters().at(1))
    return nullptr;
  return b.binary(op->opcode, b.broadcast(i.operands[1], i.shape.dims, {}),
                  b.reshape(x, i.shape.dims));
}

// A slice as large as its operand takes everything: start 0, stride 1 (or a single element).
Instruction* simplify_slice(Instruction& i, hlo::Builder&) {
  return i.operands[0]->shape == i.shape ? i.operands[0] : nullptr;
}

Instruction* simplify_select(Instruction& i, hlo::Builder&) {
  std::optional<double> pred = splat(i.operands[0]);
  if (!pred) return nullptr;
  return *pred != 0 ? i.operands[1] : i.operands[2];
}

const std::unordered_map<Opcode, Rule>& rules() {
  static const std::unordered_map<Opcode, Rule> kRules{
      {Opcode::kMultiply, simplify_multiply},
      {Opcode::kAdd, simplify_add},
      {Opcode::kSubtract, simplify_subtract},
      {Opcode::kDivide, simplify_divide},
      {Opcode::kNegate, simplify_involution},
      {Opcode::kNot, simplify_involution},
      {Opcode::kReshape, simplify_reshape},
      {Opcode::kTranspose, simplify_transpose},
      {Opcode::kBroadcast, simplify_broadcast},
      {Opcode::kConvert, simplify_convert},
      {Opcode::kSlice, simplify_slice},
      {Opcode::kSelect, simplify_select},
      {Opcode::kReduce, simplify_reduce},
      {Opcode::kPad, simplify_pad},
      {Opcode::kConcatenate, simplify_concatenate},
      {Opcode::kDot, simplify_dot},
  };
  return kRules;
}

}  // namespace

bool AlgebraicSimplifier::run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : module.computations()) {
    bool simplified = false;
    hlo::Builder b(c);
    for (Instruction* inst : c->instructions()) {
      auto rule = rules().find(inst->opcode);
      if (rule == rules().end()) continue;
      Instruction* replacement = rule->second(*inst, b);
      if (!replacement || replacement == inst) continue;
      c->replace_all_uses(inst, replacement);
      simplified = true;
    }
    if (simplified) c->remove_unreachable();
    changed |= simplified;
  }
  return changed;
}

}  // namespace jx::passes
