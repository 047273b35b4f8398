// Shared libraries for the loader tests: what dlopen says about a path, and a real library that
// is not the one a loader looks for.
#pragma once

#include <dlfcn.h>
#include <zlib.h>
#include <catch2/catch.hpp>

#include <string>

namespace jx::testing {

// What dlopen says about `path`, or "" when it opens.
inline std::string dlopen_error(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle) {
    dlclose(handle);
    return "";
  }
  return dlerror();
}

// The file of the zlib this binary links: a real library that is not a CUDA library.
inline std::string zlib_path() {
  Dl_info info{};
  REQUIRE(dladdr(reinterpret_cast<void*>(&zlibVersion), &info) != 0);
  return info.dli_fname;
}

}  // namespace jx::testing
