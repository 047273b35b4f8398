// The one way jx loads a vendor library (the CUDA driver, cuBLAS, cuBLASLt): dlopen the first of
// its candidate files, look up every entry point of its X-macro table, and keep the result, or
// the reason it failed, for the life of the process.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "jx/errors.hpp"

namespace jx::runtime::cuda {

// An open shared library (or the reason it is not). Copies share the handle, and nothing closes
// a library in use: the function pointers taken from it live until the process exits.
class SharedLibrary {
 public:
  // `what` names the library in messages: "CUDA backend", "cuBLAS".
  SharedLibrary(const std::string& path, const std::string& what);

  bool ok() const { return handle_ != nullptr; }
  // Why it did not open: "<what> unavailable: cannot load <path>: <dlerror>".
  const std::string& error() const { return error_; }

  // The address of `symbol`, or nullptr when the library lacks it.
  void* find(const char* symbol) const;
  // Throws jx::Error "<what> unavailable: <path> has no <symbol>".
  void* require(const char* symbol) const;

  // Looks `symbol` up as `fn`'s type: bind(api.cuInit, "cuInit").
  template <class F>
  void bind(F*& fn, const char* symbol) const {
    fn = reinterpret_cast<F*>(require(symbol));
  }
  template <class F>
  void bind_optional(F*& fn, const char* symbol) const {
    fn = reinterpret_cast<F*>(find(symbol));
  }

  // For a library found unusable, before any pointer into it is kept.
  void close();

 private:
  void* handle_ = nullptr;
  std::string path_, what_, error_;
};

// The first of `candidates` (newest release first) that opens. Throws jx::Error with the first
// one's error, "(nor <the others>)" appended.
SharedLibrary open_first(const std::vector<std::string>& candidates, const std::string& what);

// `Api` (DriverApi, CublasApi, CublasLtApi) bound from the first of `candidates` that opens.
// Throws jx::Error "<Api::kLibrary> unavailable: cannot load <path>: <dlerror>" (naming the
// other candidates) or "<Api::kLibrary> unavailable: <path> has no <symbol>".
template <class Api>
Api load_api(const std::vector<std::string>& candidates) {
  SharedLibrary library = open_first(candidates, Api::kLibrary);
  Api api;
  try {
    api.bind(library);
  } catch (const Error&) {
    library.close();
    throw;
  }
  return api;
}

// A library loaded at most once per process: its table, or why it could not be had, which
// every later call rethrows. Meant to be created once and never destroyed (GPU work may run
// from static destructors).
template <class Api>
class ProcessLibrary {
 public:
  explicit ProcessLibrary(Api (*load)()) {
    try {
      api_ = load();
    } catch (const Error& e) {
      error_ = e.what();
    }
  }
  bool ok() const { return api_.has_value(); }
  const Api& get() const {
    if (!api_) throw Error(error_);
    return *api_;
  }

 private:
  std::optional<Api> api_;
  std::string error_;
};

}  // namespace jx::runtime::cuda
