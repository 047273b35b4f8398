// Element generators (XLA's elemental IR emitter): for an instruction, given generators for its
// operands (index → llvm::Value*), a generator for its output. Per-opcode emitters live in
// tables; CPU and GPU share them and differ in loop emission and in their MathTable.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/elemental/math_table.hpp"
#include "codegen/llvm_headers.hpp"
#include "core/slice_map.hpp"
#include "hlo/ir.hpp"

namespace jx::codegen {

// An index into a shape: one i64 value per dimension, plus the row-major linear index when it is
// at hand (loops compute it incrementally; elementwise ops pass it on; reshapes need it).
struct IrIndex {
  std::vector<llvm::Value*> dims;
  llvm::Value* linear = nullptr;
};

using ElementGenerator = std::function<llvm::Value*(const IrIndex&)>;

class ElementalEmitter;

// Elementwise ops map operand values to the result value; every other op maps operand
// generators to a generator.
using ScalarEmitter = llvm::Value* (*)(ElementalEmitter& em, const hlo::Instruction& inst,
                                       llvm::ArrayRef<llvm::Value*> operands);
using GeneratorEmitter = ElementGenerator (*)(ElementalEmitter& em, const hlo::Instruction& inst,
                                              const std::vector<ElementGenerator>& operands);

struct EmitterTable {
  std::array<ScalarEmitter, hlo::kNumOpcodes> scalar{};
  std::array<GeneratorEmitter, hlo::kNumOpcodes> generator{};

  void set(hlo::Opcode op, ScalarEmitter f) { scalar[static_cast<std::size_t>(op)] = f; }
  void set(hlo::Opcode op, GeneratorEmitter f) { generator[static_cast<std::size_t>(op)] = f; }
};

// Each family file registers its opcodes.
void add_unary_emitters(EmitterTable& table);      // elemental_unary.cpp (and convert)
void add_binary_emitters(EmitterTable& table);     // elemental_binary.cpp (compare, select, clamp)
void add_layout_emitters(EmitterTable& table);     // elemental_layout.cpp (and constant, iota)
void add_reduction_emitters(EmitterTable& table);  // elemental_reduce.cpp: reduce, argmax,
                                                   // argmin, reduce-window
void add_dot_emitter(EmitterTable& table);         // elemental_dot.cpp
void add_gather_emitter(EmitterTable& table);      // elemental_gather.cpp
const EmitterTable& elemental_emitters();          // all of the above

// Throws jx::CompileError unless `root` can be a kernel on `target` ("CPU", "GPU"): its opcode
// runs as one (hlo::RunsAs) and no operand or result of a lone instruction is a tuple.
void check_emittable(const hlo::Instruction& root, const std::string& target);

// A reduce's operand dims split into kept (in order, they index the output) and reduced
// (ascending: elements fold in row-major order, as the eager impl visits them);
// jx::CompileError when its attributes do not fit its shapes.
struct ReduceSplit {
  std::vector<std::int64_t> kept, reduced;
};
ReduceSplit split_reduce_dims(const hlo::Instruction& reduce);
// Whether the loop of `reduce` folds its operand's rows in chunks, calling a ChunkHook
// (ElementalEmitter::hook_row_chunks) before each: it reduces the last dim alone, a multiple of
// kRowChunk of at least two chunks.
bool folds_in_row_chunks(const hlo::Instruction& reduce);
inline constexpr std::int64_t kRowChunk = 256;  // 1 KiB of float32

// LLVM types of jx dtypes: in registers pred is i1, in memory one byte.
llvm::Type* ir_type(llvm::LLVMContext& ctx, DType d);
llvm::Type* storage_type(llvm::LLVMContext& ctx, DType d);
// bfloat16 and float16 compute in f32 (ir_type) and are stored as bfloat and half
// (storage_type): narrow_float rounds an f32 value (or vector) to d's storage type (nearest
// even), and widen_float brings a stored value (or vector) back to f32, exactly.
llvm::Value* narrow_float(llvm::IRBuilder<>& b, llvm::Value* v, DType d);
llvm::Value* widen_float(llvm::IRBuilder<>& b, llvm::Value* v);

// XLA's convert: float → int saturates and maps NaN to 0; anything → pred is `!= 0`.
llvm::Value* emit_convert(llvm::IRBuilder<>& b, llvm::Value* v, DType from, DType to);

// Emits IR for generators at the builder's insertion point, inside one function.
class ElementalEmitter {
 public:
  ElementalEmitter(llvm::IRBuilder<>& b, const MathTable& math, const EmitterTable& table)
      : b_(b), math_(math), table_(table) {}

