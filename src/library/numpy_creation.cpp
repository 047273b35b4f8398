// np creation functions: arrays from C++ data, zeros, ones, full, arange, linspace, eye.
#include <cmath>
#include <limits>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "core/element_convert.hpp"
#include "library/numpy_support.hpp"

namespace jx::np {
namespace {

void check_dims(const char* op, const Shape& shape) {
  for (auto d : shape)
    if (d < 0)
      throw ShapeError(std::string(op) + " got a negative dimension in shape " + shape_str(shape));
}

template <class T>
Array from_data(const T* data, std::size_t n, const Shape& shape) {
  check_dims("array", shape);
  if (static_cast<std::int64_t>(n) != shape_size(shape))
    throw ShapeError("array got " + std::to_string(n) + " values for shape " + shape_str(shape) +
                     " of size " + std::to_string(shape_size(shape)));
  Array out = make_array(ShapedArray{shape, dtype_of<T>(), false});
  T* dst = out.impl()->buffer->template as<T>();
  for (std::size_t i = 0; i < n; ++i) dst[i] = data[i];
  // C++ ints are JAX's int literals: int64 with --enable_x64.
  if constexpr (std::is_same_v<T, int>)
    if (default_int_dtype() != out.dtype()) return out.astype(default_int_dtype());
  return out;
}

// A concrete array whose element i (row-major) is value(i).
template <class F>
Array generate(const Shape& shape, DType dtype, F value) {
  Array out = make_array(ShapedArray{shape, dtype, false});
  dispatch(dtype, [&]<class T>() {
    T* dst = out.impl()->buffer->as<T>();
    for (std::int64_t i = 0, n = out.size(); i < n; ++i) dst[i] = convert_element<T>(value(i));
  });
  return out;
}

Array filled(const char* op, const Shape& shape, DType dtype, double value) {
  check_dims(op, shape);
  return detail::broadcast_to_shape(make_scalar(value, dtype), shape);
}

bool is_whole(double v) { return std::isfinite(v) && std::floor(v) == v; }

}  // namespace

template <Element T>
Array array(std::initializer_list<T> values) {
  return from_data(values.begin(), values.size(), Shape{static_cast<std::int64_t>(values.size())});
}

template <Element T>
Array array(const std::vector<T>& values, const Shape& shape) {
  if constexpr (std::is_same_v<T, bool>) {  // vector<bool> is packed: copy out first
    std::unique_ptr<bool[]> tmp(new bool[values.size()]);
    for (std::size_t i = 0; i < values.size(); ++i) tmp[i] = values[i];
    return from_data(tmp.get(), values.size(), shape);
  } else {
    return from_data(values.data(), values.size(), shape);
  }
}

#define JX_INSTANTIATE(dtype, T, ...)                   \
  template Array array<T>(std::initializer_list<T>); \
  template Array array<T>(const std::vector<T>&, const Shape&);
JX_FOR_EACH_DTYPE(JX_INSTANTIATE)
#undef JX_INSTANTIATE

Array array(const Array& x) { return detail::convert(x, {x.dtype(), false}); }

// Without a dtype, x as it is (weak flag included); with one, x converted (strong), as JAX.
Array asarray(const Array& x, std::optional<DType> dtype) {
  return dtype ? detail::convert(x, {*dtype, false}) : x;
}

// Broadcasts of a scalar, so under a trace they are equations, not captured constants.
Array zeros(const Shape& shape, DType dtype) { return filled("zeros", shape, dtype, 0); }
Array ones(const Shape& shape, DType dtype) { return filled("ones", shape, dtype, 1); }

// A scalar fill is converted, then broadcast with broadcast_in_dim (staged when it is traced);
// without a dtype it keeps its own, weak flag included. An array fill broadcasts as numpy.
Array full(const Shape& shape, const Array& fill_value, std::optional<DType> dtype) {
  check_dims("full", shape);
  if (fill_value.ndim() != 0) return broadcast_to(asarray(fill_value, dtype), shape);
  TypeInfo t = dtype ? TypeInfo{*dtype, false} : detail::type_of(fill_value);
  return detail::broadcast_to_shape(detail::convert(fill_value, t), shape);
}

// x's shape, and x's dtype and weak flag unless a dtype is given.
Array full_like(const Array& x, const Array& fill_value, std::optional<DType> dtype) {
  if (fill_value.ndim() != 0)
    return broadcast_to(asarray(fill_value, dtype.value_or(x.dtype())), x.shape());
  TypeInfo t = dtype ? TypeInfo{*dtype, false} : detail::type_of(x);
  return full(x.shape(), detail::convert(fill_value, t));
}

Array zeros_like(const Array& x, std::optional<DType> dtype) { return full_like(x, 0, dtype); }
Array ones_like(const Array& x, std::optional<DType> dtype) { return full_like(x, 1, dtype); }

Array arange(double stop, std::optional<DType> dtype) { return arange(0, stop, 1, dtype); }

// numpy's length ceil((stop - start) / step); the default int dtype when every argument is a
// whole number.
Array arange(double start, double stop, double step, std::optional<DType> dtype) {
  if (step == 0) throw ShapeError("arange got step 0: division by zero");
  double length = std::ceil((stop - start) / step);
  if (std::isnan(length)) throw ShapeError("arange: cannot compute length");
  if (length > static_cast<double>(std::int64_t{1} << 53))
    throw ShapeError("Maximum allowed size exceeded");
  auto n = static_cast<std::int64_t>(std::max(length, 0.0));
  DType d = dtype.value_or(is_whole(start) && is_whole(stop) && is_whole(step) ? default_int_dtype()
                                                                         : default_float_dtype());
  // As JAX: arange(stop) is an iota (an equation under a trace), anything else a constant.
  if (start == 0 && step == 1) return lax::iota(d, {n}, 0);
  return generate({n}, d, [&](std::int64_t i) { return start + static_cast<double>(i) * step; });
}

// Evenly spaced values from start to stop (included when `endpoint`); integer dtypes floor.
Array linspace(double start, double stop, std::int64_t num, bool endpoint, DType dtype) {
  if (num < 0)
    throw ShapeError("Number of samples, " + std::to_string(num) + ", must be non-negative");
  auto div = static_cast<double>(endpoint ? num - 1 : num);
  bool to_int = is_integral(dtype);
  return generate({num}, dtype, [&](std::int64_t i) {
    double t = div > 0 ? static_cast<double>(i) / div : 0;
    double v = div > 0 && i == num - 1 && endpoint ? stop : start * (1 - t) + stop * t;
    return to_int ? std::floor(v) : v;
  });
}

// Ones on the k-th diagonal (k > 0 above the main one) of an n × m matrix: row + k == column of
// two iotas, as JAX builds it.
Array eye(std::int64_t n, std::optional<std::int64_t> m, std::int64_t k, DType dtype) {
  std::int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0) throw ShapeError("negative dimensions are not allowed");
  Shape shape{n, cols};
  Array row = lax::iota(int32, shape, 0), column = lax::iota(int32, shape, 1);
  Array on_diagonal = lax::eq(lax::add(row, make_scalar(static_cast<double>(k), int32)), column);
  return lax::convert_element_type(on_diagonal, dtype, false);
}

}  // namespace jx::np
