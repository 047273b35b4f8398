// Convolution as GEMM: each HLO convolution becomes patches and a dot computing the same values
// (the evaluator runs the module before and after the pass).
#include <catch2/catch.hpp>

#include <random>

#include <jx/jx.hpp>

#include "hlo/convolution.hpp"
#include "hlo/evaluator.hpp"
#include "hlo/hlo_testing.hpp"
#include "passes/convolution_as_gemm.hpp"

namespace jx::passes {
namespace {

using hlo::testing::literal;

std::string shape_text(const Shape& s) {
  std::string dims, layout;
  for (std::size_t d = 0; d < s.size(); ++d) {
    dims += (d ? "," : "") + std::to_string(s[d]);
    layout += (d ? "," : "") + std::to_string(s.size() - 1 - d);
  }
  return "f32[" + dims + "]{" + layout + "}";
}

// A module of one convolution with these attributes.
std::string conv_module(const Shape& lhs, const Shape& rhs, const Shape& out,
                        const std::string& attrs) {
  std::string l = shape_text(lhs), r = shape_text(rhs), o = shape_text(out);
  return "HloModule m, entry_computation_layout={(" + l + ", " + r + ")->" + o +
         "}\n\nENTRY %main.1 (a.2: " + l + ", b.3: " + r + ") -> " + o + " {\n  %a.2 = " + l +
         " parameter(0)\n  %b.3 = " + r + " parameter(1)\n  ROOT %convolution.4 = " + o +
         " convolution(" + l + " %a.2, " + r + " %b.3), " + attrs + "\n}\n";
}

Array random_array(const Shape& s, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(static_cast<std::size_t>(shape_size(s)));
  for (float& x : v) x = u(rng);
  return literal(v, s);
}

// The module of one convolution, random operands, and its value before a pass: after it,
// rewritten() is the module's text, its values checked against before's.
struct Rewrite {
  std::shared_ptr<hlo::Module> module;
  std::vector<Array> args;
  std::vector<float> before;

