#include "passes/split_column_reductions.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

#include "hlo/builder.hpp"

namespace jx::passes {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// Whether the reduce starts from its combiner's identity, so that each partial reduction may
// start from it too (a sum from 5 would add 5 once per part).
bool starts_from_identity(const Instruction& reduce) {
  std::optional<Opcode> combiner = hlo::binary_combiner(*reduce.called.at(0));
  std::optional<double> init = hlo::splat(reduce.operands[1]);
  if (!combiner || !init) return false;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  switch (*combiner) {
    case Opcode::kAdd:
    case Opcode::kOr:
      return *init == 0;
    case Opcode::kMultiply:
    case Opcode::kAnd:
      return *init == 1;
    case Opcode::kMaximum:
      return *init == -kInf;
    case Opcode::kMinimum:
      return *init == kInf;
    default:
      return false;
  }
}

bool splits(const Instruction& reduce) {
  if (reduce.operands.size() != 2 || reduce.shape.is_tuple || reduce.shape.rank() != 1 ||
      !starts_from_identity(reduce))
    return false;
  const hlo::HloShape& x = reduce.operands[0]->shape;
  if (x.rank() < 3) return false;
  std::vector<std::int64_t> dims = reduce.attrs.get_ints("dimensions"), all_but_last(x.rank() - 1);
  std::sort(dims.begin(), dims.end());
  std::iota(all_but_last.begin(), all_but_last.end(), 0);
  if (dims != all_but_last) return false;
  std::int64_t row_bytes = x.dims.back() * itemsize(x.dtype);
  return x.byte_size() >= SplitColumnReductions::kMinBytes &&
         row_bytes < SplitColumnReductions::kNarrowRowBytes &&
         x.dims[0] >= SplitColumnReductions::kMinParts &&
         x.byte_size() / x.dims[0] >= SplitColumnReductions::kMinPartBytes;
}

}  // namespace

bool SplitColumnReductions::run(hlo::Module& module) {
  return replace_each(module, Opcode::kReduce, [](hlo::Builder& b, Instruction& reduce) {
    if (!splits(reduce)) return static_cast<Instruction*>(nullptr);
    Instruction* x = reduce.operands[0];
    Instruction* init = reduce.operands[1];
    auto rank = static_cast<std::int64_t>(x->shape.rank());
    std::vector<std::int64_t> middle;
    for (std::int64_t d = 1; d + 1 < rank; ++d) middle.push_back(d);
    auto part = [&](Instruction* operand, std::vector<std::int64_t> dims, Shape out) {
      hlo::Attrs attrs;
      attrs.set("dimensions", std::move(dims));
      return b.op(Opcode::kReduce, hlo::HloShape::array(reduce.shape.dtype, std::move(out)),
                  {operand, init}, std::move(attrs), reduce.called);
    };
    Instruction* parts = part(x, middle, {x->shape.dims[0], x->shape.dims.back()});
    return part(parts, {0}, reduce.shape.dims);
  });
}

}  // namespace jx::passes
