#include "codegen/cpu/cpu_isa.hpp"

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "jx/config.hpp"
#include "jx/errors.hpp"

namespace jx::codegen::cpu {
namespace {

// What --cpu_isa leaves out of the host's features: under avx2, those that need AVX-512's
// 512-bit registers or come after it; under avx512, the tile unit (AMX); under native, nothing.
enum class Cap { kAvx2, kAvx512, kNative };
bool left_out(std::string_view feature, Cap cap) {
  if (cap == Cap::kNative) return false;
  if (feature.starts_with("amx")) return true;
  if (cap == Cap::kAvx512) return false;
  for (std::string_view prefix : {"avx512", "evex512", "avx10"})
    if (feature.starts_with(prefix)) return true;
  return false;
}

// Linux lets a process use the tile unit's registers only once it asks (arch_prctl's
// ARCH_REQ_XCOMP_PERM, Linux 5.16 on): their 8 KiB are then saved with each thread that uses
// them. Asked once; a refusal leaves the tile features off.
bool os_grants_tiles() {
#if defined(__linux__) && defined(__x86_64__)
  constexpr long kRequestPermission = 0x1023, kTileData = 18;
  static const bool granted = syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
  return granted;
#else
  return false;
#endif
}

// The size of cpu0's data cache of `level` (0: the highest level it has), as Linux describes it
// (one instance: on a CPU of several core complexes, what one complex's cores share), as much of
// it as cache_to_count_on allows, or 0.
std::int64_t data_cache_bytes(int level) {
  std::int64_t bytes = 0;
  for (int found = 0, index = 0;; ++index) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size"),
        shared_file(dir + "shared_cpu_list");
    int this_level = 0;
    std::string type, size, shared;
    if (!(level_file >> this_level && type_file >> type && size_file >> size)) return bytes;
    if (type == "Instruction" || this_level < found || (level && this_level != level)) continue;
    char* unit = nullptr;
    std::int64_t n = std::strtoll(size.c_str(), &unit, 10);
    std::int64_t scale = *unit == 'K' ? 1 << 10 : *unit == 'M' ? 1 << 20 : 1;
    shared_file >> shared;
    found = this_level;
    bytes = cache_to_count_on(n * scale, shared);
  }
}

Cap cap_of(std::string_view flag) {
  if (flag == "avx2") return Cap::kAvx2;
  if (flag == "avx512") return Cap::kAvx512;
  if (flag == "native") return Cap::kNative;
  throw ValueError("cpu_isa must be avx2, avx512 or native, got '" + std::string(flag) + "'");
}

CpuIsa capped(std::string cpu, const std::vector<std::pair<std::string, bool>>& host_features,
              Cap cap, const std::function<bool()>& grants_tiles) {
  CpuIsa isa;
  isa.cpu = std::move(cpu);
  std::optional<bool> granted;  // asked at most once
  auto tiles = [&] {
    if (!granted) granted = grants_tiles();
    return *granted;
  };
  std::vector<std::string> features;
  bool avx2 = false, avx512 = false, amx_tile = false, amx_bf16 = false;
  for (const auto& [name, has] : host_features) {
    bool on = has && !left_out(name, cap) && (!name.starts_with("amx") || tiles());
    features.push_back((on ? "+" : "-") + name);
    avx2 |= on && name == "avx2";
    avx512 |= on && name == "avx512f";
    isa.avx512_bf16 |= on && name == "avx512bf16";
    amx_tile |= on && name == "amx-tile";
    amx_bf16 |= on && name == "amx-bf16";
  }
  isa.amx_bf16 = amx_tile && amx_bf16;
  std::sort(features.begin(), features.end());  // a stable string: it names the code
  for (const std::string& f : features) isa.features += (isa.features.empty() ? "" : ",") + f;
  isa.name = avx512 ? "avx512" : avx2 ? "avx2" : "sse";
  isa.vector_bytes = avx512 ? 64 : avx2 ? 32 : 16;
  isa.zen = isa.cpu.rfind("znver", 0) == 0;
  isa.full_width_512 = avx512 && isa.cpu != "znver4";
  isa.full_width_256 = avx2 && isa.cpu != "znver1";
  return isa;
}

CpuIsa resolve(Cap cap) {
  std::vector<std::pair<std::string, bool>> host;
  for (const auto& f : llvm::sys::getHostCPUFeatures())
    host.emplace_back(f.first().str(), f.second);
  CpuIsa isa = capped(llvm::sys::getHostCPUName().str(), host, cap, os_grants_tiles);
  if (std::int64_t bytes = data_cache_bytes(2)) isa.second_level_cache = bytes;
  if (std::int64_t bytes = data_cache_bytes(0)) isa.last_level_cache = bytes;
  isa.cores = host_cores();
  return isa;
}

// `isa` with vectors of `bits` (0: its own), as cpu_isa's `vector_width` says.
CpuIsa with_vector_width(CpuIsa isa, int bits) {
  if (bits == 0) return isa;
  bool wider = static_cast<unsigned>(bits / 8) > isa.vector_bytes;
  isa.vector_bytes = static_cast<unsigned>(bits / 8);
  isa.full_width_512 = bits == 512 && (wider || isa.full_width_512);
  return isa;
}

// The ISA under `cap` at vector widths 0, 256 and 512, resolved when first asked for: only
// native asks the OS for the tile registers.
template <Cap cap>
const std::array<CpuIsa, 3>& widths() {
  static const std::array<CpuIsa, 3> all = [] {
    CpuIsa own = resolve(cap);
    return std::array<CpuIsa, 3>{own, with_vector_width(own, 256), with_vector_width(own, 512)};
  }();
  return all;
}

}  // namespace

