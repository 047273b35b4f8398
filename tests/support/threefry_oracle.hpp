// Threefry-2x32, 20 rounds, written from the Random123 specification (Salmon et al., SC'11):
// the oracle of the threefry2x32 primitive and of jx::random. tests/library/test_random.cpp checks
// it against Random123's known answers.
#pragma once

#include <array>
#include <cstdint>

namespace jx::testing {

inline std::array<std::uint32_t, 2> threefry_oracle(std::uint32_t k0, std::uint32_t k1,
                                                    std::uint32_t x0, std::uint32_t x1) {
  const std::uint32_t rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const std::uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  x0 += ks[0];
  x1 += ks[1];
  for (std::uint32_t r = 0; r < 20; ++r) {
    x0 += x1;
    x1 = (x1 << rot[r % 8]) | (x1 >> (32 - rot[r % 8]));
    x1 ^= x0;
    if (r % 4 == 3) {  // key injection s after every 4 rounds
      std::uint32_t s = r / 4 + 1;
      x0 += ks[s % 3];
      x1 += ks[(s + 1) % 3] + s;
    }
  }
  return {x0, x1};
}

}  // namespace jx::testing
