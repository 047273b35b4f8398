// A directory of cache entries that processes share (--compilation_cache_dir): one file per key,
// written whole or not at all, checked when read, bounded in size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace jx::support {

// FNV-1a over `bytes` from `seed` (FNV's offset basis by default): stable across processes and
// builds, as file names and stored fingerprints need.
std::uint64_t fingerprint64(std::string_view bytes, std::uint64_t seed = 0xcbf29ce484222325ULL);

class DiskCache {
 public:
  // Entries in `dir` (made when first written) whose header holds `stamp` (who may read them:
  // the versions of what wrote them); at most `max_bytes` in all (0: no bound). Damage and
  // failures to write are warnings on config().log, one message each, and are never errors.
  DiskCache(std::string dir, std::string stamp, std::int64_t max_bytes);

  // The payload stored under `key`; nullopt when there is none, or when the entry is truncated,
  // changed, not a jx entry or written with another stamp (a warning). A hit makes the entry the
  // most recently used.
  std::optional<std::string> read(std::string_view key) const;
  // Stores `payload` under `key` through a temporary file renamed over the entry, so readers
  // see the old entry or the new one; then removes the least recently used entries while the
  // directory holds more than max_bytes.
  void write(std::string_view key, std::string_view payload) const;
  // Warns that `key`'s entry is not used, and why: what a reader does with an entry it cannot
  // take (it then compiles, and its write replaces the entry).
  void ignore(std::string_view key, const std::string& why) const;
  // The file of `key`'s entry: 32 hex digits of its fingerprint, ".jxc".
  std::string path_of(std::string_view key) const;

 private:
  void trim(const std::string& keep) const;

  std::string dir_, stamp_;
  std::int64_t max_bytes_;
};

}  // namespace jx::support
