// The jit cache's key: hashing and matching a call against owned signatures, the LRU, and the
// text of signatures and of their differences.
#include "api/jit_cache.hpp"

#include <algorithm>
#include <functional>
#include <string_view>

#include "core/array_impl.hpp"
#include "jx/config.hpp"
#include "support/format.hpp"

namespace jx::api {
namespace {

// A 64-bit mix (splitmix64's finalizer over an accumulator): cheap and well spread.
inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 29);
}

inline std::uint64_t hash_aval(std::uint64_t h, const ShapedArray& a) {
  h = mix(h, static_cast<std::uint64_t>(a.dtype) | (a.weak_type ? 0x100u : 0u) |
                 (static_cast<std::uint64_t>(a.shape.size()) << 16));
  for (std::int64_t d : a.shape) h = mix(h, static_cast<std::uint64_t>(d));
  return h;
}

bool same_statics(const StoredStatic& s, const detail::StaticRef& r) {
  return s.argnum == r.argnum && s.ops == r.ops && s.hash == r.hash &&
         s.ops->equal(s.value.get(), r.value);
}

bool same_signature(const Signature& a, const Signature& b) {
  if (a.hash != b.hash || !(a.flags == b.flags) || a.type_token != b.type_token ||
      a.num_args != b.num_args || a.sizes != b.sizes || a.keys != b.keys || a.avals != b.avals ||
      a.statics.size() != b.statics.size())
    return false;
  for (std::size_t i = 0; i < a.statics.size(); ++i) {
    const StoredStatic& x = a.statics[i];
    detail::StaticRef y{b.statics[i].argnum, b.statics[i].hash, b.statics[i].ops,
                        b.statics[i].value.get()};
    if (!same_statics(x, y)) return false;
  }
  return true;
}

const StoredStatic* static_of(const Signature& sig, int argnum) {
  for (const auto& s : sig.statics)
    if (s.argnum == argnum) return &s;
  return nullptr;
}

std::string describe(const tree::TreeDef& t, const Signature& sig, int argnum, std::size_t leaf) {
  using Kind = tree::TreeDef::Kind;
  if (t.kind == Kind::leaf) return aval_str(sig.avals.at(leaf));
  if (t.kind == Kind::static_value) {
    const StoredStatic* s = static_of(sig, argnum);
    return s ? "static " + s->str() : "static";
  }
  return t.kind_str();
}

// Whether a and b are the same node (their children may still differ).
bool same_node(const tree::TreeDef& a, const tree::TreeDef& b) {
  return a.kind == b.kind && a.name == b.name && a.keys == b.keys &&
         a.children.size() == b.children.size();
}

struct Differ {
  const Signature& seen;
  const Signature& now;
  std::vector<SignatureDiff>& out;
  int argnum = 0;

  void add(MissReason reason, const std::string& path, std::string before, std::string after,
           std::string text = {}) {
    if (text.empty()) text = path + ": " + before + " → " + after;
    out.push_back({reason, path, std::move(before), std::move(after), std::move(text)});
  }

  void node(const tree::TreeDef& a, const tree::TreeDef& b, const std::string& path, std::size_t la,
            std::size_t lb) {
    using Kind = tree::TreeDef::Kind;
    if (a.kind == Kind::static_value && b.kind == Kind::static_value) {
      const StoredStatic* x = static_of(seen, argnum);
      const StoredStatic* y = static_of(now, argnum);
      if (!x || !y) return;
      std::string arg = "static arg " + std::to_string(argnum);
      if (x->ops != y->ops)
        add(MissReason::new_static_value, path, "static", "static", arg + ": its C++ type changed");
      else if (!x->ops->equal(x->value.get(), y->value.get()))
        add(MissReason::new_static_value, path, x->str(), y->str(),
            arg + ": " + x->str() + " → " + y->str());
      return;
    }
    if (a.kind == Kind::leaf && b.kind == Kind::leaf) {
      const ShapedArray& x = seen.avals.at(la);
      const ShapedArray& y = now.avals.at(lb);
      if (x == y) return;
      if (x.dtype == y.dtype && x.shape == y.shape)
        add(MissReason::new_weak_type, path, aval_str(x), aval_str(y),
            path + ": weak_type " + (x.weak_type ? "true" : "false") + " → " +
                (y.weak_type ? "true" : "false"));
      else
        add(x.dtype == y.dtype ? MissReason::new_shape : MissReason::new_dtype, path, aval_str(x),
            aval_str(y));
      return;
    }
    if (!same_node(a, b)) {
      add(MissReason::new_tree_structure, path, describe(a, seen, argnum, la),
          describe(b, now, argnum, lb));
      return;
    }
    for (std::size_t i = 0; i < a.children.size(); ++i) {
      node(a.children[i], b.children[i], child_path(a, i, path), la, lb);
      la += a.children[i].num_leaves();
      lb += b.children[i].num_leaves();
    }
  }
};

}  // namespace

