// The HLO IR: a module of computations of instructions (opcode, operands, shape, attributes).
// HLO knows nothing of jaxprs; lowering builds it through the Builder.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "core/dtype_set.hpp"
#include "jx/array.hpp"
#include "support/named_values.hpp"

namespace jx::hlo {

// The columns of opcodes.def.
enum Trait : unsigned {
  kElementwise = 1,
  kFusible = 2,
  kSideEffects = 4,
  kTranscendental = 8,
  kTupleResult = 16,
  kReduction = 32,
  kContraction = 64,
  kCallsComputations = 128,
  kOwnKernel = 256,
};
enum class RunsAs { kNothing, kKernel, kLibraryOrKernel, kHost, kNested };

enum class Opcode {
#define JX_HLO_OPCODE(e, name, arity, dtypes, runs_as, traits) e,
#include "hlo/opcodes.def"
#undef JX_HLO_OPCODE
};

inline constexpr std::size_t kNumOpcodes = 0
#define JX_HLO_OPCODE(e, name, arity, dtypes, runs_as, traits) +1
#include "hlo/opcodes.def"
#undef JX_HLO_OPCODE
    ;

struct OpcodeInfo {
  std::string_view name;
  int arity;        // -1: variadic
  DTypeSet dtypes;  // what an elementwise opcode computes on
  RunsAs runs_as;
  unsigned traits;
};
const OpcodeInfo& info(Opcode op);
std::optional<Opcode> opcode_from_name(std::string_view name);
inline bool has_trait(Opcode op, Trait t) { return info(op).traits & t; }
inline RunsAs runs_as(Opcode op) { return info(op).runs_as; }
// A loop per output element: a reduction or a contraction.
inline bool loops_per_element(Opcode op) { return has_trait(op, Trait(kReduction | kContraction)); }

// An array shape with its element type, or a tuple of shapes. Layouts are always row-major.
struct HloShape {
  DType dtype = float32;
  Shape dims;
  std::vector<HloShape> tuple_shapes;
  bool is_tuple = false;

  static HloShape array(DType dtype, Shape dims) { return {dtype, std::move(dims), {}, false}; }
  static HloShape tuple(std::vector<HloShape> elements) {
    return {float32, {}, std::move(elements), true};
  }
  std::int64_t size() const { return shape_size(dims); }
  int rank() const { return static_cast<int>(dims.size()); }
  std::int64_t byte_size() const;
  std::string str() const;  // "f32[2,3]{1,0}", "(f32[], s32[3]{0})"
  friend bool operator==(const HloShape&, const HloShape&) = default;
};
std::string_view hlo_type_name(DType d);  // pred s32 s64 u32 f32 f64

// Attribute values: an integer, a list of integers, or a word (comparison directions).
using AttrValue = std::variant<std::int64_t, std::vector<std::int64_t>, std::string>;

class Attrs : public NamedValues<AttrValue> {
 public:
  const AttrValue& get(const std::string& name) const;  // throws if absent
  std::int64_t get_int(const std::string& name) const;
  const std::vector<std::int64_t>& get_ints(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;
  friend bool operator==(const Attrs&, const Attrs&) = default;
};

class Computation;

struct Instruction {
  Opcode opcode;
  HloShape shape;
  std::vector<Instruction*> operands;
  Attrs attrs;
  std::vector<Computation*> called;  // to_apply of reduce; bodies of fusions and loops
  std::optional<Array> literal;      // kConstant: a concrete array of this shape
  std::int64_t parameter_number = -1;
  std::string name;  // unique in its module, e.g. "add.3"
};

class Module;

class Computation {
 public:
  Computation(Module* module, std::string name) : module_(module), name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }  // the parser keeps names
  Module* module() const { return module_; }
  Instruction* root() const { return root_; }
  void set_root(Instruction* root) { root_ = root; }
  const std::vector<Instruction*>& parameters() const { return parameters_; }

  // Appends an instruction (operands must already be in this computation) and names it.
  Instruction* add(std::unique_ptr<Instruction> inst, std::string_view name_hint = {});
  // Every instruction, operands before users (a stable topological order).
  std::vector<Instruction*> instructions() const;
  // The instructions this computation owns, in insertion order; operands are not followed, so
  // the verifier can use it on a malformed computation.
  std::vector<Instruction*> owned() const;
  std::vector<Instruction*> users(const Instruction* inst) const;
  // Points every use of `from` (and the root) at `to`.
  void replace_all_uses(Instruction* from, Instruction* to);
  // Deletes instructions that nothing reaches from the root (parameters stay). Returns count.
  int remove_unreachable();

 private:
  Module* module_;
  std::string name_;
  std::vector<std::unique_ptr<Instruction>> owned_;
  std::vector<Instruction*> parameters_;
  Instruction* root_ = nullptr;
};

class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }
  Computation* add_computation(std::string name_hint, bool entry = false);
  Computation* entry() const { return entry_; }
  std::vector<Computation*> computations() const;
  void remove_computation(Computation* computation);  // not the entry
  std::string unique_name(std::string_view hint);     // "add" → "add.7"
  // Keeps later unique names clear of a name read from text: after "add.12", ids start at 13.
  void reserve_name(std::string_view name);

 private:
  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
  int next_id_ = 1;
};

// Each instruction's users in a computation as it stands when built, in the order
// Computation::users gives them: for a pass that asks for the users of many instructions and
// changes nothing meanwhile (Computation::users scans every instruction, each time).
class UserIndex {
 public:
  explicit UserIndex(const Computation& c);
  const std::vector<Instruction*>& operator()(const Instruction* inst) const;

 private:
  std::unordered_map<const Instruction*, std::vector<Instruction*>> users_;
};

// The value every element of `i` has, when `i` is a constant (or a broadcast of one) whose
// elements all have the same bits; as a double, so the sign of a zero survives.
std::optional<double> splat(const Instruction* i);

// The opcode a two-parameter computation (a reduction's to_apply) applies to its parameters,
// when its root is that one opcode of both, in either order; none otherwise.
std::optional<Opcode> binary_combiner(const Computation& f);

// Whether every element of the float array `x` is known to be at most 0 (or NaN): x = a - m, m a
// maximum of a itself over some dims, broadcast back over them (a softmax's shifted logits).
bool never_positive(const Instruction& x);

// The computations that run as programs of their own: the entry and, transitively, those a
// while or conditional calls (not fusion bodies or reduce combiners). Fusion passes and the
// backend treat each of them as an entry. The entry comes first.
std::vector<Computation*> program_computations(const Module& module);

// XLA's text form: `HloModule jit_f ...`, `ENTRY %main ...`, `ROOT %add.3 = f32[3]{0} add(...)`.
std::string to_string(const Module& module);
std::string to_string(const Instruction& inst);
// Reads the text form back; throws jx::CompileError with line and column.
std::unique_ptr<Module> parse_module(std::string_view text);
// Checks operand counts, shapes of elementwise ops, one root per computation, no cycles and
// no dangling operands; throws jx::CompileError naming the instruction.
void verify(const Module& module);

}  // namespace jx::hlo
