// .npz checkpoints: round trips of every pytree kind and dtype, the exact bytes of a saved file,
// the files real NumPy wrote (tests/fixtures) and NumPy reading ours, deflated entries, atomic
// replacement, and every error path.
#include <unistd.h>
#include <zlib.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>
#include <vector>

#include "core/array_impl.hpp"
#include "jx/jx.hpp"
#include "jx/npz.hpp"
#include "support/error_of.hpp"
#include "support/fixtures.hpp"
#include "support/scratch_dir.hpp"

namespace jx_npz_test {

struct Mlp {
  jx::Array w1, b1, w2;
};
JX_PYTREE(Mlp, w1, b1, w2)

struct Model {
  std::vector<Mlp> layers;
  std::map<std::string, jx::Array> stats;
  float scale = 0;
};
JX_PYTREE(Model, layers, stats, scale)

// The entries of tests/fixtures/numpy_savez.npz, by name: one of every dtype.
struct NumpySavez {
  jx::Array f32;
  std::int64_t i64_0d = 0;
  jx::Array flags, special, i32, u32, empty, i8, u8, i16, u16, u64, f16, bf16;
};
JX_PYTREE(NumpySavez, f32, i64_0d, flags, special, i32, u32, empty, i8, u8, i16, u16, u64, f16,
          bf16)

}  // namespace jx_npz_test

