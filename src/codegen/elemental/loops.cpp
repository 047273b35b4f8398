// Counted loops and loop nests, emitted bottom-tested.
#include "codegen/elemental/loops.hpp"

#include <llvm/TargetParser/Triple.h>

#include "codegen/elemental/interleave.hpp"

namespace jx::codegen {

namespace {

// A reduction's loop carries its accumulator from one vector to the next, so it runs this many
// vectors at a time on as many accumulators, enough to keep a max's or an add's latency covered
// (and the order of its sums fixed).
constexpr int kReductionInterleave = 4;

// Loop metadata: never unroll; no vectorizing unless `vectorize` (then LLVM decides). A short
// loop of constant trip count would otherwise be unrolled whole and its copies SLP-vectorized,
// which costs far more compile time than the loop vectorizer and runs no faster. Not unrolling
// also keeps the vectorizer from interleaving, except `interleave` iterations where more than 1.
llvm::MDNode* loop_metadata(llvm::LLVMContext& ctx, bool vectorize, int interleave) {
  auto hint = [&](const char* name, llvm::Constant* value) {
    return llvm::MDNode::get(
        ctx, {llvm::MDString::get(ctx, name), llvm::ConstantAsMetadata::get(value)});
  };
  std::vector<llvm::Metadata*> ops{
      nullptr, llvm::MDNode::get(ctx, llvm::MDString::get(ctx, "llvm.loop.unroll.disable"))};
  if (!vectorize)
    ops.push_back(hint("llvm.loop.vectorize.enable", llvm::ConstantInt::getFalse(ctx)));
  else if (interleave > 1)
    ops.push_back(hint("llvm.loop.interleave.count",
                       llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), interleave)));
  llvm::MDNode* id = llvm::MDNode::getDistinct(ctx, ops);
  id->replaceOperandWith(0, id);  // a loop ID names itself
  return id;
}

// emit_for over [begin, end) whose vectorized part runs from the first multiple of `aligned`
// to the last, scalar loops taking the rest. With `chunks`, the vectorized part runs in them,
// `base` + i being iteration i's linear index and `extent` the most iterations there are.
void emit_aligned_for(ElementalEmitter& em, llvm::Value* begin, llvm::Value* end,
                      std::int64_t aligned, const std::string& name,
                      const std::function<void(llvm::Value*)>& body, const LoopChunks* chunks,
                      llvm::Value* base, std::int64_t extent) {
  auto& b = em.b();
  llvm::Value* mask = em.i64(-aligned);
  // A masked value, so that its trailing zeros are known to the optimizer.
  llvm::Value* start = b.CreateAnd(b.CreateAdd(begin, em.i64(aligned - 1), "", true, true), mask);
  llvm::Value* stop = b.CreateAnd(end, mask);
  llvm::Value* head_end = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, start, end);
  emit_for(em, begin, head_end, name + ".head", body, /*vectorize=*/false);
  if (!chunks || extent <= chunks->size) {  // a row of one chunk keeps its constant bounds
    if (chunks) chunks->before(b.CreateAdd(base, start, "", true, true), extent);
    emit_for(em, start, stop, name, body);
  } else {
    auto chunk = [&](llvm::Value* first) {
      chunks->before(b.CreateAdd(base, first, "", true, true), chunks->size);
      llvm::Value* last = b.CreateAdd(first, em.i64(chunks->size), "", true, true);
      emit_for(em, first, b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, last, stop), name, body);
    };
    emit_strided_for(em, start, stop, chunks->size, name + ".chunks", chunk, /*vectorize=*/false);
  }
  emit_for(em, b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, head_end, stop), end, name + ".tail",
           body, /*vectorize=*/false);
}

}  // namespace

