// The ElementalEmitter: table dispatch, composition of generators over a computation, and the IR
// helpers the per-opcode emitters share.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "codegen/elemental/elemental.hpp"
#include "codegen/elemental/target_calls.hpp"
#include "core/array_impl.hpp"
#include "jx/errors.hpp"

namespace jx::codegen {

using hlo::Instruction;
using hlo::Opcode;

const EmitterTable& elemental_emitters() {
  static const EmitterTable table = [] {
    EmitterTable t;
    add_unary_emitters(t);
    add_binary_emitters(t);
    add_layout_emitters(t);
    add_reduction_emitters(t);
    add_dot_emitter(t);
    add_gather_emitter(t);
    return t;
  }();
  return table;
}

llvm::Type* ir_type(llvm::LLVMContext& ctx, DType d) {
  if (d == bool_) return llvm::Type::getInt1Ty(ctx);
  if (d == float64) return llvm::Type::getDoubleTy(ctx);
  if (is_floating(d)) return llvm::Type::getFloatTy(ctx);  // the 16-bit floats compute in f32
  return llvm::Type::getIntNTy(ctx, static_cast<unsigned>(8 * itemsize(d)));
}

llvm::Type* storage_type(llvm::LLVMContext& ctx, DType d) {
  if (d == bool_) return llvm::Type::getInt8Ty(ctx);
  if (d == bfloat16) return llvm::Type::getBFloatTy(ctx);
  if (d == float16) return llvm::Type::getHalfTy(ctx);
  return ir_type(ctx, d);
}

llvm::Value* narrow_float(llvm::IRBuilder<>& b, llvm::Value* v, DType d) {
  llvm::Type* type = v->getType();  // a float or a vector of them
  if (d == float16) return b.CreateFPTrunc(v, type->getWithNewType(b.getHalfTy()));
  // bfloat16: the high half of the float's bits, rounded to nearest even by adding 0x7fff plus
  // the lowest kept bit (a carry past the exponent gives inf, as it should); NaN stays quiet.
  // Integer IR that every target has, whatever its bfloat16 instructions.
  llvm::Type* i32 = type->getWithNewType(b.getInt32Ty());
  auto c = [&](std::uint32_t k) { return llvm::ConstantInt::get(i32, k); };
  llvm::Value* bits = b.CreateBitCast(v, i32);
  llvm::Value* high = b.CreateLShr(bits, c(16));
  llvm::Value* lsb = b.CreateAnd(high, c(1));
  llvm::Value* rounded = b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(lsb, c(0x7fff))), c(16));
  llvm::Value* quiet = b.CreateOr(high, c(0x40));
  llvm::Value* half = b.CreateSelect(b.CreateFCmpUNO(v, v), quiet, rounded);
  return b.CreateBitCast(b.CreateTrunc(half, type->getWithNewType(b.getInt16Ty())),
                         type->getWithNewType(b.getBFloatTy()));
}

llvm::Value* widen_float(llvm::IRBuilder<>& b, llvm::Value* v) {
  llvm::Type* type = v->getType();  // a half or bfloat, or a vector of them
  llvm::Type* f32 = type->getWithNewType(b.getFloatTy());
  if (type->getScalarType()->isHalfTy()) return b.CreateFPExt(v, f32);
  // bfloat16 → float: its bits are the float's high half.
  llvm::Value* bits = b.CreateZExt(b.CreateBitCast(v, type->getWithNewType(b.getInt16Ty())),
                                   type->getWithNewType(b.getInt32Ty()));
  return b.CreateBitCast(b.CreateShl(bits, 16), f32);
}

