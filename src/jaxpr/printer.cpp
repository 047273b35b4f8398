// JAX's jaxpr text format, laid out by the same Wadler-style pretty printer JAX uses (its pp
// module), so line breaks fall where JAX puts them: `{ lambda ; a:f32[3]. let b:f32[3] = sin a
// in (b,) }` on one line when it fits in 80 columns, else one equation per line.
#include <deque>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "jaxpr/jaxpr.hpp"
#include "support/format.hpp"

namespace jx {
namespace detail {

// The sub-jaxprs among an equation's params: a jaxpr value, or jaxprs inside a tuple.
std::vector<const Jaxpr*> jaxprs_in_params(const Params& params) {
  std::vector<const Jaxpr*> out;
  for (const auto& [k, v] : params.entries()) {
    if (v.kind() == Param::Kind::kJaxpr) out.push_back(&v.as_jaxpr()->jaxpr);
    if (v.kind() != Param::Kind::kTuple) continue;
    for (const auto& item : v.items())
      if (item.kind() == Param::Kind::kJaxpr) out.push_back(&item.as_jaxpr()->jaxpr);
  }
  return out;
}

}  // namespace detail

namespace {

constexpr long kWidth = 80;

// ---- documents: text, breaks, concatenation, nesting and groups ---------------------------------

struct Doc;
using DocP = std::shared_ptr<const Doc>;

struct Doc {
  enum class Kind { kText, kBreak, kConcat, kNest, kGroup };
  Kind kind;
  std::string text;  // the text, or what a break prints when its group is flat
  int indent = 0;    // kNest: added indentation
  std::vector<DocP> children;
};

DocP make(Doc::Kind k, std::string s, int indent, std::vector<DocP> children) {
  return std::make_shared<const Doc>(Doc{k, std::move(s), indent, std::move(children)});
}
DocP text(std::string s) { return make(Doc::Kind::kText, std::move(s), 0, {}); }
DocP brk(std::string s = " ") { return make(Doc::Kind::kBreak, std::move(s), 0, {}); }
DocP concat(std::vector<DocP> docs) { return make(Doc::Kind::kConcat, "", 0, std::move(docs)); }
DocP nest(int n, DocP d) { return make(Doc::Kind::kNest, "", n, {std::move(d)}); }
DocP group(DocP d) { return make(Doc::Kind::kGroup, "", 0, {std::move(d)}); }

DocP join(const DocP& sep, const std::vector<DocP>& docs) {
  std::vector<DocP> out;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (i) out.push_back(sep);
    out.push_back(docs[i]);
  }
  return concat(std::move(out));
}

// Whether `d` printed flat takes at most `width` columns (stops early once it does not).
bool fits(const Doc& d, long width) {
  std::vector<const Doc*> agenda{&d};
  while (width >= 0 && !agenda.empty()) {
    const Doc* x = agenda.back();
    agenda.pop_back();
    if (x->kind == Doc::Kind::kText || x->kind == Doc::Kind::kBreak)
      width -= static_cast<long>(x->text.size());
    else
      for (auto it = x->children.rbegin(); it != x->children.rend(); ++it)
        agenda.push_back(it->get());
  }
  return width >= 0;
}

// Lindig's strict layout as JAX implements it: a group prints flat when the group alone fits in
// the rest of the line (JAX checks only the group, not what follows it).
std::string format(const DocP& root) {
  struct Item {
    long indent;
    bool flat;
    const Doc* doc;
  };
  std::vector<Item> agenda{{0, false, root.get()}};
  std::string out;
  long column = 0;
  while (!agenda.empty()) {
    Item it = agenda.back();
    agenda.pop_back();
    const Doc& d = *it.doc;
    switch (d.kind) {
      case Doc::Kind::kText:
        out += d.text;
        column += static_cast<long>(d.text.size());
        break;
      case Doc::Kind::kBreak:
        if (it.flat) {
          out += d.text;
          column += static_cast<long>(d.text.size());
        } else {
          out += '\n';
          out.append(static_cast<std::size_t>(it.indent), ' ');
          column = it.indent;
        }
        break;
      case Doc::Kind::kConcat:
        for (auto c = d.children.rbegin(); c != d.children.rend(); ++c)
          agenda.push_back({it.indent, it.flat, c->get()});
        break;
      case Doc::Kind::kNest:
        agenda.push_back({it.indent + d.indent, it.flat, d.children[0].get()});
        break;
      case Doc::Kind::kGroup:
        agenda.push_back({it.indent, fits(*d.children[0], kWidth - column), d.children[0].get()});
        break;
    }
  }
  return out;
}

// ---- the jaxpr printer --------------------------------------------------------------------------

// JAX's variable names: a..z, then ba, bb, ... (base 26 with 'a' as the zero digit).
std::string var_name(std::size_t n) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('a' + n % 26));
    n /= 26;
  } while (n);
  return s;
}

