#include "codegen/cpu/row_stash.hpp"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "codegen/cpu/cpu_compiler.hpp"
#include "codegen/cpu/read_ahead.hpp"

namespace jx::codegen::cpu {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// The longest row stashed on the stack: with the row it is computed from, a third of a 48 KiB
// first-level cache each.
constexpr std::int64_t kMaxStackRowBytes = 16 << 10;

// Whether computing `i` evaluates a math function (exp, log, tanh...) inside the fusion.
bool holds_math(const Instruction* i, std::unordered_set<const Instruction*>& seen) {
  if (!seen.insert(i).second) return false;
  if (hlo::has_trait(i->opcode, hlo::kTranscendental)) return true;
  for (const Instruction* o : i->operands)
    if (holds_math(o, seen)) return true;
  return false;
}

// Whether `r` reduces trailing dims of its operand, dim 0 kept.
bool reduces_trailing_rows(const Instruction& r) {
  if (r.opcode != Opcode::kReduce || r.operands.size() != 2) return false;
  ReduceSplit s = split_reduce_dims(r);
  std::int64_t rank = r.operands[0]->shape.rank();
  if (s.kept.empty() || s.kept.front() != 0) return false;
  for (std::size_t k = 0; k < s.kept.size(); ++k)
    if (s.kept[k] != static_cast<std::int64_t>(k)) return false;
  return static_cast<std::int64_t>(s.kept.size()) < rank;
}

// Whether every read of `v` is a row reduction's, or an elementwise op's of the output's shape
// whose own reads are the same. `kept` becomes the fewest leading dims a reduction reached keeps
// (it stays at the rank when none is). Each user is followed once (`seen`): paths through a
// shared value would otherwise multiply with every level.
bool read_in_place(const hlo::Computation& c, const Instruction* v, const Shape& dims,
                   std::size_t& kept, std::unordered_set<const Instruction*>& seen) {
  for (const Instruction* u : c.users(v)) {
    if (reduces_trailing_rows(*u) && u->operands[0] == v) {
      kept = std::min(kept, static_cast<std::size_t>(u->shape.rank()));
      continue;
    }
    if (!hlo::has_trait(u->opcode, hlo::kElementwise) || u->shape.dims != dims) return false;
    if (u != c.root() && seen.insert(u).second && !read_in_place(c, u, dims, kept, seen))
      return false;
  }
  return true;
}

// Prefetches of a chunk of the next row in the kernel's operands that have the fusion's shape
// (what the stashed value is computed from, row by row).
ElementalEmitter::ChunkHook next_row_prefetch(ElementalEmitter& em, const hlo::Instruction& fusion,
                                              const std::vector<llvm::Value*>& buffers,
                                              const Instruction& reduce) {
  std::int64_t row = 1;
  for (std::int64_t d : split_reduce_dims(reduce).reduced)
    row *= reduce.operands[0]->shape.dims[static_cast<std::size_t>(d)];
  std::vector<ReadStream> streams;
  for (std::size_t k = 0; k < buffers.size(); ++k)
    if (fusion.operands[k]->shape.dims == fusion.shape.dims)
      streams.push_back({buffers[k], fusion.operands[k]->shape.dtype});
  return read_ahead(em, std::move(streams), row);
}

// Whether `i` reads its operands at its own index's first `kept` coordinates: elementwise, a
// broadcast that keeps them in place, a reshape of whole rows.
bool keeps_rows(const Instruction& i, std::size_t kept) {
  if (hlo::has_trait(i.opcode, hlo::kElementwise)) return true;
  const Shape& from = i.operands[0]->shape.dims;
  const Shape& to = i.shape.dims;
  if (from.size() < kept || to.size() < kept) return false;
  if (i.opcode == Opcode::kBroadcast) {
    const std::vector<std::int64_t>& dims = i.attrs.get_ints("dimensions");
    for (std::size_t k = 0; k < kept; ++k)
      if (dims[k] != static_cast<std::int64_t>(k)) return false;
    return true;
  }
  // Row-major, equal leading dims leave equal rows behind them.
  return i.opcode == Opcode::kReshape && std::equal(from.begin(), from.begin() + kept, to.begin());
}

// Whether `i` reads each reduction under it at its own row (first `kept` coordinates): every
// instruction between them keeps rows. `below` memoizes whether a reduction lies under each.
bool reads_reductions_in_row(const Instruction* i, std::size_t kept,
                             std::unordered_map<const Instruction*, bool>& below) {
  // Checked already (a failed check ends the walk).
  if (below.count(i) != 0) return true;
  bool any = i->opcode == Opcode::kReduce;
  if (!any) {
    for (const Instruction* o : i->operands) {
      if (!reads_reductions_in_row(o, kept, below)) return false;
      any = any || below.at(o);
    }
    if (any && !keeps_rows(*i, kept)) return false;
  }
  below[i] = any;
  return true;
}

// Whether the fusion's output can be written a row behind: every reduction folds rows, keeping
// the `kept` leading dims, and the output reads each at its own row, since the rows' writes
// read each reduction's value for the finished row from one slot.
bool writes_behind(const hlo::Computation& c, std::size_t kept) {
  for (const Instruction* i : c.instructions())
    if (i->opcode == Opcode::kReduce &&
        (!reduces_trailing_rows(*i) || static_cast<std::size_t>(i->shape.rank()) != kept))
      return false;
  std::unordered_map<const Instruction*, bool> below;
  return reads_reductions_in_row(c.root(), kept, below);
}

// The reduction in whose chunks the output can be written a row behind, or none: the first that
// reads `v` (nullptr: the last of any that folds rows of the output's shape), which folds in
// chunks, where the output can be written behind at all.
const Instruction* behind_in(const hlo::Computation& c, const Instruction* v, std::size_t kept) {
  const Instruction* chunked = nullptr;
  for (const Instruction* i : c.instructions()) {
    if (i->opcode != Opcode::kReduce || !folds_in_row_chunks(*i)) continue;
    if (v ? i->operands[0] == v && !chunked : i->operands[0]->shape.dims == c.root()->shape.dims)
      chunked = i;
  }
  return chunked && writes_behind(c, kept) ? chunked : nullptr;
}

}  // namespace

