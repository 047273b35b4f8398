// Writes dump files under --dump_to, named like XLA's.
#include "api/dump.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "jx/config.hpp"
#include "jx/errors.hpp"

namespace jx::api {

bool dump_enabled(DumpKind kind) {
  const Config& c = config();
  if (c.dump_to.empty()) return false;
  bool narrowed = c.dump_jaxpr || c.dump_hlo || c.dump_llvm || c.dump_ptx || c.dump_dot;
  if (!narrowed) return true;
  switch (kind) {
    case DumpKind::kJaxpr:
      return c.dump_jaxpr;
    case DumpKind::kHlo:
    case DumpKind::kThunks:
      return c.dump_hlo;
    case DumpKind::kLlvm:
      return c.dump_llvm;
    case DumpKind::kPtx:
      return c.dump_ptx;
    case DumpKind::kDot:
      return c.dump_dot;
  }
  return false;
}

std::string dump_prefix(int module_id, const std::string& name) {
  std::error_code ec;  // a failure shows when the file is written
  std::filesystem::create_directories(config().dump_to, ec);
  char id[16];
  std::snprintf(id, sizeof id, "%04d", module_id);
  return (std::filesystem::path(config().dump_to) / ("module_" + std::string(id) + "." + name))
      .string();
}

void write_dump(int module_id, const std::string& name, const std::string& suffix,
                const std::string& text) {
  std::string path = dump_prefix(module_id, name) + "." + suffix;
  std::ofstream out(path);
  if (!out) throw Error("cannot write dump file " + path);
  out << text;
}

}  // namespace jx::api
