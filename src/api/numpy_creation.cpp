// np creation functions: arrays from C++ data, zeros, ones, full, arange, linspace, eye.
#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "jx/numpy.hpp"

namespace jx::np {
namespace {

template <class T>
Array from_data(const T* data, std::size_t n, const Shape& shape) {
  for (auto d : shape)
    if (d < 0) throw ShapeError("array got a negative dimension in shape " + shape_str(shape));
  if (static_cast<std::int64_t>(n) != shape_size(shape))
    throw ShapeError("array got " + std::to_string(n) + " values for shape " + shape_str(shape) +
                     " of size " + std::to_string(shape_size(shape)));
  Array out = make_array(ShapedArray{shape, dtype_of<T>(), false});
  T* dst = out.impl()->buffer->template as<T>();
  for (std::size_t i = 0; i < n; ++i) dst[i] = data[i];
  return out;
}

Array filled(const Shape& shape, DType dtype, double value) {
  Array out = make_array(ShapedArray{shape, dtype, false});
  dispatch(dtype, [&]<class T>() {
    T* dst = out.impl()->buffer->as<T>();
    for (std::int64_t i = 0, n = out.size(); i < n; ++i) dst[i] = static_cast<T>(value);
  });
  return out;
}

}  // namespace

template <Scalar T>
Array array(std::initializer_list<T> values) {
  return from_data(values.begin(), values.size(), Shape{static_cast<std::int64_t>(values.size())});
}

template <Scalar T>
Array array(const std::vector<T>& values, const Shape& shape) {
  if constexpr (std::is_same_v<T, bool>) {  // vector<bool> is packed: copy out first
    std::unique_ptr<bool[]> tmp(new bool[values.size()]);
    for (std::size_t i = 0; i < values.size(); ++i) tmp[i] = values[i];
    return from_data(tmp.get(), values.size(), shape);
  } else {
    return from_data(values.data(), values.size(), shape);
  }
}

#define JX_INSTANTIATE(T)                                   \
  template Array array<T>(std::initializer_list<T>);        \
  template Array array<T>(const std::vector<T>&, const Shape&);
JX_INSTANTIATE(bool)
JX_INSTANTIATE(float)
JX_INSTANTIATE(double)
JX_INSTANTIATE(std::int32_t)
JX_INSTANTIATE(std::int64_t)
JX_INSTANTIATE(std::uint32_t)
#undef JX_INSTANTIATE

Array zeros(const Shape& shape, DType dtype) { return filled(shape, dtype, 0); }
Array ones(const Shape& shape, DType dtype) { return filled(shape, dtype, 1); }

}  // namespace jx::np
