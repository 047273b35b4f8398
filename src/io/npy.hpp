// NPY arrays (numpy.lib.format): the header NumPy writes, and an array from an .npy file's bytes.
#pragma once

#include <span>
#include <string>

#include "jx/array.hpp"

namespace jx::npy {

// Magic, version 1.0, length and header dict, padded as NumPy pads it: the data that follows
// starts at a multiple of 64 bytes.
std::string header(const ShapedArray& a);

// The array an .npy file holds (versions 1.0, 2.0 and 3.0; every dtype jx has, little-endian,
// C order; a 2-byte void, '<V2' or '|V2', is bfloat16). Errors throw jx::Error "<where> <what is
// wrong>".
Array parse(std::span<const unsigned char> bytes, const std::string& where);

}  // namespace jx::npy
