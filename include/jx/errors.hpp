// The exception types jx throws at its user boundary; all derive from jx::Error.
#pragma once

#include <stdexcept>
#include <string>

namespace jx {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Incompatible shapes, bad axes, bad reshape sizes, bad dot dimensions.
class ShapeError : public Error {
 public:
  using Error::Error;
};

// Bad or mismatched dtypes, ill-typed jaxprs.
class TypeError : public Error {
 public:
  using Error::Error;
};

// A value that is wrong for reasons other than its type: an empty branch list, a scan length
// that disagrees with its inputs.
class ValueError : public Error {
 public:
  using Error::Error;
};

// An index out of range for its axis (x[5] of a 3-element axis), as Python's IndexError.
class IndexError : public Error {
 public:
  using Error::Error;
};

// A traced value was read where a concrete value is needed (item(), if (x < y), ...).
class ConcretizationError : public Error {
 public:
  using Error::Error;
};

// A tracer escaped the transformation that created it and was used afterwards.
class TracerLeakError : public Error {
 public:
  using Error::Error;
};

// A jitted function missed its cache inside a jx::NoRetrace scope.
class RetraceError : public Error {
 public:
  using Error::Error;
};

// A NaN or an infinity made under --debug_nans / --debug_infs (JAX's FloatingPointError):
// "invalid value (nan) encountered in log", with the equation that made it when known.
class FloatingPointError : public Error {
 public:
  using Error::Error;
};

// Text that does not parse (jaxpr, HLO) or a backend that cannot compile a program.
class CompileError : public Error {
 public:
  using Error::Error;
};

}  // namespace jx
