// jx::jit: trace once per abstract signature, compile, cache, and call the compiled program.
// The templates here only flatten arguments, key the call and rebuild results; the cache,
// tracing, compilation, statistics and logging live in libjx (src/api/jit*.cpp).
#pragma once

#include <charconv>
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jx/array.hpp"
#include "jx/detail/jit_impl.hpp"
#include "jx/device.hpp"
#include "jx/tree.hpp"

namespace jx {

struct JitOptions {
  std::vector<int> static_argnums;  // positional arguments whose values join the cache key
  // Arguments whose buffers an output may take over (as JAX's donate_argnums): an output of the
  // same shape and dtype computed where the argument is last read is written over it. Such an
  // argument is deleted by the call (Array::is_deleted; reading it throws jx::Error); one no
  // output can take over stays as it was, as does one the call reads again (passed twice, or
  // closed over by the function).
  std::vector<int> donate_argnums;
  std::string name = "f";  // the program is jit_<name>
  // Where the program runs. Unset: on the device its committed arguments share (see
  // jx::device_put), else on the CPU. Arguments elsewhere and uncommitted are copied there;
  // one committed to another device is a jx::ValueError.
  std::optional<Device> device;
  // With --compilation_cache_dir: names the function across processes. A call whose signature
  // (and static values, by their printed form) was compiled under this key, by this process or
  // another, runs the stored program without tracing the function. Change the key when the
  // function, or a value it closes over, changes (--verify_persistent_cache checks).
  std::string persistent_key;
  int cache_capacity = 0;  // entries this function keeps (least recently used out); 0: the flag's
  int max_retraces = -1;   // misses after the first before a warning (--strict_retraces: an error)
};

// A jitted function's cache statistics. Times are totals over every trace and compile, in ms.
// A miss served by the persistent cache counts in disk_hits: with a persistent_key, instead of a
// trace and a compile; by its optimized HLO, as a compile whose code was loaded.
struct CacheInfo {
  std::int64_t hits = 0, misses = 0, traces = 0, compiles = 0, entries = 0, evictions = 0;
  std::int64_t disk_hits = 0;
  double trace_ms = 0, lower_ms = 0, optimize_ms = 0, codegen_ms = 0;
};

// Why a call missed the cache: the first difference from the closest cached signature.
enum class MissReason {
  first_call,          // nothing was compiled for this function on this device yet
  new_shape,           // an argument's shape
  new_dtype,           // an argument's dtype
  new_weak_type,       // an argument's weak type (a C++ scalar against an array)
  new_static_value,    // a static argument's value (or C++ type)
  new_tree_structure,  // the arguments' pytree structure or C++ types
  new_device,          // compiled for other devices only
  evicted,             // this very signature was compiled, then evicted
  flags_changed,       // a flag the program depends on (--enable_x64, --cpu_isa, ...)
};
std::string_view miss_reason_name(MissReason reason);  // "new_shape"

struct StageTimes {
  double trace_ms = 0, lower_ms = 0, optimize_ms = 0, codegen_ms = 0, load_ms = 0;
};

// One miss: which function, why, where in the arguments (`args[1]`, `args[0].w`; empty when no
// argument differs), the value there before and after in jaxpr notation (`f32[3]`), and what
// the miss cost.
struct CacheMiss {
  std::string function;
  MissReason reason = MissReason::first_call;
  std::string path, before, after;
  StageTimes times;
  std::string str() const;  // "jit(f): new_shape at args[0]: f32[3] → f32[4]"
};

// Called with every miss of every jitted function, after it compiled (on the calling thread);
// an empty function removes the callback.
void on_cache_miss(std::function<void(const CacheMiss&)> callback);

// While one lives on this thread, a jitted call that misses its cache throws jx::RetraceError
// (the miss is recorded first): for code that must not retrace, such as a training loop.
class NoRetrace {
 public:
  NoRetrace();
  ~NoRetrace();
  NoRetrace(const NoRetrace&) = delete;
  NoRetrace& operator=(const NoRetrace&) = delete;
};

struct CostAnalysis {
  double flops = 0, transcendentals = 0, bytes_accessed = 0;
};
struct MemoryAnalysis {
  std::int64_t argument_bytes = 0, output_bytes = 0, temp_bytes = 0;
};

namespace detail {

// One address per C++ type: identifies an argument pack in the cache key.
template <class T>
inline constexpr char kTypeToken = 0;

template <class T>
concept Hashable = requires(const T& a) {
  { std::hash<T>{}(a) } -> std::convertible_to<std::size_t>;
  { a == a } -> std::convertible_to<bool>;
};
template <class T>
concept Printable = requires(std::ostream& os, const T& v) {
  os << v;
};

template <class T>
bool static_equal(const void* a, const void* b) {
  return static_cast<bool>(*static_cast<const T*>(a) == *static_cast<const T*>(b));
}
template <class T>
std::shared_ptr<const void> static_copy(const void* v) {
  return std::make_shared<const T>(*static_cast<const T*>(v));
}
template <class T>
std::string static_str(const void* v) {
  if constexpr (std::is_floating_point_v<T>) {  // the shortest text that reads back as it
    char text[64];
    return {text, std::to_chars(text, text + sizeof text, *static_cast<const T*>(v)).ptr};
  } else if constexpr (Printable<T>) {
    std::ostringstream os;
    os << std::boolalpha << *static_cast<const T*>(v);
    return os.str();
  } else {
    return "<value>";
  }
}
template <class T>
inline constexpr StaticOps kStaticOps{&static_equal<T>, &static_copy<T>, &static_str<T>};

// Whether rebuilding a T from tracers changes its type (it holds C++ scalars).
template <class T, bool kPytree = tree::is_pytree_v<T> && !tree::is_static_v<T>>
inline constexpr bool kRebuildChangesType = false;
template <class T>
inline constexpr bool kRebuildChangesType<T, true> = !std::is_same_v<tree::rebuilt_t<T>, T>;

// What the function receives for an argument of type T. Pytrees are rebuilt from tracers
// (scalars become Arrays), except, when kTracedScalars is false, pytrees holding C++ scalars:
// the function takes them as they are, so they must be static. Static<T> and non-pytrees pass
// as they are.
template <class T, bool kTracedScalars>
inline constexpr bool kPassedAsIs =
    tree::is_static_v<T> || !tree::is_pytree_v<T> || (!kTracedScalars && kRebuildChangesType<T>);

template <class T, bool kAsIs>
struct passed {
  using type = const T&;
};
template <class T>
struct passed<T, false> {
  using type = tree::rebuilt_t<T>;
};
template <class T, bool kTracedScalars>
using passed_t = typename passed<T, kPassedAsIs<T, kTracedScalars>>::type;

// Traced scalars when the function accepts them; otherwise scalars are passed as C++ values.
template <class F, class... Args>
inline constexpr bool kTracedScalars = std::is_invocable_v<const F&, passed_t<Args, true>...>;

inline bool is_static_argnum(std::uint64_t mask, int i) { return i < 64 && ((mask >> i) & 1); }

template <bool kTS, class T>
decltype(auto) pass_arg(const T& a, bool is_static, const std::vector<Array>& leaves,
                        std::size_t& pos) {
  if constexpr (kPassedAsIs<T, kTS>) {
    return (a);
  } else if (is_static) {
    std::vector<Array> own = tree::leaves(a);  // a static pytree is passed concrete
    std::size_t own_pos = 0;
    return tree::rebuild(a, own, own_pos);
  } else {
    return tree::rebuild(a, leaves, pos);
  }
}

// Calls f on the arguments, their dynamic leaves replaced by `leaves` (in flatten order).
template <bool kTS, class F, class... Args>
auto invoke(const F& f, std::uint64_t mask, const std::vector<Array>& leaves, const Args&... args) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    std::size_t pos = 0;
    // Braced initialization runs left to right, so leaves are consumed in order.
    std::tuple<decltype(pass_arg<kTS>(args, false, leaves, pos))...> passed{
        pass_arg<kTS>(args, is_static_argnum(mask, I), leaves, pos)...};
    return std::apply(f, passed);
  }
  (std::index_sequence_for<Args...>());
}

