// Where the test fixtures (files real NumPy wrote) are, so that the test binary runs from its
// build folder and from a package alike: $JX_TEST_FIXTURES, else fixtures/ beside the binary or
// one folder up (a package's bin/ and fixtures/), else the source tree the build came from.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace jx::testing {

inline std::string fixtures_dir() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("JX_TEST_FIXTURES"); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (const fs::path& dir :
         {exe.parent_path() / "fixtures", exe.parent_path().parent_path() / "fixtures"})
      if (fs::is_directory(dir, ec)) return dir.string();
  return JX_TEST_SOURCE_FIXTURES;
}

inline std::string fixture_path(const std::string& name) { return fixtures_dir() + "/" + name; }

}  // namespace jx::testing
