// Op-table rows and focused tests for dot_general: Eigen matmuls as the oracle for matrix-shaped
// rows, and a brute-force loop over every pair of operand elements for general dimension numbers.
#include <catch2/catch.hpp>

#include <Eigen/Dense>

#include "core/primitive.hpp"
#include "support/op_table.hpp"

namespace jx::testing {
namespace {

using Dims = std::vector<std::int64_t>;
using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using DN = lax::DotDimensionNumbers;

const std::vector<DType>& kNum = kNumericTypes;

// The default samples, but integer-valued in the 16-bit floats: a row's products and sums (at
// most 12 terms of at most 9) are then exact whatever the order and width of the accumulation.
double dot_sample(std::mt19937& rng, DType d) {
  if (d == bfloat16 || d == float16) return std::round(uniform(rng, -3, 3));
  if (is_unsigned(d)) return std::round(uniform(rng, 0, 6));
  double v = uniform(rng, -3, 3);
  return is_floating(d) ? v : std::round(v);
}

// The rows x cols matrix stored at `offset` in h (row-major).
Mat matrix(const HostArray& h, std::int64_t offset, std::int64_t rows, std::int64_t cols) {
  Mat m(rows, cols);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      m(i, j) = h.values[static_cast<std::size_t>(offset + i * cols + j)];
  return m;
}

void append(HostArray& out, const Mat& m) {
  for (std::int64_t i = 0; i < m.rows(); ++i)
    for (std::int64_t j = 0; j < m.cols(); ++j) out.values.push_back(m(i, j));
}

// [b,] m x k times [b,] k x n, one Eigen matmul per batch; `transpose_lhs` reads lhs as k x m.
HostArray eigen_matmul(const HostArray& a, const HostArray& b, bool batched, bool transpose_lhs) {
  std::size_t r = batched ? 1 : 0;
  std::int64_t batch = batched ? a.shape[0] : 1;
  std::int64_t ar = a.shape[r], ac = a.shape[r + 1], n = b.shape[r + 1];
  std::int64_t m = transpose_lhs ? ac : ar, k = transpose_lhs ? ar : ac;
  HostArray out;
  if (batched) out.shape.push_back(batch);
  out.shape.push_back(m);
  out.shape.push_back(n);
  for (std::int64_t i = 0; i < batch; ++i) {
    Mat lhs = matrix(a, i * ar * ac, ar, ac), rhs = matrix(b, i * k * n, k, n);
    append(out, transpose_lhs ? Mat(lhs.transpose() * rhs) : Mat(lhs * rhs));
  }
  return out;
}

bool contains(const Dims& dims, std::int64_t d) {
  return std::find(dims.begin(), dims.end(), d) != dims.end();
}

std::vector<Dims> all_indices(const Shape& s) {
  std::vector<Dims> out;
  if (shape_size(s) == 0) return out;
  Dims index(s.size(), 0);
  while (true) {
    out.push_back(index);
    int d = static_cast<int>(s.size()) - 1;
    for (; d >= 0 && ++index[d] == s[d]; --d) index[d] = 0;
    if (d < 0) return out;
  }
}

// Brute force: every (lhs element, rhs element) pair whose batch and contracting coordinates
// agree adds its product to out[batch coords, lhs free coords, rhs free coords].
HostArray general_oracle(const HostArray& a, const HostArray& b, const DN& dn) {
  Dims lfree, rfree;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(a.shape.size()); ++d)
    if (!contains(dn.lhs_batch, d) && !contains(dn.lhs_contracting, d)) lfree.push_back(d);
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(b.shape.size()); ++d)
    if (!contains(dn.rhs_batch, d) && !contains(dn.rhs_contracting, d)) rfree.push_back(d);
  HostArray out;
  for (auto d : dn.lhs_batch) out.shape.push_back(a.shape[d]);
  for (auto d : lfree) out.shape.push_back(a.shape[d]);
  for (auto d : rfree) out.shape.push_back(b.shape[d]);
  out.values.assign(static_cast<std::size_t>(shape_size(out.shape)), 0.0);
  for (const Dims& i : all_indices(a.shape)) {
    for (const Dims& j : all_indices(b.shape)) {
      bool match = true;
      for (std::size_t k = 0; k < dn.lhs_batch.size(); ++k)
        match = match && i[dn.lhs_batch[k]] == j[dn.rhs_batch[k]];
      for (std::size_t k = 0; k < dn.lhs_contracting.size(); ++k)
        match = match && i[dn.lhs_contracting[k]] == j[dn.rhs_contracting[k]];
      if (!match) continue;
      Dims o;
      for (auto d : dn.lhs_batch) o.push_back(i[d]);
      for (auto d : lfree) o.push_back(i[d]);
      for (auto d : rfree) o.push_back(j[d]);
      std::int64_t flat = 0;
      for (std::size_t d = 0; d < o.size(); ++d) flat = flat * out.shape[d] + o[d];
      out.values[static_cast<std::size_t>(flat)] += a.at(i) * b.at(j);
    }
  }
  return out;
}