template <bool kTS, class F, class... Args>
using raw_out_t = std::decay_t<std::invoke_result_t<const F&, passed_t<Args, kTS>...>>;
template <bool kTS, class F, class... Args>
using out_t = tree::rebuilt_t<raw_out_t<kTS, F, Args...>>;

template <class T>
auto as_output(const T& out) {
  std::vector<Array> flat = tree::leaves(out);
  std::size_t pos = 0;
  return tree::rebuild(out, flat, pos);
}

template <bool kTS, class T>
void add_arg(CallArgs& ca, const T& a, int argnum, std::uint64_t mask) {
  auto fail = [&](ArgError e) {
    if (ca.error == ArgError::none) ca.error = e, ca.error_argnum = argnum;
  };
  ca.arg_leaf_begin.push_back(ca.leaves.size());
  if constexpr (tree::is_static_v<T>) {
    using V = decltype(a.value);
    static_assert(Hashable<V>, "jx::Static<T> needs std::hash<T> and == for the cache key");
    ca.statics.push_back({argnum, std::hash<V>{}(a.value), &kStaticOps<V>, &a.value});
  } else {
    if (is_static_argnum(mask, argnum)) {
      if constexpr (Hashable<T>)
        ca.statics.push_back({argnum, std::hash<T>{}(a), &kStaticOps<T>, &a});
      else
        fail(ArgError::unhashable_static);
    } else if constexpr (!tree::is_pytree_v<T>) {
      fail(ArgError::not_a_pytree);
    } else if constexpr (!kTS && kRebuildChangesType<T>) {
      fail(ArgError::scalar_not_traced);
    } else {
      tree::flatten(a, ca.leaves, ca.structure);
    }
  }
}

