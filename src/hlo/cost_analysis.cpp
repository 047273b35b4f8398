// Flop, transcendental and byte counts per instruction, summed over the entry computation.
#include "hlo/cost_analysis.hpp"

#include "hlo/convolution.hpp"
#include "hlo/window.hpp"

namespace jx::hlo {
namespace {

// Instructions that move no data of their own: those that only name buffers (a reshape's is
// its operand's).
bool free_of_bytes(Opcode op) { return runs_as(op) == RunsAs::kNothing; }

double dot_flops(const Instruction& i) {
  // Every output element (batch × m × n) sums over the contracting dims (k): a multiply and
  // an add each.
  double k = 1;
  if (i.attrs.has("lhs_contracting_dims"))
    for (std::int64_t d : i.attrs.get_ints("lhs_contracting_dims"))
      k *= static_cast<double>(i.operands[0]->shape.dims[d]);
  return 2.0 * static_cast<double>(i.shape.size()) * k;
}

void add_cost(const Instruction& i, HloCost& cost);

// A fusion does its computation's arithmetic but moves only its operands and results.
void add_fusion_cost(const Instruction& i, HloCost& cost) {
  HloCost inner;
  for (const Instruction* f : i.called[0]->instructions()) add_cost(*f, inner);
  cost.flops += inner.flops;
  cost.transcendentals += inner.transcendentals;
  double bytes = static_cast<double>(i.shape.byte_size());
  for (const Instruction* op : i.operands) bytes += static_cast<double>(op->shape.byte_size());
  cost.bytes_accessed += bytes;
}

// The trip count of a while and the branch a conditional takes are unknown: each called
// computation counts once.
void add_control_flow_cost(const Instruction& i, HloCost& cost) {
  for (const Computation* c : i.called)
    for (const Instruction* inner : c->instructions()) add_cost(*inner, cost);
}

void add_cost(const Instruction& i, HloCost& cost) {
  if (i.opcode == Opcode::kFusion) return add_fusion_cost(i, cost);
  if (runs_as(i.opcode) == RunsAs::kNested) return add_control_flow_cost(i, cost);
  auto out = static_cast<double>(i.shape.is_tuple ? 0 : i.shape.size());
  if (has_trait(i.opcode, kElementwise)) {
    (has_trait(i.opcode, kTranscendental) ? cost.transcendentals : cost.flops) += out;
  } else if (i.opcode == Opcode::kReduceWindow) {
    // A fold per window element of each output, as XLA counts it (a prefix scan's one pass
    // does less).
    double window = 1;
    for (const WindowDim& w : window_of(i)) window *= static_cast<double>(w.size);
    cost.flops += out * window;
  } else if (has_trait(i.opcode, kReduction)) {
    cost.flops += static_cast<double>(i.operands[0]->shape.size());
  } else if (i.opcode == Opcode::kDot) {
    cost.flops += dot_flops(i);
  } else if (i.opcode == Opcode::kConvolution) {
    // Each output element sums over its group's kernel: in features per group times taps.
    const Shape& rhs = i.operands[1]->shape.dims;
    double per_output = static_cast<double>(shape_size(rhs)) /
                        static_cast<double>(rhs[convolution_geometry(i).rhs_spec[0]]);
    cost.flops += 2.0 * static_cast<double>(i.shape.size()) * per_output;
  }
  if (free_of_bytes(i.opcode)) return;
  double bytes = static_cast<double>(i.shape.byte_size());
  for (const Instruction* op : i.operands) bytes += static_cast<double>(op->shape.byte_size());
  cost.bytes_accessed += bytes;
}

}  // namespace

HloCost cost_analysis(const Module& module) {
  HloCost cost;
  for (const Instruction* i : module.entry()->instructions()) add_cost(*i, cost);
  return cost;
}

HloMemory memory_analysis(const Module& module) {
  HloMemory memory;
  for (const Instruction* p : module.entry()->parameters())
    memory.argument_bytes += p->shape.byte_size();
  memory.output_bytes = module.entry()->root()->shape.byte_size();
  return memory;
}

}  // namespace jx::hlo
