// Placeholder until jx::np lands: every entry point throws.
#include "jx/numpy.hpp"

#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace jx::np {

Array asarray(const Array& x, std::optional<DType> dtype) {
  throw Error("np: not implemented");
}
Array full(const Shape& shape, const Array& fill_value, std::optional<DType> dtype) {
  throw Error("np: not implemented");
}
Array zeros_like(const Array& x, std::optional<DType> dtype) {
  throw Error("np: not implemented");
}
Array ones_like(const Array& x, std::optional<DType> dtype) {
  throw Error("np: not implemented");
}
Array full_like(const Array& x, const Array& fill_value, std::optional<DType> dtype) {
  throw Error("np: not implemented");
}
Array arange(double stop, std::optional<DType> dtype) {
  throw Error("np: not implemented");
}
Array arange(double start, double stop, double step, std::optional<DType> dtype) {
  throw Error("np: not implemented");
}
Array linspace(double start, double stop, std::int64_t num, bool endpoint, DType dtype) {
  throw Error("np: not implemented");
}
Array eye(std::int64_t n, std::optional<std::int64_t> m, std::int64_t k, DType dtype) {
  throw Error("np: not implemented");
}
Array negative(const Array& x) {
  throw Error("np: not implemented");
}
Array positive(const Array& x) {
  throw Error("np: not implemented");
}
Array exp(const Array& x) {
  throw Error("np: not implemented");
}
Array log(const Array& x) {
  throw Error("np: not implemented");
}
Array log1p(const Array& x) {
  throw Error("np: not implemented");
}
Array expm1(const Array& x) {
  throw Error("np: not implemented");
}
Array sin(const Array& x) {
  throw Error("np: not implemented");
}
Array cos(const Array& x) {
  throw Error("np: not implemented");
}
Array tan(const Array& x) {
  throw Error("np: not implemented");
}
Array tanh(const Array& x) {
  throw Error("np: not implemented");
}
Array sqrt(const Array& x) {
  throw Error("np: not implemented");
}
Array square(const Array& x) {
  throw Error("np: not implemented");
}
Array reciprocal(const Array& x) {
  throw Error("np: not implemented");
}
Array abs(const Array& x) {
  throw Error("np: not implemented");
}
Array sign(const Array& x) {
  throw Error("np: not implemented");
}
Array floor(const Array& x) {
  throw Error("np: not implemented");
}
Array ceil(const Array& x) {
  throw Error("np: not implemented");
}
Array round(const Array& x) {
  throw Error("np: not implemented");
}
Array logical_not(const Array& x) {
  throw Error("np: not implemented");
}
Array bitwise_not(const Array& x) {
  throw Error("np: not implemented");
}
Array add(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array subtract(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array multiply(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array divide(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array true_divide(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array floor_divide(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array remainder(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array mod(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array power(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array maximum(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array minimum(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array arctan2(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array logaddexp(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array equal(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array not_equal(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array less(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array less_equal(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array greater(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array greater_equal(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array logical_and(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array logical_or(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array bitwise_and(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array bitwise_or(const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array where(const Array& condition, const Array& x, const Array& y) {
  throw Error("np: not implemented");
}
Array clip(const Array& x, const std::optional<Array>& lo, const std::optional<Array>& hi) {
  throw Error("np: not implemented");
}
Array sum(const Array& x, const Axes& axis, bool keepdims) {
  throw Error("np: not implemented");
}
Array prod(const Array& x, const Axes& axis, bool keepdims) {
  throw Error("np: not implemented");
}
Array max(const Array& x, const Axes& axis, bool keepdims) {
  throw Error("np: not implemented");
}
Array min(const Array& x, const Axes& axis, bool keepdims) {
  throw Error("np: not implemented");
}
Array mean(const Array& x, const Axes& axis, bool keepdims) {
  throw Error("np: not implemented");
}
Array var(const Array& x, const Axes& axis, bool keepdims) {
  throw Error("np: not implemented");
}
Array std(const Array& x, const Axes& axis, bool keepdims) {
  throw Error("np: not implemented");
}
Array all(const Array& x, const Axes& axis, bool keepdims) {
  throw Error("np: not implemented");
}
Array any(const Array& x, const Axes& axis, bool keepdims) {
  throw Error("np: not implemented");
}
Array argmax(const Array& x, std::optional<int> axis, bool keepdims) {
  throw Error("np: not implemented");
}
Array argmin(const Array& x, std::optional<int> axis, bool keepdims) {
  throw Error("np: not implemented");
}
Array reshape(const Array& x, const Shape& shape) {
  throw Error("np: not implemented");
}
Array ravel(const Array& x) {
  throw Error("np: not implemented");
}
Array transpose(const Array& x, std::optional<std::vector<int>> axes) {
  throw Error("np: not implemented");
}
Array swapaxes(const Array& x, int axis1, int axis2) {
  throw Error("np: not implemented");
}
Array expand_dims(const Array& x, const Axes& axis) {
  throw Error("np: not implemented");
}
Array squeeze(const Array& x, const Axes& axis) {
  throw Error("np: not implemented");
}
Array broadcast_to(const Array& x, const Shape& shape) {
  throw Error("np: not implemented");
}
Array concatenate(const std::vector<Array>& xs, int axis) {
  throw Error("np: not implemented");
}
Array stack(const std::vector<Array>& xs, int axis) {
  throw Error("np: not implemented");
}
Shape broadcast_shapes(const Shape& a, const Shape& b) {
  throw Error("np: not implemented");
}
Array matmul(const Array& a, const Array& b) {
  throw Error("np: not implemented");
}
Array dot(const Array& a, const Array& b) {
  throw Error("np: not implemented");
}
Array outer(const Array& a, const Array& b) {
  throw Error("np: not implemented");
}

}  // namespace jx::np

namespace jx {
Array operator+(const Array& a, const Array& b) { throw Error("np: not implemented"); }
Array operator-(const Array& a, const Array& b) { throw Error("np: not implemented"); }
Array operator*(const Array& a, const Array& b) { throw Error("np: not implemented"); }
Array operator/(const Array& a, const Array& b) { throw Error("np: not implemented"); }
Array operator%(const Array& a, const Array& b) { throw Error("np: not implemented"); }
Array operator&(const Array& a, const Array& b) { throw Error("np: not implemented"); }
Array operator|(const Array& a, const Array& b) { throw Error("np: not implemented"); }
Array operator<(const Array& a, const Array& b) { throw Error("np: not implemented"); }
Array operator<=(const Array& a, const Array& b) { throw Error("np: not implemented"); }
Array operator>(const Array& a, const Array& b) { throw Error("np: not implemented"); }
Array operator>=(const Array& a, const Array& b) { throw Error("np: not implemented"); }
Array operator==(const Array& a, const Array& b) { throw Error("np: not implemented"); }
Array operator!=(const Array& a, const Array& b) { throw Error("np: not implemented"); }
Array operator-(const Array& a) { throw Error("np: not implemented"); }
Array operator~(const Array& a) { throw Error("np: not implemented"); }
}  // namespace jx
