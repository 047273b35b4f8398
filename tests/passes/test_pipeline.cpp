// PassPipeline and the CPU pipeline: the fixed point of simplification on HLO text, the dump
// hook, and verification between passes catching a pass that breaks the module.
#include <catch2/catch.hpp>

#include "hlo/hlo_testing.hpp"
#include "passes/dce.hpp"
#include "passes/pipeline.hpp"

namespace jx::passes {
namespace {

using hlo::testing::error_of;

TEST_CASE("cpu pipeline: simplification runs to a fixed point", "[passes]") {
  // (x * (1 + 0·iota)) + (x * (1 + 0·iota)): folding makes ones, the simplifier drops the
  // multiplies, CSE merges what is left, DCE sweeps; fusion makes one kernel of the rest.
  auto module =
      hlo::parse_module(R"(HloModule jit_f, entry_computation_layout={(f32[3]{0})->f32[3]{0}}

ENTRY %main.1 (x.2: f32[3]) -> f32[3] {
  %x.2 = f32[3]{0} parameter(0)
  %zero.3 = f32[] constant(0)
  %one.4 = f32[] constant(1)
  %zeros.5 = f32[3]{0} broadcast(f32[] %zero.3), dimensions={}
  %ones.6 = f32[3]{0} broadcast(f32[] %one.4), dimensions={}
  %iota.7 = f32[3]{0} iota(), iota_dimension=0
  %m.8 = f32[3]{0} multiply(f32[3]{0} %zeros.5, f32[3]{0} %iota.7)
  %a.9 = f32[3]{0} add(f32[3]{0} %ones.6, f32[3]{0} %m.8)
  %p.10 = f32[3]{0} multiply(f32[3]{0} %x.2, f32[3]{0} %a.9)
  %q.11 = f32[3]{0} multiply(f32[3]{0} %a.9, f32[3]{0} %x.2)
  %e.12 = f32[3]{0} exponential(f32[3]{0} %p.10)
  %f.13 = f32[3]{0} exponential(f32[3]{0} %q.11)
  %unused.14 = f32[3]{0} sine(f32[3]{0} %x.2)
  ROOT %r.15 = f32[3]{0} add(f32[3]{0} %e.12, f32[3]{0} %f.13)
}
)");
  std::vector<std::string> dumped;
  PipelineOptions options;
  options.verify = true;
  options.dump_pass_re = "^(cse|dce)$";
  options.dump = [&](const std::string& pass, const std::string&) { dumped.push_back(pass); };
  run_pipeline(*module, options);
  CHECK(hlo::to_string(*module) ==
        R"(HloModule jit_f, entry_computation_layout={(f32[3]{0})->f32[3]{0}}

%fused_computation.21 (param.22: f32[3]) -> f32[3] {
  %param.22 = f32[3]{0} parameter(0)
  %exponential.23 = f32[3]{0} exponential(f32[3]{0} %param.22)
  ROOT %add.24 = f32[3]{0} add(f32[3]{0} %exponential.23, f32[3]{0} %exponential.23)
}

ENTRY %main.1 (x.2: f32[3]) -> f32[3] {
  %x.2 = f32[3]{0} parameter(0)
  ROOT %fusion.25 = f32[3]{0} fusion(f32[3]{0} %x.2), kind=kLoop, calls=%fused_computation.21
}
)");
  // Round 1 folds the ones, round 2 drops the multiplies and merges, round 3 finds nothing;
  // then fusion puts what is left into one kernel and its DCE sweeps.
  CHECK(dumped == std::vector<std::string>{"cse", "dce", "cse", "dce", "cse", "dce", "dce"});
}

// A broken pass: points the root's first operand at an instruction of another computation.
class Breaker final : public Pass {
 public:
  std::string name() const override { return "breaker"; }
  bool run(hlo::Module& module) override {
    hlo::Computation* other = module.add_computation("other");
    auto p = std::make_unique<hlo::Instruction>();
    p->opcode = hlo::Opcode::kParameter;
    p->shape = module.entry()->root()->operands[0]->shape;
    p->parameter_number = 0;
    other->set_root(other->add(std::move(p)));
    module.entry()->root()->operands[0] = other->root();
    return true;
  }
};

TEST_CASE("pass pipeline: the verifier between passes names the pass", "[passes]") {
  const char* text = R"(HloModule m, entry_computation_layout={(f32[3]{0})->f32[3]{0}}

ENTRY %main.1 (x.2: f32[3]) -> f32[3] {
  %x.2 = f32[3]{0} parameter(0)
  ROOT %neg.3 = f32[3]{0} negate(f32[3]{0} %x.2)
}
)";
  PipelineOptions options;
  options.verify = true;
  {
    auto module = hlo::parse_module(text);
    PassPipeline pipeline("test", options);
    pipeline.add<Dce>();
    pipeline.add<Breaker>();
    CHECK(error_of<CompileError>([&] { pipeline.run(*module); }) ==
          "after pass breaker: HLO verifier: neg.3: operand %parameter.5 is not in computation "
          "%main.1");
  }
  {  // Without verification the pipeline runs through; and an unchanged module reports false.
    auto module = hlo::parse_module(text);
    options.verify = false;
    PassPipeline pipeline("test", options);
    Dce& dce = pipeline.add<Dce>();
    CHECK(dce.name() == "dce");
    CHECK_FALSE(pipeline.run(*module));
    pipeline.add<Breaker>();
    CHECK(pipeline.run(*module));
  }
  {  // A dump regex that does not compile is the caller's error, named.
    auto module = hlo::parse_module(text);
    options.dump_pass_re = "(";
    options.dump = [](const std::string&, const std::string&) {};
    PassPipeline pipeline("test", options);
    std::string error = error_of<Error>([&] { pipeline.run(*module); });
    CHECK(error.rfind("bad dump_hlo_pass_re '(': ", 0) == 0);
  }
}

}  // namespace
}  // namespace jx::passes
