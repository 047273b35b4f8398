// Shapes and abstract values (a shape, a dtype and a weak-type flag).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jx/dtype.hpp"

namespace jx {

using Shape = std::vector<std::int64_t>;

std::int64_t shape_size(const Shape& s);
// Throws jx::ValueError "array is too big; ..." when an array of this shape and dtype would hold
// more bytes than int64 counts (so its size would overflow), as NumPy does.
void check_array_size(const Shape& s, DType dtype);
std::string shape_str(const Shape& s);  // Python tuple style: "(3,)", "(2, 3)", "()"

// The abstract value of an array: what tracing and the compile cache see.
struct ShapedArray {
  Shape shape;
  DType dtype = float32;
  bool weak_type = false;

  std::int64_t size() const { return shape_size(shape); }
  int ndim() const { return static_cast<int>(shape.size()); }
  std::string str() const;  // "f32[2,3]", as jaxprs print it
  friend bool operator==(const ShapedArray&, const ShapedArray&) = default;
};

}  // namespace jx
