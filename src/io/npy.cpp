// NPY arrays: NumPy's header, byte for byte, and a parser for the headers numpy writes.
#include "io/npy.hpp"

#include <cctype>
#include <charconv>
#include <cstring>
#include <iterator>
#include <optional>
#include <string_view>

#include "core/array_impl.hpp"

namespace jx::npy {
namespace {

// NumPy's dtype.str of each jx dtype, in DType's order (the asserts below hold it to
// JX_FOR_EACH_DTYPE). bfloat16 is written as ml_dtypes' bfloat16 writes it, '<V2' (NumPy has no
// bfloat16: it reads two raw bytes, and NumPy with ml_dtypes views them as bfloat16).
struct Descr {
  DType dtype;
  const char* str;
};
constexpr Descr kDescr[] = {
    {bool_, "|b1"},   {int8, "|i1"},    {int16, "<i2"},   {int32, "<i4"},  {int64, "<i8"},
    {uint8, "|u1"},   {uint16, "<u2"},  {uint32, "<u4"},  {uint64, "<u8"}, {bfloat16, "<V2"},
    {float16, "<f2"}, {float32, "<f4"}, {float64, "<f8"},
};
static_assert(std::size(kDescr) == std::size(kAllDTypes), "every dtype needs an NPY descr");
constexpr bool descr_in_dtype_order() {
  for (std::size_t i = 0; i < std::size(kDescr); ++i)
    if (kDescr[i].dtype != kAllDTypes[i]) return false;
  return true;
}
static_assert(descr_in_dtype_order(), "kDescr must list the dtypes in JX_FOR_EACH_DTYPE's order");

const char* descr_of(DType d) { return kDescr[static_cast<std::size_t>(d)].str; }

// The dtype of a header's descr: the strings above, and '|V2' for bfloat16 too (NumPy's own
// spelling of a 2-byte void, which re-saving an ml_dtypes array read without ml_dtypes gives).
std::optional<DType> dtype_of_descr(std::string_view s) {
  for (const Descr& d : kDescr)
    if (s == d.str) return d.dtype;
  if (s == "|V2") return bfloat16;
  return std::nullopt;
}

// "|b1, |i1, <i2, ...": what jx reads, for the error message.
std::string known_descrs() {
  std::string out;
  for (const Descr& d : kDescr) {
    out += std::string(out.empty() ? "" : ", ") + d.str;
    if (d.dtype == bfloat16) out += " or |V2 (bfloat16)";
  }
  return out;
}

struct Dict {
  std::string descr;
  std::optional<bool> fortran_order;
  std::optional<Shape> shape;
};

// The header dict, as numpy's writers fill it: a Python dict literal with exactly the keys
// 'descr' (a string), 'fortran_order' (True or False) and 'shape' (a tuple of ints).
std::optional<Dict> parse_dict(std::string_view s) {
  std::size_t i = 0;
  auto skip = [&] {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  };
  auto peek = [&](char c) { return skip(), i < s.size() && s[i] == c; };
  auto eat = [&](char c) { return peek(c) ? (++i, true) : false; };
  auto word = [&](std::string_view w) { return skip(), s.substr(i, w.size()) == w; };
  auto string = [&]() -> std::optional<std::string> {
    if (!eat('\'') && !eat('"')) return std::nullopt;
    std::size_t close = s.find(s[i - 1], i);
    if (close == std::string_view::npos) return std::nullopt;
    std::string out(s.substr(i, close - i));
    i = close + 1;
    return out;
  };
  Dict d;
  std::optional<std::string> descr;
  if (!eat('{')) return std::nullopt;
  while (!eat('}')) {
    auto key = string();
    if (!key || !eat(':')) return std::nullopt;
    if (*key == "descr") {
      if (!(descr = string())) return std::nullopt;
    } else if (*key == "fortran_order" && (word("True") || word("False"))) {
      d.fortran_order = s[i] == 'T';
      i += *d.fortran_order ? 4 : 5;
    } else if (*key == "shape" && eat('(')) {
      d.shape.emplace();
      while (!eat(')')) {
        std::int64_t dim = 0;
        skip();
        auto [end, ec] = std::from_chars(s.data() + i, s.data() + s.size(), dim);
        if (ec != std::errc() || dim < 0) return std::nullopt;
        i = static_cast<std::size_t>(end - s.data());
        d.shape->push_back(dim);
        if (!eat(',') && !peek(')')) return std::nullopt;
      }
    } else {
      return std::nullopt;  // another key or a bad value: numpy refuses both
    }
    if (!eat(',') && !peek('}')) return std::nullopt;
  }
  skip();
  if (i != s.size() || !descr || !d.fortran_order || !d.shape) return std::nullopt;
  d.descr = *descr;
  return d;
}

std::uint32_t get_le(const unsigned char* p, int n) {
  std::uint32_t v = 0;
  for (int k = n - 1; k >= 0; --k) v = v << 8 | p[k];
  return v;
}

}  // namespace

// The dict's repr, spare spaces for growing the first axis in place (format.py's
// GROWTH_AXIS_MAX_DIGITS, NumPy >= 1.24), then spaces and '\n' up to a multiple of 64 bytes.
std::string header(const ShapedArray& a) {
  std::string shape = "(";
  for (std::size_t i = 0; i < a.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(a.shape[i]);
  shape += a.shape.size() == 1 ? ",)" : ")";
  std::string dict = std::string("{'descr': '") + descr_of(a.dtype) +
                     "', 'fortran_order': False, 'shape': " + shape + ", }";
  if (!a.shape.empty()) dict.append(21 - std::to_string(a.shape[0]).size(), ' ');
  dict.append(64 - (10 + dict.size() + 1) % 64, ' ');
  dict += '\n';
  if (dict.size() > 0xffff)
    throw Error("save_npz: shape " + shape + " has too many dimensions for an NPY v1.0 header");
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict;
}

Array parse(std::span<const unsigned char> b, const std::string& where) {
  auto fail = [&](const std::string& what) { throw Error(where + " " + what); };
  if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0)
    fail("is not an NPY array (bad magic)");
  int major = b[6], minor = b[7];
  if (major < 1 || major > 3 || minor != 0)
    fail("has NPY version " + std::to_string(major) + "." + std::to_string(minor) +
         "; jx reads 1.0, 2.0 and 3.0");
  std::size_t prefix = major == 1 ? 10 : 12;  // 2.0 and 3.0 have a 4-byte header length
  std::size_t header_len = b.size() < prefix ? 0 : get_le(&b[8], major == 1 ? 2 : 4);
  if (b.size() < prefix || header_len > b.size() - prefix)
    fail("is truncated: its NPY header runs past the end of the entry");
  std::string_view text(reinterpret_cast<const char*>(&b[prefix]), header_len);
  auto d = parse_dict(text);
  if (!d) {
    auto shown = text.substr(0, text.find_last_not_of(" \n") + 1).substr(0, 200);
    fail("has a malformed NPY header: " + std::string(shown));
  }
  std::optional<DType> dtype = dtype_of_descr(d->descr);
  if (!dtype)
    fail("has dtype '" + d->descr + "', which jx does not load (it reads " + known_descrs() + ")");
  if (*d->fortran_order)
    fail("is in Fortran order (fortran_order: True); jx loads C-order arrays only");
  ShapedArray aval{*d->shape, *dtype, false};
  std::uint64_t nbytes = itemsize(*dtype), found = b.size() - prefix - header_len;
  for (std::int64_t dim : aval.shape)
    if (__builtin_mul_overflow(nbytes, static_cast<std::uint64_t>(dim), &nbytes))
      nbytes = UINT64_MAX;
  if (nbytes != found)
    fail("holds " + std::to_string(found) + " bytes of data, but " + aval.str() + " needs " +
         std::to_string(nbytes));
  auto buffer = std::make_shared<Buffer>(nbytes, Buffer::Uninitialized{});
  if (nbytes) std::memcpy(buffer->data(), &b[prefix + header_len], nbytes);
  if (*dtype == bool_)  // jx's bools are 0 or 1
    for (std::uint64_t k = 0; k < nbytes; ++k) buffer->as<unsigned char>()[k] &= 1;
  return make_array(std::move(aval), std::move(buffer));
}

}  // namespace jx::npy
