// .npz checkpoints: the zip archive around the NPY arrays (io/npy.cpp), written with stored
// entries as numpy.savez does, read back stored or deflated (numpy.savez_compressed).
#include "jx/npz.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>

#include "io/npy.hpp"
#include "core/array_impl.hpp"

namespace jx {
namespace {

using Bytes = std::vector<unsigned char>;

constexpr std::uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr std::uint32_t kMax32 = 0xffffffff;

using u16 = std::uint16_t;
using u32 = std::uint32_t;

// Appends each value little-endian, in its own width.
template <class... T>
void put(std::string& s, T... v) {
  auto one = [&](auto x) {
    for (std::size_t k = 0; k < sizeof x; ++k) s += static_cast<char>(x >> 8 * k & 0xff);
  };
  (one(v), ...);
}
std::uint32_t get16(const unsigned char* p) { return p[0] | std::uint32_t{p[1]} << 8; }
std::uint32_t get32(const unsigned char* p) { return get16(p) | get16(p + 2) << 16; }

std::string os_error() { return std::strerror(errno); }

// The fields a local header and a central directory record share, from "version needed" on:
// version 2.0, stored, a fixed timestamp (1980-01-01 00:00) so equal trees give equal files.
std::string zip_fields(const std::string& name, std::uint32_t crc, std::uint32_t size) {
  bool utf8 = false;
  for (unsigned char c : name) utf8 |= c >= 0x80;
  std::string s;  // version, flags (bit 11: a UTF-8 name), method, time, date, CRC, sizes, ...
  put(s, u16{20}, u16(utf8 ? 0x800 : 0), u16{0}, u16{0}, u16{0x21}, crc, size, size,
      static_cast<u16>(name.size()), u16{0});
  return s;
}

// The checkpoint's temporary twin in the same directory (so rename is atomic); removed
// unless commit() renames it over the target.
class TempFile {
 public:
  explicit TempFile(std::string path) : path_(std::move(path)) {
    static std::atomic<unsigned> counter{0};
    tmp_ = path_ + ".tmp" + std::to_string(::getpid()) + "." + std::to_string(counter++);
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0) fail();
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tmp_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  void write(const void* data, std::size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      ssize_t k = ::write(fd_, p, n);
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) fail();
      p += k;
      n -= static_cast<std::size_t>(k);
    }
  }
  void write(const std::string& s) { write(s.data(), s.size()); }
  void commit() {
    if (::fsync(fd_) != 0) fail();
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0 || std::rename(tmp_.c_str(), path_.c_str()) != 0) fail();
    committed_ = true;
  }

 private:
  [[noreturn]] void fail() { throw Error("cannot write checkpoint " + path_ + ": " + os_error()); }
  std::string path_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

// ---- reading -------------------------------------------------------------------------------

template <class Map>
[[noreturn]] void throw_missing(const std::string& path, const std::string& name, const Map& m) {
  std::string has;
  std::size_t i = 0;
  for (auto it = m.begin(); it != m.end() && i < 20; ++it, ++i) has += (i ? ", " : "") + it->first;
  if (m.size() > 20) has += ", ... (" + std::to_string(m.size() - 20) + " more)";
  throw Error("checkpoint " + path + " has no entry '" + name +
              "' (it has: " + (has.empty() ? "no entries" : has) + ")");
}

struct Member {
  std::string name;  // without ".npy"
  std::uint32_t flags, method, crc, csize, usize, offset;
};