// JAX prints a literal's value as Python prints `np.asarray(val).item()`: floats (f32 too) as
// the shortest repr of the double, so 0.1f reads back as 0.10000000149011612.
std::string literal_str(const Array& lit) {
  std::string v = dispatch(lit.dtype(), [&]<class T>() -> std::string {
    T x = *concrete_buffer(lit, "print").as<T>();
    if constexpr (std::is_same_v<T, bool>)
      return x ? "True" : "False";
    else if constexpr (is_float_element_v<T>)  // as the double it is, as JAX prints x.item()
      return detail::python_float_repr(static_cast<double>(x), false);
    else
      return std::to_string(x);
  });
  return v + ":" + lit.aval().str();
}

class Printer {
 public:
  // Names are global across nested jaxprs. As in JAX, equation outputs that nothing reads in
  // the top-level jaxpr print as `_`, and sub-jaxprs used twice (or longer than 10 equations)
  // are printed once, up front, as `let jaxpr = { ... } in`.
  explicit Printer(const Jaxpr& top, bool mark_unused = true) : top_(top) {
    find_shared();
    if (!mark_unused) return;
    std::unordered_set<const VarNode*> used;
    for (const auto& a : top.outvars)
      if (!a.is_literal()) used.insert(a.var.get());
    for (auto e = top.eqns.rbegin(); e != top.eqns.rend(); ++e) {
      for (const auto& v : e->outvars)
        if (!used.count(v.get())) names_[v.get()] = "_";
      for (const auto& a : e->inputs)
        if (!a.is_literal()) used.insert(a.var.get());
    }
  }

  DocP document() {
    std::vector<DocP> docs;
    for (const auto& [name, j] : shared_list_)
      docs.push_back(concat({text("let " + name + " = "), skeleton(*j), text(" in"), brk()}));
    docs.push_back(jaxpr(top_));
    return concat(std::move(docs));
  }

  DocP eqn(const Eqn& e) {
    // Names are handed out left to right: outputs, then the params' sub-jaxprs, then inputs.
    DocP lhs = vars(e.outvars, "", true);
    if (e.prim->text.call_names) name_call_binders(e);
    DocP kv = concat({});
    Params shown = e.prim->text.shown ? e.prim->text.shown(e.params) : e.params;
    if (!shown.empty()) {
      // As JAX's rules for jit and the custom-derivative calls print it: a `name` leads.
      std::vector<DocP> kvs;
      if (const Param* n = shown.find("name")) kvs.push_back(text("name=" + n->str()));
      for (const auto& [k, v] : shown.entries())
        if (k != "name") kvs.push_back(concat({text(k + "="), param(v)}));
      kv = group(
          concat({nest(2, concat({text("["), brk(""), join(brk(), kvs)})), brk(""), text("]")}));
    }
    DocP ins = vars(e.inputs, "", false);
    std::vector<DocP> parts;
    if (!e.outvars.empty()) parts = {lhs, text(" = ")};
    parts.insert(parts.end(), {text(e.prim->name), kv, concat({text(" "), ins})});
    return concat(std::move(parts));
  }

  std::string name(const VarNode* v) {
    if (v->dropped) return "_";
    auto [it, inserted] = names_.try_emplace(v, "");
    if (inserted) {
      do {
        it->second = var_name(count_++);
      } while (shared_names_.count(it->second));
    }
    return it->second;
  }

 private:
  void find_shared() {
    std::vector<const Jaxpr*> order;
    std::unordered_map<const Jaxpr*, int> counts;
    std::unordered_map<const Jaxpr*, std::string> suggested;
    std::deque<const Jaxpr*> queue{&top_};
    while (!queue.empty()) {
      const Jaxpr* j = queue.front();
      queue.pop_front();
      if (!counts.count(j)) order.push_back(j);
      counts[j] += (j != &top_ && j->eqns.size() > 10) ? 2 : 1;
      for (const auto& e : j->eqns) {
        bool named = e.params.has("name") && e.params.get("name").kind() == Param::Kind::kName;
        std::string n;
        if (named) {
          n = e.params.get("name").as_name();
          while (!n.empty() && (n.front() == '<' || n.front() == '>')) n.erase(n.begin());
          while (!n.empty() && (n.back() == '<' || n.back() == '>')) n.pop_back();
        }
        for (const Jaxpr* sub : detail::jaxprs_in_params(e.params)) {
          queue.push_back(sub);
          if (named) suggested.try_emplace(sub, n);
        }
      }
    }
    std::map<std::string, int> name_counts;
    for (const Jaxpr* j : order) {
      if (counts[j] == 1) continue;
      auto s = suggested.find(j);
      std::string n = s == suggested.end() ? "jaxpr" : s->second;
      if (int c = name_counts[n]; c > 0) {
        name_counts[n] += 1;
        n += std::to_string(c);
      }
      name_counts[n] += 1;
      shared_names_.insert(n);
      shared_[j] = n;
      shared_list_.emplace_back(n, j);
    }
  }

