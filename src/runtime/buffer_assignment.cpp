#include "runtime/buffer_assignment.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/buffer.hpp"
#include "hlo/fusion.hpp"
#include "support/check.hpp"

namespace jx::runtime {
namespace {

using hlo::Instruction;
using hlo::Opcode;

std::int64_t aligned(std::int64_t n) {
  constexpr auto a = static_cast<std::int64_t>(Buffer::kAlignment);
  return (n + a - 1) / a * a;
}

// First-fit allocator over the arena: free ranges are merged when released.
class Arena {
 public:
  std::int64_t allocate(std::int64_t size) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second < size) continue;
      std::int64_t off = it->first, left = it->second - size;
      free_.erase(it);
      if (left) free_[off + size] = left;
      return off;
    }
    std::int64_t off = top_;
    top_ += size;
    return off;
  }
  void release(std::int64_t off, std::int64_t size) {
    auto it = free_.emplace(off, size).first;
    if (auto next = std::next(it); next != free_.end() && off + size == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }
  std::int64_t size() const { return top_; }

 private:
  std::map<std::int64_t, std::int64_t> free_;  // offset → size
  std::int64_t top_ = 0;
};

}  // namespace

std::string Allocation::str() const {
  switch (kind) {
    case Kind::kParameter:
      return "param" + std::to_string(index);
    case Kind::kConstant:
      return "const" + std::to_string(index);
    case Kind::kOutput:
      return "out" + std::to_string(index);
    case Kind::kTemp:
      return "temp[" + std::to_string(offset) + ":" + std::to_string(offset + size) + "]";
  }
  return "?";
}

ValueRef source_of(const Instruction* i) {
  while (i->opcode == Opcode::kGetTupleElement || i->opcode == Opcode::kReshape) {
    if (i->opcode == Opcode::kReshape) {
      i = i->operands[0];
      continue;
    }
    const Instruction* t = i->operands[0];
    auto k = static_cast<int>(i->attrs.get_int("index"));
    // A tuple computed into buffers of its own (not one that only names other values).
    if (hlo::runs_as(t->opcode) != hlo::RunsAs::kNothing) return {t, k};
    if (t->opcode != Opcode::kTuple && t->opcode != Opcode::kOptimizationBarrier) break;
    i = t->operands[static_cast<std::size_t>(k)];
  }
  return {i, -1};
}

namespace {

// The operand through which kernel `i` can compute its output `element` over `src`'s buffer, or
// -1: `i` is a fusion or elementwise op, reaches `src` through that operand alone, and reads it
// only where it writes.
int overwritable_operand(const Instruction* i, const ValueRef& src, int element) {
  if (i->opcode != Opcode::kFusion && i->opcode != Opcode::kScatter &&
      !hlo::has_trait(i->opcode, hlo::kElementwise))
    return -1;
  int uses = 0, operand = -1;
  for (std::size_t k = 0; k < i->operands.size(); ++k)
    if (source_of(i->operands[k]) == src) ++uses, operand = static_cast<int>(k);
  if (uses != 1 || !hlo::reads_only_at_output_index(*i, operand, std::max(element, 0))) return -1;
  return operand;
}

// The operand whose dying temporary `i`'s output `element` can overwrite, or -1.
int in_place_operand(const Instruction* i, int element, const hlo::HloShape& shape,
                     const std::map<ValueRef, Allocation>& of,
                     const std::map<ValueRef, std::size_t>& last_use, std::size_t t,
                     const std::vector<ValueRef>& taken) {
  for (const Instruction* op : i->operands) {
    ValueRef src = source_of(op);
    auto a = of.find(src);
    if (a == of.end() || a->second.kind != Allocation::Kind::kTemp ||
        a->second.size != shape.byte_size() || last_use.at(src) != t ||
        std::find(taken.begin(), taken.end(), src) != taken.end())
      continue;
    if (int k = overwritable_operand(i, src, element); k >= 0) return k;
  }
  return -1;
}

bool is_donated(const Instruction& parameter, const std::vector<bool>& donated) {
  auto n = static_cast<std::size_t>(parameter.parameter_number);
  return n < donated.size() && donated[n];
}

const hlo::HloShape& value_shape(const ValueRef& v) {
  return *hlo::output_shapes(*v.inst)[static_cast<std::size_t>(std::max(v.element, 0))];
}

// The values `i` computes into buffers of its own: its elements if it is a tuple, else itself.
std::vector<ValueRef> values_of(const Instruction* i) {
  if (!i->shape.is_tuple) return {{i, -1}};
  std::vector<ValueRef> values;
  for (std::size_t e = 0; e < i->shape.tuple_shapes.size(); ++e)
    values.push_back({i, static_cast<int>(e)});
  return values;
}

// Values that can live in an output's buffer before the output is computed there: donated
// parameters, and temporaries (a GEMM's result before its epilogue) whose last reader is the
// kernel that computes the output in place; then, in turn, values whose last reader computes
// such a value over them (the zeros a scatter adds into). Returns value → output number.
std::map<ValueRef, int> match_early_outputs(const std::vector<Instruction*>& order,
                                            const std::vector<bool>& donated,
                                            const std::vector<ValueRef>& outputs,
                                            const std::map<ValueRef, std::size_t>& last_use) {
  std::map<ValueRef, int> out;
  std::vector<ValueRef> candidates;
  for (const Instruction* i : order) {
    if (i->opcode == Opcode::kConstant || i->opcode == Opcode::kTuple ||
        i->opcode == Opcode::kGetTupleElement || i->opcode == Opcode::kReshape ||
        (i->shape.is_tuple && hlo::runs_as(i->opcode) == hlo::RunsAs::kNothing))
      continue;
    if (i->opcode == Opcode::kParameter && !is_donated(*i, donated)) continue;
    for (const ValueRef& v : values_of(i))
      if (last_use.count(v) && std::find(outputs.begin(), outputs.end(), v) == outputs.end())
        candidates.push_back(v);
  }
  // `v` may live in `w`'s buffer if `w` is computed over it by v's last reader.
  auto may_become = [&](const ValueRef& v, const ValueRef& w) {
    int element = std::max(w.element, 0);
    return order[last_use.at(v)] == w.inst && value_shape(w) == value_shape(v) &&
           overwritable_operand(w.inst, v, element) >= 0;
  };
  std::vector<bool> taken(outputs.size(), false);
  for (const ValueRef& v : candidates)
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      if (taken[k] || std::count(outputs.begin(), outputs.end(), outputs[k]) > 1 ||
          !may_become(v, outputs[k]))
        continue;
      out[v] = static_cast<int>(k);
      taken[k] = true;
      break;
    }
  std::set<ValueRef> overwritten;
  for (auto v = candidates.rbegin(); v != candidates.rend(); ++v) {
    if (out.count(*v)) continue;
    for (const ValueRef& w : values_of(order[last_use.at(*v)])) {
      auto early = out.find(w);
      if (early == out.end() || overwritten.count(w) || !may_become(*v, w)) continue;
      out[*v] = early->second;
      overwritten.insert(w);
      break;
    }
  }
  return out;
}

