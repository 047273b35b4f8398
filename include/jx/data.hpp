// Datasets on disk: IDX files (the MNIST format), Fashion-MNIST, and row gathers for batches.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "jx/array.hpp"

namespace jx::data {

// An IDX file (magic 0x000008NN, big-endian u32 dims, then unsigned bytes), raw or gzipped
// (as the MNIST files, *.gz, come), as an int32 array of the stored shape (jx has no uint8).
Array read_idx(const std::string& path);

struct FashionMnist {
  Array train_images, train_labels, test_images, test_labels;
};

// Images as float32 [n, 784] scaled to [0, 1], labels as int32 [n]. The default directory is
// where the Debian package dataset-fashion-mnist installs the files.
FashionMnist load_fashion_mnist(const std::string& dir = "/usr/share/datasets/fashion-mnist");

// A new concrete array of x's rows (its first axis) in the order given: mini-batches.
Array take_rows(const Array& x, std::span<const std::int64_t> rows);

}  // namespace jx::data
