// tree::TreeDef: leaf counts, JAX-style text, field names of JX_PYTREE structs, leaf paths.
#include <cctype>

#include "api/jit_cache.hpp"
#include "jx/tree.hpp"
#include "support/format.hpp"

namespace jx {
namespace tree {
namespace {

std::string quoted_keys(const std::vector<std::string>& keys) {
  std::vector<std::string> q;
  for (const auto& k : keys) q.push_back("'" + k + "'");
  std::string s = "[";  // appending avoids GCC 12 -O3 false -Wrestrict
  return s.append(detail::join(q, ", ")).append("]");
}

}  // namespace

std::size_t TreeDef::num_leaves() const {
  if (kind == Kind::leaf) return 1;
  std::size_t n = 0;
  for (const auto& c : children) n += c.num_leaves();
  return n;
}

std::string TreeDef::str() const {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < children.size(); ++i) {
    std::string c = children[i].str();
    if (kind == Kind::dict) c = "'" + keys[i] + "': " + c;
    if (kind == Kind::record) c = keys[i] + "=" + c;
    parts.push_back(std::move(c));
  }
  std::string inner = detail::join(parts, ", ");
  switch (kind) {
    case Kind::leaf:
      return "*";
    case Kind::static_value:
      return "static";
    case Kind::list:
      return "[" + inner + "]";
    case Kind::array:
      return "array[" + inner + "]";
    case Kind::tuple:
      return "(" + inner + (children.size() == 1 ? ",)" : ")");
    case Kind::pair:
      return "(" + inner + ")";
    case Kind::dict:
      return "{" + inner + "}";
    case Kind::record:
      return name + "(" + inner + ")";
  }
  return inner;
}

std::string TreeDef::kind_str() const {
  std::string n = std::to_string(children.size());
  switch (kind) {
    case Kind::leaf:
      return "leaf";
    case Kind::static_value:
      return "static";
    case Kind::list:
      return "list of " + n;
    case Kind::array:
      return "array of " + n;
    case Kind::tuple:
      return "tuple of " + n;
    case Kind::pair:
      return "pair";
    case Kind::dict:
      return "dict with keys " + quoted_keys(keys);
    case Kind::record:
      return name;
  }
  return "?";
}

std::vector<std::string> split_field_names(const char* names) {
  std::vector<std::string> out(1);
  for (const char* p = names; *p; ++p) {
    if (*p == ',')
      out.emplace_back();
    else if (!std::isspace(static_cast<unsigned char>(*p)))
      out.back() += *p;
  }
  return out;
}

std::vector<std::string> leaf_paths(const TreeDef& tree, const std::string& prefix) {
  if (tree.kind == TreeDef::Kind::leaf) return {prefix};
  std::vector<std::string> out;
  for (std::size_t i = 0; i < tree.children.size(); ++i) {
    auto sub = leaf_paths(tree.children[i], api::child_path(tree, i, prefix));
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

}  // namespace tree

std::string api::child_path(const tree::TreeDef& node, std::size_t i, const std::string& prefix) {
  using Kind = tree::TreeDef::Kind;
  if (node.kind == Kind::dict) return prefix + "[\"" + node.keys.at(i) + "\"]";
  if (node.kind == Kind::record) return prefix + "." + node.keys.at(i);
  return prefix + "[" + std::to_string(i) + "]";
}

}  // namespace jx
