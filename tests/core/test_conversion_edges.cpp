// Conversion edge cases against constants worked out by hand from the formats' definitions
// (bfloat16: 1 sign, 8 exponent and 7 mantissa bits, bias 127; float16: 1, 5 and 10, bias 15):
// NaN, infinities, signed zeros, subnormals, overflow, ties to even, float → int saturation,
// int → int wrapping and bool. Each conversion runs three ways: Array::astype and
// lax::convert_element_type eagerly, and lax::convert_element_type under jit (the CPU codegen).
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <jx/jx.hpp>

#include "codegen/cpu/cpu_isa.hpp"
#include "support/config_guard.hpp"
#include "support/float16_oracle.hpp"

namespace jx::testing {
namespace {

enum class Path { kAstype, kConvert, kJit };
constexpr Path kPaths[] = {Path::kAstype, Path::kConvert, Path::kJit};

const char* path_name(Path p) {
  return p == Path::kAstype ? "astype" : p == Path::kConvert ? "convert_element_type" : "jit";
}

Array convert_by(Path p, const Array& x, DType to) {
  switch (p) {
    case Path::kAstype:
      return x.astype(to);
    case Path::kConvert:
      return lax::convert_element_type(x, to);
    case Path::kJit:
      break;
  }
  return jit([to](const Array& a) { return lax::convert_element_type(a, to); })(x);
}

template <class T>
constexpr bool kIs16 = std::is_same_v<T, BFloat16> || std::is_same_v<T, Float16>;

template <class T>
std::string show(T v) {
  std::ostringstream os;
  if constexpr (kIs16<T>)
    os << "0x" << std::hex << std::setw(4) << std::setfill('0') << v.bits;
  else if constexpr (std::is_floating_point_v<T>)
    os << std::hexfloat << v;
  else
    os << +v;
  return os.str();
}

// NaN matches any quiet NaN; everything else matches bit for bit (so -0 is not +0).
template <class T>
bool matches(T got, T want) {
  if constexpr (kIs16<T>) {
    constexpr int kMant = std::is_same_v<T, BFloat16> ? 7 : 10;
    constexpr unsigned kExpMask = std::is_same_v<T, BFloat16> ? 0x7F80u : 0x7C00u;
    constexpr unsigned kMantMask = (1u << kMant) - 1, kQuiet = 1u << (kMant - 1);
    bool want_nan = (want.bits & kExpMask) == kExpMask && (want.bits & kMantMask) != 0;
    if (want_nan) return (got.bits & kExpMask) == kExpMask && (got.bits & kQuiet) != 0;
    return got.bits == want.bits;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(want)) return std::isnan(got);
    return got == want && std::signbit(got) == std::signbit(want);
  } else {
    return got == want;
  }
}

template <class To, class From>
void check_convert(const std::vector<From>& in, const std::vector<To>& want) {
  REQUIRE(in.size() == want.size());
  Array x = np::array(in);
  REQUIRE(x.dtype() == dtype_of<From>());
  for (Path p : kPaths) {
    INFO(dtype_name(dtype_of<From>())
         << " -> " << dtype_name(dtype_of<To>()) << " by " << path_name(p));
    Array y = convert_by(p, x, dtype_of<To>());
    REQUIRE(y.dtype() == dtype_of<To>());
    std::vector<To> got = y.template to_vector<To>();
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      const From source = in[i];
      const To g = got[i], w = want[i];
      INFO("element " << i << " (" << show(source) << "): got " << show(g) << ", want " << show(w));
      CHECK(matches(g, w));
    }
  }
}

template <class T>
std::vector<T> of_bits(std::initializer_list<std::uint16_t> bits) {
  std::vector<T> out;
  for (std::uint16_t b : bits) out.push_back(T::from_bits(b));
  return out;
}

// A value and the bits of its nearest 16-bit float.
struct To16 {
  double value;
  std::uint16_t bits;
};

