#include "passes/fusion/instruction_fusion.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "hlo/window.hpp"
#include "passes/fusion/outline.hpp"

namespace jx::passes {

using fusion::Group;
using hlo::Instruction;
using hlo::Opcode;

namespace {

// How a group reads a value: per dimension, which loop of the kernel's nest indexes it (-1: a
// constant index), when that is known. Loops are numbered outermost first; a reduction's own
// loops come right inside the loops its index uses, where codegen hoists it. A value indexed
// by loops 0..k-1 only is computed once per iteration of those loops (codegen hoists loop ops,
// LLVM hoists the rest), so only a broadcast that drops an outer loop while keeping an inner one
// makes the group read elements repeatedly.
struct Access {
  std::optional<std::vector<int>> loops;  // absent: arbitrary indices, each element once
  bool reused = false;                    // some elements are computed repeatedly
  // Reads per element of the group's output, counted to 2 (one or more than one is what
  // matters; a chain of values each read twice would double it at every step): a layout op passes
  // its own on.
  int uses = 1;
};

int deepest(const std::vector<int>& loops) {
  return loops.empty() ? -1 : *std::max_element(loops.begin(), loops.end());
}

bool drops_outer_loop(const std::vector<int>& user, const std::vector<int>& kept_dims) {
  int max_kept = -1;
  std::vector<bool> kept(user.size(), false);
  for (int d : kept_dims) {
    kept[static_cast<std::size_t>(d)] = true;
    max_kept = std::max(max_kept, user[static_cast<std::size_t>(d)]);
  }
  for (std::size_t d = 0; d < user.size(); ++d)
    if (!kept[d] && user[d] >= 0 && user[d] < max_kept) return true;
  return false;
}

// The loops of the nest over `shape`: one per dimension, outermost first, none for size-1 ones.
std::vector<int> nest(const Shape& shape) {
  std::vector<int> loops;
  int next = 0;
  for (std::int64_t size : shape) loops.push_back(size == 1 ? -1 : next++);
  return loops;
}

// Dimensions left after dropping size-1 ones, in order.
std::vector<std::size_t> non_unit_dims(const Shape& shape) {
  std::vector<std::size_t> out;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) out.push_back(d);
  return out;
}

// How `user`, read as `a`, reads its operand `k`.
Access through(const Instruction& user, std::size_t k, const Access& a) {
  const Shape& x = user.operands[k]->shape.dims;
  // A user read several times (the slices of one pad that a convolution's patches take) reads
  // its operand as often: a loop op under it would be recomputed for each read.
  Access out{std::nullopt, a.reused, a.uses};
  if (x.empty()) return {std::vector<int>{}, a.reused, 1};  // scalars: the empty index
  if (a.reused || !a.loops) {
    // Layout ops read each element at most once per output element; broadcasts repeat them.
    out.reused |= user.opcode == Opcode::kBroadcast && shape_size(x) != user.shape.size();
    return out;
  }
  const std::vector<int>& u = *a.loops;
  std::vector<int> loops(x.size(), -1);
  switch (user.opcode) {
    case Opcode::kBroadcast: {
      const auto& map = user.attrs.get_ints("dimensions");
      std::vector<int> kept;
      for (std::size_t d = 0; d < x.size(); ++d) {
        if (x[d] != 1) loops[d] = u[static_cast<std::size_t>(map[d])];
        kept.push_back(static_cast<int>(map[d]));
      }
      out.reused = drops_outer_loop(u, kept);
      break;
    }
    case Opcode::kReshape: {
      std::vector<std::size_t> from = non_unit_dims(x), to = non_unit_dims(user.shape.dims);
      bool degenerate = from.size() == to.size();
      for (std::size_t j = 0; degenerate && j < from.size(); ++j)
        degenerate = x[from[j]] == user.shape.dims[to[j]];
      if (!degenerate) return out;
      for (std::size_t j = 0; j < from.size(); ++j) loops[from[j]] = u[to[j]];
      break;
    }
    case Opcode::kTranspose: {
      const auto& perm = user.attrs.get_ints("dimensions");
      for (std::size_t d = 0; d < perm.size(); ++d) loops[static_cast<std::size_t>(perm[d])] = u[d];
      break;
    }
    case Opcode::kReverse:  // each dim runs the other way, under the same loop
      loops = u;
      break;
    case Opcode::kReduceWindow:
      // Each element under up to a window's worth of outputs (a prefix scan reads each once, but
      // what it reads is evaluated in its own loops): recomputed there unless cheap.
      out.reused = true;
      return out;
    default:
      if (hlo::has_trait(user.opcode, hlo::kReduction)) {
        // Kept dims follow the output's loops; reduced dims are new, inner loops.
        auto dims = user.attrs.get_ints("dimensions");
        std::sort(dims.begin(), dims.end());
        int next = deepest(u) + 1;
        for (std::size_t d = 0, kept = 0; d < x.size(); ++d)
          loops[d] = std::binary_search(dims.begin(), dims.end(), static_cast<std::int64_t>(d))
                         ? next++
                         : u[kept++];
        break;
      }
      if (!hlo::has_trait(user.opcode, hlo::kElementwise)) return out;
      loops = u;
  }
  out.loops = std::move(loops);
  return out;
}

Access combine(const Access& x, const Access& y) {
  Access c{std::nullopt, x.reused || y.reused, std::min(x.uses + y.uses, 2)};
  if (x.loops && y.loops && *x.loops == *y.loops) c.loops = x.loops;
  return c;
}

// A dot or convolution is a library call or a kernel of its own (hlo::RunsAs).
bool own_kernel(const Instruction& i) {
  return hlo::runs_as(i.opcode) == hlo::RunsAs::kLibraryOrKernel;
}

bool can_root(const Instruction& i) {
  if (i.opcode == Opcode::kConstant || own_kernel(i)) return false;
  // A reshape outside a kernel runs nothing (buffer assignment gives it its operand's buffer).
  // Rooting a kernel it would only make the kernel loop over its own dims, whose flat index its
  // operand's generators must split again per element: a pool flattened for a dense layer ran
  // 20x slower than the pool alone.
  if (i.opcode == Opcode::kReshape) return false;
  return hlo::has_trait(i.opcode, hlo::kFusible) || hlo::loops_per_element(i.opcode);
}

bool can_join(const Instruction& p) {
  if (p.opcode == Opcode::kConstant) return p.shape.size() <= InstructionFusion::kMaxFusedConstant;
  // A prefix scan is a kernel's own output, computed in one pass: read through a generator, each
  // element would fold up to its whole row again.
  if (own_kernel(p) || hlo::as_prefix_scan(p)) return false;
  return hlo::has_trait(p.opcode, hlo::kFusible) || hlo::loops_per_element(p.opcode);
}

// A reduce keeping its operand's last dim but not all of its dims (a column reduction): its
// generator reads each element's values a row apart. A reduce reading it through a generator
// would loop over those strided reads for every element it folds; as its own kernel it reduces
// in row order (split-column-reductions' partial sums).
bool reduces_columns(const Instruction& i) {
  if (i.opcode != Opcode::kReduce || i.shape.is_tuple) return false;
  const Shape& x = i.operands[0]->shape.dims;
  std::vector<std::int64_t> dims = i.attrs.get_ints("dimensions");
  return !x.empty() && !dims.empty() &&
         std::find(dims.begin(), dims.end(), static_cast<std::int64_t>(x.size()) - 1) == dims.end();
}

// A scalar constant, or a broadcast of one: a kernel reading it reads an immediate.
bool is_immediate(const Instruction& i) {
  const Instruction& c = i.opcode == Opcode::kBroadcast ? *i.operands[0] : i;
  return c.opcode == Opcode::kConstant && c.shape.rank() == 0;
}

// Whether `p` reaches memory whatever the groups: a user of it joins no group (a dot or a
// convolution reads its operands from buffers), directly or through reshapes (which outside a
// kernel are their operand's buffer), or it is the program's result.
bool materialized_anyway(const hlo::Computation& entry, const hlo::UserIndex& users,
                         const Instruction& p) {
  if (&p == entry.root()) return true;
  for (const Instruction* u : users(&p))
    if ((!can_root(*u) && !can_join(*u)) ||
        (u->opcode == Opcode::kReshape && materialized_anyway(entry, users, *u)))
      return true;
  return false;
}

// Whether a copy of `p` reads fewer bytes than p's own buffer holds (a broadcast, a widening
// convert): then a group that recomputes p reads less than one that loads it.
bool reads_less_than_it_writes(const Instruction& p) {
  std::int64_t read = 0;
  for (const Instruction* o : p.operands)
    if (!is_immediate(*o)) read += o->shape.byte_size();
  return read < p.shape.byte_size();
}

// Grows the group rooted at `root`: candidates are taken latest first, so all of a candidate's
// users inside the group are known when it is judged.
class GroupBuilder {
 public:
  GroupBuilder(const hlo::Computation& entry, const hlo::UserIndex& users,
               const std::unordered_map<const Instruction*, int>& position,
               std::unordered_map<const Instruction*, int>& duplicates,
               const std::unordered_set<const Instruction*>& grouped)
      : entry_(entry),
        users_(users),
        position_(position),
        duplicates_(duplicates),
        grouped_(grouped) {}