RowStash stash_row_values(ElementalEmitter& em, const hlo::Instruction& fusion,
                          const std::vector<ElementGenerator>& params,
                          const std::vector<llvm::Value*>& buffers, llvm::Value* out,
                          bool out_streams) {
  RowStash stash;
  if (fusion.opcode != Opcode::kFusion || fusion.shape.is_tuple || fusion.shape.rank() < 2)
    return stash;
  const hlo::Computation& c = *fusion.called[0];
  const hlo::HloShape& shape = fusion.shape;
  // The output's row holds one value per element, so one value is stashed: the last that
  // qualifies, which the output reads other than through the sum (a value only the sum reads
  // is computed once anyway). Values before it are computed in the sum's loop as it is.
  std::vector<Instruction*> order = c.instructions();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Instruction* v = *it;
    std::size_t kept = shape.dims.size();
    std::unordered_set<const Instruction*> operands_seen, users_seen;
    std::vector<Instruction*> users = c.users(v);
    if (v == c.root() || !hlo::has_trait(v->opcode, hlo::kElementwise) ||
        v->shape.dims != shape.dims || v->shape.dtype != shape.dtype ||
        std::all_of(users.begin(), users.end(),
                    [](const Instruction* u) { return reduces_trailing_rows(*u); }) ||
        !holds_math(v, operands_seen) || !read_in_place(c, v, shape.dims, kept, users_seen) ||
        kept == shape.dims.size())
      continue;
    // Where the value lies: the output's element, or its place on the stack in the row of the
    // dims the reductions reduce, in one of two rows when the output is written a row behind
    // (rows alternate between them).
    Shape row(shape.dims.begin() + static_cast<std::ptrdiff_t>(kept), shape.dims.end());
    Shape leading(shape.dims.begin(), shape.dims.begin() + static_cast<std::ptrdiff_t>(kept));
    bool on_stack = out_streams && shape_size(row) * itemsize(shape.dtype) <= kMaxStackRowBytes;
    const Instruction* chunked = on_stack ? behind_in(c, v, kept) : nullptr;
    bool behind = chunked != nullptr;
    llvm::Value* stack = nullptr;
    if (on_stack) {
      llvm::AllocaInst* slot = em.entry_alloca(
          llvm::ArrayType::get(storage_type(em.ctx(), shape.dtype),
                               static_cast<std::uint64_t>(shape_size(row) * (behind ? 2 : 1))),
          "stash");
      slot->setAlignment(llvm::Align(kCacheLine));
      stack = slot;
    }
    auto place = [&em, stack, out, shape, row, leading, kept, behind](const IrIndex& index) {
      if (!stack) return std::pair{out, em.linear_index(index, shape.dims)};
      auto split = index.dims.begin() + static_cast<std::ptrdiff_t>(kept);
      llvm::Value* at = em.linear_index(IrIndex{{split, index.dims.end()}}, row);
      if (behind) {
        llvm::IRBuilder<>& b = em.b();
        llvm::Value* r = em.linear_index(IrIndex{{index.dims.begin(), split}}, leading);
        llvm::Value* half = b.CreateMul(b.CreateAnd(r, em.i64(1)), em.i64(shape_size(row)));
        at = b.CreateAdd(at, half, "", true, true);
      }
      return std::pair{stack, at};
    };
    ElementGenerator compute = em.generators_of(c, params, {v}).front();
    DType dtype = shape.dtype;
    auto load = [&em, place, dtype](const IrIndex& index) {
      auto [base, at] = place(index);
      return em.load(dtype, base, at, "stashed");
    };
    stash.values[v] = [&em, compute, place, load, dtype](const IrIndex& index) {
      if (!em.reducing()) return load(index);
      llvm::Value* value = compute(index);
      auto [base, at] = place(index);
      em.store(dtype, value, base, at);
      return value;
    };
    stash.in_output = !stack;
    if (behind) {
      stash.behind = RowStash::Behind{v, load, kept, chunked,
                                      next_row_prefetch(em, fusion, buffers, *chunked)};
      break;
    }
    for (const Instruction* u : users)
      if (reduces_trailing_rows(*u) && u->operands[0] == v)
        em.hook_row_chunks(*u, next_row_prefetch(em, fusion, buffers, *u));
    break;
  }
  // Nothing to stash: a streamed output is written a row behind all the same, from the operands'
  // row, which the reductions have just read into the cache (where a row of the output's size
  // stays, as a stashed one does).
  std::size_t kept = shape.dims.size() - 1;
  if (stash.values.empty() && out_streams &&
      shape.dims.back() * itemsize(shape.dtype) <= kMaxStackRowBytes)
    if (const Instruction* chunked = behind_in(c, nullptr, kept))
      stash.behind = RowStash::Behind{nullptr, nullptr, kept, chunked,
                                      next_row_prefetch(em, fusion, buffers, *chunked)};
  return stash;
}

