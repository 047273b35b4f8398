// NumPy-style printing: repr, Array([[1., 2.],\n       [3., 4.]], dtype=float32), and str,
// [[1. 2.]\n [3. 4.]].
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <sstream>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "trace/tracer.hpp"

namespace jx {
namespace {

constexpr std::int64_t kThreshold = 1000;  // numpy's print threshold: summarize above it
constexpr std::int64_t kEdgeItems = 3;
constexpr std::size_t kLineWidth = 75;

// Whether `text` read as a number and rounded to `dtype` is v (a value of that dtype).
bool reads_back(const char* text, double v, DType dtype) {
  double back = std::strtod(text, nullptr);
  return dispatch(dtype, [&]<class T>() {
    return static_cast<double>(static_cast<T>(back)) == static_cast<double>(static_cast<T>(v));
  });
}

// Formats every element to the same width, as numpy's FloatingFormat (maxprec, precision 8).
class ElementFormatter {
 public:
  ElementFormatter(const std::vector<double>& values, DType dtype) : dtype_(dtype) {
    if (!is_floating(dtype)) {
      for (double v : values) width_ = std::max(width_, plain(v).size());
      return;
    }
    double max_abs = 0, min_abs = INFINITY;
    for (double v : values) {
      if (!std::isfinite(v)) continue;
      max_abs = std::max(max_abs, std::abs(v));
      if (v != 0) min_abs = std::min(min_abs, std::abs(v));
    }
    // numpy's rule: exponent notation for very large, very small or widely spread values.
    scientific_ =
        max_abs >= 1e8 || (min_abs != INFINITY && (min_abs < 1e-4 || max_abs / min_abs > 1e3));
    for (double v : values) {
      auto [ip, fp] = split(v);
      int_width_ = std::max(int_width_, ip.size());
      frac_width_ = std::max(frac_width_, fp.size());
    }
    width_ = int_width_ + frac_width_;
  }

  std::string operator()(double v) const {
    if (!is_floating(dtype_)) {
      std::string s = plain(v);
      return std::string(width_ - s.size(), ' ') + s;
    }
    auto [ip, fp] = split(v);
    return std::string(int_width_ - ip.size(), ' ') + ip + fp +
           std::string(frac_width_ - fp.size(), ' ');
  }

 private:
  std::string plain(double v) const {
    if (dtype_ == bool_) return v != 0 ? " True" : "False";
    std::ostringstream os;
    os << static_cast<long long>(v);
    if (dtype_ == uint32) {
      os.str("");
      os << static_cast<unsigned long long>(v);
    }
    return os.str();
  }

  // The text before and from the decimal point ("-1" and ".5"), shortest unique digits.
  std::pair<std::string, std::string> split(double v) const {
    if (std::isnan(v)) return {"nan", ""};
    if (std::isinf(v)) return {v > 0 ? "inf" : "-inf", ""};
    char buf[64];
    if (scientific_) {
      // Fewest significant digits (up to 8 after the point) that print the value exactly.
      int prec = 0;
      for (; prec <= 8; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*e", prec, v);
        if (round_trips(buf, v)) break;
      }
      std::string s(buf);
      auto e = s.find('e');
      std::string mant = s.substr(0, e), exp = s.substr(e);
      if (mant.find('.') == std::string::npos) mant += ".";
      return {mant.substr(0, mant.find('.')), mant.substr(mant.find('.')) + exp};
    }
    int prec = 0;
    for (; prec < 8; ++prec) {
      std::snprintf(buf, sizeof buf, "%.*f", prec, v);
      if (round_trips(buf, v)) break;
    }
    std::snprintf(buf, sizeof buf, "%.*f", prec, v);
    std::string s(buf);
    auto dot = s.find('.');
    if (dot == std::string::npos) return {s, "."};
    return {s.substr(0, dot), s.substr(dot)};
  }

  bool round_trips(const char* text, double v) const { return reads_back(text, v, dtype_); }

  DType dtype_;
  bool scientific_ = false;
  std::size_t width_ = 0, int_width_ = 0, frac_width_ = 0;
};

// Nested brackets, as numpy's array2string writes them: repr separates elements with ", " and
// rows with ",", str with " " and nothing.
struct Writer {
  const std::vector<double>& values;
  const Shape& shape;
  const ElementFormatter& fmt;
  bool summarize;
  std::size_t indent;  // column where the array's first '[' stands
  std::string sep, row_sep;
  std::ostringstream os;

