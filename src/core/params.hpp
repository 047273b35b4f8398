// Primitive parameters: a sorted, hashable, printable, comparable attribute map.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jx/dtype.hpp"
#include "support/named_values.hpp"

namespace jx {

struct ClosedJaxprData;  // sub-jaxprs of control-flow primitives

// One parameter value. Tuples print as Python tuples "(0, 1)", lists as "[0, 1]", so the
// printed form reads back unambiguously.
class Param {
 public:
  enum class Kind { kNone, kBool, kInt, kFloat, kDType, kName, kTuple, kList, kJaxpr, kRecord };

  Param() = default;  // None
  static Param boolean(bool v);
  static Param integer(std::int64_t v);
  static Param floating(double v);
  static Param dtype(DType d);
  static Param name(std::string s);  // an identifier printed as is
  static Param tuple(std::vector<Param> items);
  static Param list(std::vector<Param> items);
  static Param ints(const std::vector<std::int64_t>& v);       // tuple of ints
  static Param int_list(const std::vector<std::int64_t>& v);   // list of ints
  static Param jaxpr(std::shared_ptr<const ClosedJaxprData> j);
  // A named record of fields in their declared order, printed as Python's repr of a named
  // tuple: `GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,))`.
  static Param record(std::string type, std::vector<std::pair<std::string, Param>> fields);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool as_bool() const;
  std::int64_t as_int() const;
  double as_float() const;
  DType as_dtype() const;
  const std::string& as_name() const;
  const std::vector<Param>& items() const;  // tuple or list
  std::vector<std::int64_t> as_ints() const;  // tuple or list of ints
  const std::shared_ptr<const ClosedJaxprData>& as_jaxpr() const;
  const std::string& record_type() const;
  const Param& field(const std::string& name) const;  // of a record; throws if absent

  std::string str() const;
  std::size_t hash() const;
  friend bool operator==(const Param& a, const Param& b);

 private:
  Kind kind_ = Kind::kNone;
  std::int64_t int_ = 0;  // bool, int, dtype
  double float_ = 0;
  std::string name_;
  std::vector<Param> items_;
  std::vector<std::string> fields_;  // a record's field names, one per item
  std::shared_ptr<const ClosedJaxprData> jaxpr_;
};

class Params : public NamedValues<Param> {
 public:
  Params() = default;
  Params(std::initializer_list<std::pair<std::string, Param>> entries);

  const Param& get(const std::string& name) const;  // throws if absent
  std::size_t hash() const;
  friend bool operator==(const Params& a, const Params& b) = default;
};

}  // namespace jx
