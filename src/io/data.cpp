// IDX files (raw or gzipped), Fashion-MNIST on top of them, and host-side row gathers.
#include "jx/data.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/array_impl.hpp"

namespace jx::data {
namespace {

// The file's bytes; gzip data is gunzipped (zlib passes other bytes through as they are).
std::vector<unsigned char> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot read IDX file " + path + ": " + std::strerror(errno));
  gzFile gz = gzdopen(fd, "rb");
  if (!gz) {
    ::close(fd);
    throw Error("cannot read IDX file " + path + ": out of memory");
  }
  gzbuffer(gz, 1 << 17);
  std::vector<unsigned char> out;
  std::size_t size = 0;
  int n = 0;
  do {
    out.resize(std::max<std::size_t>(2 * out.size(), 1 << 20));
    n = gzread(gz, out.data() + size, static_cast<unsigned>(out.size() - size));
    size += static_cast<std::size_t>(std::max(n, 0));
  } while (n > 0);
  int code = Z_OK;
  std::string why = gzerror(gz, &code);
  gzclose(gz);
  if (n < 0) throw Error("cannot read IDX file " + path + ": " + why);
  // zlib hands out what a cut-off stream held and flags it only here (it allows for files
  // still being written); without the trailer the data's CRC is unchecked too.
  if (code == Z_BUF_ERROR)
    throw Error("IDX file " + path + " is truncated: its gzip stream ends early");
  out.resize(size);
  return out;
}

struct Idx {
  Shape shape;
  std::vector<unsigned char> bytes;  // the whole file
  std::size_t data = 0;              // where the elements start
};

// Magic 0x0000 TT NN: type TT (0x08: unsigned byte), NN big-endian u32 dims, then the data.
Idx parse_idx(const std::string& path, std::vector<unsigned char> b) {
  auto truncated = [&](std::size_t expected) {
    return Error("IDX file " + path + " is truncated: expected " + std::to_string(expected) +
                 " bytes, found " + std::to_string(b.size()));
  };
  if (b.size() < 4) throw truncated(4);
  if (b[0] != 0 || b[1] != 0) {
    char magic[16];
    std::snprintf(magic, sizeof magic, "0x%02x%02x%02x%02x", b[0], b[1], b[2], b[3]);
    throw Error("IDX file " + path + " has a bad magic number " + magic + " (expected 0x000008NN)");
  }
  if (b[2] != 0x08) {
    char type[8];
    std::snprintf(type, sizeof type, "0x%02x", b[2]);
    throw Error("IDX file " + path + " holds elements of type " + type +
                "; jx reads unsigned bytes (0x08) only");
  }
  Idx idx;
  idx.data = 4 + 4 * std::size_t{b[3]};
  if (b.size() < idx.data) throw truncated(idx.data);
  std::uint64_t total = idx.data, count = 1;
  for (std::size_t k = 4; k < idx.data; k += 4) {
    std::uint32_t dim = std::uint32_t{b[k]} << 24 | b[k + 1] << 16 | b[k + 2] << 8 | b[k + 3];
    idx.shape.push_back(dim);
    if (__builtin_mul_overflow(count, dim, &count)) count = UINT64_MAX / 2;
  }
  total += count;
  if (b.size() < total) throw truncated(total);
  if (b.size() > total)
    throw Error("IDX file " + path + " has " + std::to_string(b.size() - total) +
                " bytes after its data (expected " + std::to_string(total) + " bytes, found " +
                std::to_string(b.size()) + ")");
  idx.bytes = std::move(b);
  return idx;
}

// A concrete array of `shape` whose elements are the IDX bytes, converted by `f`.
template <class T, class F>
Array convert(const Idx& idx, Shape shape, DType dtype, F f) {
  auto n = static_cast<std::size_t>(shape_size(shape));
  auto buffer = std::make_shared<Buffer>(n * sizeof(T), Buffer::Uninitialized{});
  T* out = buffer->as<T>();
  const unsigned char* in = idx.bytes.data() + idx.data;
  for (std::size_t k = 0; k < n; ++k) out[k] = f(in[k]);
  return make_array(ShapedArray{std::move(shape), dtype, false}, std::move(buffer));
}

}  // namespace

Array read_idx(const std::string& path) {
  Idx idx = parse_idx(path, read_file(path));
  return convert<std::uint8_t>(idx, idx.shape, uint8, [](unsigned char v) { return v; });
}

FashionMnist load_fashion_mnist(const std::string& dir, Pixels pixels) {
  auto load = [&](const char* name) {
    std::string path = dir + "/" + name;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
      throw Error("Fashion-MNIST file " + path +
                  " is missing (the Debian package dataset-fashion-mnist provides it)");
    return parse_idx(path, read_file(path));
  };
  auto images = [&](const char* name) {
    Idx idx = load(name);
    if (idx.shape.size() != 3 || idx.shape[1] != 28 || idx.shape[2] != 28)
      throw Error("IDX file " + dir + "/" + name + " holds shape " + shape_str(idx.shape) +
                  ", expected (n, 28, 28) images");
    if (pixels == Pixels::kUint8)
      return convert<std::uint8_t>(idx, {idx.shape[0], 784}, uint8,
                                   [](unsigned char v) { return v; });
    return convert<float>(idx, {idx.shape[0], 784}, float32,
                          [](unsigned char v) { return static_cast<float>(v) / 255.0f; });
  };
  auto labels = [&](const char* name, const Array& images) {
    Idx idx = load(name);
    if (idx.shape != Shape{images.shape()[0]})
      throw Error("IDX file " + dir + "/" + name + " holds shape " + shape_str(idx.shape) +
                  ", expected one label per image: (" + std::to_string(images.shape()[0]) + ",)");
    return convert<std::int32_t>(idx, idx.shape, int32, [](unsigned char v) { return v; });
  };
  FashionMnist out;
  out.train_images = images("train-images-idx3-ubyte.gz");
  out.train_labels = labels("train-labels-idx1-ubyte.gz", out.train_images);
  out.test_images = images("t10k-images-idx3-ubyte.gz");
  out.test_labels = labels("t10k-labels-idx1-ubyte.gz", out.test_images);
  return out;
}

Array take_rows(const Array& x, std::span<const std::int64_t> rows) {
  const Buffer& in = concrete_buffer(x, "take_rows");
  if (x.ndim() == 0)
    throw ShapeError("take_rows needs an array with at least one dimension, got shape ()");
  Shape shape = x.shape();
  std::int64_t n = shape[0];
  shape[0] = static_cast<std::int64_t>(rows.size());
  std::size_t row_bytes = n ? in.nbytes() / static_cast<std::size_t>(n) : 0;
  auto out = std::make_shared<Buffer>(rows.size() * row_bytes, Buffer::Uninitialized{});
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= n)
      throw ShapeError("take_rows: row " + std::to_string(rows[i]) +
                       " is out of range for an array of " + std::to_string(n) + " rows");
    std::memcpy(out->as<char>() + i * row_bytes,
                in.as<char>() + static_cast<std::size_t>(rows[i]) * row_bytes, row_bytes);
  }
  return make_array(ShapedArray{std::move(shape), x.dtype(), x.weak_type()}, std::move(out));
}

}  // namespace jx::data