  llvm::IRBuilder<>& b() { return b_; }
  llvm::LLVMContext& ctx() { return b_.getContext(); }
  llvm::Module& module() { return *b_.GetInsertBlock()->getModule(); }
  const MathTable& math() const { return math_; }

  // The generator of `inst` from its operands' generators; jx::CompileError if no emitter.
  ElementGenerator generator(const hlo::Instruction& inst, std::vector<ElementGenerator> operands);
  // The generator of a computation's root, its parameters bound to `parameters`.
  ElementGenerator computation(const hlo::Computation& c, std::vector<ElementGenerator> parameters);
  // The generators of a computation's outputs: its root's elements when the root is a tuple
  // (a multi-output fusion), else the root alone.
  std::vector<ElementGenerator> outputs(const hlo::Computation& c,
                                        std::vector<ElementGenerator> parameters);
  // The generators of some instructions of a computation, with `given` generators standing in
  // for the instructions they name: a kernel that computes some instructions itself (a GPU
  // block reduction) reads their operands through these and gives their values to their users.
  using GivenGenerators = std::unordered_map<const hlo::Instruction*, ElementGenerator>;
  std::vector<ElementGenerator> generators_of(const hlo::Computation& c,
                                              std::vector<ElementGenerator> parameters,
                                              const std::vector<const hlo::Instruction*>& wanted,
                                              GivenGenerators given = {});
  // A scalar computation (reduce's to_apply) applied to values: each of its instructions once,
  // in order (never hoisted: its values depend on the arguments, whatever the index).
  llvm::Value* apply(const hlo::Computation& c, llvm::ArrayRef<llvm::Value*> args);

  // IR helpers for emitters.
  llvm::Type* type(DType d) { return ir_type(ctx(), d); }
  llvm::Constant* i64(std::int64_t v) { return b_.getInt64(static_cast<std::uint64_t>(v)); }
  IrIndex scalar_index() { return {{}, i64(0)}; }
  // element `linear` of a dense buffer at `base`
  llvm::Value* load(DType d, llvm::Value* base, llvm::Value* linear, const llvm::Twine& name = "");
  void store(DType d, llvm::Value* value, llvm::Value* base, llvm::Value* linear);
  // An f32 value rounded to the 16-bit float d: narrow_float, or the target's call for bfloat16
  // (MathTable::target_calls).
  llvm::Value* narrow(llvm::Value* v, DType d);
  llvm::Value* linear_index(const IrIndex& index, const Shape& shape);  // index.linear, or computed
  IrIndex delinearize(llvm::Value* linear, const Shape& shape);
  // delinearize of a loop's induction variable, computed where that loop's body begins (before
  // the loops inside it), and counted as that loop's index: what `hoisted` computes at it moves
  // out of the inner loops, as at the induction variable itself (a kernel's rows that take in
  // several dims, each row's reductions computed once).
  IrIndex delinearize_loop_index(llvm::Value* linear, const Shape& shape);
  // cond ? then_fn() : else_fn(), each emitted in its own block (so neither runs speculatively).
  llvm::Value* if_else(llvm::Value* cond, const std::function<llvm::Value*()>& then_fn,
                       const std::function<llvm::Value*()>& else_fn, const llvm::Twine& name);
  // A stack slot in the function's entry block, where mem2reg finds it.
  llvm::AllocaInst* entry_alloca(llvm::Type* type, const llvm::Twine& name);
  // A prefetch for reading (or `write`) of the cache line holding `at` into every cache level
  // (or, not `first_level`, the second and beyond). Any address will do: past a buffer's end it
  // fetches nothing and cannot fault.
  void prefetch(llvm::Value* at, bool write = false, bool first_level = true) {
    b_.CreateIntrinsic(
        llvm::Intrinsic::prefetch, {at->getType()},
        {at, b_.getInt32(write ? 1 : 0), b_.getInt32(first_level ? 3 : 2), b_.getInt32(1)});
  }
  // A constant instruction's literal as a private global (one per instruction and module).
  llvm::GlobalVariable* literal_global(const hlo::Instruction& constant);
  // A 0-d index operand (dynamic-slice starts) as an i64, clamped to [0, max].
  llvm::Value* clamped_start(llvm::Value* v, DType d, std::int64_t max);

  // Loops enclosing the insertion point, outermost first. A loop emitter pushes a loop once its
  // induction variable exists; `entry` is the preheader's branch into the loop.
  void push_loop(llvm::Value* induction, llvm::Instruction* entry);
  void pop_loop();
  // The value of `inst` at `index`, computed once: for an instruction with loops of its own
  // (reduce, dot) or one several users read. It is emitted just outside the outermost
  // enclosing loop the index does not depend on (or in place), and reused by later requests
  // for the same element while that code dominates them. This is what makes
  // `x - broadcast(max(x))` over rows one pass per row, not one per element.
  llvm::Value* hoisted(const hlo::Instruction& inst, const IrIndex& index,
                       const std::function<llvm::Value*(const IrIndex&)>& compute);

