// make_jaxpr and the public ClosedJaxpr handle.
#include <ostream>

#include "jaxpr/jaxpr.hpp"
#include "jx/transforms.hpp"
#include "trace/staging.hpp"

namespace jx {

std::string ClosedJaxpr::str() const { return to_string(data_->jaxpr); }
std::vector<ShapedArray> ClosedJaxpr::in_avals() const { return data_->jaxpr.in_avals(); }
std::vector<ShapedArray> ClosedJaxpr::out_avals() const { return data_->jaxpr.out_avals(); }
const std::vector<Array>& ClosedJaxpr::consts() const { return data_->consts; }

std::vector<Array> ClosedJaxpr::operator()(const std::vector<Array>& args) const {
  return eval_jaxpr(data_->jaxpr, data_->consts, args);
}

std::ostream& operator<<(std::ostream& os, const ClosedJaxpr& j) { return os << j.str(); }

namespace detail {

ClosedJaxpr make_jaxpr_flat(const FlatFn& fn, const std::vector<ShapedArray>& in_avals,
                            const std::string& name) {
  auto data = trace::trace_to_jaxpr(fn, in_avals, "make_jaxpr(" + name + ")");
  return ClosedJaxpr(std::make_shared<const ClosedJaxprData>(std::move(data)));
}

std::vector<ShapedArray> avals_of(const std::vector<Array>& xs) {
  std::vector<ShapedArray> out;
  for (const auto& x : xs) out.push_back(x.aval());
  return out;
}

}  // namespace detail
}  // namespace jx