// The values the entry computation returns, in output order.
std::vector<ValueRef> entry_outputs(const hlo::Computation& entry) {
  const Instruction* root = entry.root();
  if (root->opcode != Opcode::kTuple) return {source_of(root)};
  std::vector<ValueRef> outputs;
  for (const Instruction* e : root->operands) outputs.push_back(source_of(e));
  return outputs;
}

// The operand of `i` already in output `k`'s buffer (the kernel works in place), or -1.
int operand_in_output(const Instruction* i, const std::map<ValueRef, int>& early, int k) {
  int alias = -1;
  for (std::size_t j = 0; j < i->operands.size(); ++j) {
    auto d = early.find(source_of(i->operands[j]));
    if (d != early.end() && d->second == k) alias = static_cast<int>(j);
  }
  return alias;
}

}  // namespace

BufferAssignment assign_buffers(const hlo::Computation& entry,
                                const std::vector<Instruction*>& order,
                                const std::vector<bool>& donated) {
  BufferAssignment ba;
  ba.outputs = entry_outputs(entry);

  // Last use of each value (by position in `order`); outputs live to the end.
  std::map<ValueRef, std::size_t> last_use;
  for (std::size_t t = 0; t < order.size(); ++t)
    for (const Instruction* op : order[t]->operands) last_use[source_of(op)] = t;
  for (const ValueRef& v : ba.outputs) last_use[v] = order.size();
  std::map<ValueRef, int> early = match_early_outputs(order, donated, ba.outputs, last_use);
  for (const auto& [v, k] : early)
    if (v.inst->opcode == Opcode::kParameter)
      ba.donations.push_back({static_cast<int>(v.inst->parameter_number), k});

  Arena arena;
  for (std::size_t t = 0; t < order.size(); ++t) {
    const Instruction* i = order[t];
    if (i->opcode == Opcode::kTuple || i->opcode == Opcode::kGetTupleElement ||
        i->opcode == Opcode::kReshape || i->opcode == Opcode::kOptimizationBarrier)
      continue;
    std::vector<const hlo::HloShape*> shapes = hlo::output_shapes(*i);
    std::vector<ValueRef> values, reused;
    std::vector<int> aliases;
    for (std::size_t e = 0; e < shapes.size(); ++e) {
      ValueRef v{i, i->shape.is_tuple ? static_cast<int>(e) : -1};
      values.push_back(v);
      Allocation a;
      a.size = shapes[e]->byte_size();
      int alias = -1;
      if (auto d = early.find(v); d != early.end()) {
        a.kind = Allocation::Kind::kOutput;
        a.index = d->second;
        alias = operand_in_output(i, early, a.index);
      } else if (i->opcode == Opcode::kParameter) {
        a.kind = Allocation::Kind::kParameter;
        a.index = static_cast<int>(i->parameter_number);
      } else if (i->opcode == Opcode::kConstant) {
        a.kind = Allocation::Kind::kConstant;
        a.index = static_cast<int>(ba.constants.size());
        ba.constants.push_back(i);
      } else if (auto it = std::find(ba.outputs.begin(), ba.outputs.end(), v);
                 it != ba.outputs.end()) {
        a.kind = Allocation::Kind::kOutput;
        a.index = static_cast<int>(it - ba.outputs.begin());
        alias = operand_in_output(i, early, a.index);
      } else if ((alias = in_place_operand(i, v.element, *shapes[e], ba.of, last_use, t, reused)) >=
                 0) {
        reused.push_back(source_of(i->operands[static_cast<std::size_t>(alias)]));
        a = ba.of.at(reused.back());
      } else {
        a.offset = arena.allocate(aligned(a.size));
      }
      aliases.push_back(alias);
      ba.of[v] = a;
    }
    if (std::any_of(aliases.begin(), aliases.end(), [](int k) { return k >= 0; }))
      ba.in_place[i] = aliases;
    // A while's second carry lives only while the loop runs (placed with its operands still
    // live, so the loop's first copy never reads what it writes).
    if (i->opcode == Opcode::kWhile) {
      std::vector<Allocation>& spare = ba.spare_carry[i];
      for (const hlo::HloShape* shape : shapes) {
        Allocation a;
        a.size = shape->byte_size();
        a.offset = arena.allocate(aligned(a.size));
        spare.push_back(a);
      }
      for (const Allocation& a : spare) arena.release(a.offset, aligned(a.size));
    }
    // Operands whose last use is here give their space back — after this instruction's
    // outputs were placed, so an output never overlaps its inputs (unless in place).
    std::vector<ValueRef> sources;
    for (const Instruction* op : i->operands)
      if (std::find(sources.begin(), sources.end(), source_of(op)) == sources.end())
        sources.push_back(source_of(op));
    for (const ValueRef& src : sources) {
      auto found = ba.of.find(src);
      if (found == ba.of.end() || found->second.kind != Allocation::Kind::kTemp) continue;
      if (std::find(reused.begin(), reused.end(), src) != reused.end()) continue;
      if (last_use[src] == t) arena.release(found->second.offset, aligned(found->second.size));
    }
    // A value nobody reads is dead at once.
    for (const ValueRef& v : values) {
      const Allocation& a = ba.of.at(v);
      if (a.kind == Allocation::Kind::kTemp && !last_use.count(v))
        arena.release(a.offset, aligned(a.size));
    }
  }
  ba.arena_bytes = arena.size();
  return ba;
}