// Each case from float64, and from float32 too where float32 holds the value exactly.
template <class T16>
void check_floats_to_16(const std::vector<To16>& cases) {
  std::vector<double> d;
  std::vector<float> f;
  std::vector<T16> want_d, want_f;
  for (const To16& c : cases) {
    d.push_back(c.value);
    want_d.push_back(T16::from_bits(c.bits));
    if (std::isnan(c.value) || static_cast<double>(static_cast<float>(c.value)) == c.value) {
      f.push_back(static_cast<float>(c.value));
      want_f.push_back(T16::from_bits(c.bits));
    }
  }
  check_convert(d, want_d);
  check_convert(f, want_f);
}

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST_CASE("conversion edges: float32 and float64 to bfloat16", "[convert][conversion_edges]") {
  check_floats_to_16<BFloat16>({
      {0.0, 0x0000},
      {-0.0, 0x8000},  // the sign of zero is kept
      {kInf, 0x7F80},
      {-kInf, 0xFF80},
      {kNaN, 0x7FC0},
      {1.0, 0x3F80},
      {-2.0, 0xC000},
      {0.1, 0x3DCD},  // 0.1 = 1.6 · 2^-4: 1.6 · 128 = 204.8 → 205 = 0x80 | 0x4D
      // Ties go to the even mantissa: 1 + 2^-8 is halfway between 0x3F80 and 0x3F81, 1 + 3 · 2^-8
      // halfway between 0x3F81 and 0x3F82; a hair either side of a tie decides it.
      {1 + 0x1p-8, 0x3F80},
      {1 + 3 * 0x1p-8, 0x3F82},
      {-(1 + 3 * 0x1p-8), 0xBF82},
      {1 + 0x1p-8 + 0x1p-20, 0x3F81},
      {1 + 0x1p-8 - 0x1p-20, 0x3F80},
      {1 + 5 * 0x1p-8, 0x3F82},
      // The largest finite bfloat16 is 0x7F7F = (2 - 2^-7) · 2^127; a value from 2^128 - 2^119
      // (the largest plus half an ulp: a tie, to the even pattern 0x7F80) overflows to inf.
      {0x1.FEp127, 0x7F7F},
      {0x1.FFp127, 0x7F80},
      {0x1.FEFFFEp127, 0x7F7F},                     // float32 0x7F7F7FFF: just below the tie
      {std::numeric_limits<float>::max(), 0x7F80},  // float32 0x7F7FFFFF
      {-0x1.FFp127, 0xFF80},
      {1e39, 0x7F80},  // past float32's range: float64 only
  });
}

TEST_CASE("conversion edges: float64 to bfloat16 rounds once, not through float32",
          "[convert][conversion_edges]") {
  // Each value rounds to float32 onto a bfloat16 tie, which would then go to the even pattern;
  // the exact value is past the tie, so the nearest bfloat16 is the odd one.
  check_convert<BFloat16>(
      std::vector<double>{1 + 0x1p-8 + 0x1p-40, -(1 + 0x1p-8 + 0x1p-40), 0x1.FFp127 - 0x1p80},
      of_bits<BFloat16>({0x3F81, 0xBF81, 0x7F7F}));
  // float16 likewise: 65519.999 rounds to 65520 in float32 (a tie that overflows) but is below
  // it, so its nearest float16 is the largest finite one.
  check_convert<Float16>(std::vector<double>{65519.999, 1 + 0x1p-11 + 0x1p-40},
                         of_bits<Float16>({0x7BFF, 0x3C01}));
}

