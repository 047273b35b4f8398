// jx::Padding: JAX's padding of a windowed op and lax.padtype_to_pads.
#include <algorithm>
#include <cctype>

#include "jx/errors.hpp"
#include "jx/window.hpp"

namespace jx {
namespace {

Padding::Kind padding_kind(const std::string& name) {
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "VALID") return Padding::Kind::kValid;
  if (upper == "SAME") return Padding::Kind::kSame;
  if (upper == "SAME_LOWER") return Padding::Kind::kSameLower;
  // JAX raises a RuntimeError with these words; jx's nearest type is ValueError.
  throw ValueError("Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got " +
                   name + ".");
}

}  // namespace

Padding::Padding(const char* name) : kind_(padding_kind(name)) {}
Padding::Padding(const std::string& name) : kind_(padding_kind(name)) {}
Padding::Padding(PadPairs pads) : kind_(Kind::kExplicit), explicit_(std::move(pads)) {}
Padding::Padding(std::initializer_list<std::pair<std::int64_t, std::int64_t>> pads)
    : kind_(Kind::kExplicit), explicit_(pads) {}

// SAME: ceil(in / stride) windows, the padding they need split in two, the odd element after
// (SAME_LOWER: before).
PadPairs Padding::pads(const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& window,
                       const std::vector<std::int64_t>& strides) const {
  if (kind_ == Kind::kExplicit) return explicit_;
  PadPairs out;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (kind_ == Kind::kValid) {
      out.emplace_back(0, 0);
      continue;
    }
    std::int64_t stride = d < strides.size() ? std::max<std::int64_t>(strides[d], 1) : 1;
    std::int64_t size = d < window.size() ? window[d] : 1;
    std::int64_t windows = (in[d] + stride - 1) / stride;
    std::int64_t total = std::max<std::int64_t>(0, (windows - 1) * stride + size - in[d]);
    std::int64_t half = total / 2;
    if (kind_ == Kind::kSame)
      out.emplace_back(half, total - half);
    else
      out.emplace_back(total - half, half);
  }
  return out;
}

}  // namespace jx