  void write(std::size_t dim, std::int64_t offset) {
    std::int64_t n = shape[dim];
    std::int64_t inner = 1;
    for (std::size_t d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
    os << '[';
    bool last_dim = dim + 1 == shape.size();
    std::size_t col = indent + dim + 1;
    for (std::int64_t i = 0; i < n; ++i) {
      if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
        i = n - kEdgeItems;
        if (last_dim) {
          os << "..." << sep;
          col += 3 + sep.size();
        } else {
          os << "..." << row_sep << "\n" << std::string(indent + dim + 1, ' ');
        }
      }
      if (last_dim) {
        std::string e = fmt(values[offset + i]);
        if (i > 0 && col + e.size() + 1 > kLineWidth) {
          os << '\n' << std::string(indent + dim + 1, ' ');
          col = indent + dim + 1;
        }
        os << e;
        col += e.size();
        if (i + 1 < n) {
          os << sep;
          col += sep.size();
        }
      } else {
        write(dim + 1, offset + i * inner);
        if (i + 1 < n)
          os << row_sep << std::string(shape.size() - dim - 1, '\n')
             << std::string(indent + dim + 1, ' ');
      }
    }
    os << ']';
  }
};

// The values to print and the formatter sized on those shown.
struct Shown {
  std::vector<double> all;
  bool summarize;
  ElementFormatter fmt;
};
Shown shown_values(const Array& x) {
  std::vector<double> all = x.to_vector<double>();
  bool summarize = x.size() > kThreshold;
  std::vector<double> shown;  // values the formatter sizes itself on
  if (summarize) {
    // numpy sizes columns on the printed elements only; the edges are a fine approximation.
    for (std::size_t i = 0; i < all.size(); ++i)
      if (i < static_cast<std::size_t>(kEdgeItems) || i + kEdgeItems >= all.size())
        shown.push_back(all[i]);
  } else {
    shown = all;
  }
  ElementFormatter fmt(shown, x.dtype());
  return {std::move(all), summarize, std::move(fmt)};
}

// A 0-d value as str() of a NumPy scalar prints it: shortest digits, "2.0", "nan", "True".
std::string scalar_str(double v, DType dtype) {
  if (dtype == bool_) return v != 0 ? "True" : "False";
  char buf[64];
  if (!is_floating(dtype)) {
    bool is_unsigned = dtype == uint8 || dtype == uint16 || dtype == uint32 || dtype == uint64;
    if (is_unsigned)
      std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
    else
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    return buf;
  }
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Python's repr of a float: the fewest digits that read back, positional for exponents in
  // [-4, 16), else scientific.
  int prec = 0;
  for (; prec < 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*e", prec, v);
    if (reads_back(buf, v, dtype)) break;
  }
  int exponent = std::atoi(std::strchr(buf, 'e') + 1);
  if (exponent < -4 || exponent >= 16) return buf;
  std::snprintf(buf, sizeof buf, "%.*f", std::max(0, prec - exponent), v);
  std::string s = buf;
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}

}  // namespace

std::string Array::repr() const {
  const auto& impl = impl_of(*this);
  std::ostringstream os;
  if (impl.tracer) {
    os << "Traced<" << aval().str() << ">";
    return os.str();
  }
  std::string suffix = "dtype=" + std::string(dtype_name(dtype()));
  if (weak_type()) suffix += ", weak_type=True";
  if (size() == 0) return "Array([], shape=" + shape_str(shape()) + ", " + suffix + ")";
  Shown v = shown_values(*this);
  if (ndim() == 0) return "Array(" + v.fmt(v.all[0]) + ", " + suffix + ")";
  Writer w{v.all, shape(), v.fmt, v.summarize, 6, ", ", ",", {}};
  w.write(0, 0);
  return "Array(" + w.os.str() + ", " + suffix + ")";
}

std::string Array::str() const {
  if (impl_of(*this).tracer) return repr();
  if (size() == 0)
    return std::string(static_cast<std::size_t>(ndim()), '[') +
           std::string(static_cast<std::size_t>(ndim()), ']');
  Shown v = shown_values(*this);
  if (ndim() == 0) return scalar_str(v.all[0], dtype());
  Writer w{v.all, shape(), v.fmt, v.summarize, 0, " ", "", {}};
  w.write(0, 0);
  return w.os.str();
}

std::ostream& operator<<(std::ostream& os, const Array& x) { return os << x.repr(); }

}  // namespace jx
