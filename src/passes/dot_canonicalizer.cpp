#include "passes/dot_canonicalizer.hpp"

#include <algorithm>
#include <numeric>

#include "core/dtype_set.hpp"
#include "hlo/builder.hpp"

namespace jx::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using Ints = std::vector<std::int64_t>;

// One operand's dims by role, each list in the order the product pairs or emits them.
struct Roles {
  Ints batch, contracting, free;
};

Roles roles(std::int64_t rank, Ints batch, Ints contracting) {
  Roles r{std::move(batch), std::move(contracting), {}};
  for (std::int64_t d = 0; d < rank; ++d)
    if (std::find(r.batch.begin(), r.batch.end(), d) == r.batch.end() &&
        std::find(r.contracting.begin(), r.contracting.end(), d) == r.contracting.end())
      r.free.push_back(d);
  return r;
}

Ints concat(Ints a, const Ints& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::int64_t size_of(const Shape& dims, const Ints& which) {
  std::int64_t n = 1;
  for (std::int64_t d : which) n *= dims[static_cast<std::size_t>(d)];
  return n;
}

// x as [batch..., first, second], `first` and `second` each a list of dims flattened into one:
// a transpose (none when the dims are in that order already), then a reshape.
Instruction* arranged(hlo::Builder& b, Instruction* x, const Roles& r, const Ints& first,
                      const Ints& second) {
  const Shape& dims = x->shape.dims;
  Shape flat;
  for (std::int64_t d : r.batch) flat.push_back(dims[static_cast<std::size_t>(d)]);
  flat.push_back(size_of(dims, first));
  flat.push_back(size_of(dims, second));
  return b.reshape(b.transpose(x, concat(concat(r.batch, first), second)), flat);
}

// Whether an operand whose dims other than its batch dims are `first` and `second` holds them in
// that order.
bool in_order(const Ints& first, const Ints& second) {
  Ints rest = concat(first, second);
  std::sort(rest.begin(), rest.end());
  return rest == concat(first, second);
}

// Whether the operand is [batch..., a, b] with its batch dims in order and one dim each of the
// others: what hlo::as_gemm reads.
bool is_matrix(const Roles& r) {
  for (std::size_t d = 0; d < r.batch.size(); ++d)
    if (r.batch[d] != static_cast<std::int64_t>(d)) return false;
  return r.contracting.size() == 1 && r.free.size() == 1;
}

// The dot as a canonical one, or nullptr where it is one already or has an operand with no free
// dims.
Instruction* canonical(hlo::Builder& b, Instruction& dot) {
  Instruction* lhs = dot.operands[0];
  Instruction* rhs = dot.operands[1];
  // A batch dim of size 1 is a free dim of each side: the product's rows then split over the
  // threads, which take a batched product's batch entries.
  Ints lb, rb;
  const Ints &lhs_batch = dot.attrs.get_ints("lhs_batch_dims"),
             &rhs_batch = dot.attrs.get_ints("rhs_batch_dims");
  for (std::size_t i = 0; i < lhs_batch.size(); ++i)
    if (lhs->shape.dims[static_cast<std::size_t>(lhs_batch[i])] != 1)
      lb.push_back(lhs_batch[i]), rb.push_back(rhs_batch[i]);
  Roles l = roles(lhs->shape.rank(), lb, dot.attrs.get_ints("lhs_contracting_dims"));
  Roles r = roles(rhs->shape.rank(), rb, dot.attrs.get_ints("rhs_contracting_dims"));
  if (l.free.empty() || r.free.empty() || (is_matrix(l) && is_matrix(r))) return nullptr;
  // lhs as [batch, m, k], or [batch, k, m] where it holds them so; rhs as [batch, k, n] or
  // [batch, n, k].
  bool lhs_km = in_order(l.contracting, l.free) && !in_order(l.free, l.contracting);
  bool rhs_nk = in_order(r.free, r.contracting) && !in_order(r.contracting, r.free);
  Instruction* x = lhs_km ? arranged(b, lhs, l, l.contracting, l.free)
                          : arranged(b, lhs, l, l.free, l.contracting);
  Instruction* y = rhs_nk ? arranged(b, rhs, r, r.free, r.contracting)
                          : arranged(b, rhs, r, r.contracting, r.free);
  auto nb = static_cast<std::int64_t>(l.batch.size());
  Ints batch(static_cast<std::size_t>(nb));
  std::iota(batch.begin(), batch.end(), 0);
  hlo::Attrs a = dot.attrs;
  a.set("lhs_batch_dims", batch);
  a.set("rhs_batch_dims", batch);
  a.set("lhs_contracting_dims", Ints{lhs_km ? nb : nb + 1});
  a.set("rhs_contracting_dims", Ints{rhs_nk ? nb + 1 : nb});
  Shape out;
  for (std::int64_t d : l.batch) out.push_back(lhs->shape.dims[static_cast<std::size_t>(d)]);
  out.push_back(size_of(lhs->shape.dims, l.free));
  out.push_back(size_of(rhs->shape.dims, r.free));
  Instruction* product =
      b.op(Opcode::kDot, hlo::HloShape::array(dot.shape.dtype, out), {x, y}, std::move(a));
  return out == dot.shape.dims ? product : b.reshape(product, dot.shape.dims);
}

}  // namespace

bool DotCanonicalizer::run(hlo::Module& module) {
  return replace_each(module, Opcode::kDot, [](hlo::Builder& b, Instruction& dot) {
    DType in = dot.operands[0]->shape.dtype;
    bool floating = kFloating.contains(in) && dot.operands[1]->shape.dtype == in;
    return floating ? canonical(b, dot) : nullptr;
  });
}

}  // namespace jx::passes
