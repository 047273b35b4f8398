#include "core/host_callbacks.hpp"

#include <deque>
#include <mutex>
#include <string>

#include "jx/errors.hpp"

namespace jx {
namespace {

struct Table {
  std::mutex mu;
  std::deque<HostCallback> fns;  // a deque: references stay valid as it grows
};

Table& table() {
  static auto* t = new Table;  // never destroyed: a program may call back during exit
  return *t;
}

}  // namespace

std::int64_t register_host_callback(HostCallback fn) {
  Table& t = table();
  std::lock_guard lock(t.mu);
  t.fns.push_back(std::move(fn));
  return static_cast<std::int64_t>(t.fns.size()) - 1;
}

const HostCallback& host_callback(std::int64_t id) {
  Table& t = table();
  std::lock_guard lock(t.mu);
  if (id < 0 || id >= static_cast<std::int64_t>(t.fns.size()))
    throw Error("no host callback " + std::to_string(id) + " in this process");
  return t.fns[static_cast<std::size_t>(id)];
}

std::int64_t host_callback_count() {
  Table& t = table();
  std::lock_guard lock(t.mu);
  return static_cast<std::int64_t>(t.fns.size());
}

}  // namespace jx
