// libdevice: finding the file, its math table, and linking what a module calls from it.
#define JX_LLVM_GPU
#include "codegen/gpu/libdevice.hpp"

#include <cstdlib>
#include <filesystem>
#include <unordered_set>

#include "codegen/gpu/gpu_compiler.hpp"
#include "jx/errors.hpp"

namespace jx::codegen {

std::string find_libdevice() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("JX_LIBDEVICE"); env && *env) candidates.push_back(env);
  candidates.push_back("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc");
  candidates.push_back("/usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc");
  for (const std::string& path : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) return path;
  }
  return "";
}

namespace gpu {

const MathTable& libdevice_math_table() {
  namespace I = llvm::Intrinsic;
  static const MathTable table =
      MathTable()
          .set(MathFn::kExp, {.f32 = "__nv_expf", .f64 = "__nv_exp"})
          .set(MathFn::kExpNonPositive, {.f32 = "__nv_expf", .f64 = "__nv_exp"})
          .set(MathFn::kLog, {.f32 = "__nv_logf", .f64 = "__nv_log"})
          .set(MathFn::kLog1p, {.f32 = "__nv_log1pf", .f64 = "__nv_log1p"})
          .set(MathFn::kExpm1, {.f32 = "__nv_expm1f", .f64 = "__nv_expm1"})
          .set(MathFn::kSin, {.f32 = "__nv_sinf", .f64 = "__nv_sin"})
          .set(MathFn::kCos, {.f32 = "__nv_cosf", .f64 = "__nv_cos"})
          .set(MathFn::kTan, {.f32 = "__nv_tanf", .f64 = "__nv_tan"})
          .set(MathFn::kTanh, {.f32 = "__nv_tanhf", .f64 = "__nv_tanh"})
          .set(MathFn::kSqrt, {.f32 = "__nv_sqrtf", .f64 = "__nv_sqrt"})
          .set(MathFn::kPow, {.f32 = "__nv_powf", .f64 = "__nv_pow"})
          .set(MathFn::kFloor, {.f32 = "__nv_floorf", .f64 = "__nv_floor"})
          .set(MathFn::kCeil, {.f32 = "__nv_ceilf", .f64 = "__nv_ceil"})
          .set(MathFn::kRound, {.f32 = "__nv_roundf", .f64 = "__nv_round"})
          .set(MathFn::kRoundEven, {.f32 = "__nv_rintf", .f64 = "__nv_rint"})
          .set(MathFn::kFabs, {.f32 = "__nv_fabsf", .f64 = "__nv_fabs"})
          .set(MathFn::kErf, {.f32 = "__nv_erff", .f64 = "__nv_erf"})
          .set(MathFn::kAtan2, {.f32 = "__nv_atan2f", .f64 = "__nv_atan2"})
          .set(MathFn::kMaximum, {I::maximum})
          .set(MathFn::kMinimum, {I::minimum})
          .set(MathFn::kExp2, {.f32 = "__nv_exp2f", .f64 = "__nv_exp2"})
          .set(MathFn::kCbrt, {.f32 = "__nv_cbrtf", .f64 = "__nv_cbrt"})
          .set(MathFn::kAsin, {.f32 = "__nv_asinf", .f64 = "__nv_asin"})
          .set(MathFn::kAcos, {.f32 = "__nv_acosf", .f64 = "__nv_acos"})
          .set(MathFn::kAtan, {.f32 = "__nv_atanf", .f64 = "__nv_atan"})
          .set(MathFn::kSinh, {.f32 = "__nv_sinhf", .f64 = "__nv_sinh"})
          .set(MathFn::kCosh, {.f32 = "__nv_coshf", .f64 = "__nv_cosh"})
          .set(MathFn::kAsinh, {.f32 = "__nv_asinhf", .f64 = "__nv_asinh"})
          .set(MathFn::kAcosh, {.f32 = "__nv_acoshf", .f64 = "__nv_acosh"})
          .set(MathFn::kAtanh, {.f32 = "__nv_atanhf", .f64 = "__nv_atanh"});
  return table;
}

void link_libdevice(llvm::Module& module, const std::string& path) {
  std::unordered_set<std::string> kernels;
  for (const llvm::Function& f : module)
    if (!f.isDeclaration()) kernels.insert(f.getName().str());
  llvm::SMDiagnostic diagnostic;
  // Lazily: only the functions the module calls are read from the file.
  std::unique_ptr<llvm::Module> lib =
      llvm::getLazyIRFileModule(path, diagnostic, module.getContext());
  if (!lib)
    throw CompileError("codegen: cannot read libdevice " + path + ": " +
                       diagnostic.getMessage().str());
  lib->setTargetTriple(module.getTargetTriple());
  lib->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(module, std::move(lib), llvm::Linker::Flags::LinkOnlyNeeded))
    throw CompileError("codegen: cannot link libdevice " + path);
  // libdevice asks __nvvm_reflect("__CUDA_FTZ"); NVVMReflect answers from this flag.
  module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", std::uint32_t{0});
  llvm::internalizeModule(
      module, [&](const llvm::GlobalValue& v) { return kernels.count(v.getName().str()) > 0; });
}

}  // namespace gpu
}  // namespace jx::codegen
