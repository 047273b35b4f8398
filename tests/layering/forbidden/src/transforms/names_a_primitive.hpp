// A transform that reaches into a primitive's family file: what check_layering.cmake rejects.
#pragma once
#include "primitives/elementwise.hpp"
