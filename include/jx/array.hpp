// jx::Array: an immutable, cheaply copied handle to a concrete buffer or to a tracer.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "jx/dtype.hpp"
#include "jx/errors.hpp"
#include "jx/shape.hpp"

namespace jx {

namespace detail {
struct ArrayImpl;  // defined in src/core: aval plus either a buffer or a tracer
}  // namespace detail

class Device;  // jx/device.hpp
class Index;   // one entry of a multi-axis index, below
class At;      // x.at(...), below

template <class T>
concept Scalar = std::is_arithmetic_v<T>;
// What an array's data may be given as: C++ scalars and the 16-bit floats.
template <class T>
concept Element = Scalar<T> || std::is_same_v<T, BFloat16> || std::is_same_v<T, Float16>;

class Array {
 public:
  Array() = default;  // an empty handle; using it throws jx::Error

  // A C++ scalar becomes a 0-d array. Signed integers and floating point values are weak-typed
  // (like Python scalars in JAX: they take the dtype of the array they meet); bool and unsigned
  // integers are not. As JAX's literals, an int and a double are a weak int32 and a weak float32
  // (int64 and float64 with --enable_x64); a float and an int64 keep their width.
  template <Scalar T>
  Array(T value) : Array(from_scalar(value)) {}  // NOLINT: implicit, so `x + 2.0f` works

  explicit Array(std::shared_ptr<detail::ArrayImpl> impl) : impl_(std::move(impl)) {}

  const ShapedArray& aval() const;
  const Shape& shape() const { return aval().shape; }
  DType dtype() const { return aval().dtype; }
  bool weak_type() const { return aval().weak_type; }
  int ndim() const { return aval().ndim(); }
  std::int64_t size() const { return aval().size(); }

  bool valid() const { return impl_ != nullptr; }
  bool is_tracer() const;
  // A donated argument whose buffer a jitted function's output took over (JitOptions::
  // donate_argnums): its values are gone, and reading them throws jx::Error.
  bool is_deleted() const;

  // Reading values needs a concrete array: under a trace these throw jx::ConcretizationError.
  // T may differ from dtype(); values are converted as astype converts them (XLA's rules: float
  // to int saturates and NaN gives 0, narrower ints wrap, 16-bit floats round to nearest even).
  template <class T>
  T item() const;
  template <class T>
  std::vector<T> to_vector() const;
  explicit operator bool() const;  // `if (x < y)`: a concrete size-1 array only

  // Where a concrete array's values live (jx/device.hpp), and whether device_put committed them
  // there. Under a trace these throw jx::ConcretizationError.
  Device device() const;
  bool committed() const;
  // Waits until the work computing this array is done (device work is asynchronous; reading
  // values waits by itself). For timing.
  const Array& block_until_ready() const;

  Array astype(DType dtype) const;
  std::string repr() const;  // NumPy style: Array([1., 2.], dtype=float32)
  std::string str() const;   // NumPy's str(): [1. 2.]; 0-d as a NumPy scalar, 2.0

  // NumPy's indexing, as JAX does it. x[i] indexes axis 0 with an int (negative counts from the
  // end; out of range is jx::IndexError) or an integer array (negative entries count from the
  // end, out-of-range entries clamp); x[{...}] indexes several axes with ints, jx::slice(start,
  // stop, step), jx::newaxis, jx::ellipsis and integer arrays (advanced indexing: the arrays
  // broadcast together, and their dims replace the indexed ones where the arrays stand if they
  // are adjacent, else go first). x.at(...) is JAX's x.at[...]: a functional update.
  Array operator[](std::int64_t i) const;
  Array operator[](const Array& indices) const;
  Array operator[](const std::vector<Index>& index) const;
  At at(const Array& indices) const;
  At at(const std::vector<Index>& index) const;

  const std::shared_ptr<detail::ArrayImpl>& impl() const { return impl_; }

