// Persistent cache entries as bytes: little-endian integers and length-prefixed strings, read
// back with every length checked (a damaged entry that passed its checksum still only throws).
#include "api/persistent_cache.hpp"

#include <link.h>

#include <cstring>
#include <mutex>

#include "backend/backend.hpp"
#include "codegen/cpu/cpu_compiler.hpp"
#include "core/array_impl.hpp"
#include "io/npy.hpp"
#include "jx/config.hpp"

namespace jx::api {
namespace {

class ByteWriter {
 public:
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  void str(std::string_view s) {
    u64(s.size());
    out_.append(s);
  }
  void aval(const ShapedArray& a) {
    u64(static_cast<std::uint64_t>(a.dtype));
    u64(a.weak_type);
    u64(a.shape.size());
    for (std::int64_t d : a.shape) u64(static_cast<std::uint64_t>(d));
  }
  void avals(const std::vector<ShapedArray>& as) {
    u64(as.size());
    for (const ShapedArray& a : as) aval(a);
  }
  void tree(const tree::TreeDef& t) {
    u64(static_cast<std::uint64_t>(t.kind));
    str(t.name);
    u64(t.keys.size());
    for (const std::string& k : t.keys) str(k);
    u64(t.children.size());
    for (const tree::TreeDef& c : t.children) tree(c);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  std::uint64_t u64() {
    std::string_view b = take(8);
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(b[i])} << (8 * i);
    return v;
  }
  std::string str() { return std::string(take(count(1))); }
  // A length that the bytes left can hold, at `unit` bytes per item at least.
  std::size_t count(std::size_t unit) {
    std::uint64_t n = u64();
    if (n > (in_.size() - at_) / unit) fail();
    return static_cast<std::size_t>(n);
  }
  ShapedArray aval() {
    ShapedArray a;
    std::uint64_t dtype = u64();
    if (dtype >= std::size(kAllDTypes)) fail();
    a.dtype = kAllDTypes[dtype];
    a.weak_type = u64() != 0;
    a.shape.resize(count(8));
    for (std::int64_t& d : a.shape) d = static_cast<std::int64_t>(u64());
    return a;
  }
  std::vector<ShapedArray> avals() {
    std::vector<ShapedArray> out(count(24));
    for (ShapedArray& a : out) a = aval();
    return out;
  }
  tree::TreeDef tree(int depth = 0) {
    if (depth > 256) fail();
    tree::TreeDef t;
    std::uint64_t kind = u64();
    if (kind > static_cast<std::uint64_t>(tree::TreeDef::Kind::static_value)) fail();
    t.kind = static_cast<tree::TreeDef::Kind>(kind);
    t.name = str();
    t.keys.resize(count(8));
    for (std::string& k : t.keys) k = str();
    t.children.resize(count(32));
    for (tree::TreeDef& c : t.children) c = tree(depth + 1);
    return t;
  }
  void expect_end() const {
    if (at_ != in_.size()) fail();
  }

 private:
  [[noreturn]] void fail() const { throw Error("a persistent cache entry is malformed"); }
  std::string_view take(std::size_t n) {
    if (n > in_.size() - at_) fail();
    std::string_view out = in_.substr(at_, n);
    at_ += n;
    return out;
  }
  std::string_view in_;
  std::size_t at_ = 0;
};

void put_code(ByteWriter& w, const backend::ProgramCode& code) {
  w.u64(code.modules.size());
  for (const std::string& m : code.modules) w.str(m);
}
backend::ProgramCode get_code(ByteReader& r) {
  backend::ProgramCode code;
  code.modules.resize(r.count(8));
  for (std::string& m : code.modules) m = r.str();
  return code;
}

// The ELF build ID of the binary jx is linked into: compiled code is only reused by the very
// build that wrote it, as a rebuilt jx may lay out kernels' arguments differently.
std::string build_id() {
  struct Search {
    std::uintptr_t address;
    std::string id;
  } search{reinterpret_cast<std::uintptr_t>(&build_id), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& s = *static_cast<Search*>(data);
        bool ours = false;
        for (int k = 0; k < info->dlpi_phnum; ++k) {
          const ElfW(Phdr)& p = info->dlpi_phdr[k];
          std::uintptr_t begin = info->dlpi_addr + p.p_vaddr;
          ours =
              ours || (p.p_type == PT_LOAD && s.address >= begin && s.address < begin + p.p_memsz);
        }
        if (!ours) return 0;
        for (int k = 0; k < info->dlpi_phnum; ++k) {
          const ElfW(Phdr)& p = info->dlpi_phdr[k];
          if (p.p_type != PT_NOTE) continue;
          const char* at = reinterpret_cast<const char*>(info->dlpi_addr + p.p_vaddr);
          const char* end = at + p.p_memsz;
          while (at + sizeof(ElfW(Nhdr)) <= end) {
            ElfW(Nhdr) note;
            std::memcpy(&note, at, sizeof note);
            const char* desc = at + sizeof note + ((note.n_namesz + 3) & ~3U);
            if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
                std::memcmp(at + sizeof note, "GNU", 4) == 0) {
              static const char* digits = "0123456789abcdef";
              for (std::size_t i = 0; i < note.n_descsz; ++i) {
                auto byte = static_cast<unsigned char>(desc[i]);
                s.id += digits[byte >> 4];
                s.id += digits[byte & 15];
              }
              return 1;
            }
            at = desc + ((note.n_descsz + 3) & ~3U);
          }
        }
        return 1;
      },
      &search);
  // Without a build ID (a linker told not to write one), the time this file was compiled.
  return search.id.empty() ? std::string(__DATE__ " " __TIME__) : search.id;
}

}  // namespace