CodeFlags CodeFlags::current() {
  const Config& c = config();
  return {c.enable_x64,   c.default_matmul_precision, c.cpu_isa, c.cpu_vector_width,
          c.precise_math, c.cpu_parallel_min_bytes};
}

bool CodeFlags::is_current() const {
  const Config& c = config();
  return enable_x64 == c.enable_x64 && precise_math == c.precise_math &&
         cpu_parallel_min_bytes == c.cpu_parallel_min_bytes && cpu_isa == c.cpu_isa &&
         cpu_vector_width == c.cpu_vector_width &&
         default_matmul_precision == c.default_matmul_precision;
}

std::vector<std::pair<std::string, std::string>> CodeFlags::items() const {
  auto word = [](bool b) { return std::string(b ? "true" : "false"); };
  return {{"enable_x64", word(enable_x64)},
          {"default_matmul_precision", default_matmul_precision},
          {"cpu_isa", cpu_isa},
          {"cpu_vector_width", std::to_string(cpu_vector_width)},
          {"precise_math", word(precise_math)},
          {"cpu_parallel_min_bytes", std::to_string(cpu_parallel_min_bytes)}};
}

std::uint64_t hash_call(const detail::CallArgs& args) {
  std::uint64_t h = mix(reinterpret_cast<std::uintptr_t>(args.type_token),
                        static_cast<std::uint64_t>(args.num_args));
  h = mix(h, config().enable_x64 ? 1 : 0);
  for (std::uint64_t s : args.structure.sizes) h = mix(h, s);
  for (const std::string* k : args.structure.keys) h = mix(h, std::hash<std::string_view>{}(*k));
  for (const Array& x : args.leaves) h = hash_aval(h, x.aval());
  for (const auto& s : args.statics) {
    h = mix(h, static_cast<std::uint64_t>(s.argnum));
    h = mix(h, s.hash);
  }
  return h;
}

bool matches(const Signature& sig, const detail::CallArgs& args) {
  if (sig.type_token != args.type_token || sig.num_args != args.num_args ||
      !sig.flags.is_current() || sig.avals.size() != args.leaves.size() ||
      sig.sizes != args.structure.sizes || sig.keys.size() != args.structure.keys.size() ||
      sig.statics.size() != args.statics.size())
    return false;
  for (std::size_t i = 0; i < sig.keys.size(); ++i)
    if (sig.keys[i] != *args.structure.keys[i]) return false;
  for (std::size_t i = 0; i < sig.avals.size(); ++i)
    if (!(sig.avals[i] == args.leaves[i].aval())) return false;
  for (std::size_t i = 0; i < sig.statics.size(); ++i)
    if (!same_statics(sig.statics[i], args.statics[i])) return false;
  return true;
}

Signature make_signature(const detail::CallArgs& args, std::uint64_t hash,
                         std::vector<tree::TreeDef> structures) {
  Signature sig;
  sig.hash = hash;
  sig.type_token = args.type_token;
  sig.num_args = args.num_args;
  sig.sizes = args.structure.sizes;
  for (const std::string* k : args.structure.keys) sig.keys.push_back(*k);
  for (const Array& x : args.leaves) sig.avals.push_back(x.aval());
  for (const auto& s : args.statics)
    sig.statics.push_back(StoredStatic{s.argnum, s.hash, s.ops, s.ops->copy(s.value)});
  sig.structures = std::move(structures);
  sig.flags = CodeFlags::current();
  return sig;
}

