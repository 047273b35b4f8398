// Transformations of functions: make_jaxpr (and, as they land, jit, grad, vjp, jvp, vmap).
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "jx/array.hpp"
#include "jx/tree.hpp"

namespace jx {

struct ClosedJaxprData;  // the jaxpr IR lives in src/jaxpr

// A traced program: a jaxpr plus the values of its captured constants. Prints in JAX's format.
class ClosedJaxpr {
 public:
  explicit ClosedJaxpr(std::shared_ptr<const ClosedJaxprData> data) : data_(std::move(data)) {}
  std::string str() const;
  std::vector<ShapedArray> in_avals() const;
  std::vector<ShapedArray> out_avals() const;
  const std::vector<Array>& consts() const;
  // Runs the program on flat arguments (eagerly, or staged when called under a trace).
  std::vector<Array> operator()(const std::vector<Array>& args) const;
  const std::shared_ptr<const ClosedJaxprData>& data() const { return data_; }

 private:
  std::shared_ptr<const ClosedJaxprData> data_;
};

std::ostream& operator<<(std::ostream& os, const ClosedJaxpr& j);

namespace detail {
using FlatFn = std::function<std::vector<Array>(const std::vector<Array>&)>;
ClosedJaxpr make_jaxpr_flat(const FlatFn& fn, const std::vector<ShapedArray>& in_avals,
                            const std::string& name);
std::vector<ShapedArray> avals_of(const std::vector<Array>& xs);
}  // namespace detail

// make_jaxpr(f)(args...): the jaxpr of f traced at the args' abstract values. Arguments and
// results are pytrees; array arguments become invars, in flattened order.
template <class F>
auto make_jaxpr(F f, std::string name = "f") {
  return [f = std::move(f), name](const auto&... args) -> ClosedJaxpr {
    std::vector<Array> flat;
    (tree::flatten(args, flat), ...);
    auto flat_fn = [&](const std::vector<Array>& tracers) {
      std::size_t pos = 0;
      auto take = [&](const auto& like) { return tree::rebuild(like, tracers, pos); };
      // Braced init runs left to right; f(take(args)...) would rebuild in unspecified order.
      std::tuple<decltype(take(args))...> rebuilt{take(args)...};
      return tree::leaves(std::apply(f, rebuilt));
    };
    return detail::make_jaxpr_flat(flat_fn, detail::avals_of(flat), name);
  };
}

}  // namespace jx
