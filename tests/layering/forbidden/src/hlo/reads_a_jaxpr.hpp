// HLO that knows of jaxprs: what check_layering.cmake rejects.
#pragma once
#include "jaxpr/jaxpr.hpp"
#include "hlo/ir.hpp"
