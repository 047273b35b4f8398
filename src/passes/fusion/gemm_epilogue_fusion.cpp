#include "passes/fusion/gemm_epilogue_fusion.hpp"

#include "hlo/gemm.hpp"
#include "passes/fusion/outline.hpp"
#include "support/check.hpp"

namespace jx::passes {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// The dot operand of `f` that f's epilogue applies to, when f is a loop fusion of one output
// computing activation(dot + bias) (or of the dot rounded to 16 bits), or f is that rounding
// alone, and f is the only reader of that dot.
Instruction* epilogue_dot(const hlo::Computation& entry, const hlo::UserIndex& users,
                          const Instruction& f, const GemmEpilogueFusion::Fuses& fuses) {
  auto fits = [&](Instruction* dot) {
    return hlo::fits_gemm_epilogue(*dot) && dot != entry.root() && users(dot).size() == 1;
  };
  if (f.opcode == Opcode::kConvert && k16BitFloating.contains(f.shape.dtype)) {
    Instruction* dot = f.operands[0];
    return dot->opcode == Opcode::kDot && fits(dot) && fuses(*dot, f.shape.dtype) ? dot : nullptr;
  }
  if (f.opcode != Opcode::kFusion || f.shape.is_tuple || f.attrs.get_string("kind") != "kLoop")
    return nullptr;
  const hlo::Computation& fused = *f.called[0];
  for (const Instruction* p : fused.parameters()) {
    Instruction* dot = f.operands[static_cast<std::size_t>(p->parameter_number)];
    if (!fits(dot)) continue;
    const Instruction& value = hlo::epilogue_value(fused, *p);
    if (!fuses(*dot, value.shape.dtype)) continue;
    std::optional<hlo::EpilogueMatch> m = hlo::match_epilogue(*fused.root(), value);
    if (m && (!m->bias || m->bias->opcode == Opcode::kParameter)) return dot;
  }
  return nullptr;
}

}  // namespace

bool GemmEpilogueFusion::run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* entry : hlo::program_computations(module))
    changed |=
        fusion::rewrite_to_fixed_point(*entry, [&](Instruction* f, const hlo::UserIndex& users) {
          Instruction* dot = epilogue_dot(*entry, users, *f, fuses_);
          if (!dot) return false;
          Instruction* fused = fusion::outline(*entry, {{dot, f}, {}});
          JX_CHECK(hlo::as_gemm_epilogue(*fused), "gemm-epilogue-fusion: " << fused->name);
          return true;
        });
  return changed;
}

}  // namespace jx::passes