  Rewrite(const Shape& lhs, const Shape& rhs, const Shape& out, const std::string& attrs)
      : module(hlo::parse_module(conv_module(lhs, rhs, out, attrs))) {
    hlo::verify(*module);
    std::mt19937 rng(7);
    args = {random_array(lhs, rng), random_array(rhs, rng)};
    before = hlo::evaluate(*module->entry(), args).to_vector<float>();
  }
  std::string rewritten() const {
    hlo::verify(*module);
    std::vector<float> after = hlo::evaluate(*module->entry(), args).to_vector<float>();
    REQUIRE(after.size() == before.size());
    for (std::size_t k = 0; k < after.size(); ++k)
      CHECK(after[k] == Approx(before[k]).margin(1e-5));
    return hlo::to_string(*module);
  }
};

// How the patches are built: by strided slices (one per tap or per window), by one gather, or
// not at all (the input is the patch matrix).
enum class Patches { kSlices, kGather, kNone };

void check_rewrite(const Shape& lhs, const Shape& rhs, const Shape& out, const std::string& attrs,
                   Patches patches = Patches::kSlices) {
  INFO(conv_module(lhs, rhs, out, attrs));
  Rewrite r(lhs, rhs, out, attrs);
  CHECK(ConvolutionAsGemm().run(*r.module));
  std::string rewritten = r.rewritten();
  INFO(rewritten);
  CHECK(rewritten.find("convolution(") == std::string::npos);
  CHECK(rewritten.find(" dot(") != std::string::npos);
  CHECK((rewritten.find(" gather(") != std::string::npos) == (patches == Patches::kGather));
  CHECK((rewritten.find(" slice(") != std::string::npos) == (patches == Patches::kSlices));
}

TEST_CASE("convolution-as-gemm: the dim_labels attribute prints and parses back", "[passes]") {
  auto module = hlo::parse_module(
      conv_module({1, 5, 5, 3}, {3, 3, 3, 4}, {1, 3, 3, 4},
                  "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"));
  hlo::testing::check_round_trip(*module);
  CHECK(hlo::to_string(*module).find("dim_labels=b01f_01io->b01f") != std::string::npos);
  // A kernel gradient's: its output's labels start with a spatial dim.
  module = hlo::parse_module(conv_module({4, 6, 6, 2}, {4, 5, 5, 3}, {2, 2, 2, 3},
                                         "window={size=5x5}, dim_labels=f01b_i01o->01bf"));
  hlo::testing::check_round_trip(*module);
  CHECK(hlo::to_string(*module).find("dim_labels=f01b_i01o->01bf") != std::string::npos);
}

TEST_CASE("convolution-as-gemm: NHWC, strided and padded", "[passes]") {
  check_rewrite({2, 5, 5, 3}, {3, 3, 3, 4}, {2, 3, 3, 4},
                "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f");
}

TEST_CASE("convolution-as-gemm: tap by tap, the patches keep the input's dims", "[passes]") {
  // 9 taps at 2 x 3 x 3 positions: the 9 slices side by side along the features, [2, 3, 3, 27],
  // so a kernel writing them never splits a flat row index into (batch, y, x).
  Rewrite r({2, 5, 5, 3}, {3, 3, 3, 4}, {2, 3, 3, 4},
            "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f");
  CHECK(ConvolutionAsGemm().run(*r.module));
  std::string rewritten = r.rewritten();
  INFO(rewritten);
  CHECK(rewritten.find("f32[2,3,3,27]{3,2,1,0} concatenate(f32[2,3,3,3]{3,2,1,0} %") !=
        std::string::npos);
  CHECK(rewritten.find("dimensions={3}") != std::string::npos);
}

TEST_CASE("convolution-as-gemm: NCHW with dilations and negative padding", "[passes]") {
  // lhs dilation 2: 4 → 7, padded -1 and 2 → 8; the window 2 dilated by 2 spans 3: 6 outputs.
  check_rewrite({1, 2, 4, 3}, {3, 2, 2, 1}, {1, 3, 6, 3},
                "window={size=2x1 pad=-1_2x0_0 lhs_dilate=2x1 rhs_dilate=2x1}, "
                "dim_labels=bf01_oi01->bf01");
}

TEST_CASE("convolution-as-gemm: feature and batch groups", "[passes]") {
  check_rewrite({2, 5, 4}, {3, 2, 6}, {2, 3, 6},
                "window={size=3}, dim_labels=b0f_0io->b0f, feature_group_count=2");
  check_rewrite({4, 5, 3}, {2, 3, 6}, {2, 4, 6},
                "window={size=2}, dim_labels=b0f_0io->b0f, batch_group_count=2");
}

TEST_CASE("convolution-as-gemm: a 1x1 window at stride 1 is a dot of the input itself",
          "[passes]") {
  check_rewrite({2, 3, 3, 4}, {1, 1, 4, 5}, {2, 3, 3, 5},
                "window={size=1x1}, dim_labels=b01f_01io->b01f", Patches::kNone);
}

TEST_CASE("convolution-as-gemm: an lhs with its batch innermost and features outermost",
          "[passes]") {
  // A kernel gradient's layout: patches transposed, [features · taps, positions · batch].
  check_rewrite({4, 6, 6, 3}, {4, 4, 4, 5}, {3, 3, 3, 5},
                "window={size=4x4}, dim_labels=f01b_i01o->b01f");
  check_rewrite({4, 7, 3}, {4, 2, 5}, {3, 4, 5},
                "window={size=2 stride=2 pad=0_1}, dim_labels=f0b_i0o->b0f");
}

TEST_CASE("convolution-as-gemm: few windows of many taps, and many of many", "[passes]") {
  // A kernel gradient's shape: 3 windows of 10 taps, sliced window by window.
  check_rewrite({2, 12, 3}, {10, 3, 4}, {2, 3, 4}, "window={size=10}, dim_labels=b0f_0io->b0f");
  // 70 taps at 131 positions: too many slices either way, so one gather.
  check_rewrite({1, 200, 2}, {70, 2, 1}, {1, 131, 1}, "window={size=70}, dim_labels=b0f_0io->b0f",
                Patches::kGather);
}

// With a DNN library: a convolution stays one, in the library's layouts (hlo::as_dnn_convolution),
// computing the same values.
std::string check_dnn_rewrite(const Shape& lhs, const Shape& rhs, const Shape& out,
                              const std::string& attrs) {
  INFO(conv_module(lhs, rhs, out, attrs));
  Rewrite r(lhs, rhs, out, attrs);
  ConvolutionAsGemm(false, true).run(*r.module);
  std::string rewritten = r.rewritten();
  INFO(rewritten);
  CHECK(rewritten.find(" dot(") == std::string::npos);
  int convolutions = 0;
  for (const hlo::Instruction* i : r.module->entry()->instructions())
    if (i->opcode == hlo::Opcode::kConvolution) {
      ++convolutions;
      CHECK(hlo::as_dnn_convolution(*i).has_value());
    }
  CHECK(convolutions == 1);
  CHECK_FALSE(ConvolutionAsGemm(false, true).run(*r.module));  // already in the library's form
  return rewritten;
}

TEST_CASE("convolution-as-gemm: for a DNN library, a convolution in its layouts", "[passes]") {
  // NCHW / OIHW / NCHW with even padding: as it is.
  std::string same = check_dnn_rewrite({2, 3, 7, 6}, {4, 3, 3, 3}, {2, 4, 7, 6},
                                       "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01");
  CHECK(same.find(" transpose(") == std::string::npos);
  CHECK(same.find(" pad(") == std::string::npos);
  // NHWC / HWIO / NHWC, strided and dilated, padded (0, 1) and (1, 2): the kernel goes to
  // (out, spatial..., in), lhs is padded by the uneven part, and the library pads (0, 1).
  std::string nhwc = check_dnn_rewrite(
      {2, 9, 8, 4}, {2, 3, 4, 6}, {2, 5, 4, 6},
      "window={size=2x3 stride=2x2 pad=0_1x1_2 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f");
  CHECK(nhwc.find("pad=0_0x1_1") != std::string::npos);
  CHECK(nhwc.find("dim_labels=b01f_o01i->b01f") != std::string::npos);
  // Feature groups, the output in another layout than lhs (transposed back).
  check_dnn_rewrite({2, 4, 6, 6}, {6, 2, 3, 3}, {2, 6, 6, 6},
                    "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->b01f, "
                    "feature_group_count=2");
}

TEST_CASE("convolution-as-gemm: for a DNN library, what it does not take is patches", "[passes]") {
  auto rewritten = [](const Shape& lhs, const Shape& rhs, const Shape& out,
                      const std::string& attrs) {
    auto module = hlo::parse_module(conv_module(lhs, rhs, out, attrs));
    hlo::verify(*module);
    ConvolutionAsGemm(false, true).run(*module);
    return hlo::to_string(*module);
  };
  // 1-D; lhs dilation; a window larger than the output (a kernel gradient's).
  CHECK(rewritten({2, 9, 3}, {3, 3, 4}, {2, 7, 4}, "window={size=3}, dim_labels=b0f_0io->b0f")
            .find("convolution(") == std::string::npos);
  CHECK(rewritten({1, 4, 4, 2}, {3, 3, 2, 2}, {1, 9, 9, 2},
                  "window={size=3x3 pad=2_2x2_2 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f")
            .find("convolution(") == std::string::npos);
  CHECK(rewritten({4, 6, 6, 2}, {4, 5, 5, 3}, {2, 2, 2, 3},
                  "window={size=5x5}, dim_labels=f01b_i01o->01bf")
            .find("convolution(") == std::string::npos);
}

}  // namespace
}  // namespace jx::passes
