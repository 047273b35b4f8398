// Transformations of functions: make_jaxpr, eval_shape and parse_jaxpr; autodiff (grad,
// value_and_grad, jvp, vjp, jacfwd, jacrev, hessian). Arguments and results are pytrees; each
// transform traces the function to a jaxpr, transforms the jaxpr and runs it, so transforms
// compose with each other and with jit. Included from here: custom_jvp, custom_vjp and checkpoint
// (custom_derivatives.hpp), vmap (vmap.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "jx/array.hpp"
#include "jx/custom_derivatives.hpp"
#include "jx/detail/autodiff_impl.hpp"
#include "jx/detail/flat_fn.hpp"
#include "jx/tree.hpp"
#include "jx/vmap.hpp"

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

// Reads a jaxpr in JAX's text format (what ClosedJaxpr::str and JAX 0.11's make_jaxpr print, for
// the primitives jx has) into a program that runs, jits and transforms. A text's constvars take
// `consts`, in order. Malformed text is a jx::CompileError naming the line and column; an
// ill-typed equation a jx::TypeError; consts that do not match the constvars a jx::ValueError.
ClosedJaxpr parse_jaxpr(std::string_view text, std::vector<Array> consts = {});

namespace detail {
ClosedJaxpr make_jaxpr_flat(const FlatFn& fn, const std::vector<ShapedArray>& in_avals,
                            const std::string& name);
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

namespace detail {
// What eval_shape passes f for an argument: a ShapedArray becomes an Array (a tracer of it).
template <class T>
struct eval_shape_arg {
  using type = tree::rebuilt_t<T>;
};
template <>
struct eval_shape_arg<ShapedArray> {
  using type = Array;
};
template <class T>
using eval_shape_arg_t = typename eval_shape_arg<T>::type;
template <class T>
decltype(auto) eval_shape_like(const T& arg) {
  if constexpr (std::is_same_v<T, ShapedArray>)
    return Array();  // a leaf to rebuild a tracer into
  else
    return (arg);
}
}  // namespace detail

// eval_shape(f)(args...): the shapes and dtypes of f's results without computing anything, as
// jax.eval_shape: f is traced at the arguments' abstract values, and its result comes back with
// a ShapedArray (shape, dtype, weak type) in place of each leaf. An argument may be a ShapedArray
// (as JAX's ShapeDtypeStruct) or any pytree of Arrays. A JX_PYTREE struct's fields keep their
// types, so a result that is one does not compile: return a std container.
template <class F>
auto eval_shape(F f) {
  return [f = std::move(f)](const auto&... args) {
    using R =
        std::invoke_result_t<const F&, detail::eval_shape_arg_t<std::decay_t<decltype(args)>>...>;
    std::vector<ShapedArray> avals;
    auto add = [&](const auto& a) {
      if constexpr (std::is_same_v<std::decay_t<decltype(a)>, ShapedArray>)
        avals.push_back(a);
      else
        for (const Array& leaf : tree::leaves(a)) avals.push_back(leaf.aval());
    };
    (add(args), ...);
    std::optional<tree::rebuilt_t<std::decay_t<R>>> like;
    auto flat_fn = [&](const std::vector<Array>& tracers) {
      std::size_t pos = 0;
      auto take = [&](const auto& a) { return tree::rebuild(a, tracers, pos); };
      std::tuple<decltype(take(detail::eval_shape_like(args)))...> rebuilt{
          take(detail::eval_shape_like(args))...};
      auto out = std::apply(f, rebuilt);
      std::vector<Array> flat = tree::leaves(out), holes(flat.size());
      std::size_t at = 0;
      like.emplace(tree::rebuild(out, holes, at));
      return flat;
    };
    std::vector<ShapedArray> outs = detail::make_jaxpr_flat(flat_fn, avals, "f").out_avals();
    std::size_t pos = 0;
    auto leaf = [&](std::size_t i) { return outs.at(i); };
    return tree::rebuild_with(*like, leaf, pos);
  };
}

// ---- autodiff ------------------------------------------------------------------------------

// Options of grad, value_and_grad and the Jacobians, as JAX's keyword arguments, combined with
// `|`: has_aux: f returns std::pair{value, aux} and only the value is differentiated;
// allow_int: integer and bool arguments may be among those differentiated (their gradients are
// zeros of their own dtype, where JAX gives float0 zeros).
template <bool kAux, bool kAllowInt>
struct GradOptions {};
using HasAux = GradOptions<true, false>;
using AllowInt = GradOptions<false, true>;
inline constexpr HasAux has_aux{};
inline constexpr AllowInt allow_int{};
template <bool kAux1, bool kInt1, bool kAux2, bool kInt2>
constexpr GradOptions<kAux1 || kAux2, kInt1 || kInt2> operator|(GradOptions<kAux1, kInt1>,
                                                                GradOptions<kAux2, kInt2>) {
  return {};
}

namespace detail {

template <class T>
void check_same_structure(const T& a, const T& b, const char* message_a, const char* message_b) {
  tree::TreeDef ta = tree::structure(a), tb = tree::structure(b);
  if (!(ta == tb)) throw TypeError(std::string(message_a) + ta.str() + message_b + tb.str() + ".");
}

// Which leaves the argnums (non-negative, in range) select, given where each argument's leaves
// begin; and where argument a's first selected leaf sits among the selected ones.
inline std::vector<bool> leaves_of_argnums(const std::vector<std::size_t>& begins,
                                           const std::vector<int>& argnums) {
  std::vector<bool> wrt(begins.back(), false);
  for (int a : argnums) std::fill(wrt.begin() + begins[a], wrt.begin() + begins[a + 1], true);
  return wrt;
}
inline std::size_t selected_before(const std::vector<bool>& wrt,
                                   const std::vector<std::size_t>& begins, int a) {
  return static_cast<std::size_t>(std::count(wrt.begin(), wrt.begin() + begins[a], true));
}

// grad and value_and_grad once the arguments to differentiate are known (`argnums`): the
// gradient of f's value with respect to them, one per argnum, each rebuilt by
// grad_of(argnum, gradient leaves, where its leaves start); then the result in JAX's
// arrangement of value, aux and gradients.
template <bool kValue, bool kAux, bool kAllowInt>
struct GradWith {
  static constexpr const char* kWho = kValue ? "value_and_grad" : "grad";