void emit_strided_for(ElementalEmitter& em, llvm::Value* begin, llvm::Value* end, std::int64_t step,
                      const std::string& name, const std::function<void(llvm::Value*)>& body,
                      bool vectorize) {
  auto* first = llvm::dyn_cast<llvm::ConstantInt>(begin);
  auto* last = llvm::dyn_cast<llvm::ConstantInt>(end);
  if (first && last && first->getSExtValue() >= last->getSExtValue()) return;
  llvm::IRBuilder<>& b = em.b();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* preheader = b.GetInsertBlock();
  auto* loop_bb = llvm::BasicBlock::Create(b.getContext(), name + ".loop", fn);
  auto* exit_bb = llvm::BasicBlock::Create(b.getContext(), name + ".exit", fn);
  bool known_nonempty = llvm::isa<llvm::Constant>(begin) && llvm::isa<llvm::Constant>(end);
  llvm::Instruction* entry = known_nonempty
                                 ? b.CreateBr(loop_bb)
                                 : b.CreateCondBr(b.CreateICmpSLT(begin, end), loop_bb, exit_bb);
  b.SetInsertPoint(loop_bb);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, name);
  i->addIncoming(begin, preheader);
  em.push_loop(i, entry);
  body(i);
  em.pop_loop();
  // A GPU thread's loops have no vectors to fill: interleaving would only lengthen them.
  int interleave = 1;
  if (vectorize && !llvm::Triple(em.module().getTargetTriple()).isNVPTX()) {
    // The body's blocks: the loop's first, then those created since the exit (appended in order).
    std::vector<llvm::BasicBlock*> body_blocks{loop_bb};
    for (auto it = std::next(exit_bb->getIterator()); it != fn->end(); ++it)
      body_blocks.push_back(&*it);
    std::optional<std::int64_t> trips;
    if (first && last) trips = (last->getSExtValue() - first->getSExtValue() + step - 1) / step;
    interleave = em.reducing() ? kReductionInterleave : interleave_count(body_blocks, trips);
  }
  // i < end and step are far below 2^62, so the sum cannot wrap.
  llvm::Value* next = b.CreateAdd(i, b.getInt64(static_cast<std::uint64_t>(step)), name + ".next",
                                  /*HasNUW=*/true, /*HasNSW=*/true);
  llvm::BranchInst* latch = b.CreateCondBr(b.CreateICmpSLT(next, end), loop_bb, exit_bb);
  latch->setMetadata(llvm::LLVMContext::MD_loop,
                     loop_metadata(b.getContext(), vectorize, interleave));
  i->addIncoming(next, b.GetInsertBlock());
  b.SetInsertPoint(exit_bb);
}

void emit_while(ElementalEmitter& em, const std::string& name,
                const std::function<llvm::Value*()>& cond, const std::function<void()>& body) {
  llvm::IRBuilder<>& b = em.b();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  auto* head = llvm::BasicBlock::Create(b.getContext(), name + ".head", fn);
  auto* body_bb = llvm::BasicBlock::Create(b.getContext(), name + ".body", fn);
  auto* exit = llvm::BasicBlock::Create(b.getContext(), name + ".exit", fn);
  b.CreateBr(head);
  b.SetInsertPoint(head);
  b.CreateCondBr(cond(), body_bb, exit);
  b.SetInsertPoint(body_bb);
  body();
  b.CreateBr(head);
  b.SetInsertPoint(exit);
}

void emit_if(ElementalEmitter& em, llvm::Value* cond, const std::string& name,
             const std::function<void()>& then_fn) {
  emit_if_else(em, cond, name, then_fn, [] {});
}

void emit_if_else(ElementalEmitter& em, llvm::Value* cond, const std::string& name,
                  const std::function<void()>& then_fn, const std::function<void()>& else_fn) {
  // The emitter's if_else scopes what each branch memoizes; its value is unused.
  llvm::Value* none = em.b().getFalse();
  auto run = [none](const std::function<void()>& fn) {
    fn();
    return none;
  };
  em.if_else(
      cond, [&] { return run(then_fn); }, [&] { return run(else_fn); }, name);
}

void emit_for(ElementalEmitter& em, llvm::Value* begin, llvm::Value* end, const std::string& name,
              const std::function<void(llvm::Value*)>& body, bool vectorize) {
  emit_strided_for(em, begin, end, 1, name, body, vectorize);
}

void emit_for(ElementalEmitter& em, std::int64_t n, const std::string& name,
              const std::function<void(llvm::Value*)>& body, bool vectorize) {
  emit_for(em, em.i64(0), em.i64(n), name, body, vectorize);
}

