// Calls a generic lambda with the C++ element type of a dtype: dispatch(d, [&]<class T>() {...}).
#pragma once

#include <cstdint>

#include "jx/dtype.hpp"
#include "support/check.hpp"

namespace jx {

template <class F>
decltype(auto) dispatch(DType d, F&& f) {
  switch (d) {
#define JX_DISPATCH_CASE(name, type, ...) \
  case DType::name:                  \
    return f.template operator()<type>();
    JX_FOR_EACH_DTYPE(JX_DISPATCH_CASE)
#undef JX_DISPATCH_CASE
  }
  JX_CHECK(false, "unknown dtype");
}

}  // namespace jx