  template <class GradOf, class F, class... Args>
  static auto call(const GradOf& grad_of, const std::vector<int>& argnums, const F& f,
                   const Args&... args) {
    using R = result_t<F, Args...>;
    std::vector<std::size_t> begins;
    std::vector<Array> leaves = flatten_args(begins, args...);
    std::vector<bool> wrt = leaves_of_argnums(begins, argnums);
    std::optional<R> proto;
    GradFlat g = grad_flat(flat_fn(f, proto, args...), leaves, wrt, kValue, kAux, kWho, kAllowInt);
    auto grads = grad_of([&](int a) { return selected_before(wrt, begins, a); }, g.grads);
    if constexpr (kAux) {
      static_assert(tree::is_pair<R>::value,
                    "with jx::has_aux the function returns std::pair{value, aux}");
      auto aux = rebuild_from(proto->second, g.aux);
      if constexpr (kValue)
        return std::pair{std::pair{g.value, std::move(aux)}, std::move(grads)};
      else
        return std::pair{std::move(grads), std::move(aux)};
    } else if constexpr (kValue) {
      return std::pair{g.value, std::move(grads)};
    } else {
      return grads;
    }
  }
};

// jacfwd and jacrev once the arguments are known: for each leaf of f's value (its first
// element with has_aux), the Jacobian with respect to the argnums as grad_of arranges a
// gradient, in a tree of the value's structure; JAX's tree product of output and input.
template <bool kForward, bool kAux, bool kAllowInt>
struct JacobianWith {
  static constexpr const char* kWho = kForward ? "jacfwd" : "jacrev";
  static_assert(!(kForward && kAllowInt), "jacfwd has no allow_int option (JAX's has none)");

