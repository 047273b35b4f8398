// Helpers for the fusion passes' tests: run a pass on HLO text and look at the fusions it made.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "hlo/hlo_testing.hpp"

namespace jx::passes::testing {

using hlo::Instruction;
using hlo::Opcode;

// Runs pass P on `text`, which it must change, and parses the printed result back for
// structural checks.
template <class P>
inline std::unique_ptr<hlo::Module> fused(const std::string& text) {
  auto [changed, out] = hlo::testing::run_pass<P>(text);
  INFO(out);
  CHECK(changed);
  return hlo::parse_module(out);
}

inline std::vector<Instruction*> entry_fusions(const hlo::Module& m) {
  std::vector<Instruction*> out;
  for (Instruction* i : m.entry()->instructions())
    if (i->opcode == Opcode::kFusion) out.push_back(i);
  return out;
}

// The opcode names a fusion computes (parameters left out), operands first.
inline std::vector<std::string> ops_of(const Instruction& fusion) {
  std::vector<std::string> out;
  for (const Instruction* i : fusion.called.at(0)->instructions())
    if (i->opcode != Opcode::kParameter) out.emplace_back(hlo::info(i->opcode).name);
  return out;
}

inline bool has(const std::vector<std::string>& ops, const std::string& op) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

// How many instructions named `op` run: in the ENTRY and in its fusions' computations.
inline int count_op(const hlo::Module& m, const std::string& op) {
  int n = 0;
  for (const Instruction* i : m.entry()->instructions()) {
    if (hlo::info(i->opcode).name == op) ++n;
    if (i->opcode == Opcode::kFusion)
      for (const std::string& f : ops_of(*i)) n += f == op;
  }
  return n;
}

inline Instruction* find(const hlo::Module& m, const std::string& name) {
  for (const hlo::Computation* c : m.computations())
    for (Instruction* i : c->instructions())
      if (i->name == name) return i;
  FAIL("no instruction " << name);
  return nullptr;
}

// Row softmax of f32[ROWS,8]; ROWS is filled in.
inline const std::string kSoftmax =
    R"(HloModule m, entry_computation_layout={(f32[ROWS,8]{1,0})->f32[ROWS,8]{1,0}}

%max.1 (a.2: f32[], b.3: f32[]) -> f32[] {
  %a.2 = f32[] parameter(0)
  %b.3 = f32[] parameter(1)
  ROOT %m.4 = f32[] maximum(f32[] %a.2, f32[] %b.3)
}

%add.5 (a.6: f32[], b.7: f32[]) -> f32[] {
  %a.6 = f32[] parameter(0)
  %b.7 = f32[] parameter(1)
  ROOT %s.8 = f32[] add(f32[] %a.6, f32[] %b.7)
}

ENTRY %main.9 (x.10: f32[ROWS,8]) -> f32[ROWS,8] {
  %x.10 = f32[ROWS,8]{1,0} parameter(0)
  %ninf.11 = f32[] constant(-inf)
  %mx.12 = f32[ROWS]{0} reduce(f32[ROWS,8]{1,0} %x.10, f32[] %ninf.11), dimensions={1}, to_apply=%max.1
  %bmx.13 = f32[ROWS,8]{1,0} broadcast(f32[ROWS]{0} %mx.12), dimensions={0}
  %s.14 = f32[ROWS,8]{1,0} subtract(f32[ROWS,8]{1,0} %x.10, f32[ROWS,8]{1,0} %bmx.13)
  %e.15 = f32[ROWS,8]{1,0} exponential(f32[ROWS,8]{1,0} %s.14)
  %zero.16 = f32[] constant(0)
  %sum.17 = f32[ROWS]{0} reduce(f32[ROWS,8]{1,0} %e.15, f32[] %zero.16), dimensions={1}, to_apply=%add.5
  %bsum.18 = f32[ROWS,8]{1,0} broadcast(f32[ROWS]{0} %sum.17), dimensions={0}
  ROOT %d.19 = f32[ROWS,8]{1,0} divide(f32[ROWS,8]{1,0} %e.15, f32[ROWS,8]{1,0} %bsum.18)
}
)";

inline std::string softmax_text(int rows) {
  std::string t = kSoftmax;
  for (std::size_t at; (at = t.find("ROWS")) != std::string::npos;)
    t.replace(at, 4, std::to_string(rows));
  return t;
}

}  // namespace jx::passes::testing