void emit_rows_behind(ElementalEmitter& em, const RowStash& stash, const hlo::Instruction& fusion,
                      const std::vector<ElementGenerator>& params, llvm::Value* out,
                      const std::optional<OuterRange>& rows) {
  const RowStash::Behind& behind = *stash.behind;
  llvm::IRBuilder<>& b = em.b();
  const hlo::Computation& c = *fusion.called[0];
  const Shape& dims = fusion.shape.dims;
  DType dtype = fusion.shape.dtype;
  if (shape_size(dims) == 0) return;  // nothing to write, and dim 0 may be 0
  // The rows are the leading dims' indices, in order; a thread's are its range of the kernel's
  // rows (kernel_rows: dim 0's, or those of leading dims taken together).
  Shape leading(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(behind.kept));
  std::int64_t row_size = dims.back();  // the reduced dim: the last alone (folds_in_row_chunks)
  std::int64_t rows_per_index = shape_size(leading) / kernel_rows(fusion);
  auto row_at = [&](llvm::Value* index_of_dim0) {
    return b.CreateMul(index_of_dim0, em.i64(rows_per_index), "", true, true);
  };
  llvm::Value* first_row = rows ? row_at(rows->begin) : em.i64(0);
  llvm::Value* end_row = rows ? row_at(rows->end) : em.i64(shape_size(leading));

  // The reductions, which compute the stashed value as they go, and a slot each for their value
  // at the last finished row, from which that row's output is computed.
  std::vector<const Instruction*> reductions;
  for (const Instruction* i : c.instructions())
    if (i->opcode == Opcode::kReduce) reductions.push_back(i);
  std::vector<ElementGenerator> reduced = em.generators_of(c, params, reductions, stash.values);
  ElementalEmitter::GivenGenerators finished;
  if (behind.value) finished[behind.value] = behind.load;
  std::vector<llvm::AllocaInst*> slots;
  for (const Instruction* r : reductions) {
    llvm::Type* type = em.type(r->shape.dtype);
    llvm::AllocaInst* slot = slots.emplace_back(em.entry_alloca(type, "finished"));
    finished[r] = [&b, type, slot](const IrIndex&) { return b.CreateLoad(type, slot); };
  }
  ElementGenerator output = em.generators_of(c, params, {c.root()}, finished).front();
  // Elements [first, first + count) of the finished row r.
  auto write = [&em, &b, output, leading, row_size, dtype, out](llvm::Value* r, llvm::Value* first,
                                                                std::int64_t count) {
    IrIndex row_index = em.delinearize(r, leading);
    llvm::Value* row_start = b.CreateMul(r, em.i64(row_size), "", true, true);
    emit_for(em, count, "behind", [&](llvm::Value* k) {
      llvm::Value* j = b.CreateAdd(first, k, "", true, true);
      IrIndex index{row_index.dims, b.CreateAdd(row_start, j, "", true, true)};
      index.dims.push_back(j);
      em.store(dtype, output(index), out, index.linear);
    });
  };
  em.hook_row_chunks(*behind.chunked, [&em, &b, prefetch = behind.prefetch, write, first_row,
                                       row_size](llvm::Value* first, std::int64_t count) {
    prefetch(first, count);
    llvm::Value* r = b.CreateUDiv(first, em.i64(row_size));
    llvm::Value* in_row = b.CreateURem(first, em.i64(row_size));
    emit_if(em, b.CreateICmpUGT(r, first_row), "behind",
            [&] { write(b.CreateSub(r, em.i64(1), "", true, true), in_row, count); });
  });
  emit_for(
      em, first_row, end_row, "rows",
      [&](llvm::Value* r) {
        IrIndex index = em.delinearize(r, leading);
        std::vector<llvm::Value*> values;
        for (const ElementGenerator& g : reduced) values.push_back(g(index));
        for (std::size_t k = 0; k < values.size(); ++k) b.CreateStore(values[k], slots[k]);
      },
      /*vectorize=*/false);
  emit_if(em, b.CreateICmpUGT(end_row, first_row), "last_row",
          [&] { write(b.CreateSub(end_row, em.i64(1), "", true, true), em.i64(0), row_size); });
}

}  // namespace jx::codegen::cpu