// An open .npz file and its central directory; entries are read on demand.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error("cannot read checkpoint " + path_ + ": " + os_error());
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || S_ISDIR(st.st_mode)) {
      std::string reason = S_ISDIR(st.st_mode) ? std::strerror(EISDIR) : os_error();
      ::close(fd_);
      throw Error("cannot read checkpoint " + path_ + ": " + reason);
    }
    size_ = static_cast<std::uint64_t>(st.st_size);
    try {
      read_directory();
    } catch (...) {
      ::close(fd_);
      throw;
    }
  }
  ~Reader() { ::close(fd_); }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::map<std::string, Member>& members() const { return members_; }
  const Member& find(const std::string& name) const {
    auto it = members_.find(name);
    if (it == members_.end()) throw_missing(path_, name, members_);
    return it->second;
  }
  Array read(const Member& m) const;

 private:
  // The n bytes at `offset`, or nothing when they lie past the end of the file.
  std::optional<Bytes> read_at(std::uint64_t offset, std::uint64_t n) const {
    if (offset > size_ || n > size_ - offset) return std::nullopt;
    Bytes out(n);
    for (std::uint64_t done = 0; done < n;) {
      ssize_t k = ::pread(fd_, out.data() + done, n - done, static_cast<off_t>(offset + done));
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) throw Error("cannot read checkpoint " + path_ + ": " + os_error());
      if (k == 0) return std::nullopt;
      done += static_cast<std::uint64_t>(k);
    }
    return out;
  }
  [[noreturn]] void corrupt(const std::string& what) const {
    throw Error("checkpoint " + path_ + " is corrupt: " + what);
  }
  [[noreturn]] void bad_entry(const Member& m, const std::string& what) const {
    throw Error("entry '" + m.name + "' of " + path_ + " " + what);
  }
  void read_directory();
  Bytes inflate_entry(const Member& m, const Bytes& raw) const;

  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::map<std::string, Member> members_;
};

void Reader::read_directory() {
  // The end record is the last 22 bytes, unless an archive comment (at most 64 KiB) follows it.
  std::uint64_t tail = std::min<std::uint64_t>(size_, 22 + 0xffff);
  Bytes t = read_at(size_ - tail, tail).value_or(Bytes{});
  std::optional<std::size_t> end;
  for (std::size_t i = t.size() < 22 ? 0 : t.size() - 21; i-- > 0 && !end;)
    if (get32(&t[i]) == kEndSig && i + 22 + get16(&t[i + 20]) == t.size()) end = i;
  if (!end)
    throw Error("checkpoint " + path_ +
                " is not a zip archive (no end-of-central-directory record; truncated?)");
  const unsigned char* e = &t[*end];
  std::uint32_t count = get16(e + 10), cd_size = get32(e + 12), cd_offset = get32(e + 16);
  if (count == 0xffff || cd_size == kMax32 || cd_offset == kMax32)
    throw Error("checkpoint " + path_ + " is a zip64 archive, which jx does not read");
  if (get16(e + 4) != 0 || get16(e + 6) != 0 || get16(e + 8) != count)
    corrupt("it spans several disks");
  std::uint64_t end_offset = size_ - tail + *end;
  auto cd =
      std::uint64_t{cd_offset} + cd_size <= end_offset ? read_at(cd_offset, cd_size) : std::nullopt;
  if (!cd) corrupt("its central directory lies outside the file");
  for (std::size_t pos = 0, i = 0; i < count; ++i) {
    if (cd->size() - pos < 46 || get32(&(*cd)[pos]) != kCentralSig)
      corrupt("bad central directory record " + std::to_string(i));
    const unsigned char* r = &(*cd)[pos];
    std::size_t name_len = get16(r + 28), record = 46 + name_len + get16(r + 30) + get16(r + 32);
    if (cd->size() - pos < record) corrupt("bad central directory record " + std::to_string(i));
    Member m{std::string(reinterpret_cast<const char*>(r + 46), name_len)};
    m.flags = get16(r + 8), m.method = get16(r + 10), m.crc = get32(r + 16);
    m.csize = get32(r + 20), m.usize = get32(r + 24), m.offset = get32(r + 42);
    if (m.csize == kMax32 || m.usize == kMax32 || m.offset == kMax32)
      throw Error("checkpoint " + path_ + " is a zip64 archive, which jx does not read");
    if (m.name.ends_with(".npy")) m.name.resize(m.name.size() - 4);
    if (members_.contains(m.name)) corrupt("entry '" + m.name + "' appears twice");
    members_.emplace(m.name, std::move(m));
    pos += record;
  }
}