using Oracle = std::function<HostArray(const HostArray&, const HostArray&)>;

OpRow dot_row(std::string name, std::vector<DType> dtypes, std::vector<std::vector<Shape>> shapes,
              DN dn, Oracle oracle, std::optional<DType> preferred = std::nullopt) {
  OpRow r;
  r.name = "dot_general/" + std::move(name);
  r.primitive = "dot_general";
  r.dtypes = std::move(dtypes);
  r.shape_sets = std::move(shapes);
  r.sample = dot_sample;
  r.apply = [dn, preferred](const std::vector<Array>& a) {
    Array out = lax::dot_general(a[0], a[1], dn, preferred);
    CHECK(out.dtype() == preferred.value_or(a[0].dtype()));
    return out;
  };
  // Integer results wrap in the output dtype (uint8 sums of products pass 255).
  r.oracle = [oracle, preferred](const std::vector<HostArray>& in, DType d) {
    HostArray out = oracle(in[0], in[1]);
    for (double& v : out.values) v = wrap(v, preferred.value_or(d));
    return out;
  };
  r.rtol = 1e-4;  // float32 sums of up to a dozen products
  return r;
}

Oracle matmul_oracle(bool batched, bool transpose_lhs) {
  return [=](const HostArray& a, const HostArray& b) {
    return eigen_matmul(a, b, batched, transpose_lhs);
  };
}
Oracle general(DN dn) {
  return [dn](const HostArray& a, const HostArray& b) { return general_oracle(a, b, dn); };
}

const DN kMatmul{{1}, {0}, {}, {}};
const std::vector<std::vector<Shape>> kMatmulShapes = {{{4, 3}, {3, 5}}, {{1, 1}, {1, 1}},
                                                       {{0, 3}, {3, 5}}, {{4, 0}, {0, 5}},
                                                       {{4, 3}, {3, 0}}, {{1, 6}, {6, 1}}};
const DN kGeneral{{1, 2}, {3, 0}, {0}, {1}};
const DN kMultiBatch{{3}, {1}, {2, 0}, {0, 2}};

const bool kRows = add_rows({
    dot_row("matmul", kNum, kMatmulShapes, kMatmul, matmul_oracle(false, false)),
    dot_row("contract00", kNum,
            {{{3, 4}, {3, 5}}, {{0, 2}, {0, 3}}, {{1, 1}, {1, 4}}, {{2, 0}, {2, 3}}},
            {{0}, {0}, {}, {}}, matmul_oracle(false, true)),
    dot_row("batched", kNum,
            {{{2, 4, 3}, {2, 3, 5}},
             {{0, 4, 3}, {0, 3, 5}},
             {{3, 1, 0}, {3, 0, 2}},
             {{1, 2, 2}, {1, 2, 1}}},
            {{2}, {1}, {0}, {0}}, matmul_oracle(true, false)),
    dot_row("preferred_float64", kNum, kMatmulShapes, kMatmul, matmul_oracle(false, false),
            float64),
    [] {
      OpRow r = dot_row("preferred_int64", kIntegerTypes, kMatmulShapes, kMatmul,
                        matmul_oracle(false, false), int64);
      r.subset_reason =
          "preferred_element_type int64 takes integer operands only: floats are rejected by "
          "the preferred_element_type rule, not by dot_general's dtype check";
      return r;
    }(),
    dot_row("general", kNum,
            {{{2, 3, 4, 5}, {4, 2, 6, 3}},
             {{1, 3, 4, 1}, {4, 1, 2, 3}},
             {{2, 0, 4, 5}, {4, 2, 6, 0}},
             {{0, 3, 4, 5}, {4, 0, 6, 3}}},
            kGeneral, general(kGeneral)),
    dot_row("multi_batch", kNum, {{{2, 5, 3, 4}, {3, 4, 2, 6}}, {{1, 0, 1, 2}, {1, 2, 1, 3}}},
            kMultiBatch, general(kMultiBatch)),
    dot_row("vecdot", kNum, {{{3}, {3}}, {{0}, {0}}, {{1}, {1}}}, {{0}, {0}, {}, {}},
            general({{0}, {0}, {}, {}})),
    dot_row("outer", kNum, {{{3}, {4}}, {{0}, {2}}, {{}, {}}, {{2, 3}, {}}}, {{}, {}, {}, {}},
            general({{}, {}, {}, {}})),
    dot_row("batch_only", kNum, {{{3, 2}, {2, 4}}, {{3, 0}, {0, 4}}}, {{}, {}, {1}, {0}},
            general({{}, {}, {1}, {0}})),
});

}  // namespace

