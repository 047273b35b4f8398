// The umbrella header: everything a jx user needs.
#pragma once

#include "jx/array.hpp"
#include "jx/config.hpp"
#include "jx/control_flow.hpp"
#include "jx/data.hpp"
#include "jx/dtype.hpp"
#include "jx/errors.hpp"
#include "jx/jit.hpp"
#include "jx/lax.hpp"
#include "jx/nn.hpp"
#include "jx/npz.hpp"
#include "jx/numpy.hpp"
#include "jx/optim.hpp"
#include "jx/random.hpp"
#include "jx/shape.hpp"
#include "jx/transforms.hpp"
#include "jx/tree.hpp"
