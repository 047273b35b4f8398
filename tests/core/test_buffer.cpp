// Host buffers: the large-buffer cache (a loop's own buffers come back, whatever earlier work
// released) and huge pages for large buffers.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/buffer.hpp"
#include "jx/config.hpp"
#include "support/config_guard.hpp"

namespace jx {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST_CASE(
    "a released large buffer comes back for the next one of its size, even when older "
    "releases filled the cache",
    "[buffer]") {
  // Earlier work leaves 200 MiB of released buffers behind.
  for (std::size_t mib : {120, 80}) Buffer(mib * kMiB, Buffer::Uninitialized{});
  // A loop over 100 MiB outputs: each one's memory is the previous one's. (Were the released
  // one freed instead, the malloc in between would likely take its pages.)
  void* previous = nullptr;
  std::vector<void*> elsewhere;
  for (int call = 0; call < 3; ++call) {
    auto out = std::make_unique<Buffer>(100 * kMiB, Buffer::Uninitialized{});
    if (call > 0) CHECK(out->data() == previous);
    previous = out->data();
    out.reset();
    elsewhere.push_back(std::malloc(100 * kMiB));
  }
  for (void* p : elsewhere) std::free(p);
}

// Under AddressSanitizer every buffer stays malloc's (buffer.cpp).
#if defined(__linux__) && !defined(__SANITIZE_ADDRESS__)
// The VmFlags of the mapping of this process that holds `address` (/proc/self/smaps).
std::string vm_flags_at(const void* address) {
  auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST_CASE("a large buffer starts on a huge page and offers its whole huge pages to THP",
          "[buffer]") {
  testing::ConfigGuard guard;
  config().cpu_huge_pages = true;
  constexpr std::size_t kHugePage = 2 * kMiB;
  // Sizes no other test releases: fresh mappings, not the cache's blocks.
  Buffer big(2 * kHugePage + 3 * 4096 + 192, Buffer::Uninitialized{});
  CHECK(reinterpret_cast<std::uintptr_t>(big.data()) % kHugePage == 0);
  // A kernel without transparent huge pages refuses the advice and marks nothing.
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled")) return;
  // "hg": madvise(MADV_HUGEPAGE) covers the mapping. Its last pages are not a whole huge page:
  // they are not marked, so they commit 4 KiB pages and no more.
  auto* bytes = static_cast<const char*>(big.data());
  CHECK(vm_flags_at(bytes).find(" hg") != std::string::npos);
  CHECK(vm_flags_at(bytes + kHugePage + kHugePage / 2).find(" hg") != std::string::npos);
  CHECK(vm_flags_at(bytes + 2 * kHugePage).find(" hg") == std::string::npos);

  // --cpu_huge_pages=false: a fresh buffer keeps the OS's default pages.
  config().cpu_huge_pages = false;
  Buffer plain(2 * kHugePage + 5 * 4096 + 64, Buffer::Uninitialized{});
  CHECK(vm_flags_at(plain.data()).find(" hg") == std::string::npos);
}
#endif

}  // namespace
}  // namespace jx
