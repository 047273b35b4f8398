// Calls a generic lambda with the C++ element type of a dtype: dispatch(d, [&]<class T>() {...}).
#pragma once

#include <cstdint>

#include "jx/dtype.hpp"
#include "support/check.hpp"

namespace jx {

template <class F>
decltype(auto) dispatch(DType d, F&& f) {
  switch (d) {
    case bool_: return f.template operator()<bool>();
    case int32: return f.template operator()<std::int32_t>();
    case int64: return f.template operator()<std::int64_t>();
    case uint32: return f.template operator()<std::uint32_t>();
    case float32: return f.template operator()<float>();
    case float64: return f.template operator()<double>();
  }
  JX_CHECK(false, "unknown dtype");
}

}  // namespace jx
