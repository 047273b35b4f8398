// Random-number primitives: threefry2x32, the Threefry-2x32 block cipher (20 rounds, Random123's
// constants) as JAX has it: jx::random hashes counters with it. The cipher is written once,
// generic over its word type, and instantiated on uint32_t for the eager impl and on HLO
// instructions for the lowering (adds, xors and shifts, which fuse into one loop).
#include <array>
#include <utility>

#include "jx/lax.hpp"
#include "transforms/ad_rules.hpp"
#include "primitives/elementwise.hpp"
#include "support/shifts.hpp"
#include "trace/tracer.hpp"

namespace jx {

Primitive threefry2x32_p("threefry2x32");

namespace {

// Threefry-2x32 over the words of `Ops`: ops.add, ops.xor_, ops.rotl(x, r) and ops.constant(u).
template <class V, class Ops>
std::pair<V, V> threefry2x32(const Ops& ops, V k0, V k1, V x0, V x1) {
  constexpr std::array<std::array<unsigned, 4>, 2> kRotations{{{13, 15, 26, 6}, {17, 29, 16, 24}}};
  const std::array<V, 3> ks{k0, k1, ops.xor_(ops.xor_(k0, k1), ops.constant(0x1BD11BDAu))};
  x0 = ops.add(x0, ks[0]);
  x1 = ops.add(x1, ks[1]);
  for (unsigned block = 0; block < 5; ++block) {
    for (unsigned r : kRotations[block % 2]) {
      x0 = ops.add(x0, x1);
      x1 = ops.xor_(ops.rotl(x1, r), x0);
    }
    // Key injection: after block b, words ks[(b + 1) % 3] and ks[(b + 2) % 3] + b + 1.
    x0 = ops.add(x0, ks[(block + 1) % 3]);
    x1 = ops.add(ops.add(x1, ks[(block + 2) % 3]), ops.constant(block + 1));
  }
  return {x0, x1};
}

struct ScalarOps {
  static std::uint32_t add(std::uint32_t a, std::uint32_t b) { return a + b; }
  static std::uint32_t xor_(std::uint32_t a, std::uint32_t b) { return a ^ b; }
  static std::uint32_t rotl(std::uint32_t x, unsigned r) { return x << r | x >> (32 - r); }
  static std::uint32_t constant(std::uint32_t u) { return u; }
};

struct HloOps {
  hlo::Builder& b;
  const Shape& dims;
  hlo::Instruction* add(hlo::Instruction* x, hlo::Instruction* y) const {
    return b.binary(hlo::Opcode::kAdd, x, y);
  }
  hlo::Instruction* xor_(hlo::Instruction* x, hlo::Instruction* y) const {
    return b.binary(hlo::Opcode::kXor, x, y);
  }
  hlo::Instruction* rotl(hlo::Instruction* x, unsigned r) const {
    return b.binary(hlo::Opcode::kOr, b.binary(hlo::Opcode::kShiftLeft, x, constant(r)),
                    b.binary(hlo::Opcode::kShiftRightLogical, x, constant(32 - r)));
  }
  hlo::Instruction* constant(std::uint32_t u) const {
    return b.broadcast(b.constant(make_scalar(u, uint32)), dims, {});
  }
};

const bool kRegistered = [] {
  threefry2x32_p.abstract_eval = [](std::span<const ShapedArray> in, const Params&) {
    check_arity("threefry2x32", in.size(), 4);
    ShapedArray out = elementwise_aval("threefry2x32", in, DTypeSet{uint32});
    out.weak_type = false;
    return std::vector<ShapedArray>{out, out};
  };
  threefry2x32_p.impl = [](std::span<const Array> in, const Params&,
                           std::span<const ShapedArray> out) {
    std::array<const std::uint32_t*, 4> words;
    std::array<std::int64_t, 4> step;  // 0 for a 0-d operand, which every element shares
    for (std::size_t k = 0; k < 4; ++k) {
      words[k] = concrete_buffer(in[k], "impl").as<std::uint32_t>();
      step[k] = in[k].ndim() == 0 ? 0 : 1;
    }
    Array y0 = make_array(out[0]), y1 = make_array(out[1]);
    std::uint32_t* o0 = y0.impl()->buffer->as<std::uint32_t>();
    std::uint32_t* o1 = y1.impl()->buffer->as<std::uint32_t>();
    for (std::int64_t i = 0, n = out[0].size(); i < n; ++i) {
      auto [a, c] = threefry2x32(ScalarOps{}, words[0][i * step[0]], words[1][i * step[1]],
                                 words[2][i * step[2]], words[3][i * step[3]]);
      o0[i] = a;
      o1[i] = c;
    }
    return std::vector<Array>{y0, y1};
  };
  threefry2x32_p.lower = [](hlo::Builder& b, std::span<hlo::Instruction* const> operands,
                            const Params&, std::span<const ShapedArray> out) {
    std::vector<hlo::Instruction*> v = broadcast_scalars(b, operands, out[0].shape);
    auto [y0, y1] = threefry2x32(HloOps{b, out[0].shape}, v[0], v[1], v[2], v[3]);
    return std::vector<hlo::Instruction*>{y0, y1};
  };
  batching::def_elementwise_batch(threefry2x32_p);
  ad::def_zero_jvp(threefry2x32_p);
  return true;
}();

}  // namespace

namespace lax {

std::pair<Array, Array> threefry2x32(const Array& k0, const Array& k1, const Array& x0,
                                     const Array& x1) {
  std::vector<Array> out = trace::bind(threefry2x32_p, {k0, k1, x0, x1});
  return {out[0], out[1]};
}

}  // namespace lax
}  // namespace jx
