// jx::data: IDX files written here (raw and gzipped) read back, their errors, take_rows, and the
// real Fashion-MNIST files checked against zlib-decompressed bytes.
#include <unistd.h>
#include <zlib.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "jx/data.hpp"
#include "jx/jx.hpp"
#include "support/error_of.hpp"
#include "support/scratch_dir.hpp"

namespace jx {
namespace {

namespace fs = std::filesystem;
using jx::testing::error_of;
using jx::testing::exact_error_of;

const char* kFashionDir = "/usr/share/datasets/fashion-mnist";

using Scratch = testing::ScratchDir;

// An IDX file's bytes: magic 0x000008NN, big-endian dims, then the data.
std::string idx_bytes(const std::vector<std::uint32_t>& dims, const std::string& data) {
  std::string out{0, 0, 8, static_cast<char>(dims.size())};
  for (std::uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>(d >> shift & 0xff);
  return out + data;
}
void write_raw(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}
void write_gzip(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) == int(bytes.size()));
  REQUIRE(gzclose(f) == Z_OK);
}
// The whole decompressed content of a gzip file, by zlib alone.
std::vector<unsigned char> gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  std::vector<unsigned char> out;
  unsigned char chunk[1 << 16];
  for (int n; (n = gzread(f, chunk, sizeof chunk)) > 0;) out.insert(out.end(), chunk, chunk + n);
  gzclose(f);
  return out;
}

TEST_CASE("data: read_idx reads raw and gzipped IDX files", "[data]") {
  Scratch tmp;
  std::string data;
  for (int i = 0; i < 24; ++i) data += static_cast<char>(i * 11);  // up to 253: unsigned bytes
  std::string bytes = idx_bytes({2, 3, 4}, data);
  write_raw(tmp / "x.idx", bytes);
  write_gzip(tmp / "x.idx.gz", bytes);
  std::vector<std::uint8_t> expected;
  for (int i = 0; i < 24; ++i) expected.push_back(static_cast<std::uint8_t>(i * 11));
  for (const char* name : {"x.idx", "x.idx.gz"}) {
    Array x = data::read_idx(tmp / name);
    CHECK(x.aval() == ShapedArray{{2, 3, 4}, uint8, false});
    CHECK(x.to_vector<std::uint8_t>() == expected);
  }
  write_raw(tmp / "e.idx", idx_bytes({0, 5}, ""));
  CHECK(data::read_idx(tmp / "e.idx").shape() == Shape{0, 5});
}

TEST_CASE("data: read_idx errors name the file and what is wrong", "[data]") {
  Scratch tmp;
  auto error = [&](const std::string& bytes) {
    write_raw(tmp / "f.idx", bytes);
    return exact_error_of<Error>([&] { data::read_idx(tmp / "f.idx"); });
  };
  std::string file = "IDX file " + tmp / "f.idx";
  CHECK(exact_error_of<Error>([&] { data::read_idx(tmp / "none.gz"); }) ==
        "cannot read IDX file " + tmp / "none.gz" + ": No such file or directory");
  CHECK(error(std::string("\x12\x34\x08\x01\x00\x00\x00\x00", 8)) ==
        file + " has a bad magic number 0x12340801 (expected 0x000008NN)");
  CHECK(error(std::string("\x00\x00\x0d\x01\x00\x00\x00\x00", 8)) ==
        file + " holds elements of type 0x0d; jx reads unsigned bytes (0x08) only");
  CHECK(error(std::string("\x00\x00", 2)) == file + " is truncated: expected 4 bytes, found 2");
  CHECK(error(idx_bytes({2, 3, 4}, "").substr(0, 8)) ==
        file + " is truncated: expected 16 bytes, found 8");
  CHECK(error(idx_bytes({2, 3}, "abcd")) == file + " is truncated: expected 18 bytes, found 16");
  CHECK(error(idx_bytes({2, 3}, "abcdefgh")) ==
        file + " has 2 bytes after its data (expected 18 bytes, found 20)");

  write_gzip(tmp / "t.gz", idx_bytes({100}, std::string(100, 'x')));
  std::ifstream in(tmp / "t.gz", std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), {});
  write_raw(tmp / "t.gz", gz.substr(0, gz.size() - 12));  // cut into the deflate stream
  CHECK(exact_error_of<Error>([&] { data::read_idx(tmp / "t.gz"); }) ==
        "IDX file " + tmp / "t.gz" + " is truncated: its gzip stream ends early");
}

