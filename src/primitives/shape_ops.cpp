// Placeholder until the shape_ops family lands: every entry point throws.
#include "jx/lax.hpp"

#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace jx::lax {

Array broadcast_in_dim(const Array& x, const Shape& shape,                        const std::vector<std::int64_t>& broadcast_dimensions) {
  throw Error("shape_ops: not implemented");
}
Array reshape(const Array& x, const Shape& new_sizes) {
  throw Error("shape_ops: not implemented");
}
Array transpose(const Array& x, const std::vector<std::int64_t>& permutation) {
  throw Error("shape_ops: not implemented");
}
Array squeeze(const Array& x, const std::vector<std::int64_t>& dimensions) {
  throw Error("shape_ops: not implemented");
}
Array expand_dims(const Array& x, const std::vector<std::int64_t>& dimensions) {
  throw Error("shape_ops: not implemented");
}
Array slice(const Array& x, const std::vector<std::int64_t>& start_indices,             const std::vector<std::int64_t>& limit_indices,             const std::vector<std::int64_t>& strides) {
  throw Error("shape_ops: not implemented");
}
Array dynamic_slice(const Array& x, const std::vector<Array>& start_indices,                     const std::vector<std::int64_t>& slice_sizes) {
  throw Error("shape_ops: not implemented");
}
Array dynamic_update_slice(const Array& x, const Array& update,                            const std::vector<Array>& start_indices) {
  throw Error("shape_ops: not implemented");
}
Array concatenate(const std::vector<Array>& xs, std::int64_t dimension) {
  throw Error("shape_ops: not implemented");
}
Array pad(const Array& x, const Array& padding_value, const PaddingConfig& padding_config) {
  throw Error("shape_ops: not implemented");
}
Array iota(DType dtype, const Shape& shape, std::int64_t dimension) {
  throw Error("shape_ops: not implemented");
}

}  // namespace jx::lax