void emit_loop_nest(ElementalEmitter& em, const Shape& shape, const std::string& name,
                    const std::function<void(const IrIndex&)>& body,
                    const std::optional<OuterRange>& outer, std::int64_t aligned,
                    Vectorize vectorize_as, const LoopChunks* chunks) {
  if (shape_size(shape) == 0) return;
  bool vectorize =
      vectorize_as == Vectorize::kYes || (vectorize_as == Vectorize::kIfLarge &&
                                          (outer || shape_size(shape) >= kMinVectorizedElements));
  std::vector<llvm::Value*> dims(shape.size());
  std::function<void(std::size_t, llvm::Value*)> level = [&](std::size_t d, llvm::Value* linear) {
    if (d == shape.size()) {
      body(IrIndex{dims, linear});
      return;
    }
    auto inner = [&](llvm::Value* i) {
      dims[d] = i;
      auto& b = em.b();
      level(d + 1,
            b.CreateAdd(b.CreateMul(linear, em.i64(shape[d]), "", true, true), i, "", true, true));
    };
    std::string loop_name = name + "." + std::to_string(d);
    if (aligned > 1 && vectorize && d + 1 == shape.size())
      emit_aligned_for(em, d == 0 && outer ? outer->begin : em.i64(0),
                       d == 0 && outer ? outer->end : em.i64(shape[d]), aligned, loop_name, inner,
                       chunks, em.b().CreateMul(linear, em.i64(shape[d]), "", true, true),
                       shape[d]);
    else if (d == 0 && outer)
      emit_for(em, outer->begin, outer->end, loop_name, inner, vectorize);
    else if (shape[d] == 1)
      inner(em.i64(0));
    else
      emit_for(em, shape[d], loop_name, inner, vectorize);
  };
  level(0, em.i64(0));
}

void emit_tiled_loop_nest(ElementalEmitter& em, const Shape& shape, std::size_t d,
                          std::int64_t tile, const std::string& name,
                          const std::function<void(const IrIndex&)>& body,
                          const std::optional<OuterRange>& outer) {
  if (shape_size(shape) == 0) return;
  auto& b = em.b();
  std::size_t last = shape.size() - 1;
  std::vector<llvm::Value*> dims(shape.size()), starts(shape.size());
  auto begin = [&](std::size_t k) { return k == 0 && outer ? outer->begin : em.i64(0); };
  auto end = [&](std::size_t k) { return k == 0 && outer ? outer->end : em.i64(shape[k]); };
  // The run of dim k within its tile, from starts[k].
  auto run = [&](std::size_t k, const std::function<void()>& inner, bool vectorize) {
    llvm::Value* stop = b.CreateBinaryIntrinsic(
        llvm::Intrinsic::smin, b.CreateAdd(starts[k], em.i64(tile), "", true, true), end(k));
    emit_for(
        em, starts[k], stop, name + ".run" + std::to_string(k),
        [&](llvm::Value* i) {
          dims[k] = i;
          inner();
        },
        vectorize);
  };
  std::function<void(std::size_t)> level = [&](std::size_t k) {
    if (k == shape.size()) {
      run(
          d,
          [&] {
            run(
                last,
                [&] {
                  body(IrIndex{dims, em.linear_index({dims, nullptr}, shape)});
                },
                true);
          },
          false);
      return;
    }
    std::string loop_name = name + "." + std::to_string(k);
    if (k == d || k == last) {
      emit_strided_for(
          em, begin(k), end(k), tile, loop_name + ".tiles",
          [&](llvm::Value* i) {
            starts[k] = i;
            level(k + 1);
          },
          /*vectorize=*/false);
    } else if (shape[k] == 1 && !(k == 0 && outer)) {
      dims[k] = em.i64(0);
      level(k + 1);
    } else {
      emit_for(
          em, begin(k), end(k), loop_name,
          [&](llvm::Value* i) {
            dims[k] = i;
            level(k + 1);
          },
          /*vectorize=*/false);
    }
  };
  level(0);
}

}  // namespace jx::codegen