TEST_CASE("data: take_rows gathers rows in order and checks them", "[data]") {
  Array x = np::reshape(np::arange(12, float32), {4, 3});
  std::array<std::int64_t, 4> rows{2, 0, 2, 3};
  Array y = data::take_rows(x, rows);
  CHECK(y.aval() == ShapedArray{{4, 3}, float32, false});
  CHECK(y.to_vector<float>() == std::vector<float>{6, 7, 8, 0, 1, 2, 6, 7, 8, 9, 10, 11});
  CHECK(data::take_rows(x, {}).shape() == Shape{0, 3});
  std::vector<std::int64_t> one{1};
  CHECK(data::take_rows(np::array({5, 6, 7}), one).to_vector<int>() == std::vector<int>{6});
  std::vector<std::int64_t> bad{0, 4}, negative{-1};
  CHECK(exact_error_of<ShapeError>([&] { data::take_rows(x, bad); }) ==
        "take_rows: row 4 is out of range for an array of 4 rows");
  CHECK(exact_error_of<ShapeError>([&] { data::take_rows(x, negative); }) ==
        "take_rows: row -1 is out of range for an array of 4 rows");
  CHECK(exact_error_of<ShapeError>([&] { data::take_rows(np::array(1.0f), one); }) ==
        "take_rows needs an array with at least one dimension, got shape ()");
}

TEST_CASE("data: a missing Fashion-MNIST directory names the file and the package", "[data]") {
  CHECK(exact_error_of<Error>([] { data::load_fashion_mnist("/no/such/dir"); }) ==
        "Fashion-MNIST file /no/such/dir/train-images-idx3-ubyte.gz is missing (the Debian "
        "package dataset-fashion-mnist provides it)");
}

TEST_CASE("data: Fashion-MNIST loads as the IDX files hold it", "[data]") {
  if (!fs::exists(std::string(kFashionDir) + "/train-images-idx3-ubyte.gz")) {
    WARN("skipped: " << kFashionDir << " is missing (apt install dataset-fashion-mnist)");
    return;
  }
  data::FashionMnist d = data::load_fashion_mnist();
  CHECK(d.train_images.aval() == ShapedArray{{60000, 784}, float32, false});
  CHECK(d.train_labels.aval() == ShapedArray{{60000}, int32, false});
  CHECK(d.test_images.aval() == ShapedArray{{10000, 784}, float32, false});
  CHECK(d.test_labels.aval() == ShapedArray{{10000}, int32, false});

  auto counts = [](const Array& labels) {
    std::vector<int> n(10);
    for (int l : labels.to_vector<int>()) n.at(static_cast<std::size_t>(l))++;
    return n;
  };
  CHECK(counts(d.train_labels) == std::vector<int>(10, 6000));
  CHECK(counts(d.test_labels) == std::vector<int>(10, 1000));

  // Every pixel is a byte over 255: in [0, 1], and 255 * pixel is a whole number.
  std::vector<float> pixels = d.train_images.to_vector<float>();
  bool whole = true;
  for (float p : pixels) whole &= p >= 0 && p <= 1 && std::nearbyint(p * 255) == p * 255;
  CHECK(whole);

  // The first label and image against the bytes zlib decompresses (labels from offset 8,
  // pixels from offset 16); 9 (ankle boot) and 76247 as Python's gzip module reads them too.
  auto labels = gunzip(std::string(kFashionDir) + "/train-labels-idx1-ubyte.gz");
  auto images = gunzip(std::string(kFashionDir) + "/train-images-idx3-ubyte.gz");
  REQUIRE(images.size() == 16 + 60000 * 784);
  int first_sum = 0;
  for (int k = 0; k < 784; ++k) first_sum += images[16 + k];
  CHECK(labels[8] == 9);
  CHECK(first_sum == 76247);
  CHECK(d.train_labels.to_vector<int>()[0] == labels[8]);
  double sum = 0;
  for (int k = 0; k < 784; ++k) {
    CHECK(pixels[k] == static_cast<float>(images[16 + k]) / 255.0f);
    sum += pixels[k] * 255.0;
  }
  CHECK(std::lround(sum) == first_sum);
  CHECK(pixels[784 * 59999 + 300] == static_cast<float>(images[16 + 784 * 59999 + 300]) / 255.0f);
}

