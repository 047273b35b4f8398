// What the API files share about devices.
#pragma once

#include "jx/device.hpp"

namespace jx::api {

// Throws jx::ValueError for a CPU device other than cpu:0. (A GPU's id is checked where its
// backend is made, which a test's fake driver stands in for.)
void check_device(const Device& d);

}  // namespace jx::api