ElementGenerator ElementalEmitter::generator(const Instruction& inst,
                                             std::vector<ElementGenerator> operands) {
  auto op = static_cast<std::size_t>(inst.opcode);
  if (GeneratorEmitter g = table_.generator[op]) return g(*this, inst, operands);
  if (ScalarEmitter s = table_.scalar[op]) {
    // Elementwise: every operand is read at the output's index, except that a 0-d operand
    // (clamp's bounds, select's predicate) is read at the empty index.
    std::vector<bool> is_scalar;
    for (const Instruction* o : inst.operands) {
      is_scalar.push_back(o->shape.rank() == 0 && inst.shape.rank() > 0);
      if (!is_scalar.back() && o->shape.dims != inst.shape.dims)
        throw CompileError("codegen: " + inst.name + " has operand " + o->name + " of shape " +
                           o->shape.str() + ", not " + inst.shape.str());
    }
    return [this, &inst, s, operands = std::move(operands), is_scalar](const IrIndex& index) {
      llvm::SmallVector<llvm::Value*, 3> values;
      for (std::size_t k = 0; k < operands.size(); ++k)
        values.push_back(operands[k](is_scalar[k] ? scalar_index() : index));
      llvm::Value* v = s(*this, inst, values);
      // A 16-bit float computes in f32 and rounds where it is stored, so a fused chain rounds
      // once (XLA's default excess precision); a conversion to it rounds where it stands.
      DType d = inst.shape.dtype;
      bool round_here = k16BitFloating.contains(d) && inst.opcode == hlo::Opcode::kConvert;
      return round_here ? widen_float(b_, narrow(v, d)) : v;
    };
  }
  throw CompileError("codegen: no element generator for HLO " +
                     std::string(hlo::info(inst.opcode).name) + " (" + inst.name + ")");
}

std::vector<ElementGenerator> ElementalEmitter::outputs(const hlo::Computation& c,
                                                        std::vector<ElementGenerator> parameters) {
  if (!c.root()) throw CompileError("codegen: computation " + c.name() + " has no root");
  std::vector<const Instruction*> wanted{c.root()};
  if (c.root()->opcode == Opcode::kTuple)
    wanted.assign(c.root()->operands.begin(), c.root()->operands.end());
  return generators_of(c, std::move(parameters), wanted);
}

std::vector<ElementGenerator> ElementalEmitter::generators_of(
    const hlo::Computation& c, std::vector<ElementGenerator> parameters,
    const std::vector<const Instruction*>& wanted, GivenGenerators given) {
  // Generators are built for what the outputs reach, operands first.
  std::unordered_map<const Instruction*, ElementGenerator> built = std::move(given);
  std::unordered_map<const Instruction*, int> uses;
  for (const Instruction* i : c.instructions())
    for (const Instruction* o : i->operands) ++uses[o];
  std::function<const ElementGenerator&(const Instruction*)> build =
      [&](const Instruction* i) -> const ElementGenerator& {
    if (auto it = built.find(i); it != built.end()) return it->second;
    if (i->opcode == Opcode::kParameter) {
      auto n = static_cast<std::size_t>(i->parameter_number);
      if (n >= parameters.size())
        throw CompileError("codegen: " + c.name() + " reads parameter " + std::to_string(n) +
                           " of " + std::to_string(parameters.size()));
      return built[i] = parameters[n];
    }
    std::vector<ElementGenerator> operands;
    for (const Instruction* o : i->operands) operands.push_back(build(o));
    // Users hold the generator through a shared pointer: copying it into each user by value
    // would copy its operands' generators too, once per path through a shared value.
    auto g = std::make_shared<ElementGenerator>(generator(*i, std::move(operands)));
    // A value several users read is computed once per element, for the same reason.
    if (uses[i] > 1)
      return built[i] = [this, i, g](const IrIndex& index) { return hoisted(*i, index, *g); };
    return built[i] = [g](const IrIndex& index) { return (*g)(index); };
  };
  std::vector<ElementGenerator> out;
  for (const Instruction* i : wanted) out.push_back(build(i));
  return out;
}

ElementGenerator ElementalEmitter::computation(const hlo::Computation& c,
                                               std::vector<ElementGenerator> parameters) {
  if (c.root() && c.root()->opcode == Opcode::kTuple)
    throw CompileError("codegen: computation " + c.name() + " has a tuple root");
  return outputs(c, std::move(parameters)).front();
}

