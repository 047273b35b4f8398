// Op-table rows and focused tests for conv_general_dilated. The oracle walks every (lhs element,
// kernel element) pair and adds the product to the output position it lands on, if any: the
// scatter form of the convolution, where jx computes the gather form (core/conv_map.hpp).
#include <catch2/catch.hpp>

#include "support/op_table.hpp"

namespace jx::testing {
namespace {

using Ints = std::vector<std::int64_t>;

// Integer-valued samples: every sum of products is exact in every dtype's accumulation, so
// 16-bit floats round only the result.
double conv_sample(std::mt19937& rng, DType d) {
  if (is_unsigned(d)) return std::round(uniform(rng, 0, 3));
  return std::round(uniform(rng, -2, 2));
}

struct ConvCase {
  Ints strides;
  PadPairs pads;
  Ints lhs_dilation, rhs_dilation;
  std::string lhs_spec = "", rhs_spec = "", out_spec = "";  // default: NC..., OI..., NC...
  std::int64_t feature_groups = 1, batch_groups = 1;
};

// The position of each label in a spec string: "NHWC" → N at 0, C at 3, spatial H, W in order.
std::string default_spec(char a, char b, std::size_t rank) {
  std::string s = {a, b};
  for (std::size_t d = 2; d < rank; ++d) s += static_cast<char>('0' + d);
  return s;
}

std::vector<std::vector<std::int64_t>> indices_of(const Shape& s) {
  std::vector<std::vector<std::int64_t>> out;
  if (shape_size(s) == 0) return out;
  std::vector<std::int64_t> i(s.size(), 0);
  for (;;) {
    out.push_back(i);
    std::size_t d = s.size();
    while (d > 0 && ++i[d - 1] == s[d - 1]) i[--d] = 0;
    if (d == 0) return out;
  }
}

HostArray conv_oracle(const HostArray& lhs, const HostArray& rhs, const ConvCase& c) {
  std::size_t rank = lhs.shape.size(), n = rank - 2;
  std::string ls = c.lhs_spec.empty() ? default_spec('N', 'C', rank) : c.lhs_spec;
  std::string rs = c.rhs_spec.empty() ? default_spec('O', 'I', rank) : c.rhs_spec;
  std::string os = c.out_spec.empty() ? default_spec('N', 'C', rank) : c.out_spec;
  // Spatial labels in the kernel's order.
  std::string spatial;
  for (char ch : rs)
    if (ch != 'O' && ch != 'I') spatial += ch;
  auto dim = [](const std::string& spec, char label) {
    std::size_t k = spec.find(label);
    REQUIRE(k < spec.size());
    return std::min(k, spec.size() - 1);  // in range, as the compiler cannot tell
  };
  std::int64_t batch = lhs.shape[dim(ls, 'N')], in = rhs.shape[dim(rs, 'I')];
  std::int64_t out_features = rhs.shape[dim(rs, 'O')];
  std::int64_t groups = std::max(c.feature_groups, c.batch_groups);
  std::int64_t out_batch = batch / c.batch_groups;
  Shape out_shape(rank);
  out_shape[dim(os, 'N')] = out_batch;
  out_shape[dim(os, 'C')] = out_features;
  for (std::size_t d = 0; d < n; ++d) {
    std::int64_t size = lhs.shape[dim(ls, spatial[d])];
    std::int64_t dilated = size == 0 ? 0 : (size - 1) * c.lhs_dilation[d] + 1;
    std::int64_t padded = dilated + c.pads[d].first + c.pads[d].second;
    std::int64_t k = rhs.shape[dim(rs, spatial[d])];
    std::int64_t window = k == 0 ? 0 : (k - 1) * c.rhs_dilation[d] + 1;
    out_shape[dim(os, spatial[d])] = padded < window ? 0 : (padded - window) / c.strides[d] + 1;
  }
  HostArray out{out_shape, std::vector<double>(static_cast<std::size_t>(shape_size(out_shape)))};
  auto rhs_indices = indices_of(rhs.shape);
  for (const auto& li : indices_of(lhs.shape)) {
    double x = lhs.at(li);
    std::int64_t b = li[dim(ls, 'N')], feature = li[dim(ls, 'C')];
    for (const auto& ri : rhs_indices) {
      std::int64_t f = ri[dim(rs, 'O')], group = f / (out_features / groups);
      // Feature groups: input feature g·I + i meets kernel input i of group g's outputs.
      if (c.feature_groups > 1 && (feature / in != group || feature % in != ri[dim(rs, 'I')]))
        continue;
      if (c.feature_groups == 1 && feature != ri[dim(rs, 'I')]) continue;
      // Batch groups: lhs batch block g feeds group g's outputs.
      if (c.batch_groups > 1 && b / out_batch != group) continue;
      std::vector<std::int64_t> o(rank);
      o[dim(os, 'N')] = b % out_batch;
      o[dim(os, 'C')] = f;
      bool lands = true;
      for (std::size_t d = 0; d < n && lands; ++d) {
        std::int64_t p = li[dim(ls, spatial[d])] * c.lhs_dilation[d] + c.pads[d].first -
                         ri[dim(rs, spatial[d])] * c.rhs_dilation[d];
        std::int64_t at = p / c.strides[d];
        lands = p >= 0 && p % c.strides[d] == 0 && at < out_shape[dim(os, spatial[d])];
        o[dim(os, spatial[d])] = at;
      }
      if (!lands) continue;
      std::int64_t flat = 0;
      for (std::size_t d = 0; d < rank; ++d) flat = flat * out_shape[d] + o[d];
      out.values[static_cast<std::size_t>(flat)] += x * rhs.at(ri);
    }
  }
  return out;
}

OpRow conv_row(std::string name, std::vector<std::vector<Shape>> shapes, ConvCase c) {
  OpRow r;
  r.name = "conv_general_dilated/" + std::move(name);
  r.primitive = "conv_general_dilated";
  r.dtypes = kNumericTypes;
  r.shape_sets = std::move(shapes);
  r.sample = conv_sample;
  r.apply = [c](const std::vector<Array>& a) {
    ConvDimensionNumbers dn;
    if (!c.lhs_spec.empty()) dn = {c.lhs_spec, c.rhs_spec, c.out_spec};
    return lax::conv_general_dilated(a[0], a[1], c.strides, c.pads, c.lhs_dilation, c.rhs_dilation,
                                     dn, c.feature_groups, c.batch_groups);
  };
  r.oracle = [c](const std::vector<HostArray>& in, DType d) {
    HostArray out = conv_oracle(in[0], in[1], c);
    for (double& v : out.values) v = wrap(v, d);
    return out;
  };
  r.rtol = 1e-4;
  return r;
}

const bool kRows = add_rows({
    conv_row("nchw_valid", {{{2, 3, 5, 6}, {4, 3, 3, 2}}, {{0, 3, 5, 6}, {4, 3, 3, 2}}},
             {{1, 1}, {{0, 0}, {0, 0}}, {1, 1}, {1, 1}}),
    conv_row("nhwc_same_stride2", {{{2, 7, 6, 3}, {3, 3, 3, 4}}},
             {{2, 2}, {{1, 1}, {0, 1}}, {1, 1}, {1, 1}, "NHWC", "HWIO", "NHWC"}),
    conv_row("1d_dilated", {{{2, 3, 9}, {2, 3, 3}}}, {{1}, {{2, 1}}, {2}, {2}}),
    conv_row("1d_strided_lhs_dilated", {{{1, 2, 5}, {3, 2, 2}}}, {{3}, {{1, 2}}, {3}, {1}}),
    conv_row("3d", {{{1, 2, 4, 4, 3}, {2, 2, 2, 2, 2}}},
             {{1, 2, 1}, {{1, 0}, {0, 1}, {1, 1}}, {1, 1, 1}, {1, 1, 1}}),
    conv_row("feature_groups", {{{2, 4, 5, 5}, {6, 2, 3, 3}}},
             {{1, 1}, {{1, 1}, {1, 1}}, {1, 1}, {1, 1}, "", "", "", 2}),
    conv_row("batch_groups", {{{4, 3, 5, 5}, {6, 3, 2, 2}}},
             {{1, 1}, {{0, 0}, {0, 0}}, {1, 1}, {1, 1}, "", "", "", 1, 2}),
    conv_row("depthwise_nhwc", {{{1, 5, 5, 3}, {3, 3, 1, 6}}},
             {{1, 1}, {{1, 1}, {1, 1}}, {1, 1}, {1, 1}, "NHWC", "HWIO", "NHWC", 3}),
    conv_row("permuted_specs", {{{3, 5, 2, 4}, {2, 3, 3, 5}}},
             {{2, 1}, {{0, 1}, {1, 0}}, {1, 2}, {2, 1}, "WCNH", "OHWI", "HNCW"}),
    conv_row("negative_padding", {{{1, 1, 6}, {1, 1, 2}}}, {{1}, {{-1, -2}}, {1}, {1}}),
    conv_row("one_by_one", {{{2, 3, 3, 4}, {5, 3, 1, 1}}},
             {{1, 1}, {{0, 0}, {0, 0}}, {1, 1}, {1, 1}}),
    conv_row("no_spatial", {{{3, 4}, {2, 4}}}, {{}, {}, {}, {}}),
    conv_row("window_larger_than_input", {{{1, 1, 2}, {1, 1, 3}}}, {{1}, {{0, 0}}, {1}, {1}}),
    // 16 input features and more: float32 runs these on the CPU as implicit GEMMs (no patches),
    // and with 16 batch or out features their kernel or input gradients too.
    conv_row("implicit_nhwc_same", {{{2, 5, 6, 16}, {3, 3, 16, 17}}},
             {{1, 1}, {{1, 1}, {1, 1}}, {1, 1}, {1, 1}, "NHWC", "HWIO", "NHWC"}),
    conv_row("implicit_nchw_uneven_padding", {{{16, 16, 4, 5}, {16, 16, 3, 2}}},
             {{1, 1}, {{1, 0}, {0, 2}}, {1, 1}, {1, 1}}),
    conv_row("implicit_1d", {{{2, 16, 7}, {3, 16, 3}}}, {{1}, {{2, 0}}, {1}, {1}}),
    // Strides and dilations: the kernel gradient dilates its window by the strides, and the
    // input gradient pads its lhs inside.
    conv_row("implicit_nhwc_strided_dilated", {{{16, 5, 18, 16}, {3, 3, 16, 16}}},
             {{2, 1}, {{1, 1}, {2, 2}}, {1, 1}, {1, 2}, "NHWC", "HWIO", "NHWC"}),
    conv_row(
        "implicit_3d", {{{1, 3, 3, 2, 16}, {2, 2, 2, 16, 2}}},
        {{1, 1, 1}, {{1, 0}, {0, 1}, {1, 1}}, {1, 1, 1}, {1, 1, 1}, "N012C", "012IO", "N012C"}),
});

// ---- values that pin the semantics down by hand ----

TEST_CASE("conv_general_dilated: a 1-D correlation by hand", "[conv]") {
  Array x = np::reshape(np::array({1.0f, 2.0f, 3.0f, 4.0f}), {1, 1, 4});
  Array w = np::reshape(np::array({1.0f, 10.0f}), {1, 1, 2});
  // Correlation, not convolution: out[i] = x[i] + 10 x[i + 1] (JAX does not flip the kernel).
  CHECK(lax::conv(x, w, {1}, "VALID").to_vector<float>() == std::vector<float>{21, 32, 43});
  // SAME at stride 2 over 4: 2 outputs, 0 padding needed at the end... (out-1)*2+2-4 = 0.
  CHECK(lax::conv(x, w, {2}, "SAME").to_vector<float>() == std::vector<float>{21, 43});
  // lhs dilation 2: x becomes 1 0 2 0 3 0 4.
  Array t = lax::conv_general_dilated(x, w, {1}, {{0, 0}}, {2});
  CHECK(t.to_vector<float>() == std::vector<float>{1, 20, 2, 30, 3, 40});
  // rhs dilation 2: out[i] = x[i] + 10 x[i + 2].
  Array a = lax::conv_general_dilated(x, w, {1}, "VALID", {}, {2});
  CHECK(a.to_vector<float>() == std::vector<float>{31, 42});
}

TEST_CASE("Padding: JAX's padtype_to_pads", "[conv]") {
  using P = PadPairs;
  CHECK(Padding("SAME").pads({5}, {3}, {2}) == P{{1, 1}});
  CHECK(Padding("same").pads({6}, {3}, {2}) == P{{0, 1}});
  CHECK(Padding("SAME_LOWER").pads({6}, {3}, {2}) == P{{1, 0}});
  CHECK(Padding("VALID").pads({6, 2}, {3, 1}, {2, 1}) == P{{0, 0}, {0, 0}});
  CHECK(Padding({{1, 2}}).pads({6}, {3}, {2}) == P{{1, 2}});
  // 5 elements, windows of 4 at stride 2: 3 windows need (3 - 1) * 2 + 4 - 5 = 3 padding.
  CHECK(Padding("SAME").pads({5}, {4}, {2}) == P{{1, 2}});
  CHECK(Padding("SAME_LOWER").pads({5}, {4}, {2}) == P{{2, 1}});
  CHECK_THROWS_MATCHES(Padding("FULL"), ValueError,
                       Catch::Message("Unrecognized padding type: expected 'VALID', 'SAME', or "
                                      "'SAME_LOWER', got FULL."));
}

TEST_CASE("conv_general_dilated: jaxpr text as JAX prints it", "[conv]") {
  Array lhs = np::zeros({1, 5, 5, 3}), rhs = np::zeros({3, 3, 3, 8});
  auto f = [](const Array& x, const Array& w) {
    return lax::conv_general_dilated(x, w, {2, 2}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"});
  };
  std::string text = make_jaxpr(f)(lhs, rhs).str();
  CHECK(text ==
        "{ lambda ; a:f32[1,5,5,3] b:f32[3,3,3,8]. let\n"
        "    c:f32[1,3,3,8] = conv_general_dilated[\n"
        "      batch_group_count=1\n"
        "      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, "
        "1), out_spec=(0, 3, 1, 2))\n"
        "      feature_group_count=1\n"
        "      lhs_dilation=(1, 1)\n"
        "      out_sharding=None\n"
        "      padding=((1, 1), (1, 1))\n"
        "      precision=None\n"
        "      preferred_element_type=None\n"
        "      rhs_dilation=(1, 1)\n"
        "      window_strides=(2, 2)\n"
        "    ] a b\n"
        "  in (c,) }");
}

TEST_CASE("jit on the CPU: a float32 convolution of 16 or more input features stays one",
          "[conv]") {
  // Computed by the matrix kernel reading its image in place: no patches, no dot, and no pad
  // either (a run of channels is all padding or none: the kernel reads zeros for it); with 16
  // batch and out features, both gradients too, and neither moves x's features first (no
  // f32[24, ...]): the kernel gradient reads x in its own layout, padded (its runs, along
  // positions, would cross the padding). Fewer features go through patches.
  auto conv = [](const Array& x, const Array& w) {
    return lax::conv_general_dilated(x, w, {1, 1}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"});
  };
  auto loss = [&](const Array& x, const Array& w) { return np::sum(conv(x, w) * conv(x, w)); };
  auto grads = [&](const Array& x, const Array& w) {
    return grad(loss, std::vector<int>{0, 1})(x, w);
  };
  // Integers in [-2, 2]: every sum is exact in float32, so jit and the eager impl (which
  // convolves element by element) agree bit for bit.
  auto ints = [](const Shape& dims, int seed) {
    std::vector<float> v;
    for (std::int64_t k = 0; k < shape_size(dims); ++k)
      v.push_back(static_cast<float>((k * 7 + seed) % 5 - 2));
    return np::array(v, dims);
  };
  Array x = ints({16, 6, 8, 24}, 1), w = ints({3, 3, 24, 16}, 3);
  std::string forward = jit(conv).lower(x, w).compile().hlo_text();
  INFO(forward);
  CHECK_THAT(forward, Catch::Contains("dim_labels=b01f_01io->b01f"));
  CHECK_THAT(forward, !Catch::Contains(" dot("));
  CHECK_THAT(forward, !Catch::Contains(" pad("));
  CHECK_THAT(forward, Catch::Contains("pad=1_1x1_1"));
  CHECK(jit(conv)(x, w).to_vector<float>() == conv(x, w).to_vector<float>());
  std::string backward = jit(grads).lower(x, w).compile().hlo_text();
  INFO(backward);
  CHECK_THAT(backward, !Catch::Contains(" dot("));
  CHECK_THAT(backward, !Catch::Contains("f32[24,"));
  std::size_t pads = 0;
  for (auto at = backward.find(" pad("); at != std::string::npos;
       at = backward.find(" pad(", at + 1))
    ++pads;
  CHECK(pads == 1);  // x's, for the kernel gradient; the cotangent's padding is the kernel's
  std::vector<Array> jitted = jit(grads)(x, w), eager = grads(x, w);
  for (std::size_t k = 0; k < 2; ++k) {
    INFO((k == 0 ? "input" : "kernel") << " gradient");
    CHECK(jitted[k].to_vector<float>() == eager[k].to_vector<float>());
  }
  Array few = np::ones({2, 6, 5, 3}), w3 = np::ones({3, 3, 3, 4});
  CHECK_THAT(jit(conv).lower(few, w3).compile().hlo_text(), Catch::Contains(" dot("));
}

// ---- errors, typed and worded as JAX's ----

template <class E>
void check_error(const std::function<void()>& f, const std::string& message) {
  CHECK_THROWS_MATCHES(f(), E, Catch::Message(message));
}

TEST_CASE("conv_general_dilated: errors in JAX's words", "[conv]") {
  Array x = np::zeros({2, 4, 5, 5}), w = np::zeros({6, 2, 3, 3});
  using lax::conv_general_dilated;
  check_error<ValueError>(
      [&] {
        conv_general_dilated(
            x, np::zeros({6, 2, 3}), {1, 1}, "VALID", {}, {},
            ConvDimensionNumbers(Ints{0, 1, 2, 3}, Ints{0, 1, 2}, Ints{0, 1, 2, 3}));
      },
      "conv_general_dilated lhs and rhs must have the same number of dimensions, but got "
      "(2, 4, 5, 5) and (6, 2, 3).");
  check_error<ValueError>(
      [&] {
        conv_general_dilated(x, w, {1, 1}, "VALID", {}, {}, {}, 3);
      },
      "conv_general_dilated feature_group_count must divide lhs feature dimension size, but 3 "
      "does not divide 4.");
  check_error<ValueError>(
      [&] {
        conv_general_dilated(x, w, {1, 1}, "VALID");
      },
      "conv_general_dilated lhs feature dimension size divided by "
      "feature_group_count must equal the rhs input feature dimension size, "
      "but 4 // 1 != 2.");
  check_error<ValueError>(
      [&] {
        conv_general_dilated(x, np::zeros({5, 2, 3, 3}), {1, 1}, "VALID", {}, {}, {}, 2);
      },
      "conv_general_dilated rhs output feature dimension size must be a multiple of "
      "feature_group_count, but 5 is not a multiple of 2.");
  check_error<ValueError>(
      [&] {
        conv_general_dilated(x, w, {1, 1}, "VALID", {}, {}, {}, 0);
      },
      "conv_general_dilated feature_group_count must be a positive integer, got 0.");
  check_error<ValueError>(
      [&] {
        conv_general_dilated(np::zeros({3, 2, 5, 5}), w, {1, 1}, "VALID", {}, {}, {}, 1, 2);
      },
      "conv_general_dilated batch_group_count must divide lhs batch dimension size, but 2 does "
      "not divide 3.");
  check_error<ValueError>(
      [&] {
        conv_general_dilated(x, np::zeros({6, 2, 3, 3}), {1, 1}, "VALID", {}, {}, {}, 2, 2);
      },
      "At most one of batch_group_count and feature_group_count may be > 1, got "
      "batch_group_count=2 and feature_group_count=2");
  check_error<ValueError>(
      [&] { conv_general_dilated(x, w, {1}, "VALID", {}, {}, {}, 2); },
      "conv_general_dilated window and window_strides must have the same number of dimensions, "
      "but got 2 and 1");
  check_error<TypeError>(
      [&] {
        conv_general_dilated(x, w, {1, 1}, {{1, 1}}, {}, {}, {}, 2);
      },
      "Wrong number of explicit pads for convolution: expected 2, got 1.");
  check_error<ValueError>(
      [&] {
        conv_general_dilated(x, w, {1, 1}, {{-6, 0}, {0, 0}}, {}, {}, {}, 2);
      },
      "Negative padding is larger than the size of the corresponding dimension: got "
      "padding=((-6, 0), (0, 0)) for lhs_shape[2:]=(5, 5)");
  check_error<TypeError>(
      [&] {
        conv_general_dilated(x, w, {1, 1}, {{0, 0}, {0, 0}}, {0, 1}, {}, {}, 2);
      },
      "All dilations must be positive, got (0, 1).");
  check_error<ValueError>(
      [&] {
        conv_general_dilated(x, w, {1, 1}, "SAME", {2, 2}, {}, {}, 2);
      },
      "String padding is not implemented for transposed convolution using this op. Please "
      "either exactly specify the required padding or use conv_transpose.");
  check_error<TypeError>(
      [&] {
        conv_general_dilated(x, np::zeros({6, 2, 3, 3}, int32), {1, 1}, "VALID", {}, {}, {}, 2);
      },
      "conv_general_dilated requires arguments to have the same dtypes, got "
      "float32, int32.");
  check_error<ValueError>(
      [&] {
        conv_general_dilated(x, w, {0, 1}, "VALID", {}, {}, {}, 2);
      },
      "conv_general_dilated window_strides must be positive, got (0, 1).");
}

TEST_CASE("ConvDimensionNumbers: spec strings checked as JAX's", "[conv]") {
  Array x = np::zeros({1, 5, 5, 2}), w = np::zeros({3, 3, 2, 4});
  auto conv = [&](ConvDimensionNumbers dn) {
    return lax::conv_general_dilated(x, w, {1, 1}, "VALID", {}, {}, dn);
  };
  Array by_strings = conv({"NHWC", "HWIO", "NHWC"});
  CHECK(by_strings.shape() == Shape{1, 3, 3, 4});
  // The same specs as ints, in braces, and as std::strings.
  CHECK(conv({{0, 3, 1, 2}, {3, 2, 0, 1}, {0, 3, 1, 2}}).shape() == Shape{1, 3, 3, 4});
  std::string lhs = "NHWC", rhs = "HWIO";
  CHECK(conv({lhs, rhs, lhs}).shape() == Shape{1, 3, 3, 4});
  check_error<TypeError>(
      [&] {
        conv({"NHWC", "HWIO", "NHW"});
      },
      "convolution dimension_numbers[2] must have len equal to the ndim of lhs "
      "and rhs, got 3 for lhs and rhs shapes (1, 5, 5, 2) and (3, 3, 2, 4).");
  check_error<TypeError>(
      [&] {
        conv({"NHWN", "HWIO", "NHWC"});
      },
      "convolution dimension_numbers[0] must contain the characters 'N' and "
      "'C' exactly once, got NHWN.");
  check_error<TypeError>(
      [&] {
        conv({"NHHC", "HWIO", "NHWC"});
      },
      "convolution dimension_numbers[0] cannot have duplicate characters, got "
      "NHHC.");
  check_error<TypeError>(
      [&] {
        conv({"NHXC", "HWIO", "NHWC"});
      },
      "convolution dimension_numbers elements must each have the same set of "
      "spatial characters, got ('NHXC', 'HWIO', 'NHWC').");
  check_error<TypeError>(
      [&] {
        lax::conv(x, np::zeros({3, 3, 2}), {1, 1}, "VALID");
      },
      "convolution requires lhs and rhs ndim to be equal, got 4 and 3.");
}

}  // namespace
}  // namespace jx::testing
