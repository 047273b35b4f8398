// Buffer assignment's schedule for donation: a kernel that can compute an output over a donated
// parameter moves after the parameter's other readers, unless one of them depends on it.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "hlo/ir.hpp"
#include "runtime/buffer_assignment.hpp"

namespace jx::runtime {
namespace {

using Donations = std::vector<std::pair<int, int>>;

// `late` is the text of an instruction %late reading p (and perhaps %update) after the update.
std::unique_ptr<hlo::Module> update_then_read(const std::string& late) {
  return hlo::parse_module(R"(HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (p: f32[64], x: f32[64]) -> (f32[64], f32[]) {
  %p = f32[64]{0} parameter(0)
  %x = f32[64]{0} parameter(1)
  %update = f32[64]{0} subtract(f32[64]{0} %p, f32[64]{0} %x)
  %zero = f32[] constant(0)
  )" + late + R"(
  ROOT %out = (f32[64]{0}, f32[]) tuple(f32[64]{0} %update, f32[] %late)
}
)");
}

std::vector<std::string> names(const std::vector<hlo::Instruction*>& order) {
  std::vector<std::string> out;
  for (const hlo::Instruction* i : order) out.push_back(i->name);
  return out;
}

TEST_CASE("buffer assignment: an update of a donated parameter waits for its later readers",
          "[runtime][donation]") {
  auto m = update_then_read(
      "%late = f32[] reduce(f32[64]{0} %p, f32[] %zero), dimensions={0}, to_apply=%add");
  hlo::Computation& entry = *m->entry();
  std::vector<hlo::Instruction*> order = entry.instructions();
  // In the traced order p's last reader is the reduce, which cannot take it over.
  CHECK(assign_buffers(entry, order, {true, false}).donations.empty());
  defer_overwrites_of_donated(entry, order, {true, false});
  CHECK(names(order) == std::vector<std::string>{"p", "x", "zero", "late", "update", "out"});
  CHECK(assign_buffers(entry, order, {true, false}).donations == Donations{{0, 0}});
  // Not donated: the order stays.
  std::vector<hlo::Instruction*> kept = entry.instructions();
  defer_overwrites_of_donated(entry, kept, {false, false});
  CHECK(kept == entry.instructions());
}

TEST_CASE("buffer assignment: a later reader that depends on the update keeps the order",
          "[runtime][donation]") {
  auto m = update_then_read(
      "%late = f32[] dot(f32[64]{0} %p, f32[64]{0} %update), lhs_contracting_dims={0}, "
      "rhs_contracting_dims={0}");
  hlo::Computation& entry = *m->entry();
  std::vector<hlo::Instruction*> order = entry.instructions();
  defer_overwrites_of_donated(entry, order, {true, false});
  CHECK(order == entry.instructions());
  CHECK(assign_buffers(entry, order, {true, false}).donations.empty());
}

}  // namespace
}  // namespace jx::runtime