llvm::Value* ElementalEmitter::apply(const hlo::Computation& c, llvm::ArrayRef<llvm::Value*> args) {
  if (!c.root()) throw CompileError("codegen: computation " + c.name() + " has no root");
  std::unordered_map<const Instruction*, llvm::Value*> values;
  for (const Instruction* i : c.instructions()) {
    if (i->opcode == Opcode::kParameter) {
      auto n = static_cast<std::size_t>(i->parameter_number);
      if (n >= args.size())
        throw CompileError("codegen: " + c.name() + " reads parameter " + std::to_string(n) +
                           " of " + std::to_string(args.size()));
      values[i] = args[n];
      continue;
    }
    std::vector<ElementGenerator> operands;
    for (const Instruction* o : i->operands)
      operands.push_back([v = values.at(o)](const IrIndex&) { return v; });
    values[i] = generator(*i, std::move(operands))(scalar_index());
  }
  return values.at(c.root());
}

llvm::Value* ElementalEmitter::narrow(llvm::Value* v, DType d) {
  if (d == bfloat16 && math_.target_calls().round_bf16) return emit_round_bf16(b_, v);
  return narrow_float(b_, v, d);
}

llvm::Value* ElementalEmitter::load(DType d, llvm::Value* base, llvm::Value* linear,
                                    const llvm::Twine& name) {
  llvm::Type* t = storage_type(ctx(), d);
  llvm::Value* v = b_.CreateLoad(t, b_.CreateInBoundsGEP(t, base, linear), name);
  if (k16BitFloating.contains(d)) return widen_float(b_, v);
  return d == bool_ ? b_.CreateICmpNE(v, b_.getInt8(0)) : v;
}

void ElementalEmitter::store(DType d, llvm::Value* value, llvm::Value* base, llvm::Value* linear) {
  llvm::Type* t = storage_type(ctx(), d);
  if (d == bool_) value = b_.CreateZExt(value, t);
  if (k16BitFloating.contains(d)) value = narrow(value, d);
  b_.CreateStore(value, b_.CreateInBoundsGEP(t, base, linear));
}

llvm::Value* ElementalEmitter::linear_index(const IrIndex& index, const Shape& shape) {
  if (index.linear) return index.linear;
  llvm::Value* linear = i64(0);
  for (std::size_t d = 0; d < shape.size(); ++d)
    linear = b_.CreateAdd(b_.CreateMul(linear, i64(shape[d]), "", true, true), index.dims[d], "",
                          true, true);
  return linear;
}

IrIndex ElementalEmitter::delinearize(llvm::Value* linear, const Shape& shape) {
  IrIndex index{std::vector<llvm::Value*>(shape.size()), linear};
  std::int64_t stride = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) {
      index.dims[d] = i64(0);
      continue;
    }
    llvm::Value* v = stride == 1 ? linear : b_.CreateUDiv(linear, i64(stride));
    // Past the outermost dim that is not 1, the quotient needs no remainder.
    bool outermost = std::all_of(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(d),
                                 [](std::int64_t n) { return n == 1; });
    index.dims[d] = outermost ? v : b_.CreateURem(v, i64(shape[d]));
    stride *= shape[d];
  }
  return index;
}

llvm::Value* ElementalEmitter::if_else(llvm::Value* cond,
                                       const std::function<llvm::Value*()>& then_fn,
                                       const std::function<llvm::Value*()>& else_fn,
                                       const llvm::Twine& name) {
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  auto* then_bb = llvm::BasicBlock::Create(ctx(), name + ".then", fn);
  auto* else_bb = llvm::BasicBlock::Create(ctx(), name + ".else", fn);
  auto* merge_bb = llvm::BasicBlock::Create(ctx(), name + ".merge", fn);
  b_.CreateCondBr(cond, then_bb, else_bb);
  // Each branch is a scope: what it computes is reused only inside it.
  auto in_branch = [&](const std::function<llvm::Value*()>& fn) {
    ++branch_depth_;
    branch_scopes_.emplace_back();
    llvm::Value* v = fn();
    for (const MemoKey& key : branch_scopes_.back()) memo_.erase(key);
    branch_scopes_.pop_back();
    --branch_depth_;
    return v;
  };
  b_.SetInsertPoint(then_bb);
  llvm::Value* then_v = in_branch(then_fn);
  llvm::BasicBlock* then_end = b_.GetInsertBlock();
  b_.CreateBr(merge_bb);
  b_.SetInsertPoint(else_bb);
  llvm::Value* else_v = in_branch(else_fn);
  llvm::BasicBlock* else_end = b_.GetInsertBlock();
  b_.CreateBr(merge_bb);
  b_.SetInsertPoint(merge_bb);
  llvm::PHINode* phi = b_.CreatePHI(then_v->getType(), 2, name);
  phi->addIncoming(then_v, then_end);
  phi->addIncoming(else_v, else_end);
  return phi;
}