  Group build(Instruction* root) {
    Group g;
    g.members.push_back(root);
    access_[root] = Access{nest(root->shape.dims), false, 1};
    enqueue_operands(root);
    while (!candidates_.empty() &&
           static_cast<int>(g.members.size()) < InstructionFusion::kMaxGroupSize) {
      auto last = std::prev(candidates_.end());
      Instruction* p = last->second;
      candidates_.erase(last);
      judge(p, g);
    }
    return g;
  }

 private:
  void enqueue_operands(const Instruction* i) {
    for (Instruction* op : i->operands) candidates_.emplace(position_.at(op), op);
  }

  void judge(Instruction* p, Group& g) {
    if (access_.count(p) || grouped_.count(p) || !can_join(*p)) return;
    std::optional<Access> a;
    bool all_users_inside = p != entry_.root();
    for (const Instruction* u : users_(p)) {
      auto it = access_.find(u);
      if (it == access_.end()) {
        all_users_inside = false;
        continue;
      }
      if (u->opcode == Opcode::kReduce && reduces_columns(*p)) return;
      if (g.duplicated.count(u)) all_users_inside = false;  // the original still reads p
      for (std::size_t k = 0; k < u->operands.size(); ++k)
        if (u->operands[k] == p) {
          Access via = through(*u, k, it->second);
          a = a ? combine(*a, via) : via;
        }
    }
    if (!a) return;
    // Loop ops are memoized per index; otherwise they must be evaluated once.
    if (hlo::loops_per_element(p->opcode) && (a->reused || (!a->loops && a->uses > 1))) return;
    if (fusion::is_expensive(p->opcode) && a->reused) return;
    if (!all_users_inside) {
      if (fusion::is_expensive(p->opcode) ||
          (duplicates_[p] >= InstructionFusion::kMaxDuplication && !is_immediate(*p)))
        return;
      // Its buffer is written anyway: reading it costs no more than recomputing p from its
      // operands, and spares recomputing whatever else the copy would pull in behind p.
      if (!is_immediate(*p) && materialized_anyway(entry_, users_, *p) &&
          !reads_less_than_it_writes(*p))
        return;
      ++duplicates_[p];
      g.duplicated.insert(p);
    }
    access_[p] = *a;
    g.members.push_back(p);
    enqueue_operands(p);
  }

