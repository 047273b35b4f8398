#include "core/params.hpp"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <sstream>

#include "jx/errors.hpp"
#include "support/format.hpp"

namespace jx {

// Printing a sub-jaxpr lives with the jaxpr printer.
std::string closed_jaxpr_param_str(const ClosedJaxprData& j);
bool closed_jaxpr_equal(const ClosedJaxprData& a, const ClosedJaxprData& b);

namespace {

// Params come from jaxpr text too: one of the wrong kind is the text's error, not jx's.
const char* kind_name(Param::Kind k) {
  using K = Param::Kind;
  switch (k) {
    case K::kNone: return "None";
    case K::kBool: return "a bool";
    case K::kInt: return "an integer";
    case K::kFloat: return "a float";
    case K::kDType: return "a dtype";
    case K::kName: return "a name";
    case K::kTuple: return "a tuple";
    case K::kList: return "a list";
    case K::kJaxpr: return "a jaxpr";
    case K::kRecord: return "a record";
  }
  return "?";
}

void expect_kind(Param::Kind got, std::initializer_list<Param::Kind> want) {
  if (std::find(want.begin(), want.end(), got) != want.end()) return;
  throw TypeError(std::string("a primitive parameter is ") + kind_name(got) + " where " +
                  kind_name(*want.begin()) + " is expected");
}

}  // namespace

Param Param::boolean(bool v) {
  Param p;
  p.kind_ = Kind::kBool;
  p.int_ = v;
  return p;
}
Param Param::integer(std::int64_t v) {
  Param p;
  p.kind_ = Kind::kInt;
  p.int_ = v;
  return p;
}
Param Param::floating(double v) {
  Param p;
  p.kind_ = Kind::kFloat;
  p.float_ = v;
  return p;
}
Param Param::dtype(DType d) {
  Param p;
  p.kind_ = Kind::kDType;
  p.int_ = static_cast<int>(d);
  return p;
}
Param Param::name(std::string s) {
  Param p;
  p.kind_ = Kind::kName;
  p.name_ = std::move(s);
  return p;
}
Param Param::tuple(std::vector<Param> items) {
  Param p;
  p.kind_ = Kind::kTuple;
  p.items_ = std::move(items);
  return p;
}
Param Param::list(std::vector<Param> items) {
  Param p;
  p.kind_ = Kind::kList;
  p.items_ = std::move(items);
  return p;
}
Param Param::ints(const std::vector<std::int64_t>& v) {
  std::vector<Param> items;
  for (auto x : v) items.push_back(integer(x));
  return tuple(std::move(items));
}
Param Param::int_list(const std::vector<std::int64_t>& v) {
  Param p = ints(v);
  p.kind_ = Kind::kList;
  return p;
}
Param Param::jaxpr(std::shared_ptr<const ClosedJaxprData> j) {
  Param p;
  p.kind_ = Kind::kJaxpr;
  p.jaxpr_ = std::move(j);
  return p;
}

Param Param::record(std::string type, std::vector<std::pair<std::string, Param>> fields) {
  Param p;
  p.kind_ = Kind::kRecord;
  p.name_ = std::move(type);
  for (auto& [name, value] : fields) {
    p.fields_.push_back(std::move(name));
    p.items_.push_back(std::move(value));
  }
  return p;
}

bool Param::as_bool() const {
  expect_kind(kind_, {Kind::kBool});
  return int_ != 0;
}
std::int64_t Param::as_int() const {
  expect_kind(kind_, {Kind::kInt});
  return int_;
}
double Param::as_float() const {
  expect_kind(kind_, {Kind::kFloat, Kind::kInt});
  return kind_ == Kind::kInt ? static_cast<double>(int_) : float_;
}
DType Param::as_dtype() const {
  expect_kind(kind_, {Kind::kDType});
  return static_cast<DType>(int_);
}
const std::string& Param::as_name() const {
  expect_kind(kind_, {Kind::kName});
  return name_;
}
const std::vector<Param>& Param::items() const {
  expect_kind(kind_, {Kind::kTuple, Kind::kList});
  return items_;
}
std::vector<std::int64_t> Param::as_ints() const {
  std::vector<std::int64_t> out;
  for (const auto& p : items()) out.push_back(p.as_int());
  return out;
}
const std::shared_ptr<const ClosedJaxprData>& Param::as_jaxpr() const {
  expect_kind(kind_, {Kind::kJaxpr});
  return jaxpr_;
}

const std::string& Param::record_type() const {
  expect_kind(kind_, {Kind::kRecord});
  return name_;
}
const Param& Param::field(const std::string& name) const {
  expect_kind(kind_, {Kind::kRecord});
  auto it = std::find(fields_.begin(), fields_.end(), name);
  if (it == fields_.end())
    throw TypeError("primitive parameter " + name_ + " has no field '" + name + "'");
  return items_[static_cast<std::size_t>(it - fields_.begin())];
}

std::string Param::str() const {
  switch (kind_) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return int_ ? "True" : "False";
    case Kind::kInt:
      return std::to_string(int_);
    case Kind::kFloat:
      return detail::python_float_repr(float_, false);
    case Kind::kDType:
      return std::string(dtype_name(as_dtype()));
    case Kind::kName:
      return name_;
    case Kind::kTuple:
    case Kind::kList: {
      std::vector<std::string> parts;
      for (const auto& p : items_) parts.push_back(p.str());
      if (kind_ == Kind::kList) return "[" + detail::join(parts, ", ") + "]";
      return detail::tuple_str(parts);
    }
    case Kind::kJaxpr:
      return closed_jaxpr_param_str(*jaxpr_);
    case Kind::kRecord: {
      std::vector<std::string> parts;
      for (std::size_t k = 0; k < items_.size(); ++k)
        parts.push_back((fields_[k].empty() ? "" : fields_[k] + "=") + items_[k].str());
      return name_ + "(" + detail::join(parts, ", ") + ")";
    }
  }
  return "?";
}

std::size_t Param::hash() const {
  std::size_t h = std::hash<int>()(static_cast<int>(kind_));
  auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(std::hash<std::int64_t>()(int_));
  mix(std::hash<double>()(float_));
  mix(std::hash<std::string>()(name_));
  for (const auto& p : items_) mix(p.hash());
  for (const auto& f : fields_) mix(std::hash<std::string>()(f));
  return h;
}

bool operator==(const Param& a, const Param& b) {
  if (a.kind_ != b.kind_ || a.int_ != b.int_ || a.name_ != b.name_ || a.items_ != b.items_ ||
      a.fields_ != b.fields_)
    return false;
  if (a.float_ != b.float_ && !(a.float_ != a.float_ && b.float_ != b.float_)) return false;
  if (a.jaxpr_ == b.jaxpr_) return true;
  return a.jaxpr_ && b.jaxpr_ && closed_jaxpr_equal(*a.jaxpr_, *b.jaxpr_);
}

Params::Params(std::initializer_list<std::pair<std::string, Param>> entries) {
  for (const auto& [k, v] : entries) set(k, v);
}

const Param& Params::get(const std::string& name) const {
  const Param* p = find(name);
  if (!p) throw TypeError("missing primitive parameter '" + name + "'");
  return *p;
}

std::size_t Params::hash() const {
  std::size_t h = 0;
  for (const auto& [k, v] : entries()) h = h * 31 + std::hash<std::string>()(k) * 7 + v.hash();
  return h;
}

}  // namespace jx