llvm::AllocaInst* ElementalEmitter::entry_alloca(llvm::Type* type, const llvm::Twine& name) {
  llvm::BasicBlock& entry = b_.GetInsertBlock()->getParent()->getEntryBlock();
  llvm::IRBuilder<> eb(&entry, entry.getFirstInsertionPt());
  return eb.CreateAlloca(type, nullptr, name);
}

llvm::GlobalVariable* ElementalEmitter::literal_global(const Instruction& constant) {
  if (auto it = literals_.find(&constant); it != literals_.end()) return it->second;
  if (!constant.literal || constant.literal->shape() != constant.shape.dims ||
      constant.literal->dtype() != constant.shape.dtype)
    throw CompileError("codegen: constant " + constant.name + " has no literal of its shape");
  DType d = constant.shape.dtype;
  auto n = static_cast<std::uint64_t>(constant.shape.size());
  const auto* bytes =
      static_cast<const char*>(concrete_buffer(*constant.literal, "codegen").data());
  llvm::Constant* init = llvm::ConstantDataArray::getRaw(llvm::StringRef(bytes, n * itemsize(d)), n,
                                                         storage_type(ctx(), d));
  auto* g = new llvm::GlobalVariable(module(), init->getType(), /*isConstant=*/true,
                                     llvm::GlobalValue::PrivateLinkage, init, constant.name);
  g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  g->setAlignment(llvm::Align(64));
  return literals_[&constant] = g;
}

llvm::Value* ElementalEmitter::clamped_start(llvm::Value* v, DType d, std::int64_t max) {
  v = is_unsigned(d) ? b_.CreateZExtOrTrunc(v, b_.getInt64Ty())
                     : b_.CreateSExtOrTrunc(v, b_.getInt64Ty());
  v = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, v, i64(max));
  return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, v, i64(0));
}

void ElementalEmitter::push_loop(llvm::Value* induction, llvm::Instruction* entry) {
  loops_.push_back({induction, entry, branch_depth_, {}, {}, {}});
}

void ElementalEmitter::pop_loop() {
  for (const MemoKey& key : loops_.back().memo_keys) memo_.erase(key);
  loops_.pop_back();
}

// -1 when the index is made of constants; loops_.size() when it uses a value computed in the
// loop body (not an induction variable or one derived from it where its body begins), which
// pins it where it is.
int ElementalEmitter::innermost_loop_used(const IrIndex& index) const {
  int deepest = -1;
  for (llvm::Value* v : index.dims) {
    if (llvm::isa<llvm::Constant>(v)) continue;
    auto it = std::find_if(loops_.begin(), loops_.end(), [v](const Loop& l) {
      return l.induction == v ||
             std::find(l.derived.begin(), l.derived.end(), v) != l.derived.end();
    });
    if (it == loops_.end()) return static_cast<int>(loops_.size());
    deepest = std::max(deepest, static_cast<int>(it - loops_.begin()));
  }
  return deepest;
}

