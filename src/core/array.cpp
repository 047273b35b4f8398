// Array handle: construction from scalars, reading values, conversion.
#include <cstring>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "core/element_convert.hpp"
#include "jx/device.hpp"
#include "jx/lax.hpp"
#include "support/format.hpp"
#include "trace/tracer.hpp"

namespace jx {

Array make_array(ShapedArray aval) {
  check_array_size(aval.shape, aval.dtype);
  auto buffer = std::make_shared<Buffer>(aval.size() * itemsize(aval.dtype));
  return make_array(std::move(aval), std::move(buffer));
}

Array make_array(ShapedArray aval, std::shared_ptr<Buffer> buffer) {
  auto impl = std::make_shared<detail::ArrayImpl>();
  impl->aval = std::move(aval);
  impl->buffer = std::move(buffer);
  return Array(std::move(impl));
}

Array make_device_array(ShapedArray aval, std::shared_ptr<DeviceStorage> storage) {
  auto impl = std::make_shared<detail::ArrayImpl>();
  impl->aval = std::move(aval);
  impl->storage = std::move(storage);
  impl->committed = true;
  return Array(std::move(impl));
}

Array make_scalar(double value, DType dtype) {
  Array out = make_array(ShapedArray{{}, dtype, false});
  dispatch(dtype, [&]<class T>() { *out.impl()->buffer->as<T>() = convert_element<T>(value); });
  return out;
}

const detail::ArrayImpl& impl_of(const Array& x) {
  if (!x.impl()) throw Error("use of an empty jx::Array (default-constructed, never assigned)");
  return *x.impl();
}

trace::Tracer* tracer_of(const Array& x) { return impl_of(x).tracer.get(); }

const Buffer& concrete_buffer(const Array& x, const char* what) {
  const auto& impl = impl_of(x);
  if (impl.tracer) impl.tracer->throw_concretization_error(what);
  if (impl.storage) return impl.storage->host_copy();
  if (!impl.buffer)
    throw Error(std::string("Array has been deleted with shape=") +
                std::string(dtype_name(impl.aval.dtype)) + "[" +
                detail::join(impl.aval.shape, ",") + "] (it was donated to a jitted function)");
  return *impl.buffer;
}

std::optional<Array> splat_value(const Array& x) {
  const auto* bytes = static_cast<const unsigned char*>(concrete_buffer(x, "splat_value").data());
  std::size_t item = itemsize(x.dtype());
  auto n = static_cast<std::size_t>(x.size());
  for (std::size_t k = 1; k < n; ++k)
    if (std::memcmp(bytes, bytes + k * item, item) != 0) return std::nullopt;
  Array scalar = make_array(ShapedArray{{}, x.dtype(), false});
  std::memcpy(scalar.impl()->buffer->data(), bytes, item);
  return scalar;
}

Array with_aval(const Array& x, ShapedArray aval) {
  const auto& impl = impl_of(x);
  JX_CHECK(!impl.tracer && (impl.buffer || impl.storage));
  auto out = std::make_shared<detail::ArrayImpl>(impl);
  out->aval = std::move(aval);
  // Only a weak 0-d array stands for a C++ double: reshaped, it is an ordinary array.
  if (!out->aval.shape.empty() || !out->aval.weak_type) out->literal.reset();
  JX_CHECK(out->aval.size() * itemsize(out->aval.dtype) ==
           (impl.storage ? impl.storage->nbytes() : impl.buffer->nbytes()));
  return Array(std::move(out));
}

std::optional<Device> committed_device(const std::vector<Array>& xs, const std::string& what) {
  std::optional<Device> out;
  std::size_t first = 0;
  for (std::size_t k = 0; k < xs.size(); ++k) {
    const detail::ArrayImpl& impl = *xs[k].impl();
    if (!impl.committed) continue;
    if (!out) {
      out = impl.device();
      first = k;
    } else if (*out != impl.device()) {
      throw ValueError("Received incompatible devices for " + what + ": argument " +
                       std::to_string(first) + " (" + xs[first].aval().str() + ") is on " +
                       out->str() + " and argument " + std::to_string(k) + " (" +
                       xs[k].aval().str() + ") is on " + impl.device().str() +
                       "; move one with jx::device_put");
    }
  }
  return out;
}

const ShapedArray& Array::aval() const { return impl_of(*this).aval; }

bool Array::is_tracer() const { return tracer_of(*this) != nullptr; }
bool Array::is_deleted() const {
  const auto& impl = impl_of(*this);
  return !impl.tracer && !impl.buffer && !impl.storage;
}

Device Array::device() const {
  const auto& impl = impl_of(*this);
  if (impl.tracer) impl.tracer->throw_concretization_error("device()");
  return impl.device();
}

const Array& Array::block_until_ready() const {
  const auto& impl = impl_of(*this);
  if (impl.storage) impl.storage->wait();
  return *this;
}

bool Array::committed() const {
  const auto& impl = impl_of(*this);
  if (impl.tracer) impl.tracer->throw_concretization_error("committed()");
  return impl.committed;
}

Array Array::scalar(double f, std::int64_t i, DType dtype, bool weak) {
  Array out = make_array(ShapedArray{{}, dtype, weak});
  dispatch(dtype, [&]<class T>() {
    *out.impl()->buffer->as<T>() = is_floating(dtype) ? static_cast<T>(f) : static_cast<T>(i);
    if constexpr (std::is_same_v<T, bool>) *out.impl()->buffer->as<T>() = f != 0.0;
  });
  if (weak && is_floating(dtype)) out.impl()->literal = f;
  return out;
}

template <class T>
std::vector<T> Array::to_vector() const {
  const Buffer& buf = concrete_buffer(*this, "to_vector()");
  std::vector<T> out(static_cast<std::size_t>(size()));
  dispatch(dtype(), [&]<class S>() {
    const S* src = buf.as<S>();
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = convert_element<T>(src[k]);
  });
  return out;
}

template <class T>
T Array::item() const {
  const Buffer& buf = concrete_buffer(*this, "item()");
  if (size() != 1)
    throw TypeError("item() needs an array of size 1, got shape " + shape_str(shape()));
  return dispatch(dtype(), [&]<class S>() { return convert_element<T>(*buf.as<S>()); });
}

Array::operator bool() const {
  const Buffer& buf = concrete_buffer(*this, "bool()");
  if (size() != 1)
    throw TypeError(
        "The truth value of an array with more than one element is ambiguous, got "
        "shape " +
        shape_str(shape()) + ". Use np::any or np::all.");
  return dispatch(dtype(), [&]<class S>() { return *buf.as<S>() != S{}; });
}

Array Array::astype(DType d) const { return lax::convert_element_type(*this, d, false); }

#define JX_INSTANTIATE(dtype, T, ...)                     \
  template std::vector<T> Array::to_vector<T>() const; \
  template T Array::item<T>() const;
JX_FOR_EACH_DTYPE(JX_INSTANTIATE)
#undef JX_INSTANTIATE

}  // namespace jx
