// Generators of the layout opcodes (broadcast, reshape, transpose, slice, dynamic-slice,
// dynamic-update-slice, concatenate, pad, reverse) and of constant and iota: index arithmetic only,
// following the eager impls in src/primitives/shape_ops.cpp and slicing.cpp.
#include <algorithm>
#include <cstring>
#include <string>

#include "codegen/elemental/elemental.hpp"
#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "jx/errors.hpp"

namespace jx::codegen {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using Ints = std::vector<std::int64_t>;
using Gens = std::vector<ElementGenerator>;

const Ints& ints_attr(const Instruction& inst, const char* name, std::size_t size) {
  if (!inst.attrs.has(name)) fail(inst, std::string("missing attribute ") + name);
  const Ints& v = inst.attrs.get_ints(name);
  if (v.size() != size) fail(inst, std::string("attribute ") + name + " has the wrong length");
  return v;
}

const Shape& dims_of(const Instruction& inst, std::size_t k) {
  return inst.operands[k]->shape.dims;
}

// An index of the given values; a 0-d index has linear index 0.
IrIndex index_of(ElementalEmitter& em, std::vector<llvm::Value*> dims) {
  IrIndex index{std::move(dims), nullptr};
  if (index.dims.empty()) index.linear = em.i64(0);
  return index;
}

// out[i] = x[i'] where x's dim k of size 1 repeats (i'_k = 0), else i'_k = i[dimensions[k]].
ElementGenerator emit_broadcast(ElementalEmitter& em, const Instruction& inst, const Gens& ops) {
  const Shape& x = dims_of(inst, 0);
  const Ints& map = ints_attr(inst, "dimensions", x.size());
  for (std::size_t k = 0; k < x.size(); ++k)
    if (map[k] < 0 || map[k] >= inst.shape.rank() ||
        (x[k] != 1 && x[k] != inst.shape.dims[static_cast<std::size_t>(map[k])]))
      fail(inst, "dimensions do not map the operand into the output");
  bool identity = x == inst.shape.dims;
  for (std::size_t k = 0; k < map.size(); ++k) identity &= map[k] == static_cast<std::int64_t>(k);
  if (identity) return ops[0];  // the index (and its linear form) carries over
  return [&em, x, map, g = ops[0]](const IrIndex& index) {
    std::vector<llvm::Value*> dims;
    for (std::size_t k = 0; k < x.size(); ++k)
      dims.push_back(x[k] == 1 ? em.i64(0) : index.dims[static_cast<std::size_t>(map[k])]);
    return g(index_of(em, std::move(dims)));
  };
}

// A reshape seen as runs: consecutive non-unit dims of the operand and of the output whose
// sizes multiply to the same number ([65536, 576] ↔ [64, 32, 32, 576] is {64, 32, 32} ↔ {65536}
// and {576} ↔ {576}). Each run's operand index comes from its own output dims only, so an
// index that a loop nest's inner loops do not touch stays loop-invariant and is hoisted.
struct ReshapeRun {
  std::vector<std::size_t> from, to;  // operand dims, output dims
};

std::vector<ReshapeRun> reshape_runs(const Shape& x, const Shape& out) {
  std::vector<std::size_t> xs, ys;
  for (std::size_t d = 0; d < x.size(); ++d)
    if (x[d] != 1) xs.push_back(d);
  for (std::size_t d = 0; d < out.size(); ++d)
    if (out[d] != 1) ys.push_back(d);
  std::vector<ReshapeRun> runs;
  for (std::size_t i = 0, j = 0; i < xs.size() && j < ys.size();) {
    ReshapeRun r{{xs[i]}, {ys[j]}};
    std::int64_t px = x[xs[i++]], py = out[ys[j++]];
    while (px != py) {
      if (px < py)
        r.from.push_back(xs[i]), px *= x[xs[i++]];
      else
        r.to.push_back(ys[j]), py *= out[ys[j++]];
    }
    runs.push_back(std::move(r));
  }
  return runs;
}

// Row-major order is kept: the linear index is the same in both shapes.
ElementGenerator emit_reshape(ElementalEmitter& em, const Instruction& inst, const Gens& ops) {
  const Shape& x = dims_of(inst, 0);
  const Shape& out = inst.shape.dims;
  if (shape_size(x) != inst.shape.size()) fail(inst, "element counts differ");
  if (x == out) return ops[0];
  if (shape_size(x) == 0)
    return [&em, x, out, g = ops[0]](const IrIndex& index) {
      return g(em.delinearize(em.linear_index(index, out), x));
    };
  return [&em, x, out, runs = reshape_runs(x, out), g = ops[0]](const IrIndex& index) {
    IrIndex in{std::vector<llvm::Value*>(x.size(), em.i64(0)), index.linear};
    for (const ReshapeRun& r : runs) {
      if (r.from.size() == 1 && r.to.size() == 1) {  // a dim kept, maybe moved past unit dims
        in.dims[r.from[0]] = index.dims[r.to[0]];
        continue;
      }
      IrIndex part{std::vector<llvm::Value*>(r.to.size()), nullptr};
      Shape part_out, part_x;
      for (std::size_t k = 0; k < r.to.size(); ++k)
        part.dims[k] = index.dims[r.to[k]], part_out.push_back(out[r.to[k]]);
      for (std::size_t d : r.from) part_x.push_back(x[d]);
      IrIndex split = em.delinearize(em.linear_index(part, part_out), part_x);
      for (std::size_t k = 0; k < r.from.size(); ++k) in.dims[r.from[k]] = split.dims[k];
    }
    return g(in);
  };
}

// out.shape[k] = x.shape[perm[k]]: x's index at perm[k] is the output's index at k.
ElementGenerator emit_transpose(ElementalEmitter& em, const Instruction& inst, const Gens& ops) {
  const Ints& perm = ints_attr(inst, "dimensions", dims_of(inst, 0).size());
  std::vector<bool> seen(perm.size());
  for (std::int64_t k : perm) {
    if (k < 0 || k >= static_cast<std::int64_t>(perm.size()) || seen[static_cast<std::size_t>(k)])
      fail(inst, "dimensions is not a permutation");
    seen[static_cast<std::size_t>(k)] = true;
  }
  Shape permuted;
  for (std::int64_t k : perm) permuted.push_back(dims_of(inst, 0)[static_cast<std::size_t>(k)]);
  if (permuted != inst.shape.dims) fail(inst, "the output shape is not the permuted operand's");
  return [&em, perm, g = ops[0]](const IrIndex& index) {
    std::vector<llvm::Value*> dims(perm.size());
    for (std::size_t k = 0; k < perm.size(); ++k)
      dims[static_cast<std::size_t>(perm[k])] = index.dims[k];
    return g(index_of(em, std::move(dims)));
  };
}

// slice = (start, limit, stride) per dim: x's index is start + i * stride.
ElementGenerator emit_slice(ElementalEmitter& em, const Instruction& inst, const Gens& ops) {
  const Shape& x = dims_of(inst, 0);
  const Ints& s = ints_attr(inst, "slice", 3 * x.size());
  if (static_cast<std::size_t>(inst.shape.rank()) != x.size()) fail(inst, "rank changes");
  for (std::size_t d = 0; d < x.size(); ++d) {
    std::int64_t n = inst.shape.dims[d];
    if (n > 0 && (s[3 * d] < 0 || s[3 * d + 2] < 1 || s[3 * d] + (n - 1) * s[3 * d + 2] >= x[d]))
      fail(inst, "the slice reads outside the operand");
  }
  return [&em, s, g = ops[0]](const IrIndex& index) {
    auto& b = em.b();
    std::vector<llvm::Value*> dims;
    for (std::size_t d = 0; d < index.dims.size(); ++d)
      dims.push_back(b.CreateAdd(em.i64(s[3 * d]),
                                 b.CreateMul(index.dims[d], em.i64(s[3 * d + 2]), "", true, true),
                                 "", true, true));
    return g(index_of(em, std::move(dims)));
  };
}

// The 0-d start operands ops[first...], each clamped so the window [start, start + size) fits.
std::vector<llvm::Value*> clamped_starts(ElementalEmitter& em, const Instruction& inst,
                                         const Gens& ops, std::size_t first, const Shape& sizes) {
  const Shape& x = dims_of(inst, 0);
  std::vector<llvm::Value*> starts;
  for (std::size_t d = 0; d < x.size(); ++d) {
    llvm::Value* v = ops[first + d](em.scalar_index());
    starts.push_back(em.clamped_start(v, inst.operands[first + d]->shape.dtype, x[d] - sizes[d]));
  }
  return starts;
}

void check_starts(const Instruction& inst, std::size_t first, const Shape& sizes) {
  const Shape& x = dims_of(inst, 0);
  if (inst.operands.size() != first + x.size()) fail(inst, "needs one start index per dimension");
  if (sizes.size() != x.size()) fail(inst, "the window's rank differs from the operand's");
  for (std::size_t d = 0; d < x.size(); ++d) {
    const hlo::HloShape& s = inst.operands[first + d]->shape;
    if (s.rank() != 0 || !is_integral(s.dtype)) fail(inst, "start indices must be 0-d integers");
    if (sizes[d] < 0 || sizes[d] > x[d]) fail(inst, "the window is larger than the operand");
  }
}

ElementGenerator emit_dynamic_slice(ElementalEmitter& em, const Instruction& inst,
                                    const Gens& ops) {
  const Shape& sizes = inst.shape.dims;
  check_starts(inst, 1, sizes);
  return [&em, &inst, ops, sizes](const IrIndex& index) {
    std::vector<llvm::Value*> starts = clamped_starts(em, inst, ops, 1, sizes);
    std::vector<llvm::Value*> dims;
    for (std::size_t d = 0; d < starts.size(); ++d)
      dims.push_back(em.b().CreateAdd(starts[d], index.dims[d], "", true, true));
    return ops[0](index_of(em, std::move(dims)));
  };
}

// Inside the (clamped) window the update's element, elsewhere the operand's.
ElementGenerator emit_dynamic_update_slice(ElementalEmitter& em, const Instruction& inst,
                                           const Gens& ops) {
  if (inst.operands.size() < 2) fail(inst, "needs an operand and an update");
  const Shape& u = dims_of(inst, 1);
  if (u.size() != dims_of(inst, 0).size()) fail(inst, "update rank differs from operand rank");
  check_starts(inst, 2, u);
  if (shape_size(u) == 0) return ops[0];
  return [&em, &inst, ops, u](const IrIndex& index) {
    auto& b = em.b();
    std::vector<llvm::Value*> starts = clamped_starts(em, inst, ops, 2, u);
    std::vector<llvm::Value*> dims;
    llvm::Value* inside = b.getTrue();
    for (std::size_t d = 0; d < u.size(); ++d) {
      llvm::Value* k = b.CreateSub(index.dims[d], starts[d]);
      inside = b.CreateAnd(inside, b.CreateICmpULT(k, em.i64(u[d])));  // 0 <= k < u[d]
      dims.push_back(k);
    }
    return em.if_else(
        inside, [&] { return ops[1](index_of(em, dims)); }, [&] { return ops[0](index); }, "dus");
  };
}

// Along `dimension`, operand k covers [offset_k, offset_k + size_k); empty operands never do.
ElementGenerator emit_concatenate(ElementalEmitter& em, const Instruction& inst, const Gens& ops) {
  const Ints& dim_attr = ints_attr(inst, "dimensions", 1);
  auto dim = static_cast<std::size_t>(dim_attr[0]);
  if (dim >= static_cast<std::size_t>(inst.shape.rank())) fail(inst, "dimension out of range");
  struct Part {
    ElementGenerator g;
    std::int64_t begin, end;
  };
  std::vector<Part> parts;
  std::int64_t offset = 0;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    std::int64_t n = dims_of(inst, k)[dim];
    if (n > 0 && shape_size(dims_of(inst, k)) > 0) parts.push_back({ops[k], offset, offset + n});
    offset += n;
  }
  if (offset != inst.shape.dims[dim]) fail(inst, "operand sizes do not add up to the output's");
  llvm::Type* type = em.type(inst.shape.dtype);
  return [&em, parts, dim, type](const IrIndex& index) -> llvm::Value* {
    std::function<llvm::Value*(std::size_t)> from = [&](std::size_t k) -> llvm::Value* {
      if (k >= parts.size()) return llvm::UndefValue::get(type);  // only for empty outputs
      IrIndex local{index.dims, nullptr};
      local.dims[dim] = em.b().CreateSub(index.dims[dim], em.i64(parts[k].begin), "", true, true);
      if (k + 1 == parts.size()) return parts[k].g(local);
      llvm::Value* here = em.b().CreateICmpSLT(index.dims[dim], em.i64(parts[k].end));
      return em.if_else(
          here, [&] { return parts[k].g(local); }, [&] { return from(k + 1); }, "concat");
    };
    return from(0);
  };
}

