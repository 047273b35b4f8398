#include "runtime/cuda/shared_library.hpp"

#include <dlfcn.h>

#include "jx/errors.hpp"
#include "support/check.hpp"
#include "support/format.hpp"

namespace jx::runtime::cuda {

SharedLibrary::SharedLibrary(const std::string& path, const std::string& what)
    : path_(path), what_(what) {
  // RTLD_LOCAL: the vendor's symbols stay out of the process's global namespace.
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) error_ = what + " unavailable: cannot load " + path + ": " + dlerror();
}

void* SharedLibrary::find(const char* symbol) const { return dlsym(handle_, symbol); }

void* SharedLibrary::require(const char* symbol) const {
  void* address = find(symbol);
  if (!address) throw Error(what_ + " unavailable: " + path_ + " has no " + symbol);
  return address;
}

void SharedLibrary::close() {
  if (handle_) dlclose(handle_);
  handle_ = nullptr;
}

SharedLibrary open_first(const std::vector<std::string>& candidates, const std::string& what) {
  JX_CHECK(!candidates.empty());
  std::string first_error;
  for (const std::string& path : candidates) {
    SharedLibrary lib(path, what);
    if (lib.ok()) return lib;
    if (first_error.empty()) first_error = lib.error();
  }
  if (candidates.size() == 1) throw Error(first_error);
  std::vector<std::string> others(candidates.begin() + 1, candidates.end());
  throw Error(first_error + " (nor " + detail::join(others, ", ") + ")");
}

}  // namespace jx::runtime::cuda