template <bool kTS, class T>
tree::TreeDef arg_structure(const T& a, bool is_static) {
  if constexpr (tree::is_pytree_v<T>) {
    if (!is_static) return tree::structure(a);
  }
  tree::TreeDef t;
  t.kind = tree::TreeDef::Kind::static_value;
  return t;
}

template <bool kTS, class F, class... Args>
class JitHandler final : public MissHandler {
  using Out = out_t<kTS, F, Args...>;

 public:
  JitHandler(const F& f, std::uint64_t mask, const Args&... args)
      : f_(f), mask_(mask), args_(args...) {}

  std::vector<tree::TreeDef> structures() const override {
    return std::apply(
        [&](const auto&... a) {
          std::vector<tree::TreeDef> out;
          int i = 0;
          (out.push_back(arg_structure<kTS>(a, is_static_argnum(mask_, i++))), ...);
          return out;
        },
        args_);
  }

  std::vector<Array> trace(const std::vector<Array>& leaves,
                           std::shared_ptr<const void>& out_proto) const override {
    auto out =
        std::apply([&](const auto&... a) { return invoke<kTS>(f_, mask_, leaves, a...); }, args_);
    std::vector<Array> flat = tree::leaves(out);
    std::vector<Array> holes(flat.size());
    std::size_t pos = 0;
    out_proto = std::make_shared<const Out>(tree::rebuild(out, holes, pos));
    return flat;
  }

  tree::TreeDef out_structure(const void* out_proto) const override {
    return tree_def(*static_cast<const Out*>(out_proto));
  }
  std::shared_ptr<const void> proto_from(const tree::TreeDef& structure) const override {
    std::optional<Out> proto = proto_from_def<Out>(structure);
    if (!proto) return nullptr;
    return std::make_shared<const Out>(std::move(*proto));
  }

 private:
  const F& f_;
  std::uint64_t mask_;
  std::tuple<const Args&...> args_;
};

template <class Out>
Out rebuild_output(const std::shared_ptr<const void>& proto, std::vector<Array>&& outs) {
  std::size_t pos = 0;
  return tree::rebuild(*static_cast<const Out*>(proto.get()), outs, pos);
}

}  // namespace detail

// The compiled half of AOT: compiled(args...) takes the non-static arguments, as in JAX.
template <class Out>
class Compiled {
 public:
  explicit Compiled(detail::CompiledCall call) : call_(std::move(call)) {}
  const std::string& hlo_text() const { return call_.hlo_text(); }  // after optimizations
  CostAnalysis cost_analysis() const;
  MemoryAnalysis memory_analysis() const;
  // What runs per call, one step per line: `kernel <name>(<buffers>)`, `gemm ...`, `copy ...`.
  const std::string& thunk_sequence() const { return call_.thunk_sequence(); }

  template <class... Args>
  Out operator()(const Args&... args) const {
    static_assert(!(tree::is_static_v<Args> || ...),
                  "a compiled function takes only the non-static arguments");
    std::vector<Array> leaves;
    (tree::flatten(args, leaves), ...);
    std::vector<tree::TreeDef> structures{tree::structure(args)...};
    return detail::rebuild_output<Out>(call_.out_proto(), call_.run(leaves, structures));
  }

