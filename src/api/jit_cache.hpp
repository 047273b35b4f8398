// The jit cache: owned signatures (the key), exact matching against a call's arguments, an LRU
// of compiled entries, and the text of signatures and of their differences (for messages).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/compile.hpp"
#include "jx/detail/jit_impl.hpp"
#include "jx/jit.hpp"

namespace jx::api {

struct StoredStatic {
  int argnum = 0;
  std::size_t hash = 0;
  const detail::StaticOps* ops = nullptr;
  std::shared_ptr<const void> value;
  std::string str() const { return ops->str(value.get()); }
};

// The flags a compiled program depends on, as they were when it was traced and compiled: a call
// under other values compiles anew (MissReason::flags_changed), as JAX keys its caches by the
// configuration a function is traced under.
struct CodeFlags {
  bool enable_x64 = false;               // the mode traced in: it decides the dtypes of C++ scalars
  std::string default_matmul_precision;  // read when tracing
  std::string cpu_isa;                   // the rest when compiling
  int cpu_vector_width = 0;
  bool precise_math = false;
  long long cpu_parallel_min_bytes = 0;

  static CodeFlags current();  // config()'s
  bool is_current() const;     // == current(), without copying config()'s strings
  bool operator==(const CodeFlags&) const = default;
  // Each flag's name and value, as --name=value would give it.
  std::vector<std::pair<std::string, std::string>> items() const;
};

// The abstract signature of one call, owned: what an entry is keyed by.
struct Signature {
  std::uint64_t hash = 0;
  const void* type_token = nullptr;  // the C++ argument types (nullptr: compare structures only)
  int num_args = 0;
  std::vector<std::uint64_t> sizes;  // tree::CompactStructure, owned
  std::vector<std::string> keys;
  std::vector<ShapedArray> avals;  // one per leaf
  std::vector<StoredStatic> statics;
  std::vector<tree::TreeDef> structures;  // one per argument (for messages)
  CodeFlags flags;
};

std::uint64_t hash_call(const detail::CallArgs& args);
// Exact: types, structure, every leaf's aval, every static value, and the code flags.
bool matches(const Signature& sig, const detail::CallArgs& args);
Signature make_signature(const detail::CallArgs& args, std::uint64_t hash,
                         std::vector<tree::TreeDef> structures);

std::string aval_str(const ShapedArray& aval);  // "f32[3]", "i32[] weak"
// For compile logs: "(f32[3], i32[] weak, static 3)", leaves and statics in argument order.
std::string signature_str(const Signature& sig);
// One difference between two signatures: why it misses, the argument's path (`args[0][1].w`),
// its value before and after (`f32[3]`, `static 3`), and the difference as messages print it.
struct SignatureDiff {
  MissReason reason;
  std::string path, before, after;
  std::string text;  // "args[0][1].w: f32[3] → f32[4]", "args[1]: weak_type true → false"
};
// What changed from `seen` to `now`, one item per difference, in argument order.
std::vector<SignatureDiff> signature_diffs(const Signature& seen, const Signature& now);
// The path of child `i` of `node` under `prefix`: prefix[1], prefix["bias"], prefix.w.
std::string child_path(const tree::TreeDef& node, std::size_t i, const std::string& prefix);

// One compiled signature. `program` runs it; a function closing over an outer trace's tracer
// has only `jaxpr`, evaluated (staged) on each call and never cached. A program loaded from a
// persistent cache's warm entry has no jaxpr.
struct CacheEntry {
  Signature sig;
  std::shared_ptr<const CompiledProgram> program;
  std::shared_ptr<const ClosedJaxprData> jaxpr;
  std::shared_ptr<const void> out_proto;
};

// Least recently used first out. Not synchronized: the owner holds its lock.
class JitCache {
 public:
  using EntryPtr = std::shared_ptr<const CacheEntry>;
  // The entry for `args`, made most recently used; null on a miss.
  EntryPtr find(const detail::CallArgs& args);
  // Adds `entry` (or returns the equal entry another thread added first), evicting down to
  // `capacity`.
  EntryPtr insert(EntryPtr entry, int capacity);
  std::vector<EntryPtr> entries() const;  // most recent first
  std::size_t size() const { return lru_.size(); }
  std::int64_t evictions() const { return evictions_; }
  // Whether `args` has the signature of an entry evicted from this cache (the last
  // kRememberedEvictions of them are remembered).
  bool was_evicted(const detail::CallArgs& args) const;
  void clear();

 private:
  static constexpr std::size_t kRememberedEvictions = 64;
  using List = std::list<EntryPtr>;
  List lru_;  // front: most recently used
  std::unordered_multimap<std::uint64_t, List::iterator> index_;
  std::list<Signature> evicted_;  // front: the most recent
  std::int64_t evictions_ = 0;
};

}  // namespace jx::api
