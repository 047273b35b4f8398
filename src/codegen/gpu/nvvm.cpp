// NVVM IR building blocks: special registers, bar.sync, membar.gl, shfl.sync, addrspace(1) and
// addrspace(3) globals, the nvvm.annotations that make a function a kernel, and the loops
// kernels are made of.
#define JX_LLVM_NVPTX
#include "codegen/gpu/nvvm.hpp"

#include <limits>

#include "codegen/elemental/loops.hpp"

namespace jx::codegen::gpu {
namespace {

constexpr unsigned kGlobalAddressSpace = 1;
constexpr unsigned kSharedAddressSpace = 3;

llvm::Value* special_register(ElementalEmitter& em, llvm::Intrinsic::ID id, const char* name) {
  auto& b = em.b();
  return b.CreateZExt(b.CreateIntrinsic(id, {}, {}), b.getInt64Ty(), name);
}

llvm::GlobalVariable* module_array(llvm::Module& module, llvm::ArrayType* array,
                                   const std::string& name, bool zeroed, unsigned address_space) {
  llvm::Constant* init = zeroed
                             ? static_cast<llvm::Constant*>(llvm::ConstantAggregateZero::get(array))
                             : llvm::UndefValue::get(array);
  auto* g = new llvm::GlobalVariable(module, array, /*isConstant=*/false,
                                     llvm::GlobalValue::InternalLinkage, init, name, nullptr,
                                     llvm::GlobalValue::NotThreadLocal, address_space);
  g->setAlignment(llvm::Align(8));
  return g;
}

}  // namespace

llvm::Value* thread_id(ElementalEmitter& em) {
  return special_register(em, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, "tid");
}

llvm::Value* block_id(ElementalEmitter& em) {
  return special_register(em, llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, "ctaid");
}

void barrier(ElementalEmitter& em) {
  em.b().CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
}

namespace {

// shfl.sync in one direction, every lane taking part: `clamp` 0x1f keeps down's source lanes
// within the warp, 0 keeps up's at or above lane 0.
llvm::Value* shuffle(ElementalEmitter& em, llvm::Value* v, int offset, bool up) {
  auto& b = em.b();
  llvm::Type* type = v->getType();
  llvm::Type* i32 = b.getInt32Ty();
  auto shuffle32 = [&](llvm::Value* x) {
    bool f32 = x->getType()->isFloatTy();
    auto id =
        up ? (f32 ? llvm::Intrinsic::nvvm_shfl_sync_up_f32 : llvm::Intrinsic::nvvm_shfl_sync_up_i32)
           : (f32 ? llvm::Intrinsic::nvvm_shfl_sync_down_f32
                  : llvm::Intrinsic::nvvm_shfl_sync_down_i32);
    return b.CreateIntrinsic(
        id, {}, {b.getInt32(0xffffffffu), x, b.getInt32(offset), b.getInt32(up ? 0 : 0x1f)});
  };
  if (type->isFloatTy() || type->isIntegerTy(32)) return shuffle32(v);
  if (type->isIntegerTy() && type->getIntegerBitWidth() < 32)
    return b.CreateTrunc(shuffle32(b.CreateZExt(v, i32)), type);
  // 64 bits: the two halves apart.
  llvm::Value* bits = type->isDoubleTy() ? b.CreateBitCast(v, b.getInt64Ty()) : v;
  llvm::Value* lo = shuffle32(b.CreateTrunc(bits, i32));
  llvm::Value* hi = shuffle32(b.CreateTrunc(b.CreateLShr(bits, 32), i32));
  llvm::Value* joined = b.CreateOr(b.CreateZExt(lo, b.getInt64Ty()),
                                   b.CreateShl(b.CreateZExt(hi, b.getInt64Ty()), 32));
  return type->isDoubleTy() ? b.CreateBitCast(joined, type) : joined;
}

}  // namespace

llvm::Value* shuffle_down(ElementalEmitter& em, llvm::Value* v, int offset) {
  return shuffle(em, v, offset, /*up=*/false);
}

llvm::Value* shuffle_up(ElementalEmitter& em, llvm::Value* v, int offset) {
  return shuffle(em, v, offset, /*up=*/true);
}

llvm::GlobalVariable* shared_array(llvm::Module& module, llvm::Type* type, std::uint64_t count,
                                   const std::string& name) {
  // Shared memory cannot be initialized: its initial value is undefined.
  return module_array(module, llvm::ArrayType::get(type, count), name, false, kSharedAddressSpace);
}

llvm::GlobalVariable* global_array(llvm::Module& module, llvm::Type* type, std::uint64_t count,
                                   const std::string& name) {
  return module_array(module, llvm::ArrayType::get(type, count), name, true, kGlobalAddressSpace);
}

llvm::Value* array_element(ElementalEmitter& em, llvm::GlobalVariable* array, llvm::Value* index) {
  return em.b().CreateInBoundsGEP(array->getValueType(), array, {em.i64(0), index});
}

void fence_device(ElementalEmitter& em) {
  em.b().CreateIntrinsic(llvm::Intrinsic::nvvm_membar_gl, {}, {});
}

void mark_kernel(llvm::Function& f, int max_threads) {
  // LLVM 19 has no kernel calling convention for NVPTX: kernels are named in nvvm.annotations.
  llvm::LLVMContext& ctx = f.getContext();
  llvm::NamedMDNode* annotations = f.getParent()->getOrInsertNamedMetadata("nvvm.annotations");
  auto annotate = [&](const char* key, int value) {
    annotations->addOperand(
        llvm::MDNode::get(ctx, {llvm::ValueAsMetadata::get(&f), llvm::MDString::get(ctx, key),
                                llvm::ConstantAsMetadata::get(
                                    llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), value))}));
  };
  annotate("kernel", 1);
  annotate("maxntidx", max_threads);
}

