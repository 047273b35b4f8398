#include "codegen/elemental/interleave.hpp"

#include <algorithm>
#include <unordered_map>

namespace jx::codegen {

namespace {

// Independent operations a core needs at hand to keep its floating-point pipes busy: 2 pipes
// starting one each cycle, each result ready 4 cycles later (a multiply-add on x86 and AArch64
// cores alike).
constexpr int kOperationsInFlight = 2 * 4;
constexpr int kMaxInterleave = 8;
// What the copies may hold in all, since each costs compile time (more than in proportion, for a
// long body), and the iterations a copy needs to pay for itself (16 vectors of 16 lanes).
constexpr std::int64_t kMaxInterleavedOperations = 1024;
constexpr std::int64_t kTripsPerCopy = 256;

// Whether `inst` occupies a floating-point pipe for a full operation: arithmetic, a comparison, a
// conversion or a call (exp's ldexp, the intrinsics) giving floats. Moves of bits (bitcasts,
// selects, sign changes) and integer work on a float's bits are left out: they are short and run
// on other pipes.
bool is_float_operation(const llvm::Instruction& inst) {
  if (llvm::isa<llvm::FCmpInst>(inst)) return true;
  if (!inst.getType()->isFPOrFPVectorTy()) return false;
  if (llvm::isa<llvm::BinaryOperator>(inst) || llvm::isa<llvm::SIToFPInst>(inst) ||
      llvm::isa<llvm::UIToFPInst>(inst) || llvm::isa<llvm::FPTruncInst>(inst) ||
      llvm::isa<llvm::FPExtInst>(inst))
    return true;
  if (auto* call = llvm::dyn_cast<llvm::CallInst>(&inst)) {
    llvm::Intrinsic::ID id = call->getIntrinsicID();
    return id != llvm::Intrinsic::fabs && id != llvm::Intrinsic::copysign;
  }
  return false;
}

bool holds_a_loop(llvm::ArrayRef<llvm::BasicBlock*> body) {
  return std::any_of(body.begin(), body.end(), [](llvm::BasicBlock* block) {
    const llvm::Instruction* end = block->getTerminator();
    return end && end->getMetadata(llvm::LLVMContext::MD_loop);
  });
}

}  // namespace

int interleave_count(llvm::ArrayRef<llvm::BasicBlock*> body, std::optional<std::int64_t> trips) {
  if (holds_a_loop(body)) return 1;
  // The longest chain ending at each value, in floating-point operations; values from before the
  // loop start chains.
  std::unordered_map<const llvm::Value*, int> chain;
  int operations = 0, longest = 0;
  for (llvm::BasicBlock* block : body) {
    for (const llvm::Instruction& inst : *block) {
      int before = 0;
      for (const llvm::Use& operand : inst.operands())
        if (auto it = chain.find(operand.get()); it != chain.end())
          before = std::max(before, it->second);
      bool counts = is_float_operation(inst);
      operations += counts;
      chain[&inst] = before + counts;
      longest = std::max(longest, before + counts);
    }
  }
  if (operations == 0) return 1;
  auto affordable = [&](int next) {
    return next * operations <= kMaxInterleavedOperations &&
           (!trips || next * kTripsPerCopy <= *trips);
  };
  int count = 1;
  while (count < kMaxInterleave && count * operations < kOperationsInFlight * longest &&
         affordable(2 * count))
    count *= 2;
  return count;
}

}  // namespace jx::codegen
