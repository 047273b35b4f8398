// What every vendor library's table of entry points is made of: one X-macro list per library
// (driver_api.hpp, cublas_api.hpp) expands, with these, into the table's fields and the code
// that looks each of them up (shared_library.hpp's load_api).
#pragma once

namespace jx::runtime::cuda {

template <class Signature>
using Entry = Signature*;

}  // namespace jx::runtime::cuda

// X(field, exported symbol, signature) as a field of the table, null until bound.
#define JX_API_FIELD(field, symbol, signature) Entry<signature> field = nullptr;
// ... bound from `library`, which must export it.
#define JX_API_REQUIRED(field, symbol, signature) library.bind(field, #symbol);
// ... bound from `library` when it exports it (a newer release's entry point), else left null.
#define JX_API_OPTIONAL(field, symbol, signature) library.bind_optional(field, #symbol);