void emit_strided_loop(ElementalEmitter& em, llvm::Value* start, std::int64_t end,
                       std::int64_t step, const std::string& name,
                       const std::function<void(llvm::Value*)>& body) {
  // `start` differs between threads, so the loop is guarded; it is never unrolled.
  emit_strided_for(em, start, em.i64(end), step, name, body);
}

void emit_unrolled_loop(ElementalEmitter& em, llvm::Value* start, std::int64_t end,
                        std::int64_t step, int unroll, const std::string& name,
                        const std::function<void(const std::vector<llvm::Value*>&)>& body) {
  auto& b = em.b();
  llvm::Value* rest = start;
  if (unroll > 1 && end > (unroll - 1) * step) {
    // Turns of `unroll` while the last of them is in range: `whole` of them from `start`.
    std::int64_t limit = end - (unroll - 1) * step, turn = unroll * step;
    llvm::Value* ahead = b.CreateSub(em.i64(limit), start);
    llvm::Value* whole =
        b.CreateSelect(b.CreateICmpSGT(ahead, em.i64(0)),
                       b.CreateUDiv(b.CreateAdd(ahead, em.i64(turn - 1)), em.i64(turn)), em.i64(0));
    emit_strided_loop(em, start, limit, turn, name, [&](llvm::Value* i) {
      std::vector<llvm::Value*> at{i};
      for (int u = 1; u < unroll; ++u)
        at.push_back(b.CreateAdd(i, em.i64(u * step), "", true, true));
      body(at);
    });
    rest = b.CreateAdd(start, b.CreateMul(whole, em.i64(turn)), name + ".rest");
  }
  emit_strided_loop(em, rest, end, step, name + ".tail", [&](llvm::Value* i) { body({i}); });
}

LoopIndex::LoopIndex(ElementalEmitter& em, llvm::Value* linear, const Shape& shape,
                     const std::string& name)
    : em_(em) {
  auto& b = em.b();
  index_ = IrIndex{std::vector<llvm::Value*>(shape.size()), linear};
  bool narrow = shape_size(shape) <= std::numeric_limits<std::int32_t>::max();
  if (shape.size() == 1) {
    index_.dims[0] = shape[0] == 1 ? em.i64(0) : linear;
  } else if (narrow) {
    llvm::Value* l = b.CreateTrunc(linear, b.getInt32Ty());
    std::int64_t stride = 1;
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (shape[d] == 1) {
        index_.dims[d] = em.i64(0);
        continue;
      }
      llvm::Value* v =
          stride == 1 ? l : b.CreateUDiv(l, b.getInt32(static_cast<std::uint32_t>(stride)));
      if (d > 0) v = b.CreateURem(v, b.getInt32(static_cast<std::uint32_t>(shape[d])));
      index_.dims[d] = b.CreateZExt(v, b.getInt64Ty(), name + "." + std::to_string(d));
      stride *= shape[d];
    }
  } else {
    index_ = em.delinearize(linear, shape);
  }
  // Hoisted code goes just before this branch, where every dim is known.
  auto* body = llvm::BasicBlock::Create(em.ctx(), name + ".body", b.GetInsertBlock()->getParent());
  llvm::Instruction* entry = b.CreateBr(body);
  b.SetInsertPoint(body);
  for (llvm::Value* d : index_.dims) {
    if (llvm::isa<llvm::Constant>(d)) continue;
    em.push_loop(d, entry);
    ++pushed_;
  }
}

LoopIndex::~LoopIndex() {
  for (int k = 0; k < pushed_; ++k) em_.pop_loop();
}

}  // namespace jx::codegen::gpu
