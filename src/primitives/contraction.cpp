#include "primitives/contraction.hpp"

#include "jx/config.hpp"
#include "primitives/elementwise.hpp"
#include "support/check.hpp"

namespace jx::contraction {
namespace {

struct PrecisionName {
  lax::Precision value;
  const char* word;  // the flag's and HLO's
  const char* name;  // the jaxpr's
};
constexpr PrecisionName kPrecisionNames[] = {
    {lax::Precision::kDefault, "default", "Precision.DEFAULT"},
    {lax::Precision::kHigh, "high", "Precision.HIGH"},
    {lax::Precision::kHighest, "highest", "Precision.HIGHEST"}};

const PrecisionName& precision_name(lax::Precision p) {
  for (const PrecisionName& n : kPrecisionNames)
    if (n.value == p) return n;
  JX_CHECK(false, "unknown precision");
  return kPrecisionNames[0];
}

}  // namespace

const char* precision_word(lax::Precision p) { return precision_name(p).word; }

Param precision_param(lax::Precision p) {
  Param one = Param::name(precision_name(p).name);
  return Param::tuple({one, one});
}

std::optional<lax::Precision> precision_of(const std::string& op, const Params& params) {
  if (!params.has("precision") || params.get("precision").is_none()) return std::nullopt;
  for (const PrecisionName& n : kPrecisionNames)
    if (params.get("precision") == precision_param(n.value)) return n.value;
  throw TypeError(op + " precision must be None or a pair of equal lax.Precision values, got " +
                  params.get("precision").str());
}

std::optional<lax::Precision> default_precision() {
  const std::string& flag = config().default_matmul_precision;
  if (flag.empty()) return std::nullopt;
  for (const PrecisionName& n : kPrecisionNames)
    if (flag == n.word) return n.value;
  throw ValueError("default_matmul_precision must be one of default, high or highest, got '" +
                   flag + "'");
}

DType out_dtype(const std::string& op, DType lhs, DType rhs, const Param& preferred) {
  check_dtype(op, lhs, kNumeric);
  check_dtype(op, rhs, kNumeric);
  if (lhs != rhs)
    throw TypeError(op + " requires arguments to have the same dtypes, got " +
                    std::string(dtype_name(lhs)) + ", " + std::string(dtype_name(rhs)) + ".");
  if (preferred.is_none()) return lhs;
  DType p = preferred.as_dtype();
  if (!(is_integral(lhs) && is_floating(p))) {
    if (is_integral(lhs) != is_integral(p) || is_floating(lhs) != is_floating(p))
      throw TypeError(
          "Input type is incompatible with `preferred_element_type`. The compatible "
          "combinations of (input_type, preferred_element_type) are (integral, "
          "integral), (integral, floating), (floating, floating).");
    if (is_integral(lhs) && !is_unsigned(lhs) && is_unsigned(p))
      throw TypeError(
          "`preferred_element_type` must have the same signedness as the original "
          "type.");
  }
  if (itemsize(p) < itemsize(lhs))
    throw TypeError("`preferred_element_type` must not be narrower than the original type.");
  return p;
}

}  // namespace jx::contraction
