// The persistent compilation cache (--compilation_cache_dir): what its entries hold and how they
// are keyed. A program entry holds a program's native code, keyed by its optimized HLO; a warm
// entry (JitOptions::persistent_key) holds everything a call needs without tracing: the program
// with its HLO, the jaxpr's consts and the output's structure, keyed by the user's key and the
// call's signature.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/thunk_program.hpp"
#include "jx/array.hpp"
#include "jx/tree.hpp"
#include "support/disk_cache.hpp"

namespace jx::api {

// The disk cache of config().compilation_cache_dir, or null when that is empty. Its entries are
// stamped with jx's and LLVM's versions; its warnings go to config().log.
std::shared_ptr<const support::DiskCache> disk_cache();

// The key of a program entry: the optimized HLO's text, the executable's types and donations,
// and what its code depends on (backend::code_target).
std::string program_key(const std::string& hlo_text, const backend::ExecutableSpec& spec);

std::string write_code(const backend::ProgramCode& code);
// Throws jx::Error for bytes write_code did not write.
backend::ProgramCode read_code(const std::string& bytes);

// A compiled program as a warm entry keeps it: enough to build its executable again.
struct StoredProgram {
  std::string hlo_text;  // optimized
  std::vector<ShapedArray> in_avals, out_avals;
  std::vector<bool> donated;
  backend::ProgramCode code;
};

// A warm entry: the program, the consts it takes first, the structure of the function's output,
// and the fingerprint of the jaxpr it was compiled from (--verify_persistent_cache).
struct WarmEntry {
  std::uint64_t jaxpr_fingerprint = 0;
  tree::TreeDef out_tree;
  std::vector<Array> consts;
  StoredProgram program;
};

std::string write_warm_entry(const WarmEntry& entry);
// Throws jx::Error for bytes write_warm_entry did not write.
WarmEntry read_warm_entry(const std::string& bytes);

}  // namespace jx::api