void defer_overwrites_of_donated(const hlo::Computation& entry, std::vector<Instruction*>& order,
                                 const std::vector<bool>& donated) {
  std::vector<ValueRef> outputs = entry_outputs(entry);
  auto position = [&](const Instruction* i) {
    return static_cast<std::size_t>(std::find(order.begin(), order.end(), i) - order.begin());
  };
  std::vector<const Instruction*> parameters;  // the donated ones
  for (const Instruction* i : order)
    if (i->opcode == Opcode::kParameter && is_donated(*i, donated)) parameters.push_back(i);
  for (const Instruction* p : parameters) {
    // The first output kernel that could compute over p, and p's last other reader.
    auto writer = std::find_if(outputs.begin(), outputs.end(), [&](const ValueRef& out) {
      return value_shape(out) == p->shape &&
             overwritable_operand(out.inst, {p, -1}, std::max(out.element, 0)) >= 0;
    });
    if (writer == outputs.end()) continue;
    std::size_t first = position(writer->inst), last = first;
    for (std::size_t t = first + 1; t < order.size(); ++t)
      for (const Instruction* op : order[t]->operands)
        if (source_of(op).inst == p) last = t;
    // Everything in [first, last] that depends on the writer moves after the rest, unless the
    // last reader itself does.
    std::set<const Instruction*> after{order[first]};
    for (std::size_t t = first + 1; t <= last; ++t)
      for (const Instruction* op : order[t]->operands)
        if (after.count(op)) after.insert(order[t]);
    if (last == first || after.count(order[last])) continue;
    std::stable_partition(order.begin() + static_cast<std::ptrdiff_t>(first),
                          order.begin() + static_cast<std::ptrdiff_t>(last) + 1,
                          [&](const Instruction* i) { return !after.count(i); });
  }
}

}  // namespace jx::runtime