bool ElementalEmitter::emit_before_loop(std::size_t target, const std::function<void()>& emit) {
  // Split the preheader of the target loop before its branch and emit there, with the loops
  // from the target inward out of scope.
  llvm::Instruction* anchor = loops_[target].entry;
  llvm::BasicBlock* before = anchor->getParent();
  llvm::BasicBlock* after = before->splitBasicBlock(anchor, "hoisted");
  before->getTerminator()->eraseFromParent();
  std::vector<Loop> inner(loops_.begin() + static_cast<std::ptrdiff_t>(target), loops_.end());
  loops_.resize(target);
  int saved_depth = branch_depth_;
  branch_depth_ = inner.front().branch_depth;
  {
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    b_.SetInsertPoint(before);
    emit();
    b_.CreateBr(after);
  }
  // Unconditional code dominates everything after it while the loops it uses are open.
  bool dominates_later = branch_depth_ == 0;
  branch_depth_ = saved_depth;
  loops_.insert(loops_.end(), inner.begin(), inner.end());
  return dominates_later;
}

llvm::Value* ElementalEmitter::hoisted(const Instruction& inst, const IrIndex& index,
                                       const std::function<llvm::Value*(const IrIndex&)>& compute) {
  int used = innermost_loop_used(index);
  auto target = static_cast<std::size_t>(used + 1);
  MemoKey key{&inst, index.dims};
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  if (target >= loops_.size()) {
    // Computed here: reusable until the innermost open loop or branch closes.
    llvm::Value* value = compute(index);
    int depth = loops_.empty() ? 0 : loops_.back().branch_depth;
    memo_[key] = value;
    if (branch_depth_ > depth)
      branch_scopes_.back().push_back(std::move(key));
    else if (!loops_.empty())
      loops_.back().memo_keys.push_back(std::move(key));
    return value;
  }
  llvm::Value* value = nullptr;
  if (emit_before_loop(target, [&] { value = compute(IrIndex{index.dims, nullptr}); })) {
    memo_[key] = value;
    if (used >= 0) loops_[static_cast<std::size_t>(used)].memo_keys.push_back(std::move(key));
  }
  return value;
}

IrIndex ElementalEmitter::delinearize_loop_index(llvm::Value* linear, const Shape& shape) {
  auto it = std::find_if(loops_.begin(), loops_.end(),
                         [linear](const Loop& l) { return l.induction == linear; });
  // In the innermost loop (or none) it is computed in place, as anything using it would be.
  if (it == loops_.end() || std::next(it) == loops_.end()) return delinearize(linear, shape);
  for (const auto& [dims, index] : it->indices)
    if (dims == shape) return index;
  auto used = static_cast<std::size_t>(it - loops_.begin());
  IrIndex index;
  bool dominates_later = emit_before_loop(used + 1, [&] { index = delinearize(linear, shape); });
  Loop& loop = loops_[used];
  loop.derived.insert(loop.derived.end(), index.dims.begin(), index.dims.end());
  if (dominates_later) loop.indices.emplace_back(shape, index);
  return index;
}

void check_emittable(const hlo::Instruction& root, const std::string& target) {
  auto fail = [&](const std::string& why) {
    throw CompileError("codegen: cannot emit a " + target + " kernel for " + root.name + ": " +
                       why);
  };
  std::string op(hlo::info(root.opcode).name);
  switch (hlo::runs_as(root.opcode)) {
    case hlo::RunsAs::kNothing: {  // a constant still has an element generator
      const EmitterTable& t = elemental_emitters();
      auto k = static_cast<std::size_t>(root.opcode);
      if (!t.scalar[k] && !t.generator[k]) return fail(op + " has no kernel");
      break;
    }
    case hlo::RunsAs::kHost:
      return fail(op + " runs on the host, not as a kernel");
    case hlo::RunsAs::kNested:
      return fail(op + " runs as nested programs, not as a kernel");
    case hlo::RunsAs::kKernel:
    case hlo::RunsAs::kLibraryOrKernel:
      break;
  }
  if (root.shape.is_tuple && root.opcode != hlo::Opcode::kFusion) fail("tuple-shaped result");
  for (const hlo::Instruction* o : root.operands)
    if (o->shape.is_tuple) fail("tuple-shaped operand " + o->name);
}

}  // namespace jx::codegen
