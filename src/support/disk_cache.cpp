// The disk cache's entries: a header (magic, stamp, payload length and checksum), then the
// payload. Names carry 128 bits of the key's fingerprint, so two keys never share a file.
#include "support/disk_cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "jx/config.hpp"

namespace jx::support {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'J', 'X', 'C', 'A', 'C', 'H', 'E', '1'};
constexpr std::string_view kSuffix = ".jxc";

void put64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
std::uint64_t get64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string header(std::string_view stamp, std::string_view payload) {
  std::string out(kMagic, sizeof kMagic);
  put64(out, stamp.size());
  out.append(stamp);
  put64(out, payload.size());
  put64(out, fingerprint64(payload));
  return out;
}

// The payload of an entry's bytes, or why there is none.
std::string_view payload_of(std::string_view file, std::string_view stamp, std::string& why) {
  if (file.size() < sizeof kMagic + 8 || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0) {
    why = "it is not a jx compilation cache entry";
    return {};
  }
  std::uint64_t stamp_size = get64(file.data() + sizeof kMagic);
  std::size_t at = sizeof kMagic + 8;
  if (stamp_size > file.size() - at || file.size() - at - stamp_size < 16) {
    why = "it is truncated";
    return {};
  }
  std::string_view written = file.substr(at, stamp_size);
  if (written != stamp) {
    why = "it was written by " + std::string(written) + ", not " + std::string(stamp);
    return {};
  }
  at += stamp_size;
  std::uint64_t size = get64(file.data() + at), checksum = get64(file.data() + at + 8);
  std::string_view payload = file.substr(at + 16);
  if (payload.size() != size) {
    why = payload.size() < size ? "it is truncated" : "it has bytes past its end";
    return {};
  }
  if (fingerprint64(payload) != checksum) {
    why = "its checksum does not match its contents";
    return {};
  }
  return payload;
}

}  // namespace

std::uint64_t fingerprint64(std::string_view bytes, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

DiskCache::DiskCache(std::string dir, std::string stamp, std::int64_t max_bytes)
    : dir_(std::move(dir)), stamp_(std::move(stamp)), max_bytes_(max_bytes) {}

void DiskCache::ignore(std::string_view key, const std::string& why) const {
  detail::log_message("jx: ignoring compilation cache entry " + path_of(key) + ": " + why +
                      "; compiling again");
}

std::string DiskCache::path_of(std::string_view key) const {
  // A second fingerprint from another seed: 128 bits, where one would leave collisions likely
  // among millions of entries.
  return (fs::path(dir_) /
          (hex64(fingerprint64(key)) + hex64(fingerprint64(key, 0x6a09e667f3bcc909ULL)) +
           std::string(kSuffix)))
      .string();
}

std::optional<std::string> DiskCache::read(std::string_view key) const {
  std::string path = path_of(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string why;
  std::string_view payload = payload_of(file, stamp_, why);
  if (!why.empty()) {
    ignore(key, why);
    return std::nullopt;
  }
  std::error_code ec;  // another process may have removed it since: then there is no time to set
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
  return std::string(payload);
}

void DiskCache::write(std::string_view key, std::string_view payload) const {
  static std::atomic<std::uint64_t> next_temp{0};
  std::string path = path_of(key);
  fs::path temp = fs::path(dir_) / ("." + fs::path(path).filename().string() + ".tmp" +
                                    std::to_string(::getpid()) + "." + std::to_string(next_temp++));
  std::error_code ec;
  fs::create_directories(dir_, ec);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    std::string head = header(stamp_, payload);
    out.write(head.data(), static_cast<std::streamsize>(head.size()));
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    out.close();
    if (!out) {
      fs::remove(temp, ec);
      detail::log_message("jx: cannot write compilation cache entry " + path + ": " +
                          std::strerror(errno));
      return;
    }
  }
  fs::rename(temp, path, ec);
  if (ec) {
    fs::remove(temp, ec);
    detail::log_message("jx: cannot write compilation cache entry " + path + ": " + ec.message());
    return;
  }
  trim(path);
}

void DiskCache::trim(const std::string& keep) const {
  if (max_bytes_ <= 0) return;
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    std::uintmax_t bytes;
  };
  std::vector<Entry> entries;
  std::uintmax_t total = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    if (e.path().extension() != kSuffix || e.path().filename().string().front() == '.') continue;
    std::error_code gone;  // removed by another process meanwhile: not counted
    Entry entry{e.path(), e.last_write_time(gone), e.file_size(gone)};
    if (gone) continue;
    total += entry.bytes;
    entries.push_back(std::move(entry));
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= static_cast<std::uintmax_t>(max_bytes_)) break;
    if (e.path == keep) continue;
    if (fs::remove(e.path, ec)) total -= e.bytes;
  }
}

}  // namespace jx::support