Bytes Reader::inflate_entry(const Member& m, const Bytes& raw) const {
  // Deflate expands at most ~1032:1; a larger claim is a corrupt header, not a reason to
  // allocate gigabytes.
  if (m.usize > std::uint64_t{m.csize} * 1032 + 64) bad_entry(m, "is corrupt: bad sizes");
  Bytes out(std::max<std::uint32_t>(m.usize, 1));  // one spare byte: a 0-byte claim is checked
  z_stream z{};
  if (inflateInit2(&z, -15) != Z_OK) throw Error("zlib: inflateInit2 failed");
  z.next_in = const_cast<unsigned char*>(raw.data());
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&z, Z_FINISH);
  std::string msg = z.msg ? z.msg : "unexpected end of data";
  std::uint64_t produced = out.size() - z.avail_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END && rc != Z_DATA_ERROR && z.avail_out == 0)
    bad_entry(m, "is corrupt: it inflates to more than " + std::to_string(m.usize) + " bytes");
  if (rc != Z_STREAM_END) bad_entry(m, "is corrupt: bad deflate data (" + msg + ")");
  out.resize(produced);
  if (produced != m.usize)
    bad_entry(m, "is corrupt: it inflates to " + std::to_string(produced) + " bytes, not " +
                     std::to_string(m.usize));
  return out;
}

Array Reader::read(const Member& m) const {
  if (m.flags & 1) bad_entry(m, "is encrypted, which jx does not read");
  if (m.method != 0 && m.method != 8)
    bad_entry(m, "uses compression method " + std::to_string(m.method) +
                     "; jx reads stored (0) and deflated (8) entries");
  auto local = read_at(m.offset, 30);
  if (!local || get32(local->data()) != kLocalSig)
    bad_entry(m, "is corrupt: bad local header signature");
  std::uint64_t data = std::uint64_t{m.offset} + 30 + get16(&(*local)[26]) + get16(&(*local)[28]);
  auto raw = read_at(data, m.csize);
  if (!raw) bad_entry(m, "is truncated: its data runs past the end of the file");
  if (m.method == 0 && m.csize != m.usize) bad_entry(m, "is corrupt: bad sizes");
  Bytes bytes = m.method == 8 ? inflate_entry(m, *raw) : std::move(*raw);
  std::uint32_t crc = static_cast<std::uint32_t>(crc32_z(0, bytes.data(), bytes.size()));
  if (crc != m.crc) {
    char hex[64];
    std::snprintf(hex, sizeof hex, "(stored 0x%08x, computed 0x%08x)", m.crc, crc);
    bad_entry(m, std::string("is corrupt: CRC-32 mismatch ") + hex);
  }
  return npy::parse(bytes, "entry '" + m.name + "' of " + path_);
}

void check_aval(const std::string& path, const std::string& name, const ShapedArray& got,
                const ShapedArray& want) {
  if (got.dtype == want.dtype && got.shape == want.shape) return;
  std::string msg = "entry '" + name + "' of " + path + " is " + got.str() + ", expected " +
                    ShapedArray{want.shape, want.dtype, false}.str();
  if (got.dtype != want.dtype) throw TypeError(msg);
  throw ShapeError(msg);
}

}  // namespace

std::map<std::string, Array> load_npz_entries(const std::string& path) {
  Reader reader(path);
  std::map<std::string, Array> out;
  for (const auto& [name, m] : reader.members()) out.emplace(name, reader.read(m));
  return out;
}

