// How windowed ops (convolutions, reduce-window, pooling) place their windows: JAX's padding
// and a convolution's dimension numbers.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace jx {

using PadPairs = std::vector<std::pair<std::int64_t, std::int64_t>>;  // (low, high) per dim

// JAX's padding of a windowed op: "VALID" (none), "SAME" (ceil(in / stride) windows, the padding
// split in two, any odd element at the end), "SAME_LOWER" (the odd one at the start), or explicit
// (low, high) pairs, one per windowed dim (a negative pad crops). Names are case-insensitive;
// another throws jx::ValueError in JAX's words.
class Padding {
 public:
  enum class Kind { kValid, kSame, kSameLower, kExplicit };

  Padding(const char* name);         // NOLINT(google-explicit-constructor): JAX takes a string
  Padding(const std::string& name);  // NOLINT(google-explicit-constructor)
  Padding(PadPairs pads);            // NOLINT(google-explicit-constructor)
  Padding(std::initializer_list<std::pair<std::int64_t, std::int64_t>> pads);  // NOLINT

  Kind kind() const { return kind_; }
  // The pairs for windows of `window` elements (already dilated) at `strides` over dims `in`
  // (JAX's lax.padtype_to_pads); explicit pairs as given.
  PadPairs pads(const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& window,
                const std::vector<std::int64_t>& strides) const;

 private:
  Kind kind_ = Kind::kValid;
  PadPairs explicit_;
};

// JAX's ConvDimensionNumbers: lhs_spec and out_spec list the (batch, feature, spatial...) dims,
// rhs_spec the (output feature, input feature, spatial...) dims, spatial dims in rhs's order.
// Built from three spec strings as JAX's conv_dimension_numbers: {"NHWC", "HWIO", "NHWC"} (N the
// batch, C the feature, O and I the kernel's features, any other letters the spatial dims), from
// the three specs, or empty: the default, {"NCHW", "OIHW", "NCHW"} for the operands' rank.
// Strings are checked against the operands when the convolution is applied (jx::TypeError).
struct ConvDimensionNumbers {
  std::vector<std::int64_t> lhs_spec, rhs_spec, out_spec;
  std::string lhs_chars, rhs_chars, out_chars;  // the spec strings, when built from them

  ConvDimensionNumbers() = default;
  ConvDimensionNumbers(std::vector<std::int64_t> lhs, std::vector<std::int64_t> rhs,
                       std::vector<std::int64_t> out);
  ConvDimensionNumbers(const char* lhs, const char* rhs, const char* out);
  // A template, so that braced lists of ints ({0, 3, 1, 2}) never read as strings.
  template <class S>
  requires std::same_as<S, std::string> ConvDimensionNumbers(const S& lhs, const S& rhs,
                                                             const S& out)
      : lhs_chars(lhs), rhs_chars(rhs), out_chars(out) {}

  bool empty() const { return lhs_spec.empty() && lhs_chars.empty(); }
  // The specs for operands of these shapes: JAX's conv_dimension_numbers, with its checks.
  ConvDimensionNumbers resolved(const std::vector<std::int64_t>& lhs_shape,
                                const std::vector<std::int64_t>& rhs_shape) const;
  friend bool operator==(const ConvDimensionNumbers&, const ConvDimensionNumbers&) = default;
};

}  // namespace jx
