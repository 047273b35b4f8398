// What the loop primitives (while, scan) share: signature checks, the fixed point of which carry
// elements a property (a tangent, a batch axis) reaches, the jvp of a loop body, the HLO while.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "hlo/builder.hpp"
#include "jaxpr/jaxpr.hpp"

namespace jx {

// cond_jaxpr takes `in` and returns a bool scalar; else TypeError.
void check_cond_signature(const Jaxpr& cond, const std::vector<ShapedArray>& in);
// body takes `in` and returns the carry (first) with the carry's types; else TypeError naming
// `who` as JAX does ("body_fun", "scan body function").
void check_body_signature(const Jaxpr& body, const std::vector<ShapedArray>& in,
                          const std::vector<ShapedArray>& carry, const char* who);

// A weak-typed initial carry element whose next value is not weak becomes strong, as in JAX
// (`0.0` as the init of an f32 accumulator), and one whose next value has another dtype becomes
// the promotion of the two (a weak f32 `0.0` summing f64 values becomes f64); returns whether
// any changed, so the body is retraced.
bool promote_weak_carry(std::vector<Array>& init, const std::vector<ShapedArray>& next);

// Which outputs of a body a property of its inputs reaches: data flow (tangents, batch axes)
// or unknown-ness under partial evaluation (where control flow nested in the body splits).
using Reach = std::function<std::vector<bool>(const std::vector<bool>& inputs)>;
Reach data_flow(const Jaxpr& body);
Reach unknowns(const ClosedJaxprData& body);

// Which carry elements a property reaches when the body runs again and again: those marked,
// and those whose next value it reaches from a marked const, carry element or x. With
// `carry_avals`, only elements of a dtype with tangents count.
std::vector<bool> carry_fixed_point(const Reach& reach, const std::vector<bool>& consts,
                                    std::vector<bool> carry,
                                    const std::vector<ShapedArray>& carry_avals,
                                    const std::vector<bool>& xs = {});

// The jvp of a loop body taking (consts, carry, xs) and returning (carry, ys): it takes
// (consts, their nonzero tangents, carry, their tangents, xs, their nonzero tangents) and
// returns (carry, their tangents, ys, the nonzero tangents of ys), tangents where marked.
struct JvpLoopBody {
  ClosedJaxprData body;
  std::vector<bool> ys_nz;
};
JvpLoopBody jvp_loop_body(const ClosedJaxprData& body, const std::vector<bool>& consts_nz,
                          const std::vector<bool>& carry_nz, std::size_t num_xs,
                          const std::vector<bool>& xs_nz = {});

// Binds while_p; the jaxprs' own consts become leading operands.
std::vector<Array> bind_while(ClosedJaxprData cond, std::vector<Array> cconsts,
                              ClosedJaxprData body, std::vector<Array> bconsts,
                              const std::vector<Array>& carry);

// An HLO while over `ops` = (cond consts, body consts, carry): the consts travel as
// loop-invariant elements of the carry. A known trip count (a scan's) becomes the while's
// `known_trip_count` attribute. Returns every element of the final carry.
std::vector<hlo::Instruction*> lower_loop(hlo::Builder& b, std::span<hlo::Instruction* const> ops,
                                          const ClosedJaxprData& cond, std::size_t nc,
                                          const ClosedJaxprData& body, std::size_t nb,
                                          std::optional<std::int64_t> trip_count = std::nullopt);

}  // namespace jx
