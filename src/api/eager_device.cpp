// Eager operations on arrays in an accelerator's memory. As JAX runs an operation on a GPU array
// (a cached jitted program of that one primitive), each runs as a program of one equation,
// compiled for the inputs' device and cached by device, primitive, params and input avals;
// the host's reference impls never see device arrays.
#include <list>
#include <mutex>
#include <unordered_map>

#include "api/compile.hpp"
#include "backend/backend.hpp"
#include "core/array_impl.hpp"
#include "core/primitive.hpp"
#include "jx/config.hpp"
#include "trace/staging.hpp"
#include "trace/tracer.hpp"

namespace jx::api {
namespace {

// Programs kept, least recently used first out: JAX keeps 4096 of its primitive callables.
constexpr std::size_t kCapacity = 4096;

struct Key {
  Device device;
  const Primitive* prim;
  Params params;
  std::vector<ShapedArray> avals;
  std::size_t hash = 0;
  friend bool operator==(const Key& a, const Key& b) {
    return a.device == b.device && a.prim == b.prim && a.avals == b.avals && a.params == b.params;
  }
};

struct KeyHash {
  std::size_t operator()(const Key& k) const { return k.hash; }
};

std::size_t combine(std::size_t seed, std::size_t v) {
  return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

Key make_key(const Primitive& prim, const std::vector<Array>& inputs, const Params& params,
             const Device& device) {
  Key k{device, &prim, params, {}, 0};
  std::size_t h = combine(std::hash<const void*>()(&prim), params.hash());
  h = combine(h, static_cast<std::size_t>(device.platform()) * 131 + device.id());
  for (const Array& x : inputs) {
    k.avals.push_back(x.aval());
    h = combine(h, static_cast<std::size_t>(x.dtype()) * 2 + x.aval().weak_type);
    for (std::int64_t d : x.shape()) h = combine(h, static_cast<std::size_t>(d));
  }
  k.hash = h;
  return k;
}

class ProgramCache {
 public:
  using Program = std::shared_ptr<const CompiledProgram>;

  Program find(const Key& key) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }

  void insert(Key key, Program program) {
    std::lock_guard lock(mutex_);
    if (index_.count(key)) return;  // another thread compiled it first
    lru_.emplace_front(key, std::move(program));
    index_.emplace(std::move(key), lru_.begin());
    if (lru_.size() > kCapacity) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }

  // Drops the programs of `platform`'s devices: their backend is being replaced. Destroyed
  // outside the lock (unloading a module may take a while).
  void forget(Platform platform) {
    std::list<std::pair<Key, Program>> dropped;
    {
      std::lock_guard lock(mutex_);
      for (auto it = lru_.begin(); it != lru_.end();) {
        auto next = std::next(it);
        if (it->first.device.platform() == platform) {
          index_.erase(it->first);
          dropped.splice(dropped.end(), lru_, it);
        }
        it = next;
      }
    }
  }

 private:
  std::mutex mutex_;
  std::list<std::pair<Key, Program>> lru_;  // front: most recently used
  std::unordered_map<Key, std::list<std::pair<Key, Program>>::iterator, KeyHash> index_;
};

ProgramCache& cache() {
  static auto* programs = new ProgramCache;  // never destroyed: arrays may outlive main
  return *programs;
}

ProgramCache::Program compile(const Key& key) {
  const Primitive& prim = *key.prim;
  const Params& params = key.params;
  auto one_equation = [&](const std::vector<Array>& xs) { return trace::bind(prim, xs, params); };
  auto jaxpr = std::make_shared<const ClosedJaxprData>(
      trace::trace_to_jaxpr(one_equation, key.avals, prim.name));
  LoweredProgram lowered = lower_program(jaxpr, prim.name);
  auto program = std::make_shared<const CompiledProgram>(compile_program(lowered, key.device));
  if (config().log_compiles)
    detail::log_message("jx: compiled eager " + prim.name + " on " + key.device.str());
  return program;
}

std::vector<Array> run_on_device(const Primitive& prim, const std::vector<Array>& inputs,
                                 const Params& params, const Device& device) {
  Key key = make_key(prim, inputs, params, device);
  ProgramCache::Program program = cache().find(key);
  if (!program) {
    program = compile(key);
    cache().insert(std::move(key), program);
  }
  return (*program)(inputs);
}

const bool kInstalled = [] {
  trace::set_device_eager_run(run_on_device);
  backend::on_backend_factory_change([](Platform p) { cache().forget(p); });
  return true;
}();

}  // namespace
}  // namespace jx::api