  // Work emitted before each chunk of a loop run in chunks: hook(first, count), `first` the
  // chunk's first linear index and `count` its elements (a loop nest's, loops.hpp's LoopChunks).
  using ChunkHook = std::function<void(llvm::Value* first, std::int64_t count)>;
  // A row kernel's work interleaved with a reduction's loop (one over the trailing dim of its
  // operand, folds_in_row_chunks): the hook runs before each chunk of `count` elements it
  // folds, `first` the chunk's linear index in the operand. A kernel that reads each
  // row from memory in one pass and computes from the cache in the next (a softmax's max, then
  // its exp and sum) prefetches the next row there, and one that stashes the row writes the
  // last row's output there (cpu/row_stash.hpp). The loop vectorizer does not widen a loop
  // holding a prefetch, so the chunks are a loop around the folding one.
  void hook_row_chunks(const hlo::Instruction& reduce, ChunkHook hook) {
    row_chunk_hooks_[&reduce] = std::move(hook);
  }
  const ChunkHook* row_chunk_hook(const hlo::Instruction& reduce) const {
    auto it = row_chunk_hooks_.find(&reduce);
    return it == row_chunk_hooks_.end() ? nullptr : &it->second;
  }

  // Whether the loop over the elements a reduce folds is being emitted (between a
  // ReductionScope's construction and destruction).
  bool reducing() const { return reductions_ > 0; }
  struct ReductionScope {
    explicit ReductionScope(ElementalEmitter& em) : em(em) { ++em.reductions_; }
    ~ReductionScope() { --em.reductions_; }
    ReductionScope(const ReductionScope&) = delete;
    ReductionScope& operator=(const ReductionScope&) = delete;
    ElementalEmitter& em;
  };

 private:
  using MemoKey = std::pair<const hlo::Instruction*, std::vector<llvm::Value*>>;
  struct Loop {
    llvm::Value* induction;
    llvm::Instruction* entry;
    int branch_depth;                // of the loop's preheader
    std::vector<MemoKey> memo_keys;  // values that use this loop's induction variable
    // delinearize_loop_index's values, and its indices by shape while they dominate the body
    std::vector<llvm::Value*> derived;
    std::vector<std::pair<Shape, IrIndex>> indices;
  };
  int innermost_loop_used(const IrIndex& index) const;
  // Runs `emit` in the preheader of loops_[target], with the loops from it inward out of scope;
  // whether what it emits dominates the rest of the enclosing loop's body (not when loop
  // `target` was entered inside a branch).
  bool emit_before_loop(std::size_t target, const std::function<void()>& emit);

  llvm::IRBuilder<>& b_;
  const MathTable& math_;
  const EmitterTable& table_;
  std::unordered_map<const hlo::Instruction*, llvm::GlobalVariable*> literals_;
  std::vector<Loop> loops_;
  int branch_depth_ = 0;  // inside if_else: values computed here may not dominate later uses
  int reductions_ = 0;    // open ReductionScopes
  std::unordered_map<const hlo::Instruction*, ChunkHook> row_chunk_hooks_;
  std::vector<std::vector<MemoKey>> branch_scopes_;  // memo entries made in each open branch
  std::map<MemoKey, llvm::Value*> memo_;
};

// jx::CompileError "codegen: <opcode> <name>: <what>" for an instruction codegen cannot emit.
[[noreturn]] inline void fail(const hlo::Instruction& inst, const std::string& what) {
  throw CompileError("codegen: " + std::string(hlo::info(inst.opcode).name) + " " + inst.name +
                     ": " + what);
}

// Gather and scatter (elemental_gather.cpp): their dimension numbers from HLO attributes, and
// where an element of a gather's result or of a scatter's updates meets the operand — its
// operand index, the start clamped into the operand as XLA clamps it, and whether the start was
// in bounds (a scatter drops the update when it was not).
SliceMap gather_slice_map(const hlo::Instruction& gather);
SliceMap scatter_slice_map(const hlo::Instruction& scatter);
struct SliceTarget {
  std::vector<llvm::Value*> dims;
  llvm::Value* in_bounds;
};
SliceTarget emit_slice_target(ElementalEmitter& em, const SliceMap& m, const Shape& operand,
                              const Shape& window, DType index_dtype,
                              const ElementGenerator& indices, const IrIndex& element);

}  // namespace jx::codegen