TEST_CASE("conversion edges: bfloat16 subnormals, kept when denormals are not flushed",
          "[convert][conversion_edges]") {
  ConfigGuard guard;
  config().cpu_flush_denormals = false;
  // The least bfloat16 subnormal is 2^-133 (0x0001), the least normal 2^-126 (0x0080); in
  // between the quantum is 2^-133, and halfway values go to the even count of it.
  check_floats_to_16<BFloat16>({
      {0x1p-133, 0x0001},
      {-0x1p-133, 0x8001},
      {0x1p-126, 0x0080},
      {0x1.FCp-127, 0x007F},   // 127 · 2^-133, the largest subnormal
      {0x1p-134, 0x0000},      // half the least: a tie, to 0
      {-0x1p-134, 0x8000},     // to -0
      {0x1.8p-133, 0x0002},    // 1.5 quanta: a tie, to 2
      {0x1.4p-132, 0x0002},    // 2.5 quanta: a tie, to 2
      {0x1.Cp-132, 0x0004},    // 3.5 quanta: a tie, to 4
      {0x1p-149, 0x0000},      // float32's least subnormal
      {0x1.0002p-134, 0x0001}  // 2^-134 + 2^-149: just past the tie (float32 holds it)
  });
  // Back to float32 and float64 exactly.
  std::vector<BFloat16> sub = of_bits<BFloat16>({0x0001, 0x807F, 0x0080});
  check_convert(sub, std::vector<float>{0x1p-133f, -0x1.FCp-127f, 0x1p-126f});
  check_convert(sub, std::vector<double>{0x1p-133, -0x1.FCp-127, 0x1p-126});
}

// Long enough that the conversion runs in the kernel's vector loop, where a CPU with AVX-512 BF16
// rounds with vcvtneps2bf16. That instruction reads a subnormal as zero, so where denormals are
// kept a vector holding one takes the integer form: subnormals sit alone in a vector, several to
// one, and in the loop's remainder.
TEST_CASE("conversion edges: float32 to bfloat16 in vector loops, subnormal lanes included",
          "[convert][conversion_edges]") {
  std::mt19937 bits_of(7);
  std::vector<float> in;
  for (int i = 0; i < 4109; ++i) {
    std::uint32_t b = bits_of();
    if (i % 3 == 0) b = (b & 0xFFFF0000u) | 0x8000u;                          // a tie
    if (i == 1000 || (i >= 2048 && i < 2056) || i == 4108) b &= 0x807FFFFFu;  // subnormal
    in.push_back(std::bit_cast<float>(b));
  }
  for (std::uint32_t b : {0x7F7F8000u, 0x7F7F7FFFu, 0x7F800001u, 0x00000000u, 0x80000000u})
    in.push_back(std::bit_cast<float>(b));
  std::vector<BFloat16> want;
  for (float f : in) want.push_back(BFloat16::from_bits(nearest_bf16(f)));
  for (const char* isa : {"avx2", "native"}) {
    INFO("--cpu_isa=" << isa);
    ConfigGuard guard;
    config().cpu_isa = isa;
    config().cpu_flush_denormals = false;
    check_convert(in, want);
    // With denormals flushed (the default), vcvtneps2bf16 reads a subnormal input as zero, as
    // the mode asks; the integer form keeps it. Every other value rounds alike.
    config().cpu_flush_denormals = true;
    bool reads_zero = codegen::cpu::cpu_isa(isa).avx512_bf16;
    Array out = convert_by(Path::kJit, np::array(in), bfloat16);
    std::vector<BFloat16> got = out.to_vector<BFloat16>();
    std::size_t wrong = 0, subnormals = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
      std::uint32_t bits = std::bit_cast<std::uint32_t>(in[i]);
      bool subnormal = (bits & 0x7F800000u) == 0 && (bits & 0x007FFFFFu) != 0;
      BFloat16 zero = BFloat16::from_bits(static_cast<std::uint16_t>(bits >> 16 & 0x8000u));
      wrong += !matches(got[i], reads_zero && subnormal ? zero : want[i]);
      subnormals += subnormal;
    }
    CHECK(wrong == 0);
    CHECK(subnormals >= 10);
  }
}