  template <class GradOf, class F, class... Args>
  static auto call(const GradOf& grad_of, const std::vector<int>& argnums, const F& f,
                   const Args&... args) {
    using R = result_t<F, Args...>;
    static_assert(!kAux || tree::is_pair<R>::value,
                  "with jx::has_aux the function returns std::pair{value, aux}");
    std::vector<std::size_t> begins;
    std::vector<Array> leaves = flatten_args(begins, args...);
    std::vector<bool> wrt = leaves_of_argnums(begins, argnums);
    std::optional<R> proto;
    auto value = [&]() -> const auto& {
      if constexpr (kAux)
        return proto->first;
      else
        return *proto;
    };
    JacobianFlat jf = jacobian_flat(
        flat_fn(f, proto, args...), leaves, wrt, kForward,
        [&] { return tree::leaves(value()).size(); }, kAllowInt);
    auto k = static_cast<std::ptrdiff_t>(std::count(wrt.begin(), wrt.end(), true));
    auto row = [&](std::size_t out) {
      auto first = jf.jacobians.begin() + static_cast<std::ptrdiff_t>(out) * k;
      return grad_of([&](int a) { return selected_before(wrt, begins, a); },
                     std::vector<Array>(first, first + k));
    };
    std::size_t pos = 0;
    auto jacobian = tree::rebuild_with(value(), row, pos);
    if constexpr (kAux)
      return std::pair{std::move(jacobian), rebuild_from(proto->second, jf.aux)};
    else
      return jacobian;
  }
};

// Argnums known at compile time: a tuple of gradients for several, each its argument's type.
// `With` is the transform (GradWith, JacobianWith).
template <class With, int... Argnums>
struct GradOf {
  static constexpr std::array<int, sizeof...(Argnums)> kArgnums{Argnums...};

  template <class F, class... Args>
  static auto call(const F& f, const Args&... args) {
    static_assert(((Argnums >= 0 && Argnums < static_cast<int>(sizeof...(Args))) && ...),
                  "an argnum is out of range for the arguments given");
    auto grad_of = [&](const auto& start, const std::vector<Array>& grads) {
      auto one = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
        constexpr std::size_t a = static_cast<std::size_t>(kArgnums[I]);
        return rebuild_from(std::get<a>(std::tie(args...)), grads, start(kArgnums[I]));
      };
      return [&]<std::size_t... I>(std::index_sequence<I...>) {
        if constexpr (sizeof...(I) == 1)
          return one(std::integral_constant<std::size_t, 0>{});
        else
          return std::tuple{one(std::integral_constant<std::size_t, I>{})...};
      }
      (std::make_index_sequence<sizeof...(Argnums)>());
    };
    return With::call(grad_of, std::vector<int>{Argnums...}, f, args...);
  }
};

// The one type every gradient of a runtime argnum can have: that of the (rebuilt) arguments,
// jx::Static ones aside, which must all agree.
template <class... Args>
struct common_grad;
template <class A, class... Rest>
struct common_grad<A, Rest...> {
  using rest = typename common_grad<Rest...>::type;
  using type =
      std::conditional_t<tree::is_static_v<A>, rest,
                         std::conditional_t<std::is_void_v<rest>, tree::rebuilt_t<A>, rest>>;
  static constexpr bool kAgree =
      common_grad<Rest...>::kAgree &&
      (tree::is_static_v<A> || std::is_void_v<rest> || std::is_same_v<tree::rebuilt_t<A>, rest>);
};
template <>
struct common_grad<> {
  using type = void;
  static constexpr bool kAgree = true;
};

// Argnums known at run time (JAX's argnums=1 or argnums=(0, 2)): the gradient of an int argnum,
// or a std::vector of them for a list, all of one type.
template <class With, bool kList>
struct GradAt {
  template <class F, class... Args>
  static auto call(const F& f, const std::vector<int>& argnums, const Args&... args) {
    using G = typename common_grad<Args...>::type;
    static_assert(common_grad<Args...>::kAgree && !std::is_void_v<G>,
                  "argnums given at run time need arguments of one type (jx::Static ones "
                  "aside), so that the gradient has a type; name the argnums at compile time "
                  "instead: jx::grad<0, 2>(f)");
    std::vector<int> at = check_argnums(argnums, kList, sizeof...(Args));
    auto grad_of = [&](const auto& start, const std::vector<Array>& grads) {
      std::vector<G> out;
      for (int a : at) {
        int i = 0;
        ((i++ == a ? out.push_back(rebuild_arg<G>(args, grads, start(a))) : void()), ...);
      }
      if constexpr (kList)
        return out;
      else
        return std::move(out.at(0));
    };
    return With::call(grad_of, at, f, args...);
  }