  const hlo::Computation& entry_;
  const hlo::UserIndex& users_;
  const std::unordered_map<const Instruction*, int>& position_;
  std::unordered_map<const Instruction*, int>& duplicates_;
  const std::unordered_set<const Instruction*>& grouped_;
  std::unordered_map<const Instruction*, Access> access_;
  std::multimap<int, Instruction*> candidates_;
};

// Groups and outlines the fusions of one program computation (`entry` of its program).
bool fuse_program(hlo::Computation& entry) {
  std::vector<Instruction*> order = entry.instructions();
  std::unordered_map<const Instruction*, int> position;
  for (std::size_t k = 0; k < order.size(); ++k) position[order[k]] = static_cast<int>(k);
  hlo::UserIndex users(entry);  // nothing changes before the groups are outlined

  std::unordered_map<const Instruction*, int> duplicates;
  std::unordered_set<const Instruction*> grouped;  // full members of a group
  std::vector<Group> groups;
  // A value every live user's group copied is dead: it roots nothing, and no longer counts as a
  // reader of its own operands (users come before producers in this walk).
  std::unordered_set<const Instruction*> dead;
  auto copied_by_all = [&](const Instruction* i) {
    if (i == entry.root() || duplicates[i] == 0) return false;
    for (const Instruction* u : users(i)) {
      if (dead.count(u)) continue;
      bool copied = std::any_of(groups.begin(), groups.end(), [&](const Group& g) {
        return g.duplicated.count(i) && !g.duplicated.count(u) &&
               std::find(g.members.begin(), g.members.end(), u) != g.members.end();
      });
      if (!copied) return false;
    }
    return true;
  };
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Instruction* root = *it;
    if (grouped.count(root)) continue;
    if (copied_by_all(root)) {
      dead.insert(root);
      continue;
    }
    if (!can_root(*root)) continue;
    Group g = GroupBuilder(entry, users, position, duplicates, grouped).build(root);
    for (Instruction* m : g.members)
      if (!g.duplicated.count(m)) grouped.insert(m);
    if (g.members.size() > 1) groups.push_back(std::move(g));
  }
  for (const Group& g : groups) fusion::outline(entry, g);
  return !groups.empty();
}

}  // namespace

bool InstructionFusion::run(hlo::Module& module) {
  bool changed = false;
  for (hlo::Computation* c : hlo::program_computations(module)) changed |= fuse_program(*c);
  return changed;
}

}  // namespace jx::passes