namespace jx {
namespace {

namespace fs = std::filesystem;
using jx::testing::error_of;
using jx::testing::exact_error_of;
using jx_npz_test::Mlp;
using jx_npz_test::Model;
using jx_npz_test::NumpySavez;

using Scratch = testing::ScratchDir;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// CRC-32 (IEEE, reflected, polynomial 0xEDB88320) bit by bit: an oracle apart from zlib.
std::uint32_t crc32_bitwise(const std::string& bytes) {
  std::uint32_t crc = 0xffffffff;
  for (unsigned char c : bytes) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = crc & 1 ? (crc >> 1) ^ 0xedb88320 : crc >> 1;
  }
  return ~crc;
}

std::string le16(unsigned v) { return {char(v & 0xff), char(v >> 8 & 0xff)}; }
std::string le32(std::uint32_t v) { return le16(v & 0xffff) + le16(v >> 16); }

std::string raw_deflate(const std::string& in) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A zip archive as Python's zipfile writes one without zip64: version 2.0, no extras, the
// 1980-01-01 timestamp; method 8 entries are raw-deflated with zlib.
struct ZipEntry {
  std::string name, data;
  int method = 0;
};
std::string make_zip(const std::vector<ZipEntry>& entries) {
  std::string out, central;
  for (const auto& e : entries) {
    std::string stored = e.method == 8 ? raw_deflate(e.data) : e.data;
    std::string fields = le16(20) + le16(0) + le16(e.method) + le16(0) + le16(0x21) +
                         le32(crc32_bitwise(e.data)) + le32(stored.size()) + le32(e.data.size()) +
                         le16(e.name.size()) + le16(0);
    central += "PK\1\2" + le16(0x0314) + fields + le16(0) + le16(0) + le16(0) + le32(0) +
               le32(out.size()) + e.name;
    out += "PK\3\4" + fields + e.name + stored;
  }
  auto n = static_cast<unsigned>(entries.size());
  return out + central + "PK\5\6" + le32(0) + le16(n) + le16(n) + le32(central.size()) +
         le32(out.size()) + le16(0);
}

// An .npy file with the given header dict, padded as NumPy pads it (version 1.0 or 2.0/3.0).
std::string npy_file(const std::string& dict, const std::string& data, int major = 1) {
  std::size_t prefix = major == 1 ? 10 : 12;
  std::string header = dict;
  header.append(64 - (prefix + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string len = major == 1 ? le16(header.size()) : le32(header.size());
  return std::string("\x93NUMPY", 6) + char(major) + '\0' + len + header + data;
}

// Same aval and the same bytes: NaN payloads and signed zeros included.
bool bit_identical(const Array& a, const Array& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const Buffer& x = concrete_buffer(a, "test");
  const Buffer& y = concrete_buffer(b, "test");
  return x.nbytes() == y.nbytes() && std::memcmp(x.data(), y.data(), x.nbytes()) == 0;
}

template <class T>
bool same_leaves(const T& a, const T& b) {
  auto x = tree::leaves(a), y = tree::leaves(b);
  if (x.size() != y.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!bit_identical(x[i], y[i])) return false;
  return true;
}

// x with every leaf zeroed: a `like` whose values must not leak into what load_npz returns.
template <class T>
void zero_leaves(T& x) {
  if constexpr (std::is_same_v<T, Array>)
    x = np::zeros(x.shape(), x.dtype());
  else if constexpr (std::is_arithmetic_v<T>)
    x = 0;
  else if constexpr (tree::is_vector<T>::value || tree::is_std_array<T>::value)
    for (auto& e : x) zero_leaves(e);
  else if constexpr (tree::is_string_map<T>::value)
    for (auto& [k, v] : x) zero_leaves(v);
  else if constexpr (tree::is_tuple_like<T>::value)
    std::apply([](auto&... e) { (zero_leaves(e), ...); }, x);
  else
    std::apply([](auto&... e) { (zero_leaves(e), ...); }, jx_pytree_fields(x));
}

std::vector<std::string> names_of(const std::map<std::string, Array>& entries) {
  std::vector<std::string> out;
  for (const auto& [k, v] : entries) out.push_back(k);
  return out;
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
const float kDenormal = std::numeric_limits<float>::denorm_min();

// Arrays of the narrow dtypes, their values at the ends of each range.
Array bf16_bits(const std::vector<std::uint16_t>& bits, const Shape& shape) {
  std::vector<BFloat16> v;
  for (std::uint16_t b : bits) v.push_back(BFloat16::from_bits(b));
  return np::array(v, shape);
}
Array f16_bits(const std::vector<std::uint16_t>& bits, const Shape& shape) {
  std::vector<Float16> v;
  for (std::uint16_t b : bits) v.push_back(Float16::from_bits(b));
  return np::array(v, shape);
}
// The stored bits of a 16-bit float array, read from its buffer.
std::vector<std::uint16_t> bits_of(const Array& x) {
  REQUIRE(itemsize(x.dtype()) == 2);
  const Buffer& b = concrete_buffer(x, "test");
  std::vector<std::uint16_t> out(b.nbytes() / 2);
  std::memcpy(out.data(), b.data(), b.nbytes());
  return out;
}

TEST_CASE("npz: a JX_PYTREE struct round trips bit for bit", "[npz]") {
  Scratch tmp;
  Mlp m{np::array(std::vector<float>{1.5f, -0.0f, kNaN, kInf, -kInf, kDenormal}, {2, 3}),
        np::array({0.25f, -7.0f, 3e38f}), np::array(std::vector<float>{}, {3, 0})};
  save_npz(tmp / "mlp.npz", m);
  auto entries = load_npz_entries(tmp / "mlp.npz");
  CHECK(names_of(entries) == std::vector<std::string>{"b1", "w1", "w2"});

  Mlp like{np::zeros({2, 3}), np::zeros({3}), np::zeros({3, 0})};
  CHECK(same_leaves(load_npz(tmp / "mlp.npz", like), m));
  CHECK(same_leaves(load_npz<Mlp>(tmp / "mlp.npz"), m));
  CHECK(tmp.files() == std::vector<std::string>{"mlp.npz"});  // no temporary left behind
}

TEST_CASE("npz: nested vectors, maps, tuples and every dtype, by path", "[npz]") {
  Scratch tmp;
  Array b = np::array({true, false, true});
  Array i32 = np::array({std::numeric_limits<int>::min(), -1, std::numeric_limits<int>::max()});
  Array i64 = np::array(std::vector<std::int64_t>{-(std::int64_t{1} << 62), 5}, {2, 1});
  Array u32 = np::array(std::vector<std::uint32_t>{0xffffffffu, 0, 17}, {3});
  Array f64 = np::array(std::vector<double>{-0.0, 1e-310, 2.5, 1e308}, {2, 2});
  Array f64_0d = np::array(std::numeric_limits<double>::quiet_NaN());
  Array empty = np::zeros({0}, int64);
  Array i8 = np::array(std::vector<std::int8_t>{-128, -1, 127}, {3});
  Array u8 = np::array(std::vector<std::uint8_t>{255, 0, 128, 7}, {2, 2});
  Array i16 = np::array(std::vector<std::int16_t>{-32768, 32767}, {2});
  Array u16 = np::array(std::vector<std::uint16_t>{65535, 32768, 1}, {3, 1});
  Array u64 = np::array(std::vector<std::uint64_t>{~std::uint64_t{0}, std::uint64_t{1} << 63, 3});
  // 1.0, -inf, NaN with a payload, the smallest denormal; -0.0, 65504, 2^-24, 1/3 rounded
  Array bf16 = bf16_bits({0x3f80, 0xff80, 0x7fc1, 0x0001}, {2, 2});
  Array f16 = f16_bits({0x8000, 0x7bff, 0x0001, 0x3555}, {4});
  Model model{{Mlp{np::ones({2, 2}), np::zeros({2}), np::full({2, 1}, 3.0f)},
               Mlp{np::ones({1, 1}), np::ones({1}), np::ones({1, 1})}},
              {{"mean", np::array({0.5, 0.25})}, {"count", np::array(9)}},
              2.5f};
  auto tree = std::make_tuple(
      std::vector<std::map<std::string, Array>>{
          {{"b", b}, {"i32", i32}},
          {{"u32", u32}, {"i8", i8}, {"u8", u8}, {"i16", i16}, {"u16", u16}, {"u64", u64},
           {"bf16", bf16}, {"f16", f16}}},
      std::make_pair(f64_0d, std::array<Array, 3>{i64, f64, empty}), model);
  save_npz(tmp / "t.npz", tree);

  auto entries = load_npz_entries(tmp / "t.npz");
  CHECK(names_of(entries) ==
        std::vector<std::string>{"0/0/b", "0/0/i32", "0/1/bf16", "0/1/f16", "0/1/i16", "0/1/i8",
                                 "0/1/u16", "0/1/u32", "0/1/u64", "0/1/u8", "1/0", "1/1/0",
                                 "1/1/1", "1/1/2",
                                 "2/layers/0/b1", "2/layers/0/w1", "2/layers/0/w2", "2/layers/1/b1",
                                 "2/layers/1/w1", "2/layers/1/w2", "2/scale", "2/stats/count",
                                 "2/stats/mean"});
  CHECK(bit_identical(entries.at("1/1/0"), i64));
  CHECK(entries.at("0/1/bf16").aval() == ShapedArray{{2, 2}, bfloat16, false});
  CHECK(bits_of(entries.at("0/1/bf16")) ==
        std::vector<std::uint16_t>{0x3f80, 0xff80, 0x7fc1, 0x0001});
  CHECK(bits_of(entries.at("0/1/f16")) ==
        std::vector<std::uint16_t>{0x8000, 0x7bff, 0x0001, 0x3555});
  CHECK(entries.at("0/1/u64").to_vector<std::uint64_t>() ==
        std::vector<std::uint64_t>{~std::uint64_t{0}, std::uint64_t{1} << 63, 3});
  CHECK(entries.at("0/1/i8").to_vector<std::int8_t>() == std::vector<std::int8_t>{-128, -1, 127});
  for (const auto& [name, x] : entries) {
    INFO("entry " << name);
    CHECK(!x.weak_type());
  }
  CHECK(entries.at("2/scale").aval() == ShapedArray{{}, float32, false});

  // With `like` (zeros of the same avals) and without (the names give vector sizes, map keys).
  auto like = tree;
  zero_leaves(like);
  REQUIRE(!same_leaves(like, tree));
  auto with_like = load_npz(tmp / "t.npz", like);
  CHECK(same_leaves(with_like, tree));
  CHECK(std::get<2>(with_like).scale == 2.5f);
  auto without = load_npz<decltype(tree)>(tmp / "t.npz");
  CHECK(same_leaves(without, tree));
  CHECK(std::get<0>(without).size() == 2);
  CHECK(std::get<2>(without).stats.size() == 2);
}

TEST_CASE("npz: load_npz<T>(path) rebuilds vectors and maps from the entry names", "[npz]") {
  Scratch tmp;
  std::vector<Array> xs;
  for (int i = 0; i < 12; ++i) xs.push_back(np::full({i}, float(i)));  // "10" sorts before "2"
  save_npz(tmp / "v.npz", xs);
  auto back = load_npz<std::vector<Array>>(tmp / "v.npz");
  REQUIRE(back.size() == 12);
  CHECK(same_leaves(back, xs));

  std::map<std::string, std::vector<Array>> groups{{"a", {np::ones({2})}}, {"z", {}}};
  save_npz(tmp / "m.npz", groups);
  auto g = load_npz<std::map<std::string, std::vector<Array>>>(tmp / "m.npz");
  CHECK(g.size() == 1);  // an empty vector leaves no entry: its key cannot come back
  CHECK(same_leaves(g.at("a"), groups.at("a")));

  save_npz(tmp / "leaf.npz", np::array({1, 2, 3}));
  CHECK(names_of(load_npz_entries(tmp / "leaf.npz")) == std::vector<std::string>{"arr_0"});
  CHECK(load_npz<Array>(tmp / "leaf.npz").to_vector<int>() == std::vector<int>{1, 2, 3});
  CHECK(load_npz<std::map<std::string, Array>>(tmp / "leaf.npz").count("arr_0") == 1);

  save_npz(tmp / "none.npz", std::vector<Array>{});
  CHECK(load_npz<std::vector<Array>>(tmp / "none.npz").empty());
  CHECK(read_bytes(tmp / "none.npz") == std::string("PK\5\6", 4) + std::string(18, '\0'));

  std::map<std::string, Array> gaps{{"0", np::ones({1})}, {"1", np::ones({1})}, {"3", 1.0f}};
  save_npz(tmp / "gaps.npz", gaps);
  CHECK(error_of<Error>([&] { load_npz<std::vector<Array>>(tmp / "gaps.npz"); }) ==
        "checkpoint " + tmp / "gaps.npz" +
            ": the entries at the top level must be numbered 0..n-1 to load as a std::vector; "
            "found 0, 1, 3");
  save_npz(tmp / "named.npz", std::map<std::string, Mlp>{{"enc", Mlp{1.0f, 2.0f, 3.0f}}});
  CHECK(error_of<Error>([&] {
          load_npz<std::map<std::string, std::vector<Array>>>(tmp / "named.npz");
        }) == "checkpoint " + tmp / "named.npz" +
                  ": the entries under 'enc' must be numbered 0..n-1 to load as a std::vector; "
                  "found b1, w1, w2");
  CHECK(error_of<Error>([&] {
          save_npz(tmp / "bad.npz", std::map<std::string, Array>{{"a/b", 1.0f}});
        }) ==
        "npz: map key 'a/b' cannot name a checkpoint entry (keys must be non-empty, "
        "without '/')");
}

TEST_CASE("npz: the bytes of a saved file follow the zip and NPY layouts", "[npz]") {
  Scratch tmp;
  save_npz(tmp / "x.npz", np::array({1.5f, -2.0f, 3.0f}));
  // NPY v1.0: magic, version, header length 118; the dict, 21 - len("3") spaces of room for
  // the first axis, spaces up to 127 bytes and '\n'; then 1.5f, -2.0f, 3.0f little-endian.
  std::string npy = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  npy.resize(127, ' ');
  npy += '\n';
  npy += std::string("\x00\x00\xc0\x3f\x00\x00\x00\xc0\x00\x00\x40\x40", 12);
  REQUIRE(npy.size() == 140);
  std::string crc = le32(crc32_bitwise(npy));
  // Local header: signature, version 2.0, flags 0, stored, time 00:00, date 1980-01-01, CRC,
  // sizes 140 and 140, name length 9, no extra field.
  std::string local = std::string("PK\3\4\x14\x00\x00\x00\x00\x00\x00\x00\x21\x00", 14) + crc +
                      std::string("\x8c\x00\x00\x00\x8c\x00\x00\x00\x09\x00\x00\x00", 12) +
                      "arr_0.npy";
  // Central directory: made by Unix 2.0, the same fields, no comment, disk 0, internal 0,
  // external: mode 0644 << 16, local header at offset 0.
  std::string central = std::string("PK\1\2\x14\x03\x14\x00\x00\x00\x00\x00\x00\x00\x21\x00", 16) +
                        crc +
                        std::string(
                            "\x8c\x00\x00\x00\x8c\x00\x00\x00\x09\x00\x00\x00\x00\x00"
                            "\x00\x00\x00\x00\x00\x00\xa4\x01\x00\x00\x00\x00",
                            26) +
                        "arr_0.npy";
  // End record: disks 0, 1 entry (twice), directory of 55 bytes at offset 30 + 9 + 140 = 179.
  std::string end = std::string(
      "PK\5\6\x00\x00\x00\x00\x01\x00\x01\x00\x37\x00\x00\x00\xb3\x00\x00\x00\x00\x00", 22);
  CHECK(read_bytes(tmp / "x.npz") == local + npy + central + end);
}

// The checked-in archives that real NumPy wrote (tests/fixtures/make_npz_fixtures.py). The
// values below are that script's, written out again here: the oracle, apart from the reader.
std::string fixture(const std::string& name) { return testing::fixture_path(name); }

// The entries of a zip archive in file order, from the local headers alone: the name, the
// compression method, and the stored bytes (the local header's compressed size; Python 3.11.2's
// zipfile and jx both write the real sizes there).
struct LocalEntry {
  std::size_t offset;
  std::string name;
  int method;
  std::string data;
};
std::vector<LocalEntry> local_entries(const std::string& zip) {
  auto u16 = [&](std::size_t at) {
    return unsigned(std::uint8_t(zip[at])) | unsigned(std::uint8_t(zip[at + 1])) << 8;
  };
  auto u32 = [&](std::size_t at) {
    return std::uint32_t(u16(at)) | std::uint32_t(u16(at + 2)) << 16;
  };
  std::vector<LocalEntry> out;
  std::size_t at = 0;
  while (zip.compare(at, 4, "PK\3\4") == 0) {
    std::size_t name_len = u16(at + 26), extra_len = u16(at + 28), size = u32(at + 18);
    std::size_t data = at + 30 + name_len + extra_len;
    out.push_back({at, zip.substr(at + 30, name_len), int(u16(at + 8)), zip.substr(data, size)});
    at = data + size;
  }
  return out;
}

// What np.savez(path, f32=..., i64_0d=..., ...) stored, as arrays built here.
std::map<std::string, Array> numpy_savez_expected() {
  const double inf = std::numeric_limits<double>::infinity();
  return {
      {"f32", np::array(std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f}, {2, 3})},
      {"i64_0d", np::array(std::vector<std::int64_t>{-1234567890123}, {})},
      {"flags", np::array({true, false, true, true})},
      {"special",
       np::array(std::vector<double>{std::numeric_limits<double>::quiet_NaN(), inf, -inf, -0.0,
                                     std::numeric_limits<double>::denorm_min(), 1e308},
                 {3, 2})},
      {"i32", np::array({std::numeric_limits<int>::min(), -1, 0, std::numeric_limits<int>::max()})},
      {"u32", np::array(std::vector<std::uint32_t>{0, 1, 0xffffffffu}, {3})},
      {"empty", np::array(std::vector<float>{}, {0, 3})},
      {"i8", np::array(std::vector<std::int8_t>{-128, -1, 0, 127}, {4})},
      {"u8", np::array(std::vector<std::uint8_t>{0, 1, 128, 255}, {2, 2})},
      {"i16", np::array(std::vector<std::int16_t>{-32768, -1, 32767}, {3})},
      {"u16", np::array(std::vector<std::uint16_t>{0, 32768, 65535}, {3})},
      {"u64",
       np::array(std::vector<std::uint64_t>{0, (std::uint64_t{1} << 63) + 1, ~std::uint64_t{0}},
                 {3})},
      // -0.0, 65504 (the largest), 2^-14 (the smallest normal), 2^-24 (the smallest denormal),
      // inf, NumPy's NaN, 1/3 rounded
      {"f16", f16_bits({0x8000, 0x7bff, 0x0400, 0x0001, 0x7c00, 0x7e00, 0x3555}, {7})},
      // 1.0, -3.140625, -inf, the smallest denormal, NaN, -0.0
      {"bf16", bf16_bits({0x3f80, 0xc049, 0xff80, 0x0001, 0x7fc0, 0x8000}, {6})},
  };
}

TEST_CASE("npz: reads the archive np.savez writes", "[npz]") {
  std::string path = fixture("numpy_savez.npz");
  auto entries = load_npz_entries(path);
  REQUIRE(names_of(entries) ==
          std::vector<std::string>{"bf16", "empty", "f16", "f32", "flags", "i16", "i32", "i64_0d",
                                   "i8", "special", "u16", "u32", "u64", "u8"});
  CHECK(entries.at("f32").aval().str() == "f32[2,3]");
  CHECK(entries.at("i64_0d").aval().str() == "i64[]");
  CHECK(entries.at("flags").aval().str() == "bool[4]");
  CHECK(entries.at("special").aval().str() == "f64[3,2]");
  CHECK(entries.at("i32").aval().str() == "i32[4]");
  CHECK(entries.at("u32").aval().str() == "u32[3]");
  CHECK(entries.at("empty").aval().str() == "f32[0,3]");
  CHECK(entries.at("i8").aval().str() == "i8[4]");
  CHECK(entries.at("u8").aval().str() == "u8[2,2]");
  CHECK(entries.at("i16").aval().str() == "i16[3]");
  CHECK(entries.at("u16").aval().str() == "u16[3]");
  CHECK(entries.at("u64").aval().str() == "u64[3]");
  CHECK(entries.at("f16").aval().str() == "f16[7]");
  CHECK(entries.at("bf16").aval().str() == "bf16[6]");  // NumPy's '|V2'
  CHECK(entries.at("f32").to_vector<float>() == std::vector<float>{-1, -0.5, 0, 0.5, 1, 1.5});
  CHECK(entries.at("i64_0d").item<std::int64_t>() == -1234567890123);
  CHECK(entries.at("flags").to_vector<bool>() == std::vector<bool>{true, false, true, true});
  CHECK(entries.at("i32").to_vector<int>() == std::vector<int>{-2147483647 - 1, -1, 0, 2147483647});
  CHECK(entries.at("u32").to_vector<std::uint32_t>() ==
        std::vector<std::uint32_t>{0, 1, 4294967295u});
  CHECK(entries.at("empty").to_vector<float>().empty());
  CHECK(entries.at("i8").to_vector<std::int8_t>() == std::vector<std::int8_t>{-128, -1, 0, 127});
  CHECK(entries.at("u8").to_vector<std::uint8_t>() == std::vector<std::uint8_t>{0, 1, 128, 255});
  CHECK(entries.at("i16").to_vector<std::int16_t>() ==
        std::vector<std::int16_t>{-32768, -1, 32767});
  CHECK(entries.at("u16").to_vector<std::uint16_t>() ==
        std::vector<std::uint16_t>{0, 32768, 65535});
  CHECK(entries.at("u64").to_vector<std::uint64_t>() ==
        std::vector<std::uint64_t>{0, 9223372036854775809u, 18446744073709551615u});
  std::vector<float> f16 = entries.at("f16").to_vector<float>();
  REQUIRE(f16.size() == 7);
  CHECK(std::signbit(f16[0]));
  CHECK(std::vector<float>(f16.begin(), f16.begin() + 5) ==
        std::vector<float>{-0.0f, 65504.0f, std::ldexp(1.0f, -14), std::ldexp(1.0f, -24), kInf});
  CHECK(std::isnan(f16[5]));
  CHECK(f16[6] == 0.333251953125f);
  CHECK(bits_of(entries.at("f16")) ==
        std::vector<std::uint16_t>{0x8000, 0x7bff, 0x0400, 0x0001, 0x7c00, 0x7e00, 0x3555});
  std::vector<float> bf16 = entries.at("bf16").to_vector<float>();
  REQUIRE(bf16.size() == 6);
  CHECK(bf16[0] == 1.0f);
  CHECK(bf16[1] == -3.140625f);
  CHECK(bf16[2] == -kInf);
  CHECK(bf16[3] == std::ldexp(1.0f, -133));
  CHECK(std::isnan(bf16[4]));
  CHECK((bf16[5] == 0 && std::signbit(bf16[5])));
  // Bit patterns: NumPy's NaN is the quiet NaN 0x7ff8..., -0.0 keeps its sign, 5e-324 is the
  // smallest denormal.
  std::vector<std::uint64_t> bits(6);
  std::vector<double> special = entries.at("special").to_vector<double>();
  REQUIRE(special.size() == 6);
  std::memcpy(bits.data(), special.data(), 48);
  CHECK(bits == std::vector<std::uint64_t>{0x7ff8000000000000, 0x7ff0000000000000,
                                           0xfff0000000000000, 0x8000000000000000, 1,
                                           0x7fe1ccf385ebc8a0});  // 1e308

  std::map<std::string, Array> expected = numpy_savez_expected();
  for (const auto& [name, want] : expected) {
    INFO("entry " << name);
    CHECK(bit_identical(entries.at(name), want));
  }
  // With `like` (zeros, one scalar leaf) and as a struct whose fields name the entries.
  auto like = expected;
  zero_leaves(like);
  CHECK(same_leaves(load_npz(path, like), expected));
  auto scalar = load_npz(path, std::map<std::string, std::int64_t>{{"i64_0d", 0}});
  CHECK(scalar.at("i64_0d") == -1234567890123);
  auto s = load_npz<NumpySavez>(path);
  CHECK(s.i64_0d == -1234567890123);
  CHECK(bit_identical(s.f32, expected.at("f32")));
  CHECK(bit_identical(s.flags, expected.at("flags")));
  CHECK(bit_identical(s.special, expected.at("special")));
  CHECK(bit_identical(s.i32, expected.at("i32")));
  CHECK(bit_identical(s.u32, expected.at("u32")));
  CHECK(bit_identical(s.empty, expected.at("empty")));
  for (auto [got, name] : {std::pair{s.i8, "i8"}, {s.u8, "u8"}, {s.i16, "i16"}, {s.u16, "u16"},
                           {s.u64, "u64"}, {s.f16, "f16"}, {s.bf16, "bf16"}}) {
    INFO("field " << name);
    CHECK(bit_identical(got, expected.at(name)));
  }
}

TEST_CASE("npz: our .npy entries are NumPy's, byte for byte", "[npz]") {
  Scratch tmp;
  std::string numpy = read_bytes(fixture("numpy_savez.npz"));
  save_npz(tmp / "jx.npz", numpy_savez_expected());
  std::map<std::string, std::string> theirs, ours;
  for (const auto& e : local_entries(numpy)) theirs[e.name] = e.data;
  for (const auto& e : local_entries(read_bytes(tmp / "jx.npz"))) ours[e.name] = e.data;
  REQUIRE(theirs.size() == 14);
  for (auto [name, data] : theirs) {
    INFO("entry " << name);
    // NumPy spells its 2-byte void '|V2'; jx writes bfloat16 as ml_dtypes does, '<V2'.
    if (name == "bf16.npy") {
      REQUIRE(data.find("'descr': '|V2'") != std::string::npos);
      data.replace(data.find("'|V2'"), 5, "'<V2'");
    }
    CHECK(ours.count(name) == 1);
    CHECK(ours[name] == data);
  }
  CHECK(ours.size() == theirs.size());

  // Python 3.11.2 (which wrote the fixture) puts the real sizes and version 2.0 in the local
  // headers, then a zip64 extra field; newer ones (3.11.4+, 3.12) put 0xffffffff there and
  // version 4.5, the sizes only in the extra field. Read that as well.
  std::string newer = numpy;
  for (const auto& e : local_entries(numpy))
    newer.replace(e.offset + 4, 2, le16(45)).replace(e.offset + 18, 8, std::string(8, '\xff'));
  REQUIRE(newer != numpy);
  write_bytes(tmp / "newer.npz", newer);
  auto entries = load_npz_entries(tmp / "newer.npz");
  for (const auto& [name, want] : numpy_savez_expected()) {
    INFO("entry " << name);
    CHECK(bit_identical(entries.at(name), want));
  }
}

TEST_CASE("npz: reads the archive np.savez_compressed writes", "[npz]") {
  std::string path = fixture("numpy_savez_compressed.npz");
  std::vector<LocalEntry> zip = local_entries(read_bytes(path));
  REQUIRE(zip.size() == 3);
  for (const auto& e : zip) CHECK(e.method == 8);  // deflated
  CHECK(zip[0].name == "ramp.npy");
  CHECK(zip[0].data.size() < 8000 / 10);  // 8000 bytes of data: deflate really shrank them

  auto entries = load_npz_entries(path);
  REQUIRE(names_of(entries) == std::vector<std::string>{"flag", "half", "ramp"});
  CHECK(entries.at("ramp").aval().str() == "i32[20,100]");
  CHECK(entries.at("half").aval().str() == "f64[3]");
  CHECK(entries.at("flag").aval().str() == "bool[]");
  std::vector<int> ramp(2000);
  for (int i = 0; i < 2000; ++i) ramp[i] = i % 7;
  std::vector<int> got = entries.at("ramp").to_vector<int>();
  REQUIRE(got.size() == ramp.size());
  auto diff = std::mismatch(got.begin(), got.end(), ramp.begin());
  CHECK(diff.first - got.begin() == 2000);  // the index of the first wrong element, if any
  CHECK(entries.at("half").to_vector<double>() == std::vector<double>{0.5, -0.25, 1e-300});
  CHECK(entries.at("flag").item<bool>() == true);

  auto back = load_npz(path, std::map<std::string, Array>{{"ramp", np::zeros({20, 100}, int32)},
                                                          {"half", np::zeros({3}, float64)}});
  CHECK(bit_identical(back.at("ramp"), entries.at("ramp")));
  CHECK(load_npz(path, std::map<std::string, bool>{{"flag", false}}).at("flag") == true);
}

TEST_CASE("npz: reads the archive np.savez(path, x, y) writes: arr_0, arr_1", "[npz]") {
  std::string path = fixture("numpy_savez_positional.npz");
  auto entries = load_npz_entries(path);
  REQUIRE(names_of(entries) == std::vector<std::string>{"arr_0", "arr_1"});
  CHECK(entries.at("arr_0").aval().str() == "f32[3]");
  CHECK(entries.at("arr_0").to_vector<float>() == std::vector<float>{1.5f, -2.0f, 3.0f});
  CHECK(entries.at("arr_1").aval().str() == "i32[1,2]");
  CHECK(entries.at("arr_1").to_vector<int>() == std::vector<int>{7, 8});
  // A tree that is one leaf is "arr_0", as for np.savez(path, x).
  CHECK(load_npz<Array>(path).to_vector<float>() == std::vector<float>{1.5f, -2.0f, 3.0f});
  auto back = load_npz(path, std::map<std::string, Array>{{"arr_1", np::zeros({1, 2}, int32)}});
  CHECK(back.at("arr_1").to_vector<int>() == std::vector<int>{7, 8});
}

// Runs `command`, returning its exit status and what it printed on stdout and stderr.
std::pair<int, std::string> run_command(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  return {::pclose(pipe), out};
}

TEST_CASE("npz: NumPy reads the archive jx writes", "[npz]") {
  const std::string python = "/usr/bin/python3";
  if (run_command(python + " -c 'import numpy'").first != 0) {
    WARN("skipped: " << python << " with NumPy is missing (apt install python3-numpy)");
    return;
  }
  Scratch tmp;
  Model model{
      {Mlp{np::array(std::vector<float>{1, 2, 3, 4}, {2, 2}), np::array({0.5f, -0.5f}),
           np::array(std::vector<float>{-1, 2}, {2, 1})}},
      {{"f32", np::array(std::vector<float>{1.5f, -0.0f, kNaN, kInf, -kInf, kDenormal}, {2, 3})},
       {"f64", np::array(std::vector<double>{0.1, -1e308, 5e-324})},
       {"f64_0d", np::array(std::vector<double>{2.5}, {})},
       {"flags", np::array({true, false, true})},
       {"i32", np::array({std::numeric_limits<int>::min(), 0, std::numeric_limits<int>::max()})},
       {"i64", np::array(std::vector<std::int64_t>{-(std::int64_t{1} << 62), 5}, {2, 1})},
       {"u32", np::array(std::vector<std::uint32_t>{0xffffffffu, 0, 17}, {3})},
       {"empty", np::zeros({0, 3}, int64)},
       {"i8", np::array(std::vector<std::int8_t>{-128, -3, 127})},
       {"u8", np::array(std::vector<std::uint8_t>{0, 200, 255})},
       {"i16", np::array(std::vector<std::int16_t>{-32768, -300, 32767})},
       {"u16", np::array(std::vector<std::uint16_t>{40000, 0, 65535})},
       {"u64",
        np::array(std::vector<std::uint64_t>{(std::uint64_t{1} << 63) + 5, 0, ~std::uint64_t{0}})},
       {"f16", np::array(std::vector<Float16>{Float16(-2.5f), Float16(65504.0f),
                                              Float16(std::ldexp(1.0f, -24)), Float16(0.1f)},
                         {2, 2})},
       {"bf16", bf16_bits({0x3f80, 0xc049, 0x7f80, 0x0001, 0x8000, 0x4b18}, {3, 2})}},
      0.75f};
  save_npz(tmp / "model.npz", model);
  // bfloat16 carries ml_dtypes' descr.
  std::string bf16_npy;
  for (const auto& e : local_entries(read_bytes(tmp / "model.npz")))
    if (e.name == "stats/bf16.npy") bf16_npy = e.data;
  CHECK(bf16_npy.find("{'descr': '<V2', 'fortran_order': False, 'shape': (3, 2), }") == 10);
  // NumPy checks every CRC (testzip), loads each entry (allow_pickle=False) and prints it.
  write_bytes(
      tmp / "read.py",
      "import sys, zipfile\n"
      "import numpy as np\n"
      "assert zipfile.ZipFile(sys.argv[1]).testzip() is None\n"
      "with np.load(sys.argv[1], allow_pickle=False) as z:\n"
      "    for name in sorted(z.files):\n"
      "        a = z[name]\n"
      "        assert a.flags.c_contiguous\n"
      "        if a.dtype.kind == 'V':  # bfloat16 without ml_dtypes: its bits\n"
      "            print(name, a.dtype.str, a.shape, [hex(v) for v in a.view('<u2').flat])\n"
      "        else:\n"
      "            print(name, a.dtype.str, a.shape, a.tolist())\n");
  auto [status, out] =
      run_command(python + " '" + tmp / "read.py" + "' '" + tmp / "model.npz" + "'");
  CHECK(status == 0);
  CHECK(out ==
        "layers/0/b1 <f4 (2,) [0.5, -0.5]\n"
        "layers/0/w1 <f4 (2, 2) [[1.0, 2.0], [3.0, 4.0]]\n"
        "layers/0/w2 <f4 (2, 1) [[-1.0], [2.0]]\n"
        "scale <f4 () 0.75\n"
        "stats/bf16 |V2 (3, 2) ['0x3f80', '0xc049', '0x7f80', '0x1', '0x8000', '0x4b18']\n"
        "stats/empty <i8 (0, 3) []\n"
        "stats/f16 <f2 (2, 2) [[-2.5, 65504.0], [5.960464477539063e-08, 0.0999755859375]]\n"
        "stats/f32 <f4 (2, 3) [[1.5, -0.0, nan], [inf, -inf, 1.401298464324817e-45]]\n"
        "stats/f64 <f8 (3,) [0.1, -1e+308, 5e-324]\n"
        "stats/f64_0d <f8 () 2.5\n"
        "stats/flags |b1 (3,) [True, False, True]\n"
        "stats/i16 <i2 (3,) [-32768, -300, 32767]\n"
        "stats/i32 <i4 (3,) [-2147483648, 0, 2147483647]\n"
        "stats/i64 <i8 (2, 1) [[-4611686018427387904], [5]]\n"
        "stats/i8 |i1 (3,) [-128, -3, 127]\n"
        "stats/u16 <u2 (3,) [40000, 0, 65535]\n"
        "stats/u32 <u4 (3,) [4294967295, 0, 17]\n"
        "stats/u64 <u8 (3,) [9223372036854775813, 0, 18446744073709551615]\n"
        "stats/u8 |u1 (3,) [0, 200, 255]\n");
}

TEST_CASE("npz: reads deflated entries (np.savez_compressed) and NPY 2.0 and 3.0", "[npz]") {
  Scratch tmp;
  std::string data;
  for (int i = 0; i < 1000; ++i) data += le32(i % 7);  // compressible: deflate really shrinks it
  std::string a = npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (10, 100), }", data);
  std::string b = npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                           std::string("\0\0\0\0\0\0\xf8\x3f", 8), 2);  // 1.5
  std::string c = npy_file("{'shape': (2,), 'fortran_order': False, 'descr': '|b1'}",
                           std::string("\x01\x00", 2), 3);
  write_bytes(tmp / "z.npz", make_zip({{"a.npy", a, 8}, {"b.npy", b, 8}, {"c.npy", c, 0}}));
  REQUIRE(raw_deflate(a).size() < a.size() / 4);
  auto entries = load_npz_entries(tmp / "z.npz");
  std::vector<int> expected(1000);
  for (int i = 0; i < 1000; ++i) expected[i] = i % 7;
  CHECK(entries.at("a").shape() == Shape{10, 100});
  CHECK(entries.at("a").to_vector<int>() == expected);
  CHECK(entries.at("b").item<double>() == 1.5);
  CHECK(entries.at("c").to_vector<bool>() == std::vector<bool>{true, false});
}

TEST_CASE("npz: a 2-byte void entry is bfloat16, as ml_dtypes ('<V2') and NumPy ('|V2') write it",
          "[npz]") {
  Scratch tmp;
  std::string data = std::string("\x80\x3f\x49\xc0\x80\xff", 6);  // 1.0, -3.140625, -inf
  std::string ml = npy_file("{'descr': '<V2', 'fortran_order': False, 'shape': (3,), }", data);
  std::string numpy = npy_file("{'descr': '|V2', 'fortran_order': False, 'shape': (1, 3), }", data);
  write_bytes(tmp / "v.npz", make_zip({{"ml.npy", ml}, {"np.npy", numpy, 8}}));
  auto entries = load_npz_entries(tmp / "v.npz");
  CHECK(entries.at("ml").aval() == ShapedArray{{3}, bfloat16, false});
  CHECK(entries.at("np").aval() == ShapedArray{{1, 3}, bfloat16, false});
  for (const char* name : {"ml", "np"}) {
    CHECK(bits_of(entries.at(name)) == std::vector<std::uint16_t>{0x3f80, 0xc049, 0xff80});
    CHECK(entries.at(name).to_vector<float>() == std::vector<float>{1.0f, -3.140625f, -kInf});
  }
  // Saved again, the entry is ml_dtypes' '<V2' with the same bytes.
  save_npz(tmp / "again.npz", entries.at("ml"));
  CHECK(local_entries(read_bytes(tmp / "again.npz")).at(0).data == ml);
}

TEST_CASE("npz: a failed save leaves the previous file and no temporary file", "[npz]") {
  Scratch tmp;
  std::string path = tmp / "ckpt.npz";
  save_npz(path, std::vector<Array>{np::ones({3})});
  std::string good = read_bytes(path);

  // Fails midway: the first entry is already written when the second turns out empty.
  CHECK(exact_error_of<Error>([&] {
          save_npz(path, std::vector<Array>{np::zeros({1000}), Array()});
        }) == "save_npz: leaf '1' is an empty jx::Array");
  CHECK(read_bytes(path) == good);
  CHECK(tmp.files() == std::vector<std::string>{"ckpt.npz"});

  // Fails at the start: the parent of the target is a regular file, or does not exist.
  write_bytes(tmp / "file", "x");
  CHECK(error_of<Error>([&] { save_npz(tmp / "file/ckpt.npz", Array(1.0f)); }) ==
        "cannot write checkpoint " + tmp / "file/ckpt.npz" + ": Not a directory");
  CHECK(error_of<Error>([&] { save_npz(tmp / "no/ckpt.npz", Array(1.0f)); }) ==
        "cannot write checkpoint " + tmp / "no/ckpt.npz" + ": No such file or directory");
  CHECK(tmp.files() == std::vector<std::string>{"ckpt.npz", "file"});

  // A successful save replaces the file.
  save_npz(path, std::vector<Array>{np::full({3}, 2.0f)});
  CHECK(load_npz<std::vector<Array>>(path)[0].to_vector<float>() == std::vector<float>{2, 2, 2});
  CHECK(tmp.files() == std::vector<std::string>{"ckpt.npz", "file"});
}

TEST_CASE("npz: corrupt archives and entries give errors naming the file and entry", "[npz]") {
  Scratch tmp;
  std::string path = tmp / "c.npz";
  auto load = [&](const std::string& bytes) {
    write_bytes(path, bytes);
    return error_of<Error>([&] { load_npz_entries(path); });
  };
  std::string entry = "entry 'a' of " + path;
  std::string f32 =
      npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0'));
  std::string good = make_zip({{"a.npy", f32}});
  REQUIRE(load(good) == "<no exception>");

  CHECK(error_of<Error>([&] { load_npz_entries(tmp / "missing.npz"); }) ==
        "cannot read checkpoint " + tmp / "missing.npz" + ": No such file or directory");
  CHECK(error_of<Error>([&] { load_npz_entries(tmp.dir.string()); }) ==
        "cannot read checkpoint " + tmp.dir.string() + ": Is a directory");
  std::string no_end = "checkpoint " + path +
                       " is not a zip archive (no end-of-central-directory record; truncated?)";
  CHECK(load(good.substr(0, good.size() - 10)) == no_end);
  CHECK(load(good.substr(0, 100)) == no_end);
  CHECK(load("") == no_end);

  std::string bad = good;
  bad[0] = 'Q';  // local header signature
  CHECK(load(bad) == entry + " is corrupt: bad local header signature");
  bad = good;
  bad[good.size() - 22 - 51] = 'Q';  // central directory signature (its record is 46 + 5 bytes)
  CHECK(load(bad) == "checkpoint " + path + " is corrupt: bad central directory record 0");
  bad = good;
  bad.replace(good.size() - 22 + 10, 2, le16(0xffff));  // zip64's marker in the entry count
  CHECK(load(bad) == "checkpoint " + path + " is a zip64 archive, which jx does not read");

  bad = good;
  bad[35 + 128 + 3] ^= 0x40;  // a data byte: the CRC no longer matches
  char crcs[64];
  std::snprintf(crcs, sizeof crcs, "(stored 0x%08x, computed 0x%08x)", crc32_bitwise(f32),
                crc32_bitwise(bad.substr(35, f32.size())));
  CHECK(load(bad) == entry + " is corrupt: CRC-32 mismatch " + crcs);

  CHECK(load(make_zip({{"a.npy", "\x93NUMPZ" + f32.substr(6)}})) ==
        entry + " is not an NPY array (bad magic)");
  CHECK(load(make_zip({{"a.npy", f32.substr(0, 6) + "\x04" + f32.substr(7)}})) ==
        entry + " has NPY version 4.0; jx reads 1.0, 2.0 and 3.0");
  CHECK(load(make_zip({{"a.npy", f32.substr(0, 60)}})) ==
        entry + " is truncated: its NPY header runs past the end of the entry");
  auto with_dict = [&](const std::string& dict, std::size_t nbytes = 8) {
    return load(make_zip({{"a.npy", npy_file(dict, std::string(nbytes, '\0'))}}));
  };
  CHECK(with_dict("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }") ==
        entry + " is in Fortran order (fortran_order: True); jx loads C-order arrays only");
  for (std::string descr : {">f4", ">i2", "<i1", "|O", "<c8", "|V4", "<U1"})
    CHECK(with_dict("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (2,), }") ==
          entry + " has dtype '" + descr +
              "', which jx does not load (it reads |b1, |i1, <i2, <i4, <i8, |u1, <u2, <u4, <u8, "
              "<V2 or |V2 (bfloat16), <f2, <f4, <f8)");
  CHECK(with_dict("{'descr': '<f4', 'shape': (2,), }") ==
        entry + " has a malformed NPY header: {'descr': '<f4', 'shape': (2,), }");
  CHECK(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }") ==
        entry +
            " has a malformed NPY header: {'descr': '<f4', 'fortran_order': False, 'shape': (2, "
            "-1), }");
  CHECK(with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }") ==
        entry + " holds 8 bytes of data, but f32[3] needs 12");
  bad = make_zip({{"a.npy", f32, 8}});
  bad[35] = '\xff';  // the first deflate block's type: 3, which does not exist
  CHECK(load(bad) == entry + " is corrupt: bad deflate data (invalid block type)");
  std::string method = good;
  method.replace(8, 2, le16(12)).replace(good.size() - 22 - 51 + 10, 2, le16(12));
  CHECK(load(method) ==
        entry + " uses compression method 12; jx reads stored (0) and deflated (8) entries");
}