// padding = (low, high, interior) per dim. Output i is operand element (i - low) / (interior+1)
// when that divides exactly and lands inside the operand; else the padding value. Negative low
// or high crop.
ElementGenerator emit_pad(ElementalEmitter& em, const Instruction& inst, const Gens& ops) {
  const Shape& x = dims_of(inst, 0);
  const Ints& p = ints_attr(inst, "padding", 3 * x.size());
  if (dims_of(inst, 1).size() != 0) fail(inst, "the padding value must be 0-d");
  if (static_cast<std::size_t>(inst.shape.rank()) != x.size()) fail(inst, "rank changes");
  if (shape_size(x) == 0) return [&em, g = ops[1]](const IrIndex&) { return g(em.scalar_index()); };
  return [&em, x, p, ops](const IrIndex& index) {
    auto& b = em.b();
    llvm::Value* inside = b.getTrue();
    std::vector<llvm::Value*> dims;
    for (std::size_t d = 0; d < x.size(); ++d) {
      std::int64_t low = p[3 * d], step = p[3 * d + 2] + 1;
      if (low == 0 && p[3 * d + 1] == 0 && step == 1) {  // unpadded: always inside
        dims.push_back(index.dims[d]);
        continue;
      }
      llvm::Value* pos = b.CreateSub(index.dims[d], em.i64(low));  // in the dilated operand
      inside = b.CreateAnd(inside, b.CreateICmpULT(pos, em.i64((x[d] - 1) * step + 1)));
      if (step > 1) {
        inside = b.CreateAnd(inside, b.CreateICmpEQ(b.CreateURem(pos, em.i64(step)), em.i64(0)));
        pos = b.CreateUDiv(pos, em.i64(step));
      }
      dims.push_back(pos);
    }
    // A select, not a branch, so the loop over the output vectorizes: outside, the operand is
    // read at its first element (in bounds) and discarded.
    for (std::size_t d = 0; d < dims.size(); ++d)
      if (p[3 * d] || p[3 * d + 1] || p[3 * d + 2])
        dims[d] = b.CreateSelect(inside, dims[d], em.i64(0));
    return b.CreateSelect(inside, ops[0](index_of(em, dims)), ops[1](em.scalar_index()), "pad");
  };
}

