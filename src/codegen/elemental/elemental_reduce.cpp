// Reductions as generators: for one output element, a loop nest over the reduced dims folds the
// elements into an accumulator by emitting reduce's to_apply computation; argmax/argmin carry a
// value and an index; reduce-window folds the elements of one window (a loop over the window per
// output element, as the HLO evaluator does, written out for a small window;
// codegen/cpu/prefix_scan.cpp computes a cumulative window in one pass instead). Semantics follow
// src/primitives/reduce.cpp.
#include <algorithm>
#include <optional>
#include <string>

#include <llvm/TargetParser/Triple.h>

#include "codegen/elemental/elemental.hpp"
#include "codegen/elemental/loops.hpp"
#include "hlo/window.hpp"
#include "jx/errors.hpp"
#include "support/multi_index.hpp"

namespace jx::codegen {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using Ints = std::vector<std::int64_t>;
using Gens = std::vector<ElementGenerator>;

}  // namespace

ReduceSplit split_reduce_dims(const Instruction& inst) {
  const Shape& x = inst.operands.at(0)->shape.dims;
  if (!inst.attrs.has("dimensions")) fail(inst, "missing attribute dimensions");
  Ints reduced = inst.attrs.get_ints("dimensions");
  std::sort(reduced.begin(), reduced.end());
  if (std::adjacent_find(reduced.begin(), reduced.end()) != reduced.end())
    fail(inst, "duplicate dimensions");
  ReduceSplit s{{}, reduced};
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(x.size()); ++d)
    if (!std::binary_search(reduced.begin(), reduced.end(), d)) s.kept.push_back(d);
  if (!reduced.empty() &&
      (reduced.front() < 0 || reduced.back() >= static_cast<std::int64_t>(x.size())))
    fail(inst, "dimensions out of range");
  Shape out;
  for (auto d : s.kept) out.push_back(x[static_cast<std::size_t>(d)]);
  if (out != inst.shape.dims) fail(inst, "the output shape is not the operand's kept dims");
  return s;
}

bool folds_in_row_chunks(const Instruction& reduce) {
  ReduceSplit s = split_reduce_dims(reduce);
  auto rank = static_cast<std::int64_t>(reduce.operands[0]->shape.rank());
  if (s.reduced.size() != 1 || s.reduced[0] != rank - 1) return false;
  std::int64_t n = reduce.operands[0]->shape.dims.back();
  return n % kRowChunk == 0 && n >= 2 * kRowChunk;
}

