// Graphviz for --dump_dot: the entry computation as a dataflow graph, top to bottom.
#include "hlo/dot_graph.hpp"

#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "hlo/ir.hpp"

namespace jx::hlo {
namespace {

// A double-quoted DOT string; a line break becomes DOT's \n (centred lines).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Inputs and literals look different from the work, so the eye finds the kernels.
std::string node_style(const Instruction& i, bool root) {
  std::string style;
  if (i.opcode == Opcode::kParameter)
    style = "shape=ellipse, style=filled, fillcolor=lightblue";
  else if (i.opcode == Opcode::kConstant)
    style = "shape=ellipse, style=filled, fillcolor=lightgray";
  if (root) style += std::string(style.empty() ? "" : ", ") + "penwidth=3, color=red";
  return style;
}

}  // namespace

std::string to_dot(const Module& module) {
  std::ostringstream os;
  os << "digraph " << quoted(module.name()) << " {\n";
  os << "  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  const Computation* entry = module.entry();
  if (!entry) return os.str() + "}\n";

  // Node ids by position: instruction names may hold characters DOT ids may not.
  std::vector<Instruction*> order = entry->instructions();
  std::unordered_map<const Instruction*, std::size_t> id;
  for (std::size_t k = 0; k < order.size(); ++k) id[order[k]] = k;

  for (std::size_t k = 0; k < order.size(); ++k) {
    const Instruction& i = *order[k];
    bool root = &i == entry->root();
    std::string opcode(info(i.opcode).name);
    if (i.opcode == Opcode::kParameter) opcode += " " + std::to_string(i.parameter_number);
    for (const Computation* c : i.called)
      if (c) opcode += " %" + c->name();
    std::string label = (root ? "ROOT " : "") + i.name + "\n" + opcode + "\n" + i.shape.str();
    std::string style = node_style(i, root);
    os << "  n" << k << " [label=" << quoted(label) << (style.empty() ? "" : ", ") << style
       << "];\n";
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto& operands = order[k]->operands;
    for (std::size_t p = 0; p < operands.size(); ++p) {
      auto it = id.find(operands[p]);
      if (it == id.end()) continue;  // a dangling operand: the verifier's to report
      os << "  n" << it->second << " -> n" << k;
      if (operands.size() > 1) os << " [label=\"" << p << "\"]";
      os << ";\n";
    }
  }
  return os.str() + "}\n";
}

}  // namespace jx::hlo