  template <class G, class A>
  static G rebuild_arg(const A& arg, const std::vector<Array>& grads, std::size_t start) {
    if constexpr (tree::is_static_v<A>)
      throw TypeError(std::string(With::kWho) +
                      " cannot differentiate with respect to a jx::Static argument");
    else
      return rebuild_from(arg, grads, start);
  }
};

// The transform `With` of f; no argnums means argument 0.
template <class With, int... Argnums, class F>
auto grad_fn(F f) {
  if constexpr (sizeof...(Argnums) == 0) {
    return grad_fn<With, 0>(std::move(f));
  } else {
    return [f = std::move(f)](const auto&... args) {
      return GradOf<With, Argnums...>::call(f, args...);
    };
  }
}

template <class With, bool kList, class F>
auto grad_at_fn(F f, std::vector<int> argnums) {
  return [f = std::move(f), argnums = std::move(argnums)](const auto&... args) {
    return GradAt<With, kList>::call(f, argnums, args...);
  };
}

}  // namespace detail

// grad(f)(args...): the gradient of f (which returns a real scalar) with respect to argument 0,
// shaped like it (a pytree of the same structure). Integer arguments cannot be differentiated
// (jx::TypeError) unless jx::allow_int is given. The argnums to differentiate, as JAX's:
//   grad<0, 2>(f): named at compile time; a std::tuple of gradients for several;
//   grad(f, 1): at run time, negative counting from the end; the gradient of that argument;
//   grad(f, {0, 2}): at run time, a std::vector of gradients (also for a list of one).
// Argnums at run time need arguments of one type (jx::Static ones aside): the gradient's type.
// Options follow: grad(f, jx::has_aux), grad(f, 1, jx::has_aux | jx::allow_int).
template <int... Argnums, class F, bool kAux = false, bool kAllowInt = false>
auto grad(F f, GradOptions<kAux, kAllowInt> = {}) {
  return detail::grad_fn<detail::GradWith<false, kAux, kAllowInt>, Argnums...>(std::move(f));
}
template <class F, bool kAux = false, bool kAllowInt = false>
auto grad(F f, int argnums, GradOptions<kAux, kAllowInt> = {}) {
  return detail::grad_at_fn<detail::GradWith<false, kAux, kAllowInt>, false>(std::move(f),
                                                                             {argnums});
}
template <class F, bool kAux = false, bool kAllowInt = false>
auto grad(F f, std::initializer_list<int> argnums, GradOptions<kAux, kAllowInt> = {}) {
  return detail::grad_at_fn<detail::GradWith<false, kAux, kAllowInt>, true>(std::move(f), argnums);
}
template <class F, bool kAux = false, bool kAllowInt = false>
auto grad(F f, std::vector<int> argnums, GradOptions<kAux, kAllowInt> = {}) {
  return detail::grad_at_fn<detail::GradWith<false, kAux, kAllowInt>, true>(std::move(f),
                                                                            std::move(argnums));
}
// value_and_grad(f)(args...) → std::pair{value, gradient(s)}; with has_aux,
// std::pair{std::pair{value, aux}, gradient(s)}. Argnums and options as grad's.
template <int... Argnums, class F, bool kAux = false, bool kAllowInt = false>
auto value_and_grad(F f, GradOptions<kAux, kAllowInt> = {}) {
  return detail::grad_fn<detail::GradWith<true, kAux, kAllowInt>, Argnums...>(std::move(f));
}
template <class F, bool kAux = false, bool kAllowInt = false>
auto value_and_grad(F f, int argnums, GradOptions<kAux, kAllowInt> = {}) {
  return detail::grad_at_fn<detail::GradWith<true, kAux, kAllowInt>, false>(std::move(f),
                                                                            {argnums});
}
template <class F, bool kAux = false, bool kAllowInt = false>
auto value_and_grad(F f, std::initializer_list<int> argnums, GradOptions<kAux, kAllowInt> = {}) {
  return detail::grad_at_fn<detail::GradWith<true, kAux, kAllowInt>, true>(std::move(f), argnums);
}
template <class F, bool kAux = false, bool kAllowInt = false>
auto value_and_grad(F f, std::vector<int> argnums, GradOptions<kAux, kAllowInt> = {}) {
  return detail::grad_at_fn<detail::GradWith<true, kAux, kAllowInt>, true>(std::move(f),
                                                                           std::move(argnums));
}

