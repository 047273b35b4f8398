// Datasets on disk: IDX files (the MNIST format), Fashion-MNIST, and row gathers for batches.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "jx/array.hpp"

namespace jx::data {

// An IDX file (magic 0x000008NN, big-endian u32 dims, then unsigned bytes), raw or gzipped
// (as the MNIST files, *.gz, come), as a uint8 array of the stored shape.
Array read_idx(const std::string& path);

struct FashionMnist {
  Array train_images, train_labels, test_images, test_labels;
};

// How load_fashion_mnist gives the images' pixels.
enum class Pixels {
  kFloat32,  // float32 in [0, 1]: each byte / 255
  kUint8,    // uint8 0..255, the bytes as stored: a quarter of the memory and of the bytes a
             // batch moves; the jitted step normalizes, x.astype(float32) / 255.0f, which gives
             // kFloat32's values exactly
};

// Where the Debian package dataset-fashion-mnist installs the files.
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// Images as [n, 784] (float32 in [0, 1], or uint8 with Pixels::kUint8), labels as int32 [n].
FashionMnist load_fashion_mnist(const std::string& dir = kFashionMnistDir,
                                Pixels pixels = Pixels::kFloat32);
inline FashionMnist load_fashion_mnist(Pixels pixels) {
  return load_fashion_mnist(kFashionMnistDir, pixels);
}

// A new concrete array of x's rows (its first axis) in the order given: mini-batches.
Array take_rows(const Array& x, std::span<const std::int64_t> rows);

}  // namespace jx::data