std::string aval_str(const ShapedArray& aval) {
  return aval.weak_type ? aval.str() + " weak" : aval.str();
}

std::string signature_str(const Signature& sig) {
  std::vector<std::string> parts;
  std::size_t leaf = 0;
  for (std::size_t i = 0; i < sig.structures.size(); ++i) {
    const tree::TreeDef& t = sig.structures[i];
    if (t.kind == tree::TreeDef::Kind::static_value) {
      parts.push_back(describe(t, sig, static_cast<int>(i), leaf));
      continue;
    }
    for (std::size_t k = 0, n = t.num_leaves(); k < n; ++k)
      parts.push_back(aval_str(sig.avals[leaf++]));
  }
  std::string s = "(";  // appending, not "(" + rvalue: GCC 12 -O3 warns falsely (-Wrestrict)
  return s.append(detail::join(parts, ", ")).append(")");
}

std::vector<SignatureDiff> signature_diffs(const Signature& seen, const Signature& now) {
  std::vector<SignatureDiff> out;
  Differ d{seen, now, out};
  if (seen.structures.size() != now.structures.size()) {
    auto count = [](std::size_t n) {
      return std::to_string(n) + (n == 1 ? " argument" : " arguments");
    };
    d.add(MissReason::new_tree_structure, "args", count(seen.structures.size()),
          count(now.structures.size()));
    return out;
  }
  auto seen_flags = seen.flags.items(), now_flags = now.flags.items();
  for (std::size_t i = 0; i < seen_flags.size(); ++i)
    if (seen_flags[i].second != now_flags[i].second)
      d.add(MissReason::flags_changed, seen_flags[i].first, seen_flags[i].second,
            now_flags[i].second);
  std::size_t la = 0, lb = 0;
  for (std::size_t i = 0; i < seen.structures.size(); ++i) {
    d.argnum = static_cast<int>(i);
    d.node(seen.structures[i], now.structures[i], "args[" + std::to_string(i) + "]", la, lb);
    la += seen.structures[i].num_leaves();
    lb += now.structures[i].num_leaves();
  }
  if (out.empty() && seen.type_token != now.type_token)
    d.add(MissReason::new_tree_structure, "args", "the C++ argument types before",
          "other C++ types (a float for a double, say)");
  return out;
}

JitCache::EntryPtr JitCache::find(const detail::CallArgs& args) {
  if (lru_.empty()) return nullptr;
  // Most calls repeat the last signature: try it before hashing.
  if (matches(lru_.front()->sig, args)) return lru_.front();
  std::uint64_t h = hash_call(args);
  auto [lo, hi] = index_.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    if (!matches((*it->second)->sig, args)) continue;
    lru_.splice(lru_.begin(), lru_, it->second);  // iterators stay valid
    return lru_.front();
  }
  return nullptr;
}

JitCache::EntryPtr JitCache::insert(EntryPtr entry, int capacity) {
  auto [lo, hi] = index_.equal_range(entry->sig.hash);
  for (auto it = lo; it != hi; ++it)
    if (same_signature((*it->second)->sig, entry->sig)) return *it->second;
  lru_.push_front(entry);
  index_.emplace(entry->sig.hash, lru_.begin());
  while (lru_.size() > static_cast<std::size_t>(std::max(capacity, 1))) {
    auto last = std::prev(lru_.end());
    auto [a, b] = index_.equal_range((*last)->sig.hash);
    for (auto it = a; it != b; ++it) {
      if (it->second != last) continue;
      index_.erase(it);
      break;
    }
    evicted_.push_front((*last)->sig);
    if (evicted_.size() > kRememberedEvictions) evicted_.pop_back();
    ++evictions_;
    lru_.pop_back();  // the entry's executable frees its code with its last user
  }
  return entry;
}

bool JitCache::was_evicted(const detail::CallArgs& args) const {
  return std::any_of(evicted_.begin(), evicted_.end(),
                     [&](const Signature& sig) { return matches(sig, args); });
}

std::vector<JitCache::EntryPtr> JitCache::entries() const {
  return std::vector<EntryPtr>(lru_.begin(), lru_.end());
}

void JitCache::clear() {
  index_.clear();
  lru_.clear();
  evicted_.clear();
}

}  // namespace jx::api
