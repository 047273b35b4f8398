// Dump files named like XLA's: <dump_to>/module_0001.jit_f.<suffix>, as JX_FLAGS asks.
#pragma once

#include <string>

namespace jx::api {

enum class DumpKind { kJaxpr, kHlo, kLlvm, kPtx, kThunks, kDot };

// Whether this kind is dumped: --dump_to is set and either no --dump_* flag narrows it, or
// the kind's own flag is on.
bool dump_enabled(DumpKind kind);
// "<dump_to>/module_0001.jit_f" — the prefix every file of one module shares.
std::string dump_prefix(int module_id, const std::string& name);
// Writes `text` to dump_prefix(...) + "." + suffix, creating the directory.
void write_dump(int module_id, const std::string& name, const std::string& suffix,
                const std::string& text);

}  // namespace jx::api