namespace detail::npz {

void check_key(const std::string& key) {
  if (key.empty() || key.find('/') != std::string::npos)
    throw Error("npz: map key '" + key +
                "' cannot name a checkpoint entry (keys must be non-empty, without '/')");
}

void write_archive(const std::string& path, const std::vector<std::pair<std::string, Array>>& e) {
  if (e.size() >= 0xffff)
    throw Error("save_npz: " + path + " would need zip64 (over 4 GiB or 65535 entries)");
  TempFile file(path);
  std::string central;
  std::uint64_t offset = 0;
  for (const auto& [name, x] : e) {
    if (!x.valid()) throw Error("save_npz: leaf '" + name + "' is an empty jx::Array");
    const Buffer& buffer = concrete_buffer(x, "save_npz");
    std::string header = npy::header(x.aval()), zip_name = name + ".npy";
    std::uint64_t size = header.size() + buffer.nbytes();
    auto crc = crc32_z(crc32_z(0, reinterpret_cast<const Bytef*>(header.data()), header.size()),
                       buffer.as<Bytef>(), buffer.nbytes());
    std::uint64_t next = offset + 30 + zip_name.size() + size;
    if (next > kMax32)
      throw Error("save_npz: " + path + " would need zip64 (over 4 GiB or 65535 entries)");
    std::string fields =
        zip_fields(zip_name, static_cast<std::uint32_t>(crc), static_cast<std::uint32_t>(size));
    std::string local;
    put(local, kLocalSig);
    file.write(local + fields + zip_name + header);
    file.write(buffer.data(), buffer.nbytes());
    // made by Unix, zip 2.0; no comment; disk 0; Unix mode rw-r--r--; the local header's offset
    put(central, kCentralSig, u16{0x0314});
    central += fields;
    put(central, u16{0}, u16{0}, u16{0}, u32{0644} << 16, static_cast<u32>(offset));
    central += zip_name;
    offset = next;
  }
  if (offset + central.size() > kMax32)
    throw Error("save_npz: " + path + " would need zip64 (over 4 GiB or 65535 entries)");
  std::string end;  // disk 0 holds all entries; no archive comment
  auto n = static_cast<u16>(e.size());
  put(end, kEndSig, u16{0}, u16{0}, n, n, static_cast<u32>(central.size()),
      static_cast<u32>(offset), u16{0});
  file.write(central + end);
  file.commit();
}

std::vector<Array> read_leaves(const std::string& path, const std::vector<std::string>& names,
                               const std::vector<ShapedArray>& expected) {
  Reader reader(path);
  std::vector<Array> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out.push_back(reader.read(reader.find(names[i])));
    check_aval(path, names[i], out.back().aval(), expected[i]);
  }
  return out;
}

Array take(const Entries& entries, const std::string& path, const std::string& name,
           const ShapedArray* expected) {
  auto it = entries.find(name);
  if (it == entries.end()) throw_missing(path, name, entries);
  if (expected) check_aval(path, name, it->second.aval(), *expected);
  return it->second;
}

std::vector<std::string> children(const Entries& entries, const std::string& prefix) {
  std::string start = prefix.empty() ? "" : prefix + "/";
  std::set<std::string> out;
  for (auto it = entries.lower_bound(start); it != entries.end(); ++it) {
    if (!it->first.starts_with(start)) break;
    std::string rest = it->first.substr(start.size());
    out.insert(rest.substr(0, rest.find('/')));
  }
  return {out.begin(), out.end()};
}

std::size_t vector_size(const Entries& entries, const std::string& path,
                        const std::string& prefix) {
  std::vector<std::string> keys = children(entries, prefix);
  bool ok = true;
  for (const auto& key : keys) {
    std::size_t i = 0;
    auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), i);
    ok &= ec == std::errc() && end == key.data() + key.size() && (key == "0" || key[0] != '0') &&
          i < keys.size();
  }
  if (ok) return keys.size();  // n distinct names, each an index below n: exactly 0..n-1
  std::string found;
  for (const auto& key : keys) found += (found.empty() ? "" : ", ") + key;
  throw Error("checkpoint " + path + ": the entries " +
              (prefix.empty() ? std::string("at the top level") : "under '" + prefix + "'") +
              " must be numbered 0..n-1 to load as a std::vector; found " + found);
}

}  // namespace detail::npz
}  // namespace jx