std::int64_t cache_to_count_on(std::int64_t bytes, std::string_view shared_cpu_list) {
  std::int64_t sharing = 0;
  for (std::size_t at = 0; at < shared_cpu_list.size();) {
    std::size_t comma = std::min(shared_cpu_list.find(',', at), shared_cpu_list.size());
    std::string range(shared_cpu_list.substr(at, comma - at));
    at = comma + 1;
    char* end = nullptr;
    long long first = std::strtoll(range.c_str(), &end, 10);
    if (end == range.c_str()) continue;  // not a number: counts no CPU
    long long last = *end == '-' ? std::strtoll(end + 1, nullptr, 10) : first;
    sharing = std::min<std::int64_t>(sharing + std::max(0LL, last - first + 1), 1 << 20);
  }
  if (sharing == 0) return bytes;  // an unknown list: no cap
  return std::min(bytes, sharing * kMostCachePerCpu);
}

int host_cores() {
  // The CPUs the process may run on (what `nproc` prints, and what XLA counts), not all of the
  // machine's: in a cpuset of fewer, more threads would only share them.
  static const int n = [] {
#if defined(__linux__)
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
      return std::max(1, CPU_COUNT(&allowed));
#endif
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return n;
}

const CpuIsa& cpu_isa(std::string_view flag, int vector_width) {
  Cap cap = cap_of(flag);
  if (vector_width != 0 && vector_width != 256 && vector_width != 512)
    throw ValueError("cpu_vector_width must be 0, 256 or 512, got " + std::to_string(vector_width));
  auto w = static_cast<std::size_t>(vector_width / 256);
  if (cap == Cap::kAvx2) return widths<Cap::kAvx2>()[w];
  if (cap == Cap::kAvx512) return widths<Cap::kAvx512>()[w];
  return widths<Cap::kNative>()[w];
}

CpuIsa capped_isa(std::string cpu, const std::vector<std::pair<std::string, bool>>& host_features,
                  std::string_view flag, const std::function<bool()>& grants_tiles) {
  return capped(std::move(cpu), host_features, cap_of(flag), grants_tiles);
}

CpuIsa with_amx_tiles(CpuIsa isa) {
  for (std::string_view feature : {"amx-bf16", "amx-tile"}) {
    std::string off = "-" + std::string(feature);
    if (std::size_t at = isa.features.find(off); at != std::string::npos)
      isa.features[at] = '+';
    else if (isa.features.find("+" + std::string(feature)) == std::string::npos)
      isa.features += ",+" + std::string(feature);
  }
  isa.amx_bf16 = true;
  return isa;
}

const CpuIsa& configured_cpu_isa() { return cpu_isa(config().cpu_isa, config().cpu_vector_width); }

}  // namespace jx::codegen::cpu
