// What an Array handle points to, and the helpers that build and read concrete arrays.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/buffer.hpp"
#include "core/device_storage.hpp"
#include "jx/array.hpp"

namespace jx {
namespace trace {
class Tracer;
}

namespace detail {

struct ArrayImpl {
  ShapedArray aval;
  std::shared_ptr<Buffer> buffer;          // set for concrete arrays on the host
  std::shared_ptr<DeviceStorage> storage;  // set for concrete arrays on an accelerator
  std::shared_ptr<trace::Tracer> tracer;   // set for tracers
  bool committed = false;                  // placed by device_put
  // The exact value of a weak scalar made from a C++ double: like a Python float in JAX, it
  // converts to the dtype it meets from this value, not from its float32 copy.
  std::optional<double> literal;

  Device device() const { return storage ? storage->device() : Device{}; }
};

}  // namespace detail

// A fresh, zero-filled concrete array.
Array make_array(ShapedArray aval);
Array make_array(ShapedArray aval, std::shared_ptr<Buffer> buffer);

// A concrete, strong-typed 0-d array holding `value` converted to `dtype`.
Array make_scalar(double value, DType dtype);

// An array on an accelerator.
Array make_device_array(ShapedArray aval, std::shared_ptr<DeviceStorage> storage);

// The device that committed arrays among `xs` share, or none when no array is committed. Throws
// jx::ValueError naming `what` when two are committed to different devices.
std::optional<Device> committed_device(const std::vector<Array>& xs, const std::string& what);

// The host buffer of a concrete array (for an array on an accelerator: its host copy). `what`
// names the operation for the error a tracer gets.
const Buffer& concrete_buffer(const Array& x, const char* what);
// The first element as a 0-d array when every element of the concrete array `x` has its bytes
// (`x` has at least one element).
std::optional<Array> splat_value(const Array& x);
// The impl of a non-empty handle (throws jx::Error for a default-constructed Array).
const detail::ArrayImpl& impl_of(const Array& x);
trace::Tracer* tracer_of(const Array& x);  // nullptr for concrete arrays

// The same buffer seen with another aval of equal byte size (weak-type changes, reshapes).
Array with_aval(const Array& x, ShapedArray aval);

}  // namespace jx