std::shared_ptr<const support::DiskCache> disk_cache() {
  static std::mutex mu;
  static std::shared_ptr<const support::DiskCache> cache;
  static std::string dir;
  static long long max_bytes = 0;
  const Config& cfg = config();
  std::lock_guard lock(mu);
  if (cfg.compilation_cache_dir.empty()) return nullptr;
  if (!cache || dir != cfg.compilation_cache_dir || max_bytes != cfg.compilation_cache_max_bytes) {
    static const std::string stamp =
        "jx " JX_VERSION_STRING " (build " + build_id() + "), LLVM " + codegen::llvm_version();
    dir = cfg.compilation_cache_dir;
    max_bytes = cfg.compilation_cache_max_bytes;
    cache = std::make_shared<const support::DiskCache>(dir, stamp, max_bytes);
  }
  return cache;
}

std::string program_key(const std::string& hlo_text, const backend::ExecutableSpec& spec) {
  ByteWriter w;
  w.str("program");
  w.str(backend::code_target(spec.device));
  w.avals(spec.in_avals);
  w.avals(spec.out_avals);
  w.u64(spec.donated.size());
  for (bool d : spec.donated) w.u64(d);
  w.str(hlo_text);
  return w.take();
}

std::string write_code(const backend::ProgramCode& code) {
  ByteWriter w;
  put_code(w, code);
  return w.take();
}

backend::ProgramCode read_code(const std::string& bytes) {
  ByteReader r(bytes);
  backend::ProgramCode code = get_code(r);
  r.expect_end();
  return code;
}

std::string write_warm_entry(const WarmEntry& entry) {
  ByteWriter w;
  w.u64(entry.jaxpr_fingerprint);
  w.tree(entry.out_tree);
  w.u64(entry.consts.size());
  for (const Array& c : entry.consts) {
    const Buffer& data = concrete_buffer(c, "a persistent cache entry");
    w.u64(c.aval().weak_type);
    w.str(npy::header(c.aval()) + std::string(data.as<char>(), data.nbytes()));
  }
  const StoredProgram& p = entry.program;
  w.str(p.hlo_text);
  w.avals(p.in_avals);
  w.avals(p.out_avals);
  w.u64(p.donated.size());
  for (bool d : p.donated) w.u64(d);
  put_code(w, p.code);
  return w.take();
}

WarmEntry read_warm_entry(const std::string& bytes) {
  ByteReader r(bytes);
  WarmEntry e;
  e.jaxpr_fingerprint = r.u64();
  e.out_tree = r.tree();
  e.consts.resize(r.count(16));
  for (Array& c : e.consts) {
    bool weak = r.u64() != 0;
    std::string npy = r.str();
    c = npy::parse({reinterpret_cast<const unsigned char*>(npy.data()), npy.size()},
                   "a persistent cache entry");
    if (weak) c = with_aval(c, {c.shape(), c.dtype(), true});
  }
  StoredProgram& p = e.program;
  p.hlo_text = r.str();
  p.in_avals = r.avals();
  p.out_avals = r.avals();
  p.donated.resize(r.count(8));
  for (std::size_t k = 0; k < p.donated.size(); ++k) p.donated[k] = r.u64() != 0;
  p.code = get_code(r);
  r.expect_end();
  return e;
}

}  // namespace jx::api