  // The called jaxpr's invars take the names of the operands and its outvars those of the
  // results: not a literal's, not a name used for an earlier position, and not over a name
  // already given. A jaxpr printed up front (shared) keeps its own.
  void name_call_binders(const Eqn& e) {
    const Jaxpr& callee = e.params.get("jaxpr").as_jaxpr()->jaxpr;
    if (shared_.count(&callee)) return;
    std::set<const VarNode*> used;
    auto suggest = [&](const VarNode* inner, const VarNode* outer) {
      if (!outer || !used.insert(outer).second || names_.count(inner)) return;
      if (std::string n = name(outer); n != "_") names_[inner] = n;
    };
    for (std::size_t k = 0; k < e.inputs.size() && k < callee.invars.size(); ++k)
      suggest(callee.invars[k].get(), e.inputs[k].is_literal() ? nullptr : e.inputs[k].var.get());
    used.clear();
    for (std::size_t k = 0; k < e.outvars.size() && k < callee.outvars.size(); ++k)
      if (!callee.outvars[k].is_literal()) suggest(callee.outvars[k].var.get(), e.outvars[k].get());
  }

  template <class V>
  DocP vars(const std::vector<V>& vs, const std::string& sep, bool shapes) {
    std::vector<DocP> items;
    for (const auto& v : vs) {
      if constexpr (std::is_same_v<V, Atom>) {
        items.push_back(text(v.is_literal() ? literal_str(v.literal) : name(v.var.get())));
      } else {
        items.push_back(text(name(v.get()) + (shapes ? ":" + v->aval.str() : "")));
      }
    }
    return nest(2, group(join(concat({text(sep), group(brk())}), items)));
  }

  DocP param(const Param& p) {
    if (p.kind() == Param::Kind::kJaxpr) return jaxpr(p.as_jaxpr()->jaxpr);
    bool jaxprs = p.kind() == Param::Kind::kTuple;
    if (jaxprs)
      for (const auto& item : p.items()) jaxprs = jaxprs && item.kind() == Param::Kind::kJaxpr;
    if (!jaxprs) return text(p.str());
    std::vector<DocP> docs;
    for (const auto& item : p.items()) docs.push_back(jaxpr(item.as_jaxpr()->jaxpr));
    return group(
        concat({nest(2, concat({text("("), brk(""), join(brk(), docs)})), brk(""), text(")")}));
  }

  DocP jaxpr(const Jaxpr& j) {
    auto it = shared_.find(&j);
    return it != shared_.end() ? text(it->second) : skeleton(j);
  }

  DocP skeleton(const Jaxpr& j) {
    DocP consts = vars(j.constvars, "", true);
    DocP ins = vars(j.invars, "", true);
    std::vector<DocP> eqns;
    for (const auto& e : j.eqns) eqns.push_back(eqn(e));
    DocP outs = vars(j.outvars, ",", false);
    DocP body = concat({text("{ "), text("lambda "), consts, text("; "), ins, text(". "),
                        text("let"), nest(2, concat({brk(), join(brk("; "), eqns)})), brk(),
                        text("in "), text("("), outs, text(j.outvars.size() == 1 ? ",)" : ")")});
    return concat({group(nest(2, body)), text(" }")});
  }

  const Jaxpr& top_;
  std::unordered_map<const VarNode*, std::string> names_;
  std::size_t count_ = 0;
  std::set<std::string> shared_names_;
  std::unordered_map<const Jaxpr*, std::string> shared_;
  std::vector<std::pair<std::string, const Jaxpr*>> shared_list_;
};

}  // namespace

std::string to_string(const Jaxpr& jaxpr) { return format(Printer(jaxpr).document()); }

std::string closed_jaxpr_param_str(const ClosedJaxprData& j) { return to_string(j.jaxpr); }

namespace detail {

// For typecheck's messages: a variable's name and an equation's text, named in print order but
// without `_` for unused outputs (an ill-formed jaxpr may read them too early).
std::string jaxpr_var_name(const Jaxpr& jaxpr, const VarNode* v) {
  Printer p(jaxpr, /*mark_unused=*/false);
  p.document();  // hands out the names in print order
  return p.name(v);
}

std::string jaxpr_eqn_str(const Jaxpr& jaxpr, std::size_t index) {
  Printer p(jaxpr, /*mark_unused=*/false);
  p.document();
  return format(nest(2, p.eqn(jaxpr.eqns.at(index))));
}

}  // namespace detail
}  // namespace jx