// The step that normalizes uint8 pixels inside jit, as a training loop over Pixels::kUint8 does.
Array normalize(const Array& x) { return x.astype(float32) / 255.0f; }

TEST_CASE("data: uint8 pixels normalized in jit are the float32 pixels, for every byte", "[data]") {
  std::vector<std::uint8_t> bytes(256);
  for (int v = 0; v < 256; ++v) bytes[static_cast<std::size_t>(v)] = static_cast<std::uint8_t>(v);
  Array x = np::array(bytes, {2, 128});
  std::vector<float> eager = normalize(x).to_vector<float>();
  std::vector<float> jitted = jit(normalize)(x).to_vector<float>();
  REQUIRE(jitted.size() == 256);
  for (int v = 0; v < 256; ++v) {
    INFO("byte " << v);
    CHECK(jitted[static_cast<std::size_t>(v)] == static_cast<float>(v) / 255.0f);
    CHECK(eager[static_cast<std::size_t>(v)] == static_cast<float>(v) / 255.0f);
  }
}

TEST_CASE("data: Fashion-MNIST loads as uint8 pixels with Pixels::kUint8", "[data]") {
  if (!fs::exists(std::string(kFashionDir) + "/train-images-idx3-ubyte.gz")) {
    WARN("skipped: " << kFashionDir << " is missing (apt install dataset-fashion-mnist)");
    return;
  }
  CHECK(std::string(data::kFashionMnistDir) == kFashionDir);
  data::FashionMnist d = data::load_fashion_mnist(data::Pixels::kUint8);
  CHECK(d.train_images.aval() == ShapedArray{{60000, 784}, uint8, false});
  CHECK(d.train_labels.aval() == ShapedArray{{60000}, int32, false});
  CHECK(d.test_images.aval() == ShapedArray{{10000, 784}, uint8, false});
  CHECK(d.test_labels.aval() == ShapedArray{{10000}, int32, false});

  // Every pixel is the file's byte: both sets against zlib's bytes (pixels from offset 16,
  // labels from offset 8).
  auto same_bytes = [](const Array& x, const std::vector<unsigned char>& file, std::size_t offset) {
    std::vector<std::uint8_t> got = x.to_vector<std::uint8_t>();
    return file.size() == offset + got.size() &&
           std::equal(got.begin(), got.end(), file.begin() + static_cast<std::ptrdiff_t>(offset));
  };
  CHECK(same_bytes(d.train_images, gunzip(std::string(kFashionDir) + "/train-images-idx3-ubyte.gz"),
                   16));
  CHECK(same_bytes(d.test_images, gunzip(std::string(kFashionDir) + "/t10k-images-idx3-ubyte.gz"),
                   16));
  auto test_labels = gunzip(std::string(kFashionDir) + "/t10k-labels-idx1-ubyte.gz");
  std::vector<int> want(test_labels.begin() + 8, test_labels.end());
  CHECK(d.test_labels.to_vector<int>() == want);
  std::vector<std::uint8_t> first =
      data::take_rows(d.train_images, std::vector<std::int64_t>{0}).to_vector<std::uint8_t>();
  int first_sum = 0;
  for (std::uint8_t p : first) first_sum += p;
  CHECK(first_sum == 76247);  // as the float32 test reads it
  // A batch moved as uint8 and normalized in jit: the float32 path's pixels.
  std::vector<std::int64_t> rows{59999, 0, 31337, 7};
  Array batch = data::take_rows(d.train_images, rows);
  CHECK(batch.aval() == ShapedArray{{4, 784}, uint8, false});
  std::vector<std::uint8_t> raw = batch.to_vector<std::uint8_t>();
  std::vector<float> scaled = jit(normalize)(batch).to_vector<float>();
  REQUIRE(scaled.size() == raw.size());
  bool exact = true;
  for (std::size_t k = 0; k < raw.size(); ++k)
    exact &= scaled[k] == static_cast<float>(raw[k]) / 255.0f;
  CHECK(exact);
}

}  // namespace
}  // namespace jx
