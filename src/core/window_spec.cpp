// jx::Padding (JAX's lax.padtype_to_pads) and jx::ConvDimensionNumbers (JAX's
// conv_dimension_numbers and conv_general_permutations), with JAX's checks and messages.
#include <algorithm>
#include <cctype>
#include <numeric>
#include <set>
#include <sstream>

#include "jx/errors.hpp"
#include "jx/window.hpp"
#include "support/format.hpp"

namespace jx {
namespace {

template <class E, class... A>
[[noreturn]] void fail(const A&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw E(os.str());
}

Padding::Kind padding_kind(const std::string& name) {
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "VALID") return Padding::Kind::kValid;
  if (upper == "SAME") return Padding::Kind::kSame;
  if (upper == "SAME_LOWER") return Padding::Kind::kSameLower;
  // JAX raises a RuntimeError with these words; jx's nearest type is ValueError.
  fail<ValueError>("Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got ",
                   name, ".");
}

std::string shape_tuple(const std::vector<std::int64_t>& dims) { return detail::tuple_str(dims); }

// Python's repr of a tuple of strings: ('NCHW', 'OIHW', 'NCHW').
std::string specs_repr(const ConvDimensionNumbers& d) {
  return "('" + d.lhs_chars + "', '" + d.rhs_chars + "', '" + d.out_chars + "')";
}

// JAX's conv_general_permutations: each spec as (batch or out-feature dim, feature or in-feature
// dim, spatial dims in the order rhs's string lists them).
ConvDimensionNumbers permutations(const ConvDimensionNumbers& d) {
  const std::string* specs[3] = {&d.lhs_chars, &d.rhs_chars, &d.out_chars};
  const char pairs[3][2] = {{'N', 'C'}, {'O', 'I'}, {'N', 'C'}};
  for (int i = 0; i < 3; ++i) {
    const std::string& s = *specs[i];
    auto count = [&s](char c) { return std::count(s.begin(), s.end(), c); };
    if (count(pairs[i][0]) != 1 || count(pairs[i][1]) != 1)
      fail<TypeError>("convolution dimension_numbers[", i, "] must contain the characters '",
                      pairs[i][0], "' and '", pairs[i][1], "' exactly once, got ", s, ".");
    if (std::set<char>(s.begin(), s.end()).size() != s.size())
      fail<TypeError>("convolution dimension_numbers[", i,
                      "] cannot have duplicate characters, got ", s, ".");
  }
  auto spatial_chars = [&](int i) {
    std::set<char> chars(specs[i]->begin(), specs[i]->end());
    chars.erase(pairs[i][0]);
    chars.erase(pairs[i][1]);
    return chars;
  };
  if (spatial_chars(0) != spatial_chars(1) || spatial_chars(1) != spatial_chars(2))
    fail<TypeError>(
        "convolution dimension_numbers elements must each have the same set of spatial "
        "characters, got ",
        specs_repr(d), ".");
  auto perm = [&](int i) {
    const std::string& s = *specs[i];
    std::vector<std::int64_t> p = {static_cast<std::int64_t>(s.find(pairs[i][0])),
                                   static_cast<std::int64_t>(s.find(pairs[i][1]))};
    for (char c : d.rhs_chars)
      if (c != 'O' && c != 'I') p.push_back(static_cast<std::int64_t>(s.find(c)));
    return p;
  };
  ConvDimensionNumbers out(perm(0), perm(1), perm(2));
  return out;
}

}  // namespace

Padding::Padding(const char* name) : kind_(padding_kind(name)) {}
Padding::Padding(const std::string& name) : kind_(padding_kind(name)) {}
Padding::Padding(PadPairs pads) : kind_(Kind::kExplicit), explicit_(std::move(pads)) {}
Padding::Padding(std::initializer_list<std::pair<std::int64_t, std::int64_t>> pads)
    : kind_(Kind::kExplicit), explicit_(pads) {}

PadPairs Padding::pads(const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& window,
                       const std::vector<std::int64_t>& strides) const {
  if (kind_ == Kind::kExplicit) return explicit_;
  PadPairs out;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (kind_ == Kind::kValid) {
      out.emplace_back(0, 0);
      continue;
    }
    std::int64_t stride = d < strides.size() ? strides[d] : 1;
    std::int64_t size = d < window.size() ? window[d] : 1;
    std::int64_t windows = stride > 0 ? (in[d] + stride - 1) / stride : in[d];
    std::int64_t total = std::max<std::int64_t>(0, (windows - 1) * stride + size - in[d]);
    std::int64_t half = total / 2;
    if (kind_ == Kind::kSame)
      out.emplace_back(half, total - half);
    else
      out.emplace_back(total - half, half);
  }
  return out;
}

ConvDimensionNumbers::ConvDimensionNumbers(std::vector<std::int64_t> lhs,
                                           std::vector<std::int64_t> rhs,
                                           std::vector<std::int64_t> out)
    : lhs_spec(std::move(lhs)), rhs_spec(std::move(rhs)), out_spec(std::move(out)) {}
ConvDimensionNumbers::ConvDimensionNumbers(const char* lhs, const char* rhs, const char* out)
    : lhs_chars(lhs), rhs_chars(rhs), out_chars(out) {}

ConvDimensionNumbers ConvDimensionNumbers::resolved(
    const std::vector<std::int64_t>& lhs_shape, const std::vector<std::int64_t>& rhs_shape) const {
  std::size_t lhs_ndim = lhs_shape.size(), rhs_ndim = rhs_shape.size();
  if (!lhs_spec.empty()) return {lhs_spec, rhs_spec, out_spec};
  if (lhs_ndim != rhs_ndim)
    fail<TypeError>("convolution requires lhs and rhs ndim to be equal, got ", lhs_ndim, " and ",
                    rhs_ndim, ".");
  if (lhs_chars.empty()) {
    std::vector<std::int64_t> iota(lhs_ndim);
    std::iota(iota.begin(), iota.end(), 0);
    return {iota, iota, iota};
  }
  const std::string* specs[3] = {&lhs_chars, &rhs_chars, &out_chars};
  for (int i = 0; i < 3; ++i)
    if (specs[i]->size() != lhs_ndim)
      fail<TypeError>("convolution dimension_numbers[", i,
                      "] must have len equal to the ndim of lhs and rhs, got ", specs[i]->size(),
                      " for lhs and rhs shapes ", shape_tuple(lhs_shape), " and ",
                      shape_tuple(rhs_shape), ".");
  return permutations(*this);
}

}  // namespace jx