namespace {

// Whether `inst` is a float maximum or minimum over enough elements to vectorize on a CPU: it
// folds with the sign of a zero left open (three vector instructions on x86, where IEEE maximum
// takes six), and a zero result is folded again, exactly. A GPU has the exact instruction.
bool folds_zero_sign_later(ElementalEmitter& em, const Instruction& inst, std::int64_t elements) {
  std::optional<Opcode> op = hlo::binary_combiner(*inst.called[0]);
  return is_floating(inst.shape.dtype) && elements >= kMinVectorizedElements &&
         (op == Opcode::kMaximum || op == Opcode::kMinimum) &&
         !llvm::Triple(em.module().getTargetTriple()).isNVPTX();
}

ElementGenerator emit_reduce(ElementalEmitter& em, const Instruction& inst, const Gens& ops) {
  const Shape& x = inst.operands[0]->shape.dims;
  ReduceSplit s = split_reduce_dims(inst);
  if (inst.called.size() != 1 || inst.called[0]->parameters().size() != 2)
    fail(inst, "needs a to_apply computation of two parameters");
  if (inst.operands[1]->shape.rank() != 0) fail(inst, "the init value must be 0-d");
  Shape reduced_shape;
  for (auto d : s.reduced) reduced_shape.push_back(x[static_cast<std::size_t>(d)]);
  // Reducing trailing dims: x's linear index is out_linear * reduced_size + reduced_linear.
  bool trailing = s.kept.empty() || s.kept.back() + 1 == static_cast<std::int64_t>(s.kept.size());
  auto at = [&em, &inst, ops, s, x, reduced_shape, trailing](const IrIndex& out) {
    auto& b = em.b();
    llvm::Type* type = em.type(inst.shape.dtype);
    llvm::AllocaInst* acc = em.entry_alloca(type, "acc");
    b.CreateStore(ops[1](em.scalar_index()), acc);
    ElementalEmitter::ReductionScope reducing(em);
    llvm::Value* base = trailing ? b.CreateMul(em.linear_index(out, inst.shape.dims),
                                               em.i64(shape_size(reduced_shape)), "", true, true)
                                 : nullptr;
    auto fold = [&](const IrIndex& r, bool any_zero_sign) {
      IrIndex xi{std::vector<llvm::Value*>(x.size()), nullptr};
      for (std::size_t k = 0; k < s.kept.size(); ++k)
        xi.dims[static_cast<std::size_t>(s.kept[k])] = out.dims[k];
      for (std::size_t k = 0; k < s.reduced.size(); ++k)
        xi.dims[static_cast<std::size_t>(s.reduced[k])] = r.dims[k];
      if (trailing) xi.linear = b.CreateAdd(base, r.linear, "", true, true);
      llvm::Value* element = ops[0](xi);
      // Floats may be summed in any order (as XLA does), so the loop vectorizes.
      llvm::IRBuilderBase::FastMathFlagGuard guard(b);
      llvm::FastMathFlags reassociate;
      reassociate.setAllowReassoc();
      reassociate.setNoSignedZeros(any_zero_sign);
      b.setFastMathFlags(reassociate);
      llvm::Value* combined = em.apply(*inst.called[0], {b.CreateLoad(type, acc), element});
      b.CreateStore(combined, acc);
    };
    const ElementalEmitter::ChunkHook* hook = em.row_chunk_hook(inst);
    std::int64_t n = shape_size(reduced_shape);
    // The loop over the reduced elements, folding each into acc.
    auto loop = [&](bool any_zero_sign) {
      auto fold_at = [&](const IrIndex& r) { fold(r, any_zero_sign); };
      if (!hook || !folds_in_row_chunks(inst))
        return emit_loop_nest(em, reduced_shape, "reduce", fold_at);
      emit_for(
          em, n / kRowChunk, "reduce.chunk",
          [&](llvm::Value* chunk) {
            llvm::Value* first = b.CreateMul(chunk, em.i64(kRowChunk), "", true, true);
            (*hook)(b.CreateAdd(base, first, "", true, true), kRowChunk);
            emit_for(em, kRowChunk, "reduce", [&](llvm::Value* k) {
              llvm::Value* r = b.CreateAdd(first, k, "", true, true);
              fold_at({{r}, r});
            });
          },
          /*vectorize=*/false);
    };
    bool zero_sign_later = folds_zero_sign_later(em, inst, n);
    loop(zero_sign_later);
    if (zero_sign_later) {
      llvm::Value* zero = b.CreateFCmpOEQ(b.CreateLoad(type, acc), llvm::ConstantFP::get(type, 0));
      // Rare: a scalar loop, which compiles in a fraction of a vector one's time.
      emit_if(em, zero, "reduce.zero", [&] {
        b.CreateStore(ops[1](em.scalar_index()), acc);
        emit_loop_nest(
            em, reduced_shape, "reduce.exact", [&](const IrIndex& r) { fold(r, false); },
            std::nullopt, 1, Vectorize::kNo);
      });
    }
    return b.CreateLoad(type, acc, "reduced");
  };
  return [&em, &inst, at](const IrIndex& out) { return em.hoisted(inst, out, at); };
}

// out[i] = init folded with the operand elements under window i, in row-major window order;
// positions in the padding or between base-dilated elements hold none (hlo/window.hpp).
// Windows of at most this many positions are folded in straight-line code.
constexpr std::int64_t kUnrolledWindowTaps = 16;

ElementGenerator emit_reduce_window(ElementalEmitter& em, const Instruction& inst,
                                    const Gens& ops) {
  const Shape& x = inst.operands[0]->shape.dims;
  hlo::Window window = hlo::window_of(inst);
  if (inst.called.size() != 1 || inst.called[0]->parameters().size() != 2)
    fail(inst, "needs a to_apply computation of two parameters");
  if (inst.operands[1]->shape.rank() != 0) fail(inst, "the init value must be 0-d");
  if (inst.shape.dims != hlo::window_output_dims(x, window))
    fail(inst, "the output shape is not the windows'");
  Shape window_shape;
  for (const hlo::WindowDim& w : window) window_shape.push_back(w.size);
  auto at = [&em, &inst, ops, x, window, window_shape](const IrIndex& out) {
    auto& b = em.b();
    llvm::Type* type = em.type(inst.shape.dtype);
    llvm::AllocaInst* acc = em.entry_alloca(type, "acc");
    b.CreateStore(ops[1](em.scalar_index()), acc);
    // Without padding or base dilation every window position is an operand element.
    bool checked = std::any_of(window.begin(), window.end(), [](const hlo::WindowDim& wd) {
      return wd.pad_lo != 0 || wd.pad_hi != 0 || wd.base_dilation != 1;
    });
    // acc ⊕= the operand element at window position w, if there is one.
    auto tap = [&](const std::vector<llvm::Value*>& w) {
      llvm::Value* inside = b.getTrue();
      std::vector<llvm::Value*> dims;
      for (std::size_t d = 0; d < x.size(); ++d) {
        const hlo::WindowDim& wd = window[d];
        // pos = out * stride + w * window_dilation - pad_lo, in the dilated operand.
        llvm::Value* pos = b.CreateSub(b.CreateAdd(b.CreateMul(out.dims[d], em.i64(wd.stride)),
                                                   b.CreateMul(w[d], em.i64(wd.window_dilation))),
                                       em.i64(wd.pad_lo));
        std::int64_t dilated = x[d] == 0 ? 0 : (x[d] - 1) * wd.base_dilation + 1;
        inside = b.CreateAnd(inside, b.CreateICmpULT(pos, em.i64(dilated)));  // 0 <= pos < dilated
        if (wd.base_dilation > 1) {
          llvm::Value* step = em.i64(wd.base_dilation);
          inside = b.CreateAnd(inside, b.CreateICmpEQ(b.CreateURem(pos, step), em.i64(0)));
          pos = b.CreateUDiv(pos, step);
        }
        dims.push_back(pos);
      }
      auto fold = [&] {
        llvm::Value* element = ops[0](IrIndex{dims, nullptr});
        return em.apply(*inst.called[0], {b.CreateLoad(type, acc), element});
      };
      b.CreateStore(
          checked ? em.if_else(
                        inside, fold, [&] { return b.CreateLoad(type, acc); }, "window.inside")
                  : fold(),
          acc);
    };
    // A small window's taps are written out, so the loop over the output stays the innermost
    // one and vectorizes (a 2x2 pool along the features, say).
    if (shape_size(window_shape) <= kUnrolledWindowTaps) {
      for_each_index(window_shape, [&](const std::vector<std::int64_t>& w) {
        std::vector<llvm::Value*> position;
        for (std::int64_t k : w) position.push_back(em.i64(k));
        tap(position);
      });
    } else {
      emit_loop_nest(em, window_shape, "window", [&](const IrIndex& w) { tap(w.dims); });
    }
    return b.CreateLoad(type, acc, "reduced");
  };
  return [&em, &inst, at](const IrIndex& out) { return em.hoisted(inst, out, at); };
}

// The index of the first NaN if any, else of the first extreme value, along one axis.
template <bool kMax>
ElementGenerator emit_arg(ElementalEmitter& em, const Instruction& inst, const Gens& ops) {
  const Shape& x = inst.operands[0]->shape.dims;
  if (!inst.attrs.has("dimensions") || inst.attrs.get_ints("dimensions").size() != 1)
    fail(inst, "needs dimensions={axis}");
  auto axis = static_cast<std::size_t>(inst.attrs.get_ints("dimensions")[0]);
  if (axis >= x.size()) fail(inst, "axis out of range");
  if (x[axis] < 1) fail(inst, "the reduced dimension is empty");
  if (!is_integral(inst.shape.dtype)) fail(inst, "the result dtype must be an integer");
  Shape out = x;
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(axis));
  if (out != inst.shape.dims) fail(inst, "the output shape is not the operand's without the axis");
  DType d = inst.operands[0]->shape.dtype;
  auto at = [&em, &inst, g = ops[0], x, axis, d](const IrIndex& index) {
    auto& b = em.b();
    auto at = [&](llvm::Value* k) {
      std::vector<llvm::Value*> dims = index.dims;
      dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(axis), k);
      return g(IrIndex{dims, nullptr});
    };
    llvm::Type* type = em.type(d);
    llvm::AllocaInst* best = em.entry_alloca(type, "best");
    llvm::AllocaInst* best_k = em.entry_alloca(b.getInt64Ty(), "best_k");
    b.CreateStore(at(em.i64(0)), best);
    b.CreateStore(em.i64(0), best_k);
    if (x[axis] > 1) {
      emit_for(em, x[axis] - 1, "arg", [&](llvm::Value* i) {
        llvm::Value* k = b.CreateAdd(i, em.i64(1), "", true, true);
        llvm::Value* v = at(k);
        llvm::Value* cur = b.CreateLoad(type, best);
        llvm::Value* take;
        if (is_floating(d)) {  // a NaN, once found, stays
          llvm::Value* better = kMax ? b.CreateFCmpOLT(cur, v) : b.CreateFCmpOLT(v, cur);
          take = b.CreateAnd(b.CreateFCmpORD(cur, cur), b.CreateOr(b.CreateFCmpUNO(v, v), better));
        } else {
          bool u = d == bool_ || is_unsigned(d);
          llvm::Value *lhs = kMax ? cur : v, *rhs = kMax ? v : cur;
          take = u ? b.CreateICmpULT(lhs, rhs) : b.CreateICmpSLT(lhs, rhs);
        }
        b.CreateStore(b.CreateSelect(take, v, cur), best);
        b.CreateStore(b.CreateSelect(take, k, b.CreateLoad(b.getInt64Ty(), best_k)), best_k);
      });
    }
    return b.CreateIntCast(b.CreateLoad(b.getInt64Ty(), best_k), em.type(inst.shape.dtype), true);
  };
  return [&em, &inst, at](const IrIndex& index) { return em.hoisted(inst, index, at); };
}

}  // namespace

void add_reduction_emitters(EmitterTable& t) {
  t.set(Opcode::kReduce, emit_reduce);
  t.set(Opcode::kArgMax, emit_arg<true>);
  t.set(Opcode::kArgMin, emit_arg<false>);
  t.set(Opcode::kReduceWindow, emit_reduce_window);
}

}  // namespace jx::codegen
