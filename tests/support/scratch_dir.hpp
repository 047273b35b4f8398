// A fresh directory for a test's files, removed with everything in it when the test ends.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace jx::testing {

struct ScratchDir {
  std::filesystem::path dir;
  ScratchDir() {
    static int counter = 0;
    dir = std::filesystem::temp_directory_path() /
          ("jx_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~ScratchDir() { std::filesystem::remove_all(dir); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string operator/(const std::string& name) const { return (dir / name).string(); }
  // The names of the files in it, sorted.
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
};

}  // namespace jx::testing
