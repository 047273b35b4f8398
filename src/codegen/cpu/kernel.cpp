// A kernel: the ABI entry loads the buffer pointers and calls an always-inlined body whose
// pointer arguments are noalias (buffer assignment never lets an output overlap its inputs), so
// LLVM may vectorize; the body is a loop nest over the output writing through the generator.
#include "codegen/cpu/kernel.hpp"

#include "codegen/cpu/cpu_emitters.hpp"
#include "codegen/cpu/loops.hpp"
#include "jx/errors.hpp"

namespace jx::codegen::cpu {

using hlo::Instruction;
using hlo::Opcode;

const EmitterTable& cpu_emitters() {
  static const EmitterTable table = [] {
    EmitterTable t = elemental_emitters();
    add_reduction_emitters(t);
    add_dot_emitter(t);
    return t;
  }();
  return table;
}

namespace {

void check_emittable(const Instruction& root) {
  auto fail = [&](const std::string& why) {
    throw CompileError("codegen: cannot emit a CPU kernel for " + root.name + ": " + why);
  };
  if (root.opcode == Opcode::kParameter || root.opcode == Opcode::kTuple ||
      root.opcode == Opcode::kGetTupleElement)
    fail(std::string(hlo::info(root.opcode).name) + " has no kernel");
  if (root.shape.is_tuple) fail("tuple-shaped result");
  for (const Instruction* o : root.operands)
    if (o->shape.is_tuple) fail("tuple-shaped operand " + o->name);
}

}  // namespace

void emit_kernel(llvm::Module& module, const Instruction& root, const std::string& name) {
  check_emittable(root);
  llvm::LLVMContext& ctx = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(ctx);
  std::size_t n = root.operands.size();

  auto* body =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                                     std::vector<llvm::Type*>(n + 1, ptr), false),
                             llvm::GlobalValue::InternalLinkage, name + ".body", module);
  body->addFnAttr(llvm::Attribute::AlwaysInline);
  body->setDoesNotThrow();
  for (unsigned k = 0; k <= n; ++k) {
    body->addParamAttr(k, llvm::Attribute::NoAlias);
    body->addParamAttr(k, llvm::Attribute::NoCapture);
    if (k < n) body->addParamAttr(k, llvm::Attribute::ReadOnly);
  }

  auto* entry =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false),
                             llvm::GlobalValue::ExternalLinkage, name, module);
  entry->setDoesNotThrow();
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  std::vector<llvm::Value*> buffers;
  for (std::size_t k = 0; k <= n; ++k)
    buffers.push_back(b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), k),
                                   "buffer" + std::to_string(k)));
  b.CreateCall(body, buffers);
  b.CreateRetVoid();

  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", body));
  ElementalEmitter em(b, cpu_math_table(), cpu_emitters());
  std::vector<ElementGenerator> operands;
  for (std::size_t k = 0; k < n; ++k) {
    const hlo::HloShape& shape = root.operands[k]->shape;
    operands.push_back(
        [&em, arg = body->getArg(static_cast<unsigned>(k)), shape](const IrIndex& i) {
          return em.load(shape.dtype, arg, em.linear_index(i, shape.dims), "x");
        });
  }
  ElementGenerator gen = em.generator(root, std::move(operands));
  llvm::Value* out = body->getArg(static_cast<unsigned>(n));
  emit_loop_nest(em, root.shape.dims, "out", [&](const IrIndex& index) {
    em.store(root.shape.dtype, gen(index), out, em.linear_index(index, root.shape.dims));
  });
  b.CreateRetVoid();
}

}  // namespace jx::codegen::cpu