// jvp(f, std::tuple{x...}, std::tuple{t...}) → std::pair{f(x...), its tangent along t}.
// Tangents match the primals' structure, shapes and dtypes.
template <class F, class... P, class... T>
auto jvp(const F& f, const std::tuple<P...>& primals, const std::tuple<T...>& tangents) {
  detail::check_same_structure(primals, tangents,
                               "primal and tangent arguments to jx::jvp must have the same tree "
                               "structure; primals have tree structure ",
                               " whereas tangents have tree structure ");
  return std::apply(
      [&](const auto&... p) {
        using R = detail::result_t<F, P...>;
        std::optional<R> proto;
        std::vector<Array> primal_leaves, tangent_leaves = tree::leaves(tangents);
        (tree::flatten(p, primal_leaves), ...);
        auto [outs, out_tangents] =
            detail::jvp_flat(detail::flat_fn(f, proto, p...), primal_leaves, tangent_leaves);
        return std::pair{detail::rebuild_from(*proto, outs),
                         detail::rebuild_from(*proto, out_tangents)};
      },
      primals);
}

// What vjp returns with the primal output: cotangent (shaped like the output) → std::tuple of
// one cotangent per argument, each shaped like its argument.
template <class Out, class... Args>
class VjpFunction {
 public:
  VjpFunction(detail::Pullback pullback, Out out_like, std::tuple<Args...> args_like)
      : pullback_(std::move(pullback)),
        out_like_(std::move(out_like)),
        args_like_(std::move(args_like)) {}

  template <class Ct>
  auto operator()(const Ct& ct) const {
    if constexpr (std::is_same_v<tree::rebuilt_t<Ct>, Out>)
      detail::check_same_structure(detail::rebuild_from(ct, tree::leaves(ct)), out_like_,
                                   "Tree structure of cotangent input ",
                                   ", does not match structure of primal output ");
    std::vector<Array> cts = pullback_(tree::leaves(ct));
    return std::apply(
        [&](const auto&... a) {
          std::size_t pos = 0;
          return std::tuple<tree::rebuilt_t<Args>...>{tree::rebuild(a, cts, pos)...};
        },
        args_like_);
  }

 private:
  detail::Pullback pullback_;
  Out out_like_;
  std::tuple<Args...> args_like_;
};

// vjp(f, args...) → std::pair{f(args...), vjp_fn}; vjp_fn(cotangent) → std::tuple of the
// arguments' cotangents. Integer arguments get zero cotangents.
template <class F, class... Args>
auto vjp(const F& f, const Args&... args) {
  using R = detail::result_t<F, Args...>;
  std::optional<R> proto;
  std::vector<std::size_t> begins;
  std::vector<Array> leaves = detail::flatten_args(begins, args...);
  auto [outs, pullback] = detail::vjp_flat(detail::flat_fn(f, proto, args...), leaves);
  auto out = detail::rebuild_from(*proto, outs);
  using Out = decltype(out);
  return std::pair{
      out, VjpFunction<Out, Args...>(std::move(pullback), out, std::tuple<Args...>{args...})};
}