TEST_CASE("dot_general: batch and contracting dims together", "[dot]") {
  Array a = np::array(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  Array b = np::array(std::vector<float>{1, 2, 3, 4}, {2, 2, 1});
  Array c = lax::dot_general(a, b, {{2}, {1}, {0}, {0}});
  CHECK(c.shape() == Shape{2, 2, 1});
  CHECK(c.to_vector<float>() == std::vector<float>{5, 11, 39, 53});
  // The same contraction with the batch dim last in rhs: out = batch, lhs free, rhs free.
  Array bt = np::array(std::vector<float>{1, 3, 2, 4}, {1, 2, 2});
  Array d = lax::dot_general(a, bt, {{2}, {1}, {0}, {2}});
  CHECK(d.shape() == Shape{2, 2, 1});
  CHECK(d.to_vector<float>() == std::vector<float>{5, 11, 39, 53});
}

TEST_CASE("dot_general: preferred_element_type accumulates in the wider type", "[dot]") {
  constexpr std::int32_t k = 1 << 20;
  Array x = np::array({k, k});
  DN vec{{0}, {0}, {}, {}};
  CHECK(lax::dot_general(x, x, vec).item<std::int32_t>() == 0);  // 2^41 wraps to 0 in int32
  Array wide = lax::dot_general(x, x, vec, int64);
  CHECK(wide.dtype() == int64);
  CHECK(wide.item<std::int64_t>() == std::int64_t{1} << 41);
  CHECK(lax::dot_general(x, x, vec, float32).item<float>() == 2199023255552.0f);
  CHECK(lax::dot_general(np::array({46341}), np::array({46341}), vec).item<std::int32_t>() ==
        -2147479015);  // 46341^2 = 2^31 + 4633, wrapped
  // float32 operands summed in float64 keep the low bit that float32 accumulation loses.
  Array f = np::array({16777216.0f, 1.0f});
  Array ones = np::array({1.0f, 1.0f});
  CHECK(lax::dot_general(f, ones, vec).item<float>() == 16777216.0f);
  CHECK(lax::dot_general(f, ones, vec, float64).item<double>() == 16777217.0);
  Array u = np::array({0xffffffffu, 1u});
  CHECK(lax::dot_general(u, np::array({2u, 1u}), vec, int64).item<std::int64_t>() == 8589934591LL);
  CHECK(lax::dot_general(u, np::array({2u, 1u}), vec).item<std::uint32_t>() == 0xffffffffu);
}

TEST_CASE("dot_general: weak only when both operands are", "[dot]") {
  Array w = lax::convert_element_type(np::array({1.0f, 2.0f}), float32, /*weak_type=*/true);
  Array s = np::array({3.0f, 4.0f});
  DN vec{{0}, {0}, {}, {}};
  CHECK(lax::dot_general(w, w, vec).weak_type());
  CHECK_FALSE(lax::dot_general(w, s, vec).weak_type());
  CHECK(lax::dot_general(w, s, vec).item<float>() == 11.0f);
}

TEST_CASE("dot_general prints its params as JAX does", "[dot]") {
  Array a = np::zeros({4, 3}), b = np::zeros({3, 5});
  std::string s = jx::make_jaxpr([](const Array& x, const Array& y) {
                    return lax::dot_general(x, y, kMatmul);
                  })(a, b)
                      .str();
  CHECK(s ==
        "{ lambda ; a:f32[4,3] b:f32[3,5]. let\n"
        "    c:f32[4,5] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b\n"
        "  in (c,) }");
  Array c = np::zeros({2, 4, 3}, int32), d = np::zeros({2, 3, 5}, int32);
  s = jx::make_jaxpr([](const Array& x, const Array& y) {
        return lax::dot_general(x, y, {{2}, {1}, {0}, {0}}, float32);
      })(c, d)
          .str();
  CHECK_THAT(s, Catch::Contains("c:f32[2,4,5] = dot_general[\n"
                                "      dimension_numbers=(([2], [1]), ([0], [0]))\n"
                                "      preferred_element_type=float32\n"
                                "    ] a b"));
}

TEST_CASE("dot_general rejects bad dimension numbers, in JAX's words", "[dot][errors]") {
  Array a = np::zeros({2, 3}), b = np::zeros({3, 4});
  Array a3 = np::zeros({2, 3, 4}), b3 = np::zeros({2, 4, 5});
  auto dot = [](const Array& x, const Array& y, DN dn) { return lax::dot_general(x, y, dn); };
  CHECK_THROWS_MATCHES(
      dot(a, b, {{2}, {0}, {}, {}}), ShapeError,
      Catch::Message("dot_general requires lhs dimension numbers to be nonnegative and less than "
                     "the number of axes of the lhs value, got lhs_batch of [] and "
                     "lhs_contracting of [2] for lhs of rank 2"));
  CHECK_THROWS_MATCHES(
      dot(a, b, {{1}, {-1}, {}, {}}), ShapeError,
      Catch::Message("dot_general requires rhs dimension numbers to be nonnegative and less than "
                     "the number of axes of the rhs value, got rhs_batch of [] and "
                     "rhs_contracting of [-1] for rhs of rank 2"));
  CHECK_THROWS_MATCHES(
      dot(a3, b3, {{2}, {1}, {0}, {}}), ShapeError,
      Catch::Message("dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, "
                     "got lhs_batch [0] and rhs_batch []."));
  CHECK_THROWS_MATCHES(dot(a3, b3, {{2}, {1}, {0, 0}, {0, 2}}), ShapeError,
                       Catch::Message("dot_general requires lhs batch dimensions to be distinct, "
                                      "got lhs_batch [0, 0]."));
  CHECK_THROWS_MATCHES(dot(a3, b3, {{2}, {1}, {0, 1}, {0, 0}}), ShapeError,
                       Catch::Message("dot_general requires rhs batch dimensions to be distinct, "
                                      "got rhs_batch [0, 0]."));
  CHECK_THROWS_MATCHES(dot(a3, b3, {{2, 2}, {1, 2}, {}, {}}), ShapeError,
                       Catch::Message("dot_general requires lhs contracting dimensions to be "
                                      "distinct, got lhs_contracting [2, 2]."));
  CHECK_THROWS_MATCHES(dot(a3, b3, {{1, 2}, {1, 1}, {}, {}}), ShapeError,
                       Catch::Message("dot_general requires rhs contracting dimensions to be "
                                      "distinct, got rhs_contracting [1, 1]."));
  CHECK_THROWS_MATCHES(
      dot(a3, b3, {{0}, {1}, {0}, {0}}), ShapeError,
      Catch::Message("dot_general requires lhs batch dimensions to be disjoint from contracting "
                     "dimensions, got lhs_batch [0] and lhs_contracting [0]."));
  CHECK_THROWS_MATCHES(
      dot(a3, b3, {{2}, {0}, {0}, {0}}), ShapeError,
      Catch::Message("dot_general requires rhs batch dimensions to be disjoint from contracting "
                     "dimensions, got rhs_batch [0] and rhs_contracting [0]."));
  CHECK_THROWS_MATCHES(
      dot(a3, np::zeros({3, 4, 5}), {{2}, {1}, {0}, {0}}), ShapeError,
      Catch::Message("dot_general requires lhs batch dimensions and rhs batch dimensions to have "
                     "the same shape, got (2,) and (3,)."));
  CHECK_THROWS_MATCHES(
      dot(a, np::zeros({4, 5}), kMatmul), ShapeError,
      Catch::Message("dot_general requires contracting dimensions to have the same shape, got "
                     "(3,) and (4,)."));
  CHECK_THROWS_MATCHES(
      dot(a, b, {{1}, {}, {}, {}}), ShapeError,
      Catch::Message("dot_general requires contracting dimensions to have the same shape, got "
                     "(3,) and ()."));
}

TEST_CASE("dot_general rejects bad dtypes, in JAX's words", "[dot][errors]") {
  DN vec{{0}, {0}, {}, {}};
  Array i = np::array({1, 2}), f = np::array({1.0f, 2.0f}),
        l = np::array({std::int64_t{1}, std::int64_t{2}});
  CHECK_THROWS_MATCHES(lax::dot_general(np::array({true}), np::array({true}), vec), TypeError,
                       Catch::Message("dot_general does not accept dtype bool. Accepted dtypes "
                                      "are subtypes of integer, floating."));
  CHECK_THROWS_MATCHES(lax::dot_general(i, f, vec), TypeError,
                       Catch::Message("dot_general requires arguments to have the same dtypes, "
                                      "got int32, float32."));
  const char* incompatible =
      "Input type is incompatible with `preferred_element_type`. The compatible combinations of "
      "(input_type, preferred_element_type) are (integral, integral), (integral, floating), "
      "(floating, floating).";
  CHECK_THROWS_MATCHES(lax::dot_general(f, f, vec, int32), TypeError, Catch::Message(incompatible));
  CHECK_THROWS_MATCHES(lax::dot_general(i, i, vec, bool_), TypeError, Catch::Message(incompatible));
  CHECK_THROWS_MATCHES(lax::dot_general(i, i, vec, uint32), TypeError,
                       Catch::Message("`preferred_element_type` must have the same signedness as "
                                      "the original type."));
  const char* narrower = "`preferred_element_type` must not be narrower than the original type.";
  CHECK_THROWS_MATCHES(lax::dot_general(l, l, vec, int32), TypeError, Catch::Message(narrower));
  CHECK_THROWS_MATCHES(lax::dot_general(l, l, vec, float32), TypeError, Catch::Message(narrower));
  CHECK_THROWS_MATCHES(lax::dot_general(f.astype(float64), f.astype(float64), vec, float32),
                       TypeError, Catch::Message(narrower));
}

TEST_CASE("dot_general rule rejects malformed params and operand counts", "[dot][errors]") {
  // Reachable from parsed jaxprs only: lax::dot_general always builds well-formed params.
  const Primitive* p = find_primitive("dot_general");
  REQUIRE(p);
  std::vector<ShapedArray> in{ShapedArray{{2, 3}, float32, false},
                              ShapedArray{{3, 4}, float32, false}};
  Params bad{{"dimension_numbers", Param::tuple({Param::int_list({1}), Param::int_list({0})})},
             {"precision", Param()},
             {"preferred_element_type", Param::dtype(float32)}};
  CHECK_THROWS_MATCHES(p->abstract_eval(in, bad), TypeError,
                       Catch::Message("dot_general dimension_numbers must be ((lhs_contracting, "
                                      "rhs_contracting), (lhs_batch, rhs_batch)), got ([1], [0])"));
  Params ok = bad;
  ok.set("dimension_numbers",
         Param::tuple({Param::tuple({Param::int_list({1}), Param::int_list({0})}),
                       Param::tuple({Param::int_list({}), Param::int_list({})})}));
  CHECK(p->abstract_eval(in, ok)[0] == ShapedArray{{2, 4}, float32, false});
  ok.set("preferred_element_type", Param());  // None: the operands' dtype
  CHECK(p->abstract_eval(in, ok)[0] == ShapedArray{{2, 4}, float32, false});
  CHECK_THROWS_MATCHES(p->abstract_eval(std::span(in).first(1), ok), TypeError,
                       Catch::Message("dot_general takes 2 operands, got 1"));
}

}  // namespace jx::testing