TEST_CASE("npz: missing entries and dtype or shape mismatches against `like`", "[npz]") {
  Scratch tmp;
  std::string path = tmp / "m.npz";
  save_npz(path, std::map<std::string, Array>{{"w1", np::zeros({3, 4})}, {"b1", np::zeros({4})}});
  Mlp like{np::zeros({3, 4}), np::zeros({4}), np::zeros({4, 2})};
  CHECK(exact_error_of<Error>([&] { load_npz(path, like); }) ==
        "checkpoint " + path + " has no entry 'w2' (it has: b1, w1)");
  CHECK(exact_error_of<Error>([&] { load_npz<Mlp>(path); }) ==
        "checkpoint " + path + " has no entry 'w2' (it has: b1, w1)");
  auto one = [](Array w1) { return std::map<std::string, Array>{{"w1", w1}}; };
  CHECK(exact_error_of<ShapeError>([&] {
          load_npz(path, one(np::zeros({4, 3})));
        }) == "entry 'w1' of " + path + " is f32[3,4], expected f32[4,3]");
  CHECK(exact_error_of<TypeError>([&] {
          load_npz(path, one(np::zeros({3, 4}, float64)));
        }) == "entry 'w1' of " + path + " is f32[3,4], expected f64[3,4]");
  CHECK(exact_error_of<TypeError>([&] { load_npz<std::map<std::string, int>>(path); }) ==
        "entry 'b1' of " + path + " is f32[4], expected i32[]");
  // Extra entries are fine.
  CHECK(load_npz(path, one(np::ones({3, 4}))).at("w1").to_vector<float>() ==
        std::vector<float>(12, 0.0f));
}

}  // namespace
}  // namespace jx