// bfloat16 arithmetic computes in float32 and rounds as it stores. Products below float32's least
// normal are flushed to zero by default; kept, they round to bfloat16 subnormals.
TEST_CASE("conversion edges: bfloat16 products rounded to subnormals in vector loops",
          "[convert][conversion_edges]") {
  std::vector<BFloat16> in;
  for (int i = 0; i < 4099; ++i) {
    // (1 + m/128) · 2^e, e from -24 to 0: the product with 2^-120 is exact in float32.
    int m = i % 128, e = -(i % 25);
    in.push_back(BFloat16(static_cast<float>(std::ldexp(1 + m / 128.0, e) * (i % 2 ? -1 : 1))));
  }
  auto scale = [](const Array& x) { return x * 0x1p-120f; };
  for (const char* isa : {"avx2", "native"}) {
    for (bool flush : {true, false}) {
      INFO("--cpu_isa=" << isa << " --cpu_flush_denormals=" << flush);
      ConfigGuard guard;
      config().cpu_isa = isa;
      config().cpu_flush_denormals = flush;
      std::vector<BFloat16> got = jit(scale)(np::array(in)).to_vector<BFloat16>();
      REQUIRE(got.size() == in.size());
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < in.size(); ++i) {
        double exact = std::ldexp(static_cast<double>(static_cast<float>(in[i])), -120);
        bool flushed = flush && std::abs(exact) < 0x1p-126;
        std::uint16_t want = flushed ? (exact < 0 ? 0x8000 : 0x0000) : nearest_bf16(exact);
        wrong += got[i].bits != want;
      }
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("conversion edges: float32 and float64 to float16", "[convert][conversion_edges]") {
  check_floats_to_16<Float16>({
      {0.0, 0x0000},
      {-0.0, 0x8000},
      {kInf, 0x7C00},
      {-kInf, 0xFC00},
      {kNaN, 0x7E00},
      {1.0, 0x3C00},
      {-2.0, 0xC000},
      {0.1, 0x2E66},          // 0.1 = 1.6 · 2^-4: 1.6 · 1024 = 1638.4 → 1638 = 0x400 | 0x266
      {1 + 0x1p-11, 0x3C00},  // ties to even
      {1 + 3 * 0x1p-11, 0x3C02},
      {1 + 0x1p-11 + 0x1p-23, 0x3C01},
      // The largest float16 is 65504 (0x7BFF), its ulp 32: 65520 is the tie with inf.
      {65504.0, 0x7BFF},
      {65519.0, 0x7BFF},
      {65520.0, 0x7C00},
      {-65520.0, 0xFC00},
      {1e6, 0x7C00},
      // Subnormals: the least is 2^-24 (0x0001), the least normal 2^-14 (0x0400). float32
      // holds these as normal numbers, so denormal flushing does not reach them.
      {0x1p-24, 0x0001},
      {-0x1p-24, 0x8001},
      {0x1p-14, 0x0400},
      {0x1.FF8p-15, 0x03FF},  // 1023 · 2^-24
      {0x1p-25, 0x0000},      // a tie, to 0
      {0x1.8p-24, 0x0002},    // 1.5 quanta: a tie, to 2
      {0x1.8p-23, 0x0003},    // 3 quanta: exact
      {0x1p-26, 0x0000},
      {0x1.000002p-25, 0x0001},  // just past the tie
  });
}

TEST_CASE("conversion edges: float32 signaling NaN stays NaN in 16 bits",
          "[convert][conversion_edges]") {
  // 0x7F800001: its payload is below the bits bfloat16 keeps, so a plain truncation would make
  // it inf. The result must be a (quiet) NaN.
  const float snan = std::bit_cast<float>(0x7F800001u);
  const float neg_nan = std::bit_cast<float>(0xFFC00000u);
  check_convert(std::vector<float>{snan, neg_nan}, of_bits<BFloat16>({0x7FC0, 0xFFC0}));
  check_convert(std::vector<float>{snan, neg_nan}, of_bits<Float16>({0x7E00, 0xFE00}));
}

TEST_CASE("conversion edges: between bfloat16 and float16", "[convert][conversion_edges]") {
  // 65504 = 2^16 - 32 is nearer 2^16 (0x4780) than bfloat16's 0x477F (65280); 2^-24 is a
  // normal bfloat16 (0x3380); 2^-133 and 2^-126 are below float16's least subnormal tie (2^-25).
  check_convert(of_bits<Float16>({0x7BFF, 0x0001, 0xFC00, 0x3C00, 0x8000, 0x7E00}),
                of_bits<BFloat16>({0x4780, 0x3380, 0xFF80, 0x3F80, 0x8000, 0x7FC0}));
  // 0x47C3 = 1.5234375 · 2^16 = 99840 overflows float16; 0x3F81 = 1 + 2^-7 is exact in float16
  // (0x3C08); 0x3FFF = 1 + 127/128 likewise (0x3FF8).
  check_convert(of_bits<BFloat16>({0x47C3, 0x3F81, 0x3FFF, 0xC7C3, 0x0080, 0x7FC0}),
                of_bits<Float16>({0x7C00, 0x3C08, 0x3FF8, 0xFC00, 0x0000, 0x7E00}));
}

TEST_CASE("conversion edges: integers and bool to bfloat16 and float16",
          "[convert][conversion_edges]") {
  // 2^24 + 2^16 + 1 is past the bfloat16 tie 2^24 + 2^16 (float32 would round it onto the tie).
  check_convert(std::vector<std::int32_t>{16842753, -128, 0, 255, 2147483647},
                of_bits<BFloat16>({0x4B81, 0xC300, 0x0000, 0x437F, 0x4F00}));
  check_convert(std::vector<std::uint32_t>{0xFFFFFFFFu, 0x01010000u, 1},
                of_bits<BFloat16>({0x4F80, 0x4B80, 0x3F80}));
  check_convert(std::vector<std::uint16_t>{65535, 65504, 65519, 65520, 2049, 2051},
                of_bits<Float16>({0x7C00, 0x7BFF, 0x7BFF, 0x7C00, 0x6800, 0x6802}));
  check_convert(std::vector<std::int16_t>{-32768, 32767, -2049},
                of_bits<Float16>({0xF800, 0x7800, 0xE800}));
  check_convert(std::vector<std::int8_t>{-128, 127, -1},
                of_bits<Float16>({0xD800, 0x57F0, 0xBC00}));
  check_convert(std::vector<std::uint8_t>{255, 0, 129},
                of_bits<BFloat16>({0x437F, 0x0000, 0x4301}));
  check_convert(std::vector<bool>{true, false}, of_bits<BFloat16>({0x3F80, 0x0000}));
  check_convert(std::vector<bool>{true, false}, of_bits<Float16>({0x3C00, 0x0000}));
}

TEST_CASE("conversion edges: 64-bit integers round once to bfloat16",
          "[convert][conversion_edges]") {
  // 2^62 + 2^54 + 1 is just past the tie between 0x5E80 (2^62) and 0x5E81 (2^62 + 2^55); as a
  // double it is 2^62 + 2^54, the tie itself, which would round to the even 0x5E80.
  const std::int64_t past_tie = (std::int64_t{1} << 62) + (std::int64_t{1} << 54) + 1;
  check_convert(std::vector<std::int64_t>{past_tie, -past_tie, std::int64_t{1} << 62,
                                          std::numeric_limits<std::int64_t>::min(),
                                          std::numeric_limits<std::int64_t>::max()},
                of_bits<BFloat16>({0x5E81, 0xDE81, 0x5E80, 0xDF00, 0x5F00}));
  const std::uint64_t u_past_tie = (std::uint64_t{1} << 63) + (std::uint64_t{1} << 55) + 1;
  check_convert(std::vector<std::uint64_t>{u_past_tie, std::numeric_limits<std::uint64_t>::max(),
                                           (std::uint64_t{1} << 63) + (std::uint64_t{1} << 55)},
                of_bits<BFloat16>({0x5F01, 0x5F80, 0x5F00}));
  check_convert(std::vector<std::int64_t>{65519, -65520, 1 << 30, 2049},
                of_bits<Float16>({0x7BFF, 0xFC00, 0x7C00, 0x6800}));
  check_convert(std::vector<std::uint64_t>{std::numeric_limits<std::uint64_t>::max(), 3},
                of_bits<Float16>({0x7C00, 0x4200}));
}

TEST_CASE("conversion edges: bfloat16 and float16 to every integer dtype",
          "[convert][conversion_edges]") {
  // NaN → 0; the fraction is dropped (toward zero); out-of-range values saturate.
  // bfloat16: NaN, inf, -inf, -0.5, 2.75, -2.75, 300, -300, 0x5015 = 1.1640625 · 2^33 =
  // 9999220736, and its negation.
  std::vector<BFloat16> b = of_bits<BFloat16>(
      {0x7FC0, 0x7F80, 0xFF80, 0xBF00, 0x4030, 0xC030, 0x4396, 0xC396, 0x5015, 0xD015});
  using L8 = std::numeric_limits<std::int8_t>;
  using L16 = std::numeric_limits<std::int16_t>;
  using L32 = std::numeric_limits<std::int32_t>;
  using L64 = std::numeric_limits<std::int64_t>;
  check_convert(b,
                std::vector<std::int8_t>{0, L8::max(), L8::min(), 0, 2, -2, 127, -128, 127, -128});
  check_convert(b, std::vector<std::uint8_t>{0, 255, 0, 0, 2, 0, 255, 0, 255, 0});
  check_convert(b, std::vector<std::int16_t>{0, L16::max(), L16::min(), 0, 2, -2, 300, -300,
                                             L16::max(), L16::min()});
  check_convert(b, std::vector<std::uint16_t>{0, 65535, 0, 0, 2, 0, 300, 0, 65535, 0});
  check_convert(b, std::vector<std::int32_t>{0, L32::max(), L32::min(), 0, 2, -2, 300, -300,
                                             L32::max(), L32::min()});
  check_convert(b, std::vector<std::uint32_t>{0, 0xFFFFFFFFu, 0, 0, 2, 0, 300, 0, 0xFFFFFFFFu, 0});
  check_convert(b, std::vector<std::int64_t>{0, L64::max(), L64::min(), 0, 2, -2, 300, -300,
                                             9999220736, -9999220736});
  check_convert(b, std::vector<std::uint64_t>{0, std::numeric_limits<std::uint64_t>::max(), 0, 0, 2,
                                              0, 300, 0, 9999220736u, 0});
  check_convert(b, std::vector<bool>{true, true, true, true, true, true, true, true, true, true});
  check_convert(of_bits<BFloat16>({0x0000, 0x8000, 0x3F80}), std::vector<bool>{false, false, true});

  // float16: NaN, inf, -inf, -0.5, 2.75, -2.75, 300, -300, 65504, -65504.
  std::vector<Float16> h = of_bits<Float16>(
      {0x7E00, 0x7C00, 0xFC00, 0xB800, 0x4180, 0xC180, 0x5CB0, 0xDCB0, 0x7BFF, 0xFBFF});
  check_convert(h,
                std::vector<std::int8_t>{0, L8::max(), L8::min(), 0, 2, -2, 127, -128, 127, -128});
  check_convert(h, std::vector<std::uint8_t>{0, 255, 0, 0, 2, 0, 255, 0, 255, 0});
  check_convert(h, std::vector<std::int16_t>{0, L16::max(), L16::min(), 0, 2, -2, 300, -300,
                                             L16::max(), L16::min()});
  check_convert(h, std::vector<std::uint16_t>{0, 65535, 0, 0, 2, 0, 300, 0, 65504, 0});
  check_convert(
      h, std::vector<std::int32_t>{0, L32::max(), L32::min(), 0, 2, -2, 300, -300, 65504, -65504});
  check_convert(h, std::vector<std::uint32_t>{0, 0xFFFFFFFFu, 0, 0, 2, 0, 300, 0, 65504, 0});
  check_convert(
      h, std::vector<std::int64_t>{0, L64::max(), L64::min(), 0, 2, -2, 300, -300, 65504, -65504});
  check_convert(h, std::vector<std::uint64_t>{0, std::numeric_limits<std::uint64_t>::max(), 0, 0, 2,
                                              0, 300, 0, 65504, 0});
  check_convert(of_bits<Float16>({0x0000, 0x8000, 0x7E00, 0x0001}),
                std::vector<bool>{false, false, true, true});
}

TEST_CASE("conversion edges: integers to narrower integers wrap", "[convert][conversion_edges]") {
  // Two's complement: the low bits are kept. 0x123456789's low byte is 0x89 (137, or -119).
  const std::vector<std::int64_t> x{0x123456789,
                                    -1,
                                    std::numeric_limits<std::int64_t>::max(),
                                    std::numeric_limits<std::int64_t>::min(),
                                    300,
                                    -129};
  check_convert(x, std::vector<std::int8_t>{-119, -1, -1, 0, 44, 127});
  check_convert(x, std::vector<std::uint8_t>{137, 255, 255, 0, 44, 127});
  check_convert(x, std::vector<std::int16_t>{26505, -1, -1, 0, 300, -129});
  check_convert(x, std::vector<std::uint16_t>{26505, 65535, 65535, 0, 300, 65407});
  check_convert(x, std::vector<std::int32_t>{591751049, -1, -1, 0, 300, -129});
  check_convert(
      x, std::vector<std::uint32_t>{591751049, 0xFFFFFFFFu, 0xFFFFFFFFu, 0, 300, 4294967167u});
  check_convert(x, std::vector<std::uint64_t>{0x123456789, 0xFFFFFFFFFFFFFFFFu, 0x7FFFFFFFFFFFFFFFu,
                                              0x8000000000000000u, 300, 0xFFFFFFFFFFFFFF7Fu});
  const std::vector<std::uint64_t> u{0xFFFFFFFFFFFFFFFFu, 0x8000000000000000u, 0x80};
  check_convert(u, std::vector<std::int64_t>{-1, std::numeric_limits<std::int64_t>::min(), 128});
  check_convert(u, std::vector<std::int8_t>{-1, 0, -128});
  check_convert(u, std::vector<std::uint8_t>{255, 0, 128});
  // Widening: signed sources extend their sign, unsigned ones zeros.
  check_convert(std::vector<std::int8_t>{-56, 127}, std::vector<std::uint16_t>{65480, 127});
  check_convert(std::vector<std::int8_t>{-1}, std::vector<std::uint64_t>{0xFFFFFFFFFFFFFFFFu});
  check_convert(std::vector<std::uint8_t>{200, 255}, std::vector<std::int16_t>{200, 255});
  check_convert(std::vector<std::uint8_t>{200, 255}, std::vector<std::int8_t>{-56, -1});
  check_convert(std::vector<std::uint16_t>{65535}, std::vector<std::int64_t>{65535});
  check_convert(std::vector<std::int16_t>{-2}, std::vector<std::uint32_t>{0xFFFFFFFEu});
}

TEST_CASE("conversion edges: bool to and from numbers", "[convert][conversion_edges]") {
  const std::vector<bool> tf{true, false};
  check_convert(tf, std::vector<std::int8_t>{1, 0});
  check_convert(tf, std::vector<std::uint8_t>{1, 0});
  check_convert(tf, std::vector<std::int16_t>{1, 0});
  check_convert(tf, std::vector<std::uint64_t>{1, 0});
  check_convert(tf, std::vector<std::int64_t>{1, 0});
  check_convert(tf, std::vector<float>{1, 0});
  check_convert(tf, std::vector<double>{1, 0});
  // x != 0: any nonzero integer (the sign bit alone included) is true.
  check_convert(std::vector<std::int8_t>{0, -128, 1}, std::vector<bool>{false, true, true});
  check_convert(std::vector<std::uint16_t>{0, 0x8000, 256}, std::vector<bool>{false, true, true});
  check_convert(std::vector<std::uint64_t>{0, 0x8000000000000000u}, std::vector<bool>{false, true});
  check_convert(std::vector<std::int16_t>{0, 256}, std::vector<bool>{false, true});
}

TEST_CASE("conversion edges: float16 subnormals read back exactly", "[convert][conversion_edges]") {
  // 0x0001 is 2^-24 and 0x03FF is 1023 · 2^-24: normal float32 and float64 numbers.
  std::vector<Float16> h = of_bits<Float16>({0x0001, 0x83FF, 0x7BFF, 0x0400});
  check_convert(h, std::vector<float>{0x1p-24f, -0x1.FF8p-15f, 65504.0f, 0x1p-14f});
  check_convert(h, std::vector<double>{0x1p-24, -0x1.FF8p-15, 65504.0, 0x1p-14});
}

}  // namespace jx::testing
