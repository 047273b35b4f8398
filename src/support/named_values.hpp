// Values by name, kept sorted by name so that equal sets compare (and hash) equal whatever the
// order they were set in: a primitive application's params and an HLO instruction's attributes.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace jx {

template <class V>
class NamedValues {
 public:
  void set(const std::string& name, V value) {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                               [](const auto& e, const std::string& n) { return e.first < n; });
    if (it != entries_.end() && it->first == name)
      it->second = std::move(value);
    else
      entries_.insert(it, {name, std::move(value)});
  }
  // The value of `name`, or null.
  const V* find(const std::string& name) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                               [](const auto& e, const std::string& n) { return e.first < n; });
    return it != entries_.end() && it->first == name ? &it->second : nullptr;
  }
  bool has(const std::string& name) const { return find(name) != nullptr; }
  const std::vector<std::pair<std::string, V>>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }
  friend bool operator==(const NamedValues&, const NamedValues&) = default;

 private:
  std::vector<std::pair<std::string, V>> entries_;  // sorted by name
};

}  // namespace jx
