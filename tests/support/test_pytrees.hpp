// Parameter structs the transform tests share: pytrees declared with JX_PYTREE.
#pragma once

#include <jx/jx.hpp>

namespace jx::testing {

struct Dense {
  Array w, b;
};
JX_PYTREE(Dense, w, b)

struct Mlp {
  Array w1, b1, w2, b2;
};
JX_PYTREE(Mlp, w1, b1, w2, b2)

}  // namespace jx::testing
