// np matmul, dot and outer against Eigen: plain, batched, broadcast batches and 1-d operands.
#include <Eigen/Dense>

#include "library/numpy_testing.hpp"

namespace jx {
namespace {

using namespace np_testing;
using Mat = Eigen::MatrixXd;
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Deterministic, irregular float64 values of a shape.
Array data(const Shape& shape, double seed) {
  std::vector<double> v(static_cast<std::size_t>(shape_size(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(seed + 1.7 * static_cast<double>(i));
  return np::array(v, shape);
}

// The rows × cols matrix starting at element `offset` of x's row-major values.
Mat block(const std::vector<double>& v, std::int64_t offset, std::int64_t rows, std::int64_t cols) {
  return Eigen::Map<const RowMajor>(v.data() + offset, rows, cols);
}

// A matrix's values in row-major order, appended to out.
void append(std::vector<double>& out, const Mat& m) {
  RowMajor r = m;
  out.insert(out.end(), r.data(), r.data() + r.size());
}

TEST_CASE("matmul of matrices matches Eigen", "[numpy]") {
  Array a = data({3, 4}, 0.1), b = data({4, 5}, 0.7);
  Array c = np::matmul(a, b);
  check_aval(c, {3, 5}, float64);
  std::vector<double> expected;
  append(expected, block(a.to_vector<double>(), 0, 3, 4) * block(b.to_vector<double>(), 0, 4, 5));
  check_values(c, expected, 1e-12);
  // float32 operands; int and float promote to float.
  Array f = np::matmul(a.astype(float32), b.astype(float32));
  check_aval(f, {3, 5}, float32);
  check_values(f, expected, 1e-5);
  Array i = np::matmul(iota_i32({2, 2}), iota_i32({2, 2}));
  check_aval(i, {2, 2}, int32);
  CHECK(i.to_vector<int>() == std::vector<int>{2, 3, 6, 11});
  check_aval(np::matmul(iota_i32({2, 2}), iota_f32({2, 2})), {2, 2}, float32);
}

TEST_CASE("matmul batches and broadcasts batch dims", "[numpy]") {
  // (2, 3, 4) @ (2, 4, 5): one product per batch entry.
  Array a = data({2, 3, 4}, 0.3), b = data({2, 4, 5}, 1.1);
  std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>(), expected;
  for (int n = 0; n < 2; ++n) append(expected, block(av, n * 12, 3, 4) * block(bv, n * 20, 4, 5));
  Array c = np::matmul(a, b);
  CHECK(c.shape() == Shape{2, 3, 5});
  check_values(c, expected, 1e-12);

  // (2, 1, 3, 4) @ (5, 4, 2) → (2, 5, 3, 2): out[i, j] = a[i, 0] @ b[j].
  Array p = data({2, 1, 3, 4}, 0.5), q = data({5, 4, 2}, 2.0);
  std::vector<double> pv = p.to_vector<double>(), qv = q.to_vector<double>();
  expected.clear();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j) append(expected, block(pv, i * 12, 3, 4) * block(qv, j * 8, 4, 2));
  Array r = np::matmul(p, q);
  CHECK(r.shape() == Shape{2, 5, 3, 2});
  check_values(r, expected, 1e-12);

  // (3, 4) @ (2, 4, 5): the matrix is shared by every batch entry.
  Array m = data({3, 4}, 0.9);
  std::vector<double> mv = m.to_vector<double>();
  expected.clear();
  for (int n = 0; n < 2; ++n) append(expected, block(mv, 0, 3, 4) * block(bv, n * 20, 4, 5));
  check_values(np::matmul(m, b), expected, 1e-12);
  CHECK(np::matmul(m, b).shape() == Shape{2, 3, 5});
}

TEST_CASE("matmul with 1-d operands drops the added dimension", "[numpy]") {
  Array v = data({4}, 0.2), w = data({4}, 1.3);
  Array m = data({4, 5}, 0.4), a = data({3, 4}, 0.6), s = data({2, 4, 5}, 0.8);
  std::vector<double> vv = v.to_vector<double>(), mv = m.to_vector<double>();
  std::vector<double> av = a.to_vector<double>(), sv = s.to_vector<double>();
  Mat vrow = block(vv, 0, 1, 4), vcol = block(vv, 0, 4, 1);
  std::vector<double> expected;

  append(expected, vrow * block(mv, 0, 4, 5));
  Array vm = np::matmul(v, m);
  CHECK(vm.shape() == Shape{5});
  check_values(vm, expected, 1e-12);

  expected.clear();
  append(expected, block(av, 0, 3, 4) * vcol);
  Array mvp = np::matmul(a, v);
  CHECK(mvp.shape() == Shape{3});
  check_values(mvp, expected, 1e-12);

  Array vw = np::matmul(v, w);
  CHECK(vw.shape() == Shape{});
  CHECK(vw.item<double>() == Approx((vrow * block(w.to_vector<double>(), 0, 4, 1))(0, 0)));

  expected.clear();
  for (int n = 0; n < 2; ++n) append(expected, vrow * block(sv, n * 20, 4, 5));
  Array vs = np::matmul(v, s);
  CHECK(vs.shape() == Shape{2, 5});
  check_values(vs, expected, 1e-12);

  Array t = data({2, 3, 4}, 1.5);
  std::vector<double> tv = t.to_vector<double>();
  expected.clear();
  append(expected, block(tv, 0, 6, 4) * vcol);
  Array tv1 = np::matmul(t, v);
  CHECK(tv1.shape() == Shape{2, 3});
  check_values(tv1, expected, 1e-12);
}

TEST_CASE("matmul errors", "[numpy]") {
  Array m = np::zeros({2, 3});
  CHECK_THROWS_MATCHES(
      np::matmul(np::array(1.f), m), ShapeError,
      Catch::Message("matmul input operand 0 must have ndim at least 1, but it has ndim 0"));
  CHECK_THROWS_MATCHES(
      np::matmul(m, 2.0f), ShapeError,
      Catch::Message("matmul input operand 1 must have ndim at least 1, but it has ndim 0"));
  CHECK_THROWS_MATCHES(
      np::matmul(np::zeros({2, 3, 4}), np::zeros({5, 4, 2})), ShapeError,
      Catch::Message("Incompatible shapes for matmul arguments: (2, 3, 4) and (5, 4, 2)"));
  CHECK_THROWS_AS(np::matmul(m, np::zeros({4, 2})), Error);  // contracting dims differ
}

TEST_CASE("dot follows numpy's rule for every rank", "[numpy]") {
  Array a = data({3, 4}, 0.1), b = data({4, 5}, 0.7);
  std::vector<double> expected;
  append(expected, block(a.to_vector<double>(), 0, 3, 4) * block(b.to_vector<double>(), 0, 4, 5));
  check_values(np::dot(a, b), expected, 1e-12);
  Array v = data({4}, 0.2), w = data({4}, 1.3);
  double inner = 0;
  for (int i = 0; i < 4; ++i) inner += v.to_vector<double>()[i] * w.to_vector<double>()[i];
  CHECK(np::dot(v, w).shape() == Shape{});
  CHECK(np::dot(v, w).item<double>() == Approx(inner));

  // N-d · 1-d: contract a's last axis.
  Array t = data({2, 3, 4}, 1.5);
  expected.clear();
  append(expected, block(t.to_vector<double>(), 0, 6, 4) * block(v.to_vector<double>(), 0, 4, 1));
  Array tv = np::dot(t, v);
  CHECK(tv.shape() == Shape{2, 3});
  check_values(tv, expected, 1e-12);

  // N-d · M-d: dot(t, u)[i, j, k, m] = sum_l t[i, j, l] u[k, l, m].
  Array u = data({5, 4, 6}, 2.5);
  std::vector<double> tvals = t.to_vector<double>(), uvals = u.to_vector<double>();
  Mat products[5];
  for (int k = 0; k < 5; ++k) products[k] = block(tvals, 0, 6, 4) * block(uvals, k * 24, 4, 6);
  expected.clear();
  for (int ij = 0; ij < 6; ++ij)
    for (int k = 0; k < 5; ++k)
      for (int m = 0; m < 6; ++m) expected.push_back(products[k](ij, m));
  Array tu = np::dot(t, u);
  CHECK(tu.shape() == Shape{2, 3, 5, 6});
  check_values(tu, expected, 1e-12);

  // A scalar operand scales.
  Array f = np::array({1.f, 2.f});
  check_aval(np::dot(2.0f, f), {2}, float32);
  check_values(np::dot(2.0f, f), {2, 4});
  check_values(np::dot(f, np::array(3.f)), {3, 6});
  check_aval(np::dot(np::array({1, 2}), np::array({3, 4})), {}, int32);
  CHECK(np::dot(np::array({1, 2}), np::array({3, 4})).item<int>() == 11);
}

TEST_CASE("outer flattens both operands", "[numpy]") {
  Array a = np::array({1.f, 2.f, 3.f});
  Array b = np::array(std::vector<int>{1, 10, 100, 1000}, {2, 2});
  Array o = np::outer(a, b);
  check_aval(o, {3, 4}, float32);
  check_values(o, {1, 10, 100, 1000, 2, 20, 200, 2000, 3, 30, 300, 3000});
  CHECK(np::outer(np::array({true, false}), np::array({true})).dtype() == bool_);
}

}  // namespace
}  // namespace jx
