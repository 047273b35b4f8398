// A kernel's entry: one pointer parameter per buffer, the operands read through generators, and
// the body of the kind kernel_plan chooses. Pointers that do not alias are noalias and operands
// only read are readonly, so loads may go through the read-only data cache.
#include "codegen/gpu/kernel.hpp"

#include "codegen/gpu/nvvm.hpp"
#include "hlo/fusion.hpp"
#include "jx/errors.hpp"
#include "support/check.hpp"

namespace jx::codegen::gpu {

using hlo::Instruction;
using hlo::Opcode;

KernelBody::KernelBody(const Instruction& root, ElementalEmitter& em,
                       std::vector<ElementGenerator> operands, std::vector<llvm::Value*> outputs)
    : root_(root),
      em_(em),
      operands_(std::move(operands)),
      outputs_(std::move(outputs)),
      shapes_(hlo::output_shapes(root)) {}

std::vector<ElementGenerator> KernelBody::output_generators() {
  if (root_.opcode == Opcode::kFusion) return em_.outputs(*root_.called[0], operands_);
  return {em_.generator(root_, operands_)};
}

std::vector<ElementGenerator> KernelBody::generators_of(
    const std::vector<const Instruction*>& insts, ElementalEmitter::GivenGenerators given) {
  if (root_.opcode == Opcode::kFusion)
    return em_.generators_of(*root_.called[0], operands_, insts, std::move(given));
  std::vector<ElementGenerator> out;
  for (const Instruction* inst : insts) {
    if (auto g = given.find(inst); g != given.end()) {
      out.push_back(g->second);
      continue;
    }
    auto it = std::find(root_.operands.begin(), root_.operands.end(), inst);
    JX_CHECK(it != root_.operands.end(), "not an operand of " + root_.name);
    out.push_back(operands_[static_cast<std::size_t>(it - root_.operands.begin())]);
  }
  return out;
}

GpuLaunch emit_kernel(llvm::Module& module, const KernelRequest& request, const std::string& symbol,
                      const MathTable& math) {
  const Instruction& root = *request.root;
  check_emittable(root, "GPU");
  llvm::LLVMContext& ctx = module.getContext();
  std::size_t n = root.operands.size(), outputs = hlo::output_shapes(root).size();
  std::vector<int> aliases = request.output_aliases;
  aliases.resize(outputs, -1);

  std::vector<llvm::Type*> params(n + outputs, llvm::PointerType::getUnqual(ctx));
  auto* f =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false),
                             llvm::GlobalValue::ExternalLinkage, symbol, module);
  f->setDoesNotThrow();
  // An aliased output's own parameter is never used: the operand's stays the only way to its
  // buffer, so it keeps noalias.
  for (unsigned k = 0; k < n + outputs; ++k) {
    bool aliased_output = k >= n && aliases[k - n] >= 0;
    if (aliased_output) continue;
    f->addParamAttr(k, llvm::Attribute::NoAlias);
    f->addParamAttr(k, llvm::Attribute::NoCapture);
    bool written = std::find(aliases.begin(), aliases.end(), static_cast<int>(k)) != aliases.end();
    if (k >= n && root.opcode != hlo::Opcode::kScatter)  // a scatter reads what it combines into
      f->addParamAttr(k, llvm::Attribute::WriteOnly);
    if (k < n && !written) f->addParamAttr(k, llvm::Attribute::ReadOnly);
  }

  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
  ElementalEmitter em(b, math, elemental_emitters());
  std::vector<ElementGenerator> operands;
  for (std::size_t k = 0; k < n; ++k) {
    const hlo::HloShape& shape = root.operands[k]->shape;
    llvm::Value* arg = f->getArg(static_cast<unsigned>(k));
    operands.push_back([&em, arg, shape](const IrIndex& i) {
      return em.load(shape.dtype, arg, em.linear_index(i, shape.dims), "x");
    });
  }
  std::vector<llvm::Value*> output_args;
  for (std::size_t j = 0; j < outputs; ++j)
    output_args.push_back(f->getArg(static_cast<unsigned>(aliases[j] >= 0 ? aliases[j] : n + j)));
  KernelBody body(root, em, std::move(operands), std::move(output_args));

  // Threads of the cooperative kinds write elements others read: only a loop kernel, where each
  // thread reads and writes one index, may compute in place.
  bool in_place = std::any_of(aliases.begin(), aliases.end(), [](int a) { return a >= 0; });
  KernelPlan plan = in_place && root.opcode != hlo::Opcode::kScatter ? KernelPlan{}
                                                                     : plan_kernel(root);
  GpuLaunch launch;
  switch (plan.kind) {
    case KernelKind::kLoop:
      launch = emit_loop_kernel(body);
      break;
    case KernelKind::kRow:
      launch = emit_row_kernel(body, plan);
      break;
    case KernelKind::kColumnReduction:
      launch = emit_column_kernel(body, plan.heroes);
      break;
    case KernelKind::kTranspose:
      launch = emit_transpose_kernel(body, *plan.heroes.front());
      break;
    case KernelKind::kScatter:
      launch = emit_scatter_kernel(body);
      break;
    case KernelKind::kScan:
      launch = emit_scan_kernel(body, *plan.heroes.front());
      break;
  }
  b.CreateRetVoid();
  mark_kernel(*f, launch.block);
  return launch;
}

}  // namespace jx::codegen::gpu
