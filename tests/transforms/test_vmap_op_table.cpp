// vmap of every op-table row, checked against the loop oracle: row.apply on each example, the
// results stacked along axis 0. Operands are stacked on the host (no jx code) along the batch
// axis under test; every batch size (0, 1, 7) and batch axis position (first, last, a middle
// one, unbatched operands) runs eagerly, and a subset runs under jit(vmap(...)).
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "support/op_table.hpp"

namespace jx::testing {
namespace {

using Arrays = std::vector<Array>;
using Axes = std::vector<std::optional<int>>;

// One operand drawn with the row's sampler, as the exact values jx holds.
HostArray draw(const OpRow& row, const Shape& s, DType dtype, std::mt19937& rng) {
  HostArray h{s, {}};
  for (std::int64_t i = 0; i < shape_size(s); ++i)
    h.values.push_back(sample_value(row, rng, dtype));
  return to_host(from_host(h, dtype));
}

// Row-major walk over the indices of `shape`.
template <class F>
void each_index(const Shape& shape, F f) {
  std::int64_t n = shape_size(shape);
  std::vector<std::int64_t> index(shape.size());
  for (std::int64_t flat = 0; flat < n; ++flat) {
    std::int64_t r = flat;
    for (std::size_t d = shape.size(); d-- > 0;) {
      index[d] = r % shape[d];
      r /= shape[d];
    }
    f(index);
  }
}

// The examples (all of shape `example`) stacked along a new axis at `axis`.
HostArray stack_host(const std::vector<HostArray>& xs, const Shape& example, int axis) {
  Shape shape = example;
  shape.insert(shape.begin() + axis, static_cast<std::int64_t>(xs.size()));
  HostArray out{shape, {}};
  each_index(shape, [&](const std::vector<std::int64_t>& index) {
    std::vector<std::int64_t> rest = index;
    rest.erase(rest.begin() + axis);
    out.values.push_back(
        xs[static_cast<std::size_t>(index[static_cast<std::size_t>(axis)])].at(rest));
  });
  return out;
}

struct Config {
  std::string name;
  Axes axes;  // per operand: the batch axis of the stacked operand, or nullopt (unbatched)
};

std::string axes_str(const Axes& axes) {
  std::ostringstream os;
  os << "{";
  for (std::size_t k = 0; k < axes.size(); ++k)
    os << (k ? ", " : "") << (axes[k] ? std::to_string(*axes[k]) : std::string("none"));
  os << "}";
  return os.str();
}

// The batch axis positions to run for operands of these (per-example) shapes.
std::vector<Config> configs(const std::vector<Shape>& shapes) {
  std::size_t n = shapes.size();
  auto rank = [&](std::size_t k) { return static_cast<int>(shapes[k].size()); };
  std::vector<Config> out;
  auto add = [&](std::string name, Axes axes) {
    for (const Config& c : out)
      if (c.axes == axes) return;
    out.push_back({std::move(name), std::move(axes)});
  };
  Axes first(n, 0), last(n), middle(n), mixed(n);
  for (std::size_t k = 0; k < n; ++k) {
    last[k] = rank(k);
    middle[k] = rank(k) >= 2 ? (rank(k) + 1) / 2 : 0;
    mixed[k] = k % 2 ? rank(k) : 0;
  }
  add("first", first);
  add("last", last);
  add("middle", middle);
  add("mixed first/last", mixed);
  if (n >= 2) {
    for (std::size_t k = 0; k < n; ++k) {
      Axes a(n, 0);
      a[k] = std::nullopt;
      add("operand " + std::to_string(k) + " unbatched", a);
      Axes only(n, std::nullopt);
      only[k] = last[k];
      add("only operand " + std::to_string(k) + " batched (last)", only);
    }
  }
  return out;
}

Axis axis_of(const std::optional<int>& a) { return a ? Axis(*a) : Axis(none); }

// vmap (optionally under jit) of row.apply as a function of its operands, one argument each.
Array run_vmap(const OpRow& row, const Arrays& ops, const Axes& axes, bool use_jit) {
  auto go = [&](auto fn, InAxes in_axes, const auto&... args) -> Array {
    auto batched = vmap(fn, in_axes, 0);
    if (use_jit) return jit(batched)(args...);
    return batched(args...);
  };
  auto ax = [&](std::size_t k) { return axis_of(axes[k]); };
  switch (ops.size()) {
    case 1:
      return go([&row](const Array& a) { return row.apply({a}); }, InAxes{ax(0)}, ops[0]);
    case 2:
      return go(
          [&row](const Array& a, const Array& b) {
            return row.apply({a, b});
          },
          InAxes{ax(0), ax(1)}, ops[0], ops[1]);
    case 3:
      return go(
          [&row](const Array& a, const Array& b, const Array& c) {
            return row.apply({a, b, c});
          },
          InAxes{ax(0), ax(1), ax(2)}, ops[0], ops[1], ops[2]);
    case 4:
      return go(
          [&row](const Array& a, const Array& b, const Array& c, const Array& d) {
            return row.apply({a, b, c, d});
          },
          InAxes{ax(0), ax(1), ax(2), ax(3)}, ops[0], ops[1], ops[2], ops[3]);
    default:
      FAIL("test adapter missing for " << ops.size() << " operands");
      return ops[0];
  }
}

// The loop runs eagerly; jit(vmap(...)) rounds the value of every HLO op to a 16-bit float
// dtype where the eager impl rounds once: a few roundings apart.
bool agree(double got, double want, DType d, double rtol) {
  if (std::isnan(want)) return std::isnan(got);
  if (!is_floating(d) || std::isinf(want)) return got == want;
  double tol = tolerance(d, rtol, 4);
  return std::abs(got - want) <= tol + tol * std::abs(want);
}

std::string shapes_str(const std::vector<Shape>& shapes) {
  std::ostringstream os;
  for (const Shape& s : shapes) os << " " << shape_str(s);
  return os.str();
}

constexpr const char* kMissingPrefix = "Batching rule for '";

struct Outcome {
  std::map<std::string, std::set<std::string>> missing;  // primitive → rows that need it
  int cases = 0;
};

// One case: builds the operands, runs vmap and compares with the loop. Returns false when the
// row should not run further (a missing batch rule).
bool run_case(const OpRow& row, DType dtype, const std::vector<Shape>& shapes, std::int64_t b,
              const Config& config, bool use_jit, std::mt19937& rng, Outcome& outcome) {
  std::size_t n = shapes.size();
  std::ostringstream where;
  where << row.name << " " << dtype_name(dtype) << " shapes" << shapes_str(shapes) << " batch " << b
        << " in_axes " << axes_str(config.axes) << " (" << config.name << ")"
        << (use_jit ? " under jit" : " eager");
  INFO(where.str());
  // examples[k][i]: operand k of example i; an unbatched operand has one value for all.
  std::vector<std::vector<HostArray>> examples(n);
  Arrays stacked;
  for (std::size_t k = 0; k < n; ++k) {
    if (!config.axes[k]) {
      examples[k].push_back(draw(row, shapes[k], dtype, rng));
      stacked.push_back(from_host(examples[k][0], dtype));
      continue;
    }
    for (std::int64_t i = 0; i < b; ++i) examples[k].push_back(draw(row, shapes[k], dtype, rng));
    stacked.push_back(from_host(stack_host(examples[k], shapes[k], *config.axes[k]), dtype));
  }
  auto example = [&](std::int64_t i) {
    Arrays ops;
    for (std::size_t k = 0; k < n; ++k) {
      const auto& e = examples[k];
      ops.push_back(from_host(config.axes[k] ? e[static_cast<std::size_t>(i)] : e[0], dtype));
    }
    return ops;
  };
  // The loop oracle. A prototype example gives the output type when the batch is empty.
  Arrays proto_ops;
  for (std::size_t k = 0; k < n; ++k)
    proto_ops.push_back(from_host(draw(row, shapes[k], dtype, rng), dtype));
  Array proto = row.apply(proto_ops);
  Shape want_shape = proto.shape();
  want_shape.insert(want_shape.begin(), b);
  std::vector<double> want;
  for (std::int64_t i = 0; i < b; ++i) {
    std::vector<double> v = row.apply(example(i)).to_vector<double>();
    want.insert(want.end(), v.begin(), v.end());
  }
  ++outcome.cases;
  Array got = proto;
  try {
    got = run_vmap(row, stacked, config.axes, use_jit);
  } catch (const Error& e) {
    std::string what = e.what();
    if (what.rfind(kMissingPrefix, 0) == 0) {
      std::string prim = what.substr(std::string(kMissingPrefix).size());
      prim = prim.substr(0, prim.find('\''));
      outcome.missing[prim].insert(row.name);
      return false;
    }
    FAIL_CHECK("vmap threw " << what);
    return true;
  } catch (const std::exception& e) {
    FAIL_CHECK("vmap threw " << e.what());
    return true;
  }
  CHECK(got.dtype() == proto.dtype());
  CHECK(got.shape() == want_shape);
  if (got.shape() != want_shape) return true;
  std::vector<double> g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  std::size_t bad = g.size();
  for (std::size_t i = 0; i < g.size() && bad == g.size(); ++i)
    if (!agree(g[i], want[i], got.dtype(), row.rtol)) bad = i;
  INFO("first mismatch at flat element " << bad << ": vmap " << (bad < g.size() ? g[bad] : 0.0)
                                         << ", loop " << (bad < g.size() ? want[bad] : 0.0));
  CHECK(bad == g.size());
  return true;
}

std::string missing_str(const Outcome& o) {
  std::ostringstream os;
  for (const auto& [prim, rows] : o.missing) {
    os << "\n  " << prim << " (rows:";
    for (const auto& r : rows) os << " " << r;
    os << ")";
  }
  return os.str();
}

}  // namespace

TEST_CASE("vmap op table: every row, batch size and batch axis matches the loop, eagerly",
          "[vmap][vmap_op_table]") {
  std::mt19937 rng(7);
  Outcome outcome;
  for (const OpRow& row : op_table()) {
    bool go_on = true;
    for (DType dtype : row.dtypes) {
      for (const auto& shapes : row.shape_sets) {
        for (const Config& config : configs(shapes)) {
          for (std::int64_t b : {0, 1, 7}) {
            go_on = run_case(row, dtype, shapes, b, config, false, rng, outcome);
            if (!go_on) break;
          }
          if (!go_on) break;
        }
        if (!go_on) break;
      }
      if (!go_on) break;
    }
  }
  INFO("cases run: " << outcome.cases);
  if (!outcome.missing.empty())
    FAIL_CHECK("primitives without a batch rule:" << missing_str(outcome));
  CHECK(outcome.cases > 1000);
}

TEST_CASE("vmap op table: jit(vmap(row)) matches the loop on a subset", "[vmap][vmap_op_table]") {
  // Every row and dtype, the operand shapes of highest total rank (where the batch axis has the
  // most places to go), batch size 7, the batch axis last, and one operand unbatched (or a
  // middle axis for one operand): each case compiles, so the subset keeps the runtime down.
  std::mt19937 rng(11);
  Outcome outcome;
  for (const OpRow& row : op_table()) {
    const std::vector<Shape>* widest = &row.shape_sets[0];
    auto total_rank = [](const std::vector<Shape>& s) {
      std::size_t r = 0;
      for (const Shape& x : s) r += x.size();
      return r;
    };
    for (const auto& shapes : row.shape_sets)
      if (total_rank(shapes) > total_rank(*widest)) widest = &shapes;
    std::vector<Config> all = configs(*widest), chosen;
    for (const Config& c : all)
      if (c.name == "last" || c.name == "operand 0 unbatched" ||
          (widest->size() == 1 && c.name == "middle"))
        chosen.push_back(c);
    bool go_on = true;
    for (DType dtype : row.dtypes) {
      for (const Config& config : chosen) {
        go_on = run_case(row, dtype, *widest, 7, config, true, rng, outcome);
        if (!go_on) break;
      }
      if (!go_on) break;
    }
  }
  INFO("cases run: " << outcome.cases);
  if (!outcome.missing.empty())
    FAIL_CHECK("primitives without a batch rule:" << missing_str(outcome));
  CHECK(outcome.cases > 100);
}

}  // namespace jx::testing
