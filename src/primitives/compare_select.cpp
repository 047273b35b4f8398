// Comparisons (eq ne lt le gt ge → bool) and selection (select_n, clamp). Each primitive's rules
// stand together.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "jx/lax.hpp"
#include "jx/numpy.hpp"
#include "primitives/elementwise.hpp"
#include "trace/tracer.hpp"
#include "transforms/ad_rules.hpp"

namespace jx {

Primitive eq_p("eq"), ne_p("ne"), lt_p("lt"), le_p("le"), gt_p("gt"), ge_p("ge"),
    select_n_p("select_n"), clamp_p("clamp");

namespace {

using trace::bind1;

// An operand that is 0-d repeats: its element stride is 0.
std::int64_t stride_of(const Array& x) { return x.ndim() == 0 ? 0 : 1; }

// select_n(which, *cases): JAX's shape rule, then its dtype rule.
ShapedArray select_n_aval(std::span<const ShapedArray> in) {
  if (in.size() < 2) throw TypeError("select_n must have at least one case");
  const ShapedArray& which = in[0];
  std::span<const ShapedArray> cases = in.subspan(1);
  for (const auto& c : cases) {
    if (c.shape == cases[0].shape) continue;
    std::ostringstream os;
    os << "select_n cases must have the same shapes, got [";
    for (std::size_t i = 0; i < cases.size(); ++i)
      os << (i ? ", " : "") << shape_str(cases[i].shape);
    os << "].";
    throw ShapeError(os.str());
  }
  if (which.ndim() > 0 && which.shape != cases[0].shape)
    throw ShapeError(
        "select_n `which` must be scalar or have the same shape as cases, got "
        "`which` shape " +
        shape_str(which.shape) + " but case shape " + shape_str(cases[0].shape) + ".");
  ShapedArray out = elementwise_aval("select_n", cases, kAnyDType);  // same dtypes; weak if all
  if (which.dtype != bool_ && which.dtype != int32)
    throw TypeError("select_n `which` must be boolean or int32 type, got " +
                    std::string(dtype_name(which.dtype)) + ".");
  if (which.dtype == bool_ && cases.size() > 2)
    throw TypeError("select_n with boolean `which` cannot have > 2 cases.");
  return out;
}

// Copies element i of case which[i]; an out-of-range int32 `which` is clamped to [0, n-1].
Array select_n_impl(std::span<const Array> in, const ShapedArray& out) {
  Array r = make_array(out);
  const Buffer& wb = concrete_buffer(in[0], "impl");
  std::int64_t n_cases = static_cast<std::int64_t>(in.size()) - 1, sw = stride_of(in[0]);
  dispatch(out.dtype, [&]<class T>() {
    std::vector<const T*> cases;
    for (std::size_t k = 1; k < in.size(); ++k)
      cases.push_back(concrete_buffer(in[k], "impl").as<T>());
    T* o = r.impl()->buffer->as<T>();
    for (std::int64_t i = 0, n = out.size(); i < n; ++i) {
      std::int64_t k =
          in[0].dtype() == bool_ ? wb.as<bool>()[i * sw] : wb.as<std::int32_t>()[i * sw];
      o[i] = cases[std::clamp<std::int64_t>(k, 0, n_cases - 1)][i];
    }
  });
  return r;
}

// clamp(lo, x, hi): lo and hi are 0-d or x's shape (JAX's rule), then the elementwise rule.
ShapedArray clamp_aval(std::span<const ShapedArray> in) {
  check_arity("clamp", in.size(), 3);
  for (auto [k, name] : {std::pair{0, "min"}, std::pair{2, "max"}}) {
    if (in[k].ndim() == 0 || in[k].shape == in[1].shape) continue;
    throw ShapeError(std::string("clamp requires ") + name + ".shape == operand.shape or " + name +
                     ".shape == (), got " + shape_str(in[k].shape) + " and " +
                     shape_str(in[1].shape) + ".");
  }
  return elementwise_aval("clamp", in, kNumeric);
}

// XLA's clamp (hlo/scalar_ops.hpp), a 0-d lo or hi repeated.
Array clamp_impl(std::span<const Array> in, const ShapedArray& out) {
  Array r = make_array(out);
  std::int64_t s_lo = stride_of(in[0]), s_hi = stride_of(in[2]);
  dispatch(out.dtype, [&]<class T>() {
    const T* lo = concrete_buffer(in[0], "impl").as<T>();
    const T* x = concrete_buffer(in[1], "impl").as<T>();
    const T* hi = concrete_buffer(in[2], "impl").as<T>();
    T* o = r.impl()->buffer->as<T>();
    for (std::int64_t i = 0, n = out.size(); i < n; ++i)
      o[i] = hlo::Scalar<hlo::Opcode::kClamp>{}(lo[i * s_lo], x[i], hi[i * s_hi]);
  });
  return r;
}

// A comparison: the C++ operator (NaN compares unequal to everything and unordered, as IEEE and
// XLA say) with a bool result, lowered to HLO's compare in `direction`. Piecewise constant, so its
// tangent is zero.
template <class Cmp>
void def_comparison(Primitive& p, const std::string& direction) {
  def_elementwise(p, 2, kAnyDType, bool_);
  p.impl = [](std::span<const Array> in, const Params&, std::span<const ShapedArray> out) {
    return std::vector<Array>{map_binary(in[0], in[1], out[0], Cmp{})};
  };
  p.lower = lower_elementwise(hlo::Opcode::kCompare, direction);
  ad::def_zero_jvp(p);
}

const bool kRegistered = [] {
  def_comparison<std::equal_to<>>(eq_p, "EQ");
  def_comparison<std::not_equal_to<>>(ne_p, "NE");
  def_comparison<std::less<>>(lt_p, "LT");
  def_comparison<std::less_equal<>>(le_p, "LE");
  def_comparison<std::greater<>>(gt_p, "GT");
  def_comparison<std::greater_equal<>>(ge_p, "GE");

  select_n_p.abstract_eval = [](std::span<const ShapedArray> in, const Params&) {
    return std::vector<ShapedArray>{select_n_aval(in)};
  };
  select_n_p.impl = [](std::span<const Array> in, const Params&, std::span<const ShapedArray> out) {
    return std::vector<Array>{select_n_impl(in, out[0])};
  };
  // A chain of selects from the last case down; `which <= k` also clamps out-of-range indices.
  select_n_p.lower = [](hlo::Builder& b, std::span<hlo::Instruction* const> operands, const Params&,
                        std::span<const ShapedArray> out) {
    auto ops = broadcast_scalars(b, operands, out[0].shape);
    hlo::Instruction* which = ops[0];
    hlo::Instruction* result = ops.back();
    for (std::size_t k = ops.size() - 2; k >= 1; --k) {
      hlo::Instruction* pick = which;
      if (which->shape.dtype != bool_) {
        Array index = make_scalar(static_cast<double>(k - 1), which->shape.dtype);
        hlo::Instruction* bound = b.broadcast(b.constant(index), out[0].shape, {});
        pick = b.compare(which, bound, "LE");
        result = b.op(hlo::Opcode::kSelect, result->shape, {pick, ops[k], result});
      } else {
        result = b.op(hlo::Opcode::kSelect, result->shape, {pick, result, ops[k]});
      }
    }
    return std::vector<hlo::Instruction*>{result};
  };
  batching::def_elementwise_batch(select_n_p);
  // Linear in its cases: the transpose routes the cotangent to the case each element came from.
  ad::def_linear(select_n_p, [](std::size_t k) { return k > 0; });
  select_n_p.transpose = [](std::span<const Array> cts, std::span<const LinearOperand> ops,
                            const Params&) {
    std::vector<Array> out(ops.size());
    Array zeros = ad::zeros(cts[0].aval());
    for (std::size_t k = 1; k < ops.size(); ++k) {
      if (!ops[k].is_linear()) continue;
      std::vector<Array> cases(ops.size() - 1, zeros);
      cases[k - 1] = cts[0];
      out[k] = lax::select_n(ops[0].value, cases);
    }
    return out;
  };

  clamp_p.abstract_eval = [](std::span<const ShapedArray> in, const Params&) {
    return std::vector<ShapedArray>{clamp_aval(in)};
  };
  clamp_p.impl = [](std::span<const Array> in, const Params&, std::span<const ShapedArray> out) {
    return std::vector<Array>{clamp_impl(in, out[0])};
  };
  clamp_p.lower = lower_elementwise(hlo::Opcode::kClamp);
  batching::def_elementwise_batch(clamp_p);
  // The tangent comes from the operand clamp returned: x inside (lo, hi), else the bound; hi
  // whenever lo > hi, where clamp gives hi.
  auto where = [](const Array& cond, const Array& t) {
    return t * lax::convert_element_type(cond, t.dtype());
  };
  ad::def_elementwise_jvp(clamp_p,
                          {[where](const Array& t, std::span<const Array> x, const Array&) {
                             return where(np::logical_and(x[0] > x[1], x[0] < x[2]), t);
                           },
                           [where](const Array& t, std::span<const Array> x, const Array&) {
                             return where(np::logical_and(x[1] > x[0], x[1] < x[2]), t);
                           },
                           [where](const Array& t, std::span<const Array> x, const Array&) {
                             return where(np::logical_or(x[2] < x[1], x[2] < x[0]), t);
                           }});
  return true;
}();

}  // namespace

namespace lax {

Array eq(const Array& x, const Array& y) { return bind1(eq_p, {x, y}); }
Array ne(const Array& x, const Array& y) { return bind1(ne_p, {x, y}); }
Array lt(const Array& x, const Array& y) { return bind1(lt_p, {x, y}); }
Array le(const Array& x, const Array& y) { return bind1(le_p, {x, y}); }
Array gt(const Array& x, const Array& y) { return bind1(gt_p, {x, y}); }
Array ge(const Array& x, const Array& y) { return bind1(ge_p, {x, y}); }

Array select_n(const Array& which, const std::vector<Array>& cases) {
  std::vector<Array> in{which};
  in.insert(in.end(), cases.begin(), cases.end());
  return bind1(select_n_p, std::move(in));
}

Array clamp(const Array& lo, const Array& x, const Array& hi) {
  return bind1(clamp_p, {lo, x, hi});
}

}  // namespace lax
}  // namespace jx