// jacfwd(f)(args...): the Jacobian of f with respect to argument 0, by forward mode: f's jvp
// mapped (vmap) over the standard basis of the argument, one batched program.
// jacrev maps f's pullback over the standard basis of f's result instead. For an array result
// and argument it has shape f(x).shape + x.shape; pytrees give JAX's tree product: the result's
// structure with each leaf replaced by the argument's structure, whose leaf has shape
// out_leaf.shape + in_leaf.shape (a JX_PYTREE struct result needs an array argument: its fields
// stay arrays). Argnums and options as grad's: jacfwd<0, 2>(f) gives a std::tuple per result
// leaf, jacfwd(f, 1) one argument's, jacfwd(f, {0, 2}) a std::vector; with jx::has_aux f returns
// std::pair{value, aux} and the result is std::pair{jacobian, aux}. Arguments differentiated
// must be floating point (jx::TypeError); jacrev also takes jx::allow_int (zeros for integer
// arguments) and needs a floating-point result.
template <int... Argnums, class F, bool kAux = false, bool kAllowInt = false>
auto jacfwd(F f, GradOptions<kAux, kAllowInt> = {}) {
  return detail::grad_fn<detail::JacobianWith<true, kAux, kAllowInt>, Argnums...>(std::move(f));
}
template <class F, bool kAux = false, bool kAllowInt = false>
auto jacfwd(F f, int argnums, GradOptions<kAux, kAllowInt> = {}) {
  return detail::grad_at_fn<detail::JacobianWith<true, kAux, kAllowInt>, false>(std::move(f),
                                                                                {argnums});
}
template <class F, bool kAux = false, bool kAllowInt = false>
auto jacfwd(F f, std::vector<int> argnums, GradOptions<kAux, kAllowInt> = {}) {
  return detail::grad_at_fn<detail::JacobianWith<true, kAux, kAllowInt>, true>(std::move(f),
                                                                               std::move(argnums));
}
template <class F, bool kAux = false, bool kAllowInt = false>
auto jacfwd(F f, std::initializer_list<int> argnums, GradOptions<kAux, kAllowInt> o = {}) {
  return jacfwd(std::move(f), std::vector<int>(argnums), o);
}
template <int... Argnums, class F, bool kAux = false, bool kAllowInt = false>
auto jacrev(F f, GradOptions<kAux, kAllowInt> = {}) {
  return detail::grad_fn<detail::JacobianWith<false, kAux, kAllowInt>, Argnums...>(std::move(f));
}
template <class F, bool kAux = false, bool kAllowInt = false>
auto jacrev(F f, int argnums, GradOptions<kAux, kAllowInt> = {}) {
  return detail::grad_at_fn<detail::JacobianWith<false, kAux, kAllowInt>, false>(std::move(f),
                                                                                 {argnums});
}
template <class F, bool kAux = false, bool kAllowInt = false>
auto jacrev(F f, std::vector<int> argnums, GradOptions<kAux, kAllowInt> = {}) {
  return detail::grad_at_fn<detail::JacobianWith<false, kAux, kAllowInt>, true>(std::move(f),
                                                                                std::move(argnums));
}
template <class F, bool kAux = false, bool kAllowInt = false>
auto jacrev(F f, std::initializer_list<int> argnums, GradOptions<kAux, kAllowInt> o = {}) {
  return jacrev(std::move(f), std::vector<int>(argnums), o);
}

// hessian(f) = jacfwd(jacrev(f)), as JAX's, with the same argnums and has_aux given to both: for
// an array argument x and scalar result, of shape x.shape + x.shape; for several argnums, the
// blocks nest (a std::tuple of std::tuples for hessian<0, 1>). No allow_int, as in JAX.
template <int... Argnums, class F, bool kAux = false, bool kAllowInt = false>
auto hessian(F f, GradOptions<kAux, kAllowInt> options = {}) {
  static_assert(!kAllowInt, "hessian has no allow_int option (JAX's has none)");
  return jacfwd<Argnums...>(jacrev<Argnums...>(std::move(f), options), options);
}
template <class F, bool kAux = false, bool kAllowInt = false>
auto hessian(F f, int argnums, GradOptions<kAux, kAllowInt> options = {}) {
  static_assert(!kAllowInt, "hessian has no allow_int option (JAX's has none)");
  return jacfwd(jacrev(std::move(f), argnums, options), argnums, options);
}
template <class F, bool kAux = false, bool kAllowInt = false>
auto hessian(F f, std::vector<int> argnums, GradOptions<kAux, kAllowInt> options = {}) {
  static_assert(!kAllowInt, "hessian has no allow_int option (JAX's has none)");
  return jacfwd(jacrev(std::move(f), argnums, options), argnums, options);
}
template <class F, bool kAux = false, bool kAllowInt = false>
auto hessian(F f, std::initializer_list<int> argnums, GradOptions<kAux, kAllowInt> options = {}) {
  return hessian(std::move(f), std::vector<int>(argnums), options);
}

}  // namespace jx
