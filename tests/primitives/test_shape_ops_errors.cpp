// Every error path of the shape_ops family: exception type and JAX's wording, exactly.
#include <catch2/catch.hpp>

#include <limits>

#include <jx/jx.hpp>

#include "core/primitive.hpp"

namespace jx::testing {

#define CHECK_SHAPE_ERROR(expr, msg) CHECK_THROWS_MATCHES(expr, ShapeError, Catch::Message(msg))
#define CHECK_TYPE_ERROR(expr, msg) CHECK_THROWS_MATCHES(expr, TypeError, Catch::Message(msg))

TEST_CASE("broadcast_in_dim, reshape, transpose errors", "[shape_ops][errors]") {
  Array v = np::array({1.0f, 2.0f, 3.0f}), m = np::array(std::vector<float>(6), {2, 3});
  CHECK_SHAPE_ERROR(lax::broadcast_in_dim(v, {-1, 3}, {1}),
                    "broadcast_in_dim shape must have every element be nonnegative, got (-1, 3).");
  CHECK_SHAPE_ERROR(lax::broadcast_in_dim(v, {3, 3}, {0, 1}),
                    "broadcast_in_dim broadcast_dimensions must have length equal to operand "
                    "ndim; got broadcast_dimensions (0, 1) for operand ndim 1.");
  CHECK_SHAPE_ERROR(lax::broadcast_in_dim(m, {3}, {0, 1}),
                    "broadcast_in_dim target broadcast shape must have equal or higher rank to "
                    "the operand shape; got operand ndim 2 and target broadcast ndim 1.");
  CHECK_SHAPE_ERROR(lax::broadcast_in_dim(v, {3, 4}, {2}),
                    "broadcast_in_dim broadcast_dimensions must be a subset of output dimensions, "
                    "got (2,) for operand ndim 1 and shape (3, 4).");
  CHECK_SHAPE_ERROR(lax::broadcast_in_dim(v, {4}, {0}),
                    "broadcast_in_dim operand dimension sizes must either be 1, or be equal to "
                    "their corresponding dimensions in the target broadcast shape; got operand of "
                    "shape (3,), target broadcast shape (4,), broadcast_dimensions (0,) ");
  CHECK_SHAPE_ERROR(lax::broadcast_in_dim(m, {3, 2}, {1, 0}),
                    "broadcast_in_dim broadcast_dimensions must be strictly increasing; got "
                    "broadcast_dimensions (1, 0)");
  std::int64_t big = std::int64_t{1} << 40;
  CHECK_THROWS_AS(lax::broadcast_in_dim(v, {big, big, 3}, {2}), ValueError);
  CHECK_THROWS_WITH(lax::broadcast_in_dim(v, {big, big, 3}, {2}),
                    Catch::Contains("array is too big") &&
                        Catch::Contains("shape (1099511627776, 1099511627776, 3)"));
  CHECK_SHAPE_ERROR(lax::reshape(m, {-1, 6}),
                    "reshape new_sizes must all be positive, got (-1, 6).");
  CHECK_SHAPE_ERROR(lax::reshape(m, {4}),
                    "reshape total size must be unchanged, got new_sizes (4,) for shape (2, 3).");
  CHECK_SHAPE_ERROR(lax::reshape(m, {big, big, big, 0}), "reshape result size overflows int64.");
  CHECK_SHAPE_ERROR(lax::transpose(m, {0, 0}),
                    "transpose permutation isn't a permutation of operand dimensions, got "
                    "permutation (0, 0) for operand shape (2, 3).");
  CHECK_SHAPE_ERROR(lax::transpose(m, {0}),
                    "transpose permutation isn't a permutation of operand dimensions, got "
                    "permutation (0,) for operand shape (2, 3).");
}

TEST_CASE("squeeze and expand_dims errors", "[shape_ops][errors]") {
  Array m = np::array(std::vector<float>(3), {1, 3});
  CHECK_SHAPE_ERROR(lax::squeeze(m, {1}),
                    "cannot select an axis to squeeze out which has size not equal to one, got "
                    "shape=(1, 3) and dimensions=(1,)");
  CHECK_SHAPE_ERROR(lax::squeeze(m, {0, -2}),
                    "squeeze dimensions are not unique: got shape=(1, 3) and dimensions=(0, 0)");
  CHECK_SHAPE_ERROR(lax::squeeze(m, {2}),
                    "squeeze dimensions outside range [0, ndim): got shape=(1, 3) and "
                    "dimensions=(2,)");
  CHECK_SHAPE_ERROR(lax::squeeze(m, {-3}),
                    "squeeze dimensions outside range [0, ndim): got shape=(1, 3) and "
                    "dimensions=(-3,)");
  CHECK_SHAPE_ERROR(lax::expand_dims(m, {1, -3}),
                    "expand_dims dimensions are not unique: got shape=(1, 3) and "
                    "dimensions=(1, 1)");
  CHECK_SHAPE_ERROR(lax::expand_dims(m, {3}),
                    "expand_dims dimensions outside range [0, ndim + len(dimensions)): got "
                    "shape=(1, 3) and dimensions=(3,)");
}

TEST_CASE("slice errors", "[shape_ops][errors]") {
  Array m = np::array(std::vector<float>(6), {2, 3});
  CHECK_SHAPE_ERROR(lax::slice(m, {-1, 0}, {1, 1}),
                    "slice start_indices must have every element be nonnegative, got (-1, 0).");
  CHECK_SHAPE_ERROR(lax::slice(m, {0, 0}, {1, -1}),
                    "slice limit_indices must have every element be nonnegative, got (1, -1).");
  CHECK_SHAPE_ERROR(lax::slice(m, {0}, {1}),
                    "slice start_indices must have length equal to the number of dimensions of the "
                    "operand, got indices (0,) for operand shape (2, 3).");
  CHECK_SHAPE_ERROR(lax::slice(m, {0, 0}, {1}),
                    "slice limit_indices must have the same length as start_indices, got "
                    "start_indices (0, 0) and limit_indices (1,).");
  CHECK_SHAPE_ERROR(lax::slice(m, {0, 0}, {1, 4}),
                    "slice limit_indices must be less than or equal to operand shape, got "
                    "limit_indices (1, 4) for operand shape (2, 3).");
  CHECK_SHAPE_ERROR(lax::slice(m, {0, 2}, {1, 1}),
                    "slice limit_indices must be greater than or equal to start_indices, got "
                    "start_indices (0, 2) and limit_indices (1, 1).");
  CHECK_SHAPE_ERROR(lax::slice(m, {0, 0}, {1, 1}, {1}),
                    "slice strides must have length equal to the number of dimensions of the "
                    "operand, got strides (1,) for operand shape (2, 3).");
  CHECK_SHAPE_ERROR(lax::slice(m, {0, 0}, {1, 1}, {1, 0}),
                    "slice strides must have every element be strictly positive, got (1, 0).");
}

TEST_CASE("dynamic_slice and dynamic_update_slice errors", "[shape_ops][errors]") {
  Array m = np::array(std::vector<float>(6), {2, 3}), i = np::array(0), f = np::array(0.0f);
  CHECK_SHAPE_ERROR(lax::dynamic_slice(m, {i}, {1}),
                    "dynamic_slice start_indices must have length equal to the number of "
                    "dimensions of the operand, got indices (i32[],) for operand shape (2, 3).");
  CHECK_SHAPE_ERROR(lax::dynamic_slice(m, {i, i}, {1}),
                    "dynamic_slice slice_sizes must have the same length as start_indices, got "
                    "start_indices length 2 and slice_sizes (1,).");
  CHECK_SHAPE_ERROR(lax::dynamic_slice(m, {i, i}, {1, 4}),
                    "dynamic_slice slice_sizes must be less than or equal to operand shape, got "
                    "slice_sizes (1, 4) for operand shape (2, 3).");
  CHECK_SHAPE_ERROR(lax::dynamic_slice(m, {i, i}, {1, -1}),
                    "dynamic_slice slice_sizes must be greater than or equal to zero, got "
                    "slice_sizes (1, -1).");
  CHECK_SHAPE_ERROR(lax::dynamic_slice(m, {i, np::array({0})}, {1, 1}),
                    "dynamic_slice start_indices must be scalars, got indices (i32[], i32[1]).");
  CHECK_TYPE_ERROR(lax::dynamic_slice(m, {i, f}, {1, 1}),
                   "index arguments to dynamic_slice must be integers of the same type, got: "
                   "int32, float32");
  CHECK_TYPE_ERROR(lax::dynamic_slice(m, {i, i.astype(int64)}, {1, 1}),
                   "index arguments to dynamic_slice must be integers of the same type, got: "
                   "int32, int64");
  Array u = np::array(std::vector<float>(2), {1, 2});
  CHECK_SHAPE_ERROR(lax::dynamic_update_slice(m, np::array({1.0f}), {i, i}),
                    "dynamic_update_slice update must have the same rank as operand, got update "
                    "shape (1,) for operand shape (2, 3).");
  CHECK_SHAPE_ERROR(lax::dynamic_update_slice(m, u, {i}),
                    "dynamic_update_slice start_indices must have length equal to the rank of "
                    "operand, got indices (i32[],) for operand shape (2, 3).");
  CHECK_SHAPE_ERROR(lax::dynamic_update_slice(m, np::array(std::vector<float>(4), {1, 4}), {i, i}),
                    "dynamic_update_slice update shape must be smaller than operand shape, got "
                    "update shape (1, 4) for operand shape (2, 3).");
  CHECK_SHAPE_ERROR(lax::dynamic_update_slice(m, u, {i, np::array({0})}),
                    "dynamic_update_slice start_indices must be scalars, got indices "
                    "(i32[], i32[1]).");
  CHECK_TYPE_ERROR(lax::dynamic_update_slice(m, u, {f, f}),
                   "index arguments to dynamic_update_slice must be integers of the same type, "
                   "got: float32, float32");
  CHECK_TYPE_ERROR(lax::dynamic_update_slice(m, u.astype(int32), {i, i}),
                   "dynamic_update_slice requires arguments to have the same dtypes, got float32, "
                   "int32.");
}

TEST_CASE("concatenate, pad and iota errors", "[shape_ops][errors]") {
  Array a = np::array(std::vector<float>(6), {2, 3}), b = np::array(std::vector<float>(8), {2, 4});
  CHECK_TYPE_ERROR(lax::concatenate({}, 0), "concatenate expects at least one operand, got 0.");
  CHECK_SHAPE_ERROR(lax::concatenate({a, np::array({1.0f})}, 0),
                    "Cannot concatenate arrays with different numbers of dimensions: got (2, 3), "
                    "(1,).");
  CHECK_SHAPE_ERROR(lax::concatenate({a, a}, 2),
                    "concatenate dimension out of bounds: dimension 2 for shapes (2, 3), (2, 3).");
  CHECK_SHAPE_ERROR(lax::concatenate({a, a}, -1),
                    "concatenate dimension out of bounds: dimension -1 for shapes (2, 3), (2, 3).");
  CHECK_SHAPE_ERROR(lax::concatenate({a, b}, 0),
                    "Cannot concatenate arrays with shapes that differ in dimensions other than "
                    "the one being concatenated: concatenating along dimension 0 for shapes "
                    "(2, 3), (2, 4).");
  CHECK_TYPE_ERROR(lax::concatenate({a, a.astype(int32)}, 0),
                   "concatenate requires arguments to have the same dtypes, got float32, int32.");

  Array zero = np::array(0.0f);
  CHECK_TYPE_ERROR(lax::pad(a, np::array(0), {{0, 0, 0}, {0, 0, 0}}),
                   "pad operand and padding_value must be same dtype: got float32 and int32.");
  CHECK_SHAPE_ERROR(lax::pad(a, np::array({0.0f}), {{0, 0, 0}, {0, 0, 0}}),
                    "pad padding_value must be a scalar (0-d), got shape (1,).");
  CHECK_SHAPE_ERROR(lax::pad(a, zero, {{1, 2, 0}}),
                    "length of padding_config must equal the number of axes of operand, got "
                    "padding_config ((1, 2, 0),) for operand shape (2, 3)");
  CHECK_SHAPE_ERROR(lax::pad(a, zero, {{0, 0, 0}, {0, 0, -1}}),
                    "interior padding in padding_config must be nonnegative, got padding_config "
                    "((0, 0, 0), (0, 0, -1))");
  CHECK_SHAPE_ERROR(lax::pad(a, zero, {{-2, -1, 0}, {0, 0, 0}}),
                    "Dimension size after padding is not at least 0, got result shape (-1, 3), for "
                    "padding_config ((-2, -1, 0), (0, 0, 0)) and operand shape (2, 3)");
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const char* overflow = "pad result size overflows int64.";
  CHECK_SHAPE_ERROR(lax::pad(a, zero, {{0, 0, max}, {0, 0, 0}}), overflow);
  CHECK_SHAPE_ERROR(lax::pad(a, zero, {{max, 1, 0}, {0, 0, 0}}), overflow);

  CHECK_SHAPE_ERROR(lax::iota(int32, {2, -3}),
                    "iota shape must have every element be nonnegative, got (2, -3).");
  CHECK_TYPE_ERROR(lax::iota(bool_, {3}),
                   "iota does not accept dtype bool. Accepted dtypes are subtypes of integer, "
                   "floating.");
  CHECK_SHAPE_ERROR(lax::iota(int32, {3}, 1),
                    "iota dimension must be between 0 and len(shape), got dimension=1 for "
                    "shape=(3,)");
  CHECK_SHAPE_ERROR(lax::iota(int32, {}, 0),
                    "iota dimension must be between 0 and len(shape), got dimension=0 for "
                    "shape=()");
}

// Parsed jaxprs reach the rules with any operand count and any params; the wrappers never do.
TEST_CASE("shape_ops rules reject bad operand counts and malformed params", "[shape_ops][errors]") {
  auto eval = [](const char* name, std::vector<ShapedArray> in, const Params& params) {
    return find_primitive(name)->abstract_eval(in, params);
  };
  ShapedArray f{{2}, float32}, s{{}, float32};
  Params none;
  CHECK_TYPE_ERROR(eval("reshape", {f, f}, {{"new_sizes", Param::ints({2})}}),
                   "reshape takes 1 operand(s), got 2.");
  CHECK_TYPE_ERROR(eval("dynamic_update_slice", {f}, none),
                   "dynamic_update_slice takes at least 2 operand(s), got 1.");
  CHECK_TYPE_ERROR(eval("iota", {s}, none), "iota takes 0 operand(s), got 1.");
  CHECK_SHAPE_ERROR(eval("pad", {f, s}, {{"padding_config", Param::tuple({Param::ints({1, 2})})}}),
                    "pad padding_config entries must be (low, high, interior) triples, got "
                    "padding_config ((1, 2),)");
  Params transposing{{"dimensions", Param::ints({0})}, {"new_sizes", Param::ints({2})}};
  CHECK_SHAPE_ERROR(eval("reshape", {f}, transposing),
                    "reshape supports only dimensions=None (transpose first), got "
                    "dimensions=(0,).");
  CHECK_THROWS_AS(eval("transpose", {f}, none), Error);  // a missing param is an Error, not UB
  CHECK(eval("pad", {f, s}, {{"padding_config", Param::tuple({Param::ints({1, 2, 0})})}})[0] ==
        ShapedArray{{5}, float32});
}

#undef CHECK_SHAPE_ERROR
#undef CHECK_TYPE_ERROR

}  // namespace jx::testing