 private:
  detail::CompiledCall call_;
};

template <class Out>
CostAnalysis Compiled<Out>::cost_analysis() const {
  return call_.cost_analysis();
}
template <class Out>
MemoryAnalysis Compiled<Out>::memory_analysis() const {
  return call_.memory_analysis();
}

// The lowered half of AOT: the jaxpr and the unoptimized HLO of one signature.
template <class Out>
class Lowered {
 public:
  explicit Lowered(detail::LoweredCall call) : call_(std::move(call)) {}
  const std::string& jaxpr_text() const { return call_.jaxpr_text(); }
  const std::string& hlo_text() const { return call_.hlo_text(); }
  Compiled<Out> compile() const { return Compiled<Out>(call_.compile()); }

 private:
  detail::LoweredCall call_;
};

// A jitted function. Copies share one cache, and so do wrappers of one function pointer or one
// stateless lambda or functor type with equal options (detail::callable_id).
template <class F>
class Jitted {
 public:
  Jitted(F f, const JitOptions& options)
      : f_(std::move(f)),
        state_(detail::make_jit_state(options, detail::callable_id(f_))),
        static_mask_(detail::static_mask(*state_)) {}

  template <class... Args>
  auto operator()(const Args&... args) const
      -> detail::out_t<detail::kTracedScalars<F, Args...>, F, Args...> {
    constexpr bool kTS = detail::kTracedScalars<F, Args...>;
    using Out = detail::out_t<kTS, F, Args...>;
    static_assert(tree::is_pytree_v<detail::raw_out_t<kTS, F, Args...>>,
                  "a jitted function returns a pytree of Arrays and scalars");
    detail::CallArgsLease lease;
    detail::CallArgs& ca = key(lease, args...);
    detail::JitHandler<kTS, F, Args...> miss(f_, static_mask_, args...);
    detail::CallResult r = detail::jit_call(*state_, ca, miss);
    if (r.run_inline)
      return detail::as_output(detail::invoke<kTS>(f_, static_mask_, ca.leaves, args...));
    return detail::rebuild_output<Out>(r.out_proto, std::move(r.outs));
  }

  // AOT: traces and lowers for these arguments' signature without touching the cache.
  template <class... Args>
  auto lower(const Args&... args) const {
    constexpr bool kTS = detail::kTracedScalars<F, Args...>;
    detail::CallArgsLease lease;
    detail::CallArgs& ca = key(lease, args...);
    detail::JitHandler<kTS, F, Args...> miss(f_, static_mask_, args...);
    return Lowered<detail::out_t<kTS, F, Args...>>(detail::jit_lower(*state_, ca, miss));
  }

  CacheInfo cache_info() const;
  // Every miss so far, oldest first (the first call's included).
  std::vector<CacheMiss> cache_misses() const { return detail::cache_misses(*state_); }
  void clear_cache() const { detail::clear_cache(*state_); }
  const F& function() const { return f_; }

 private:
  template <class... Args>
  detail::CallArgs& key(detail::CallArgsLease& lease, const Args&... args) const {
    constexpr bool kTS = detail::kTracedScalars<F, Args...>;
    static_assert(kTS || std::is_invocable_v<const F&, detail::passed_t<Args, false>...>,
                  "the jitted function cannot be called with these arguments (arguments it takes "
                  "with C++ scalars must be static: jx::Static or JitOptions::static_argnums)");
    constexpr int n = sizeof...(Args);
    if (n < 64 && (static_mask_ >> n) != 0) detail::throw_too_few_args(*state_, n);
    detail::CallArgs& ca = lease.args();
    ca.type_token = &detail::kTypeToken<std::tuple<Args...>>;
    ca.num_args = n;
    int i = 0;
    (detail::add_arg<kTS>(ca, args, i++, static_mask_), ...);
    return ca;
  }

  F f_;
  std::shared_ptr<detail::JitState> state_;
  std::uint64_t static_mask_;
};

template <class F>
CacheInfo Jitted<F>::cache_info() const {
  return detail::cache_info(*state_);
}

// jit(f): f is traced for each new abstract signature of its arguments (pytree structure,
// dtypes, shapes, weak types, static values), compiled, cached, and called.
template <class F>
Jitted<std::decay_t<F>> jit(F&& f, const JitOptions& options = {}) {
  return Jitted<std::decay_t<F>>(std::forward<F>(f), options);
}

}  // namespace jx
