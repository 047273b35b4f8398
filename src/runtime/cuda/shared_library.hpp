// dlopen and dlsym with the messages jx reports when a vendor library is missing or incomplete.
#pragma once

#include <string>
#include <vector>

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

}  // namespace jx::runtime::cuda
