// debug_callback[callback effect=Debug]: jax.debug.callback's primitive. It calls a host function
// (its number in core/host_callbacks.hpp's table) with its operands' values and has no outputs;
// it is effectful, so dead-code elimination keeps it. Its jvp calls it on the primals (the
// backward pass never sees it: it has no tangents to transpose), vmap once per example, and it
// lowers to an HLO host-callback, which the runtime runs as a host thunk in program order.
#include <functional>
#include <iostream>
#include <sstream>

#include "core/host_callbacks.hpp"
#include "jx/debug.hpp"
#include "jx/lax.hpp"
#include "lower/lower.hpp"
#include "trace/tracer.hpp"
#include "transforms/batch_rules.hpp"

namespace jx {

Primitive debug_callback_p("debug_callback");

namespace {

using Ins = std::span<const Array>;

std::int64_t callback_of(const Params& params) { return params.get("callback").as_int(); }

// Example i of x batched along dim.
Array example_of(const Array& x, int dim, std::int64_t i) {
  std::vector<std::int64_t> start(x.shape().size(), 0), limit = x.shape();
  auto d = static_cast<std::size_t>(dim);
  start[d] = i;
  limit[d] = i + 1;
  return lax::squeeze(lax::slice(x, start, limit), {dim});
}

const bool kRegistered = [] {
  debug_callback_p.effectful = true;
  debug_callback_p.abstract_eval = [](std::span<const ShapedArray>, const Params&) {
    return std::vector<ShapedArray>{};
  };
  debug_callback_p.impl = [](Ins args, const Params& params, std::span<const ShapedArray>) {
    host_callback(callback_of(params))({args.begin(), args.end()});
    return std::vector<Array>{};
  };
  debug_callback_p.jvp = [](Ins primals, Ins, const Params& params) {
    trace::bind(debug_callback_p, {primals.begin(), primals.end()}, params);
    return JvpResult{};
  };
  // As JAX's rule: unrolled over the batch, one call per example, in order.
  debug_callback_p.batch = [](Ins args, std::span<const BatchDim> dims, const Params& params) {
    std::int64_t n = batching::batch_size(args, dims);
    for (std::int64_t i = 0; i < n; ++i) {
      std::vector<Array> example;
      for (std::size_t k = 0; k < args.size(); ++k)
        example.push_back(dims[k] ? example_of(args[k], *dims[k], i) : args[k]);
      trace::bind(debug_callback_p, std::move(example), params);
    }
    return BatchResult{};
  };
  debug_callback_p.lower = [](hlo::Builder& b, std::span<hlo::Instruction* const> ops,
                              const Params& params, std::span<const ShapedArray>) {
    hlo::Attrs attrs;
    attrs.set("callback", callback_of(params));
    b.op(hlo::Opcode::kHostCallback, hlo::HloShape::tuple({}), {ops.begin(), ops.end()},
         std::move(attrs));
    return std::vector<hlo::Instruction*>{};
  };
  return true;
}();

}  // namespace

namespace debug::detail {

void debug_callback(HostFn fn, const std::vector<Array>& leaves) {
  // Eagerly it runs at once. Registered, it would stay for the process's life: one more entry
  // for each call of an eager loop.
  if (!trace::tracing()) return fn(leaves);
  trace::bind(debug_callback_p, leaves,
              {{"callback", Param::integer(register_host_callback(std::move(fn)))},
               {"effect", Param::name("Debug")}});
}

namespace {

// fmt with its fields replaced by field(k), k < count (format's rules and errors).
std::string format_fields(const std::string& fmt, std::size_t count,
                          const std::function<std::string(std::size_t)>& field_value) {
  std::ostringstream out;
  std::size_t next = 0;
  bool numbered = false, automatic = false;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if ((c == '{' || c == '}') && i + 1 < fmt.size() && fmt[i + 1] == c) {
      out << c;
      ++i;
      continue;
    }
    if (c == '}') throw ValueError("Single '}' encountered in format string");
    if (c != '{') {
      out << c;
      continue;
    }
    std::size_t close = fmt.find('}', i);
    if (close == std::string::npos) throw ValueError("Single '{' encountered in format string");
    std::string field = fmt.substr(i + 1, close - i - 1);
    std::size_t k = next;
    if (field.empty()) {
      if (numbered)
        throw ValueError(
            "cannot switch from manual field specification to automatic field "
            "numbering");
      automatic = true;
      ++next;
    } else {
      if (field.find_first_not_of("0123456789") != std::string::npos)
        throw ValueError("jx::debug::print takes positional fields only ({} or {0}), got {" +
                         field + "}");
      if (automatic)
        throw ValueError(
            "cannot switch from automatic field numbering to manual field "
            "specification");
      numbered = true;
      k = std::stoul(field);
    }
    if (k >= count)
      throw IndexError("Replacement index " + std::to_string(k) +
                       " out of range for positional args tuple");
    out << field_value(k);
    i = close;
  }
  return out.str();
}

}  // namespace

std::string format(const std::string& fmt, const std::vector<Array>& values) {
  return format_fields(fmt, values.size(), [&](std::size_t k) { return values[k].str(); });
}

void check_format(const std::string& fmt, std::size_t count) {
  format_fields(fmt, count, [](std::size_t) { return std::string(); });
}

void print_line(const std::string& line) { std::cout << line << std::endl; }

}  // namespace debug::detail
}  // namespace jx
