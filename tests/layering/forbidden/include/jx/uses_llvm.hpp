// A public header that includes LLVM: what check_layering.cmake rejects.
#pragma once
#include <vector>
#include <llvm/IR/Module.h>