// Along each of dimensions={...}, output index i reads operand index n-1-i.
ElementGenerator emit_reverse(ElementalEmitter& em, const Instruction& inst, const Gens& ops) {
  const Shape& x = dims_of(inst, 0);
  if (!inst.attrs.has("dimensions")) fail(inst, "missing attribute dimensions");
  if (inst.shape.dims != x) fail(inst, "the output shape is not the operand's");
  std::vector<bool> flipped(x.size(), false);
  for (std::int64_t d : inst.attrs.get_ints("dimensions")) {
    if (d < 0 || d >= static_cast<std::int64_t>(x.size())) fail(inst, "dimension out of range");
    flipped[static_cast<std::size_t>(d)] = x[static_cast<std::size_t>(d)] > 1;
  }
  if (std::find(flipped.begin(), flipped.end(), true) == flipped.end()) return ops[0];
  return [&em, x, flipped, g = ops[0]](const IrIndex& index) {
    std::vector<llvm::Value*> dims = index.dims;
    for (std::size_t d = 0; d < x.size(); ++d)
      if (flipped[d]) dims[d] = em.b().CreateSub(em.i64(x[d] - 1), dims[d], "", true, true);
    return g(index_of(em, std::move(dims)));
  };
}

ElementGenerator emit_iota(ElementalEmitter& em, const Instruction& inst, const Gens&) {
  if (!inst.attrs.has("iota_dimension")) fail(inst, "missing attribute iota_dimension");
  auto dim = static_cast<std::size_t>(inst.attrs.get_int("iota_dimension"));
  if (dim >= static_cast<std::size_t>(inst.shape.rank())) fail(inst, "iota_dimension out of range");
  DType d = inst.shape.dtype;
  return [&em, dim, d](const IrIndex& index) {
    return emit_convert(em.b(), index.dims[dim], int64, d);
  };
}