 private:
  template <Scalar T>
  static Array from_scalar(T value) {
    constexpr bool weak = !std::is_same_v<T, bool> && !std::is_unsigned_v<T>;
    if constexpr (std::is_same_v<T, bool>)
      return scalar(value ? 1.0 : 0.0, 0, bool_, false);
    else if constexpr (std::is_same_v<T, double>)
      return scalar(value, 0, default_float_dtype(), weak);
    else if constexpr (std::is_floating_point_v<T>)
      return scalar(static_cast<double>(value), 0, float32, weak);
    else if constexpr (weak && sizeof(T) <= sizeof(int))
      return scalar(0.0, static_cast<std::int64_t>(value), default_int_dtype(), weak);
    else
      return scalar(0.0, static_cast<std::int64_t>(value), dtype_of<T>(), weak);
  }
  static Array scalar(double f, std::int64_t i, DType dtype, bool weak);

  std::shared_ptr<detail::ArrayImpl> impl_;
};

// Python's slice(start, stop, step): absent ends mean the whole axis, negative ones count from
// the end, a negative step walks backwards.
struct Slice {
  std::optional<std::int64_t> start, stop;
  std::int64_t step = 1;
};
inline Slice slice(std::optional<std::int64_t> start = std::nullopt,
                   std::optional<std::int64_t> stop = std::nullopt, std::int64_t step = 1) {
  return {start, stop, step};
}
struct NewAxis {};
inline constexpr NewAxis newaxis{};
struct Ellipsis {};
inline constexpr Ellipsis ellipsis{};

// One entry of a multi-axis index.
class Index {
 public:
  template <class T>
    requires std::is_integral_v<T> && (!std::is_same_v<T, bool>)
  Index(T i) : value_(static_cast<std::int64_t>(i)) {}  // NOLINT: implicit, as in x[{1, 2}]
  Index(Slice s) : value_(s) {}                           // NOLINT
  Index(NewAxis n) : value_(n) {}                         // NOLINT
  Index(Ellipsis e) : value_(e) {}                        // NOLINT
  Index(Array a) : value_(std::move(a)) {}                // NOLINT
  const std::variant<std::int64_t, Slice, NewAxis, Ellipsis, Array>& value() const {
    return value_;
  }

 private:
  std::variant<std::int64_t, Slice, NewAxis, Ellipsis, Array> value_;
};

// JAX's x.at[index]: each method returns x with the elements x[index] replaced, combined with
// `v` (broadcast to x[index]'s shape, cast to x's dtype), or read (get). Repeated indices
// accumulate under add, multiply, min and max; out-of-bounds updates are dropped; get clamps, as
// x[index]. Under jit with x donated, the update is in place.
class At {
 public:
  At(Array x, std::vector<Index> index) : x_(std::move(x)), index_(std::move(index)) {}
  Array get() const;
  Array set(const Array& v) const;
  Array add(const Array& v) const;
  Array multiply(const Array& v) const;
  Array min(const Array& v) const;
  Array max(const Array& v) const;

 private:
  Array x_;
  std::vector<Index> index_;
};

std::ostream& operator<<(std::ostream& os, const Array& x);

// NumPy-style operators: broadcasting and type promotion, as jx::np does.
Array operator+(const Array& a, const Array& b);
Array operator-(const Array& a, const Array& b);
Array operator*(const Array& a, const Array& b);
Array operator/(const Array& a, const Array& b);  // true division: int / int → float
Array operator%(const Array& a, const Array& b);  // Python's sign convention (np.remainder)
Array operator-(const Array& a);
Array operator~(const Array& a);  // bitwise not; logical not for bool
Array operator&(const Array& a, const Array& b);
Array operator|(const Array& a, const Array& b);
Array operator<(const Array& a, const Array& b);
Array operator<=(const Array& a, const Array& b);
Array operator>(const Array& a, const Array& b);
Array operator>=(const Array& a, const Array& b);
Array operator==(const Array& a, const Array& b);
Array operator!=(const Array& a, const Array& b);

}  // namespace jx
