#include "codegen/cpu/cpu_isa.hpp"

#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>

#include <algorithm>
#include <vector>

#include "jx/errors.hpp"

namespace jx::codegen::cpu {
namespace {

// Features that need AVX-512's 512-bit registers or come after it.
bool past_avx2(std::string_view feature) {
  for (std::string_view prefix : {"avx512", "evex512", "avx10", "amx"})
    if (feature.substr(0, prefix.size()) == prefix) return true;
  return false;
}

CpuIsa resolve(bool cap_at_avx2) {
  CpuIsa isa;
  isa.cpu = llvm::sys::getHostCPUName().str();
  std::vector<std::string> features;
  bool avx2 = false, avx512 = false;
  for (const auto& f : llvm::sys::getHostCPUFeatures()) {
    bool on = f.second && !(cap_at_avx2 && past_avx2(f.first()));
    features.push_back((on ? "+" : "-") + f.first().str());
    avx2 |= on && f.first() == "avx2";
    avx512 |= on && f.first() == "avx512f";
    isa.bf16_pairs |= on && f.first() == "avx512bf16";
  }
  std::sort(features.begin(), features.end());  // a stable string: it names the code
  for (const std::string& f : features) isa.features += (isa.features.empty() ? "" : ",") + f;
  isa.name = avx512 ? "avx512" : avx2 ? "avx2" : "sse";
  isa.vector_bytes = avx512 ? 64 : avx2 ? 32 : 16;
  isa.full_width_512 = avx512 && isa.cpu != "znver4";
  return isa;
}

}  // namespace

const CpuIsa& cpu_isa(std::string_view flag) {
  if (flag != "avx2" && flag != "avx512" && flag != "native")
    throw ValueError("cpu_isa must be avx2, avx512 or native, got '" + std::string(flag) + "'");
  static const CpuIsa native = resolve(false);
  static const CpuIsa capped = resolve(true);
  return flag == "avx2" ? capped : native;
}

}  // namespace jx::codegen::cpu