// Element i of a constant's literal as an LLVM constant.
llvm::Constant* literal_element(ElementalEmitter& em, const Instruction& inst, std::int64_t i) {
  DType d = inst.shape.dtype;
  const auto* bytes =
      static_cast<const std::byte*>(concrete_buffer(*inst.literal, "codegen").data());
  llvm::Type* t = em.type(d);
  return dispatch(d, [&]<class T>() -> llvm::Constant* {
    T v;
    std::memcpy(&v, bytes + i * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
    if constexpr (is_float_element_v<T>)
      return llvm::ConstantFP::get(t, static_cast<double>(v));
    else if constexpr (std::is_signed_v<T>)
      return llvm::ConstantInt::getSigned(t, v);
    else
      return llvm::ConstantInt::get(t, static_cast<std::uint64_t>(v));
  });
}

// Size-1 literals become immediates (foldable); larger ones are read from a private global.
ElementGenerator emit_constant(ElementalEmitter& em, const Instruction& inst, const Gens&) {
  if (!inst.literal || inst.literal->shape() != inst.shape.dims ||
      inst.literal->dtype() != inst.shape.dtype)
    fail(inst, "has no literal of its shape");
  if (inst.shape.size() == 1) {
    return [&em, &inst](const IrIndex&) { return literal_element(em, inst, 0); };
  }
  return [&em, &inst](const IrIndex& index) {
    llvm::GlobalVariable* g = em.literal_global(inst);
    return em.load(inst.shape.dtype, g, em.linear_index(index, inst.shape.dims), inst.name);
  };
}

}  // namespace

void add_layout_emitters(EmitterTable& t) {
  t.set(Opcode::kBroadcast, emit_broadcast);
  t.set(Opcode::kReshape, emit_reshape);
  t.set(Opcode::kTranspose, emit_transpose);
  t.set(Opcode::kSlice, emit_slice);
  t.set(Opcode::kDynamicSlice, emit_dynamic_slice);
  t.set(Opcode::kDynamicUpdateSlice, emit_dynamic_update_slice);
  t.set(Opcode::kConcatenate, emit_concatenate);
  t.set(Opcode::kPad, emit_pad);
  t.set(Opcode::kReverse, emit_reverse);
  t.set(Opcode::kIota, emit_iota);
  t.set(Opcode::kConstant, emit_constant);
}

}  // namespace jx::codegen
