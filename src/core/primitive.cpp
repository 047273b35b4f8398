#include "core/primitive.hpp"

#include <map>

#include "support/check.hpp"

namespace jx {
namespace {

std::map<std::string, const Primitive*, std::less<>>& registry() {
  static std::map<std::string, const Primitive*, std::less<>> r;
  return r;
}

}  // namespace

Primitive::Primitive(std::string n) : name(std::move(n)) {
  auto [it, inserted] = registry().emplace(name, this);
  JX_CHECK(inserted, "primitive '" << name << "' registered twice");
}

std::vector<ShapedArray> Primitive::output_avals(std::span<const ShapedArray> in,
                                                 const Params& params) const {
  std::vector<ShapedArray> out = abstract_eval(in, params);
  for (const ShapedArray& aval : out) check_array_size(aval.shape, aval.dtype);
  return out;
}

const Primitive* find_primitive(std::string_view name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : it->second;
}

std::vector<const Primitive*> all_primitives() {
  std::vector<const Primitive*> out;
  for (const auto& [name, p] : registry()) out.push_back(p);
  return out;
}

}  // namespace jx
