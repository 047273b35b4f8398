// Counting what a compiled program runs, from Compiled::thunk_sequence().
#pragma once

#include <sstream>
#include <string>

namespace bench {

struct ThunkCounts {
  int kernels = 0, gemms = 0, others = 0;
};

// Thunks of a compiled program, one per line: `kernel <name>(...)`, `gemm ...`, `copy ...`.
inline ThunkCounts count_thunks(const std::string& sequence) {
  ThunkCounts c;
  std::istringstream in(sequence);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("kernel ", 0) == 0)
      ++c.kernels;
    else if (line.rfind("gemm ", 0) == 0)
      ++c.gemms;
    else if (!line.empty())
      ++c.others;
  }
  return c;
}

}  // namespace bench
