// Sets of dtypes: what an operation accepts. The HLO opcode table and the primitives' dtype
// checks share these, so an op's accepted types are stated once.
#pragma once

#include <initializer_list>

#include "jx/dtype.hpp"

namespace jx {

class DTypeSet {
 public:
  constexpr DTypeSet(std::initializer_list<DType> ds) {
    for (DType d : ds) bits_ |= 1u << static_cast<unsigned>(d);
  }
  constexpr bool contains(DType d) const { return bits_ & (1u << static_cast<unsigned>(d)); }
  constexpr DTypeSet operator|(DTypeSet o) const {
    DTypeSet s{};
    s.bits_ = bits_ | o.bits_;
    return s;
  }
  friend constexpr bool operator==(DTypeSet, DTypeSet) = default;

 private:
  unsigned bits_ = 0;
};

inline constexpr DTypeSet k16BitFloating{bfloat16, float16};
inline constexpr DTypeSet kFloating = k16BitFloating | DTypeSet{float32, float64};
inline constexpr DTypeSet kSignedInteger{int8, int16, int32, int64};
inline constexpr DTypeSet kUnsignedInteger{uint8, uint16, uint32, uint64};
inline constexpr DTypeSet kInteger = kSignedInteger | kUnsignedInteger;
inline constexpr DTypeSet kBool{bool_};
inline constexpr DTypeSet kNumeric = kInteger | kFloating;
inline constexpr DTypeSet kIntegerOrBool = kInteger | kBool;
inline constexpr DTypeSet kAnyDType = kNumeric | kBool;

// The dtype d computes in: float32 for the 16-bit floats (which round each stored result, as
// XLA's do), d itself otherwise. compute_t (core/element_convert.hpp) is its C++ type.
constexpr DType compute_dtype(DType d) { return k16BitFloating.contains(d) ? float32 : d; }

}  // namespace jx
