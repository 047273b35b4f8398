// make_jaxpr, parse_jaxpr and the public ClosedJaxpr handle.
#include <ostream>

#include "jaxpr/jaxpr.hpp"
#include "jx/transforms.hpp"
#include "primitives/sub_jaxprs.hpp"
#include "trace/staging.hpp"

namespace jx {

std::string ClosedJaxpr::str() const { return to_string(data_->jaxpr); }
std::vector<ShapedArray> ClosedJaxpr::in_avals() const { return data_->jaxpr.in_avals(); }
std::vector<ShapedArray> ClosedJaxpr::out_avals() const { return data_->jaxpr.out_avals(); }
const std::vector<Array>& ClosedJaxpr::consts() const { return data_->consts; }

std::vector<Array> ClosedJaxpr::operator()(const std::vector<Array>& args) const {
  std::vector<ShapedArray> want = in_avals(), got = detail::avals_of(args);
  if (!sub::same_types(want, got))
    throw TypeError("ClosedJaxpr takes arguments " + sub::avals_str(want) + ", got " +
                    sub::avals_str(got));
  return eval_jaxpr(data_->jaxpr, data_->consts, args);
}

std::ostream& operator<<(std::ostream& os, const ClosedJaxpr& j) { return os << j.str(); }

ClosedJaxpr parse_jaxpr(std::string_view text, std::vector<Array> consts) {
  Jaxpr j = read_jaxpr(text);
  std::vector<ShapedArray> want;
  for (const Var& v : j.constvars) want.push_back(v->aval);
  bool match = consts.size() == want.size();
  for (std::size_t i = 0; match && i < consts.size(); ++i)
    match = consts[i].shape() == want[i].shape && consts[i].dtype() == want[i].dtype;
  if (!match) {
    throw ValueError("parse_jaxpr: the jaxpr's constvars are " + sub::avals_str(want) +
                     " but the consts given are " + sub::avals_str(detail::avals_of(consts)));
  }
  return ClosedJaxpr(
      std::make_shared<const ClosedJaxprData>(ClosedJaxprData{std::move(j), std::move(consts)}));
}

namespace detail {

ClosedJaxpr make_jaxpr_flat(const FlatFn& fn, const std::vector<ShapedArray>& in_avals,
                            const std::string& name) {
  auto data = trace::trace_to_jaxpr(fn, in_avals, "make_jaxpr(" + name + ")");
  return ClosedJaxpr(std::make_shared<const ClosedJaxprData>(std::move(data)));
}

std::vector<ShapedArray> avals_of(const std::vector<Array>& xs) {
  std::vector<ShapedArray> out;
  out.reserve(xs.size());
  for (const auto& x : xs) out.push_back(x.aval());
  return out;
}

}  // namespace detail
}  // namespace jx
