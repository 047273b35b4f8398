// A primitive is data: a name plus its rule table. Family files fill the rules.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/params.hpp"
#include "jx/array.hpp"

namespace jx {

namespace hlo {
struct Instruction;
class Builder;
}  // namespace hlo

// The shape/dtype rule; it is also the type checker, so it throws on ill-typed input.
using AbstractEvalRule =
    std::function<std::vector<ShapedArray>(std::span<const ShapedArray>, const Params&)>;
// The eager reference semantics on concrete arrays; `out` holds what abstract_eval returned.
using ImplRule = std::function<std::vector<Array>(std::span<const Array>, const Params&,
                                                  std::span<const ShapedArray> out)>;

// Lowering to HLO: the instructions computing the outputs, built from the operands' instructions.
using LowerRule = std::function<std::vector<hlo::Instruction*>(
    hlo::Builder&, std::span<hlo::Instruction* const> operands, const Params&,
    std::span<const ShapedArray> out)>;

struct Primitive {
  explicit Primitive(std::string name);  // registers the primitive by name
  Primitive(const Primitive&) = delete;
  Primitive& operator=(const Primitive&) = delete;

  std::string name;
  AbstractEvalRule abstract_eval;
  ImplRule impl;
  LowerRule lower;
};

// The registry: every primitive constructed so far, by name (the jaxpr parser uses it).
const Primitive* find_primitive(std::string_view name);
std::vector<const Primitive*> all_primitives();

}  // namespace jx
