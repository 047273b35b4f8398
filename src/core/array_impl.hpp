// What an Array handle points to, and the helpers that build and read concrete arrays.
#pragma once

#include <memory>

#include "core/buffer.hpp"
#include "jx/array.hpp"

namespace jx {
namespace trace {
class Tracer;
}

namespace detail {

struct ArrayImpl {
  ShapedArray aval;
  std::shared_ptr<Buffer> buffer;         // set for concrete arrays
  std::shared_ptr<trace::Tracer> tracer;  // set for tracers
};

}  // namespace detail

// A fresh, zero-filled concrete array.
Array make_array(ShapedArray aval);
Array make_array(ShapedArray aval, std::shared_ptr<Buffer> buffer);

// A concrete, strong-typed 0-d array holding `value` converted to `dtype`.
Array make_scalar(double value, DType dtype);

// The buffer of a concrete array. `what` names the operation for the error a tracer gets.
const Buffer& concrete_buffer(const Array& x, const char* what);
// The impl of a non-empty handle (throws jx::Error for a default-constructed Array).
const detail::ArrayImpl& impl_of(const Array& x);
trace::Tracer* tracer_of(const Array& x);  // nullptr for concrete arrays

// The same buffer seen with another aval of equal byte size (weak-type changes, reshapes).
Array with_aval(const Array& x, ShapedArray aval);

}  // namespace jx
