// Checkpoints as .npz files, the zip of .npy arrays that numpy.savez writes and numpy.load
// reads: each leaf of a pytree is one entry named by its path ("layers/0/w", "mu/w1").
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "jx/array.hpp"
#include "jx/detail/npz_impl.hpp"

namespace jx {

// Writes every leaf of `tree` as an entry named by its path: struct field names, container
// indices and map keys joined with '/'; a tree that is a single leaf is "arr_0". The file is
// replaced atomically: a save that fails leaves the previous file as it was.
template <class T>
void save_npz(const std::string& path, const T& tree) {
  std::vector<std::pair<std::string, Array>> entries;
  auto add = [&](const std::string& name, const auto& leaf) { entries.emplace_back(name, leaf); };
  detail::npz::for_each_leaf(tree, "", add);
  detail::npz::write_archive(path, entries);
}

// Every entry of an .npz file by name (without ".npy"), as a concrete array.
std::map<std::string, Array> load_npz_entries(const std::string& path);

// The checkpoint read back into the structure of `like`: each leaf's entry must exist and have
// that leaf's dtype and shape (else jx::Error, jx::TypeError or jx::ShapeError). Entries that
// `like` does not name are ignored.
template <class T>
T load_npz(const std::string& path, const T& like) {
  std::vector<std::string> names;
  std::vector<ShapedArray> expected;
  auto add = [&](const std::string& name, const auto& leaf) {
    names.push_back(name);
    Array x(leaf);  // named: a scalar leaf's Array must outlive the aval read from it
    expected.push_back(ShapedArray{x.shape(), x.dtype(), false});
  };
  detail::npz::for_each_leaf(like, "", add);
  std::vector<Array> leaves = detail::npz::read_leaves(path, names, expected);
  T out = like;
  std::size_t pos = 0;
  detail::npz::assign_leaves(out, leaves, pos);
  return out;
}

// The checkpoint read back as a T whose structure comes from its type (structs, std::array,
// tuples, pairs, Arrays) and, for std::vector and std::map parts, from the entry names: a
// vector's entries are numbered 0..n-1, a map takes the keys it finds.
template <class T>
T load_npz(const std::string& path) {
  return detail::npz::build<T>(load_npz_entries(path), path, "");
}

}  // namespace jx
