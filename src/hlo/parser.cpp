// Reads HLO text (what printer.cpp writes) back into a Module: a character-level recursive-
// descent parser. Names are kept as written; bad input throws jx::CompileError with a position.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "core/element_convert.hpp"
#include "hlo/ir.hpp"

namespace jx::hlo {
namespace {

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A called computation named before it is defined (or after): resolved once all are read.
struct PendingCall {
  Instruction* inst;
  std::string callee;
  std::size_t pos;
  int slot;  // its index in `called` (a while's condition is 0, its body 1), or -1: appended
};

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  std::unique_ptr<Module> parse() {
    expect_word("HloModule");
    module_ = std::make_unique<Module>(name("a module name"));
    std::optional<std::pair<std::vector<HloShape>, HloShape>> layout;
    std::size_t layout_pos = 0;
    while (accept(',')) {
      layout_pos = here();
      std::string key = name("a module attribute");
      if (key != "entry_computation_layout")
        fail_at(layout_pos, "unknown module attribute '" + key + "'");
      expect('=');
      expect('{');
      expect('(');
      std::vector<HloShape> params;
      if (!accept(')')) {
        do {
          params.push_back(shape());
        } while (accept(','));
        expect(')');
      }
      expect_text("->");
      HloShape result = shape();
      expect('}');
      layout.emplace(std::move(params), std::move(result));
    }
    while (skip_ws(), pos_ < s_.size()) computation();
    if (!module_->entry()) fail("expected an ENTRY computation");
    for (const PendingCall& call : calls_) {
      auto it = computations_.find(call.callee);
      if (it == computations_.end()) fail_at(call.pos, "unknown computation %" + call.callee);
      std::vector<Computation*>& called = call.inst->called;
      if (call.slot < 0) {
        called.push_back(it->second);
        continue;
      }
      auto slot = static_cast<std::size_t>(call.slot);
      if (called.size() <= slot) called.resize(slot + 1, nullptr);
      if (called[slot]) fail_at(call.pos, "a second computation for the same role");
      called[slot] = it->second;
    }
    if (layout) check_layout(*layout, layout_pos);
    return std::move(module_);
  }

 private:
  // ---- errors and positions ---------------------------------------------------------------

  [[noreturn]] void fail_at(std::size_t pos, const std::string& msg) const {
    int line = 1, col = 1;
    for (std::size_t i = 0; i < pos && i < s_.size(); ++i) {
      if (s_[i] == '\n')
        ++line, col = 1;
      else
        ++col;
    }
    throw CompileError("HLO parse error at line " + std::to_string(line) + ", column " +
                       std::to_string(col) + ": " + msg);
  }
  [[noreturn]] void fail(const std::string& msg) {
    skip_ws();
    fail_at(pos_, msg);
  }
  [[noreturn]] void expected(const std::string& what) {
    skip_ws();
    std::string got = pos_ < s_.size() ? "'" + std::string(1, s_[pos_]) + "'" : "end of input";
    fail_at(pos_, "expected " + what + ", got " + got);
  }

  // ---- lexical helpers --------------------------------------------------------------------

  void skip_ws() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        ++pos_;
      } else if (s_.substr(pos_, 2) == "/*") {  // XLA writes /*index=5*/ in long lists
        auto end = s_.find("*/", pos_ + 2);
        pos_ = end == std::string_view::npos ? s_.size() : end + 2;
      } else if (s_.substr(pos_, 2) == "//") {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }
  std::size_t here() {
    skip_ws();
    return pos_;
  }
  char peek() {
    skip_ws();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool accept(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!accept(c)) expected(std::string("'") + c + "'");
  }
  void expect_text(std::string_view t) {
    skip_ws();
    if (s_.substr(pos_, t.size()) != t) expected("'" + std::string(t) + "'");
    pos_ += t.size();
  }
  // A whole word (not the prefix of a longer name).
  bool accept_word(std::string_view w) {
    skip_ws();
    std::size_t end = pos_ + w.size();
    if (s_.substr(pos_, w.size()) != w || (end < s_.size() && is_name_char(s_[end]))) return false;
    pos_ = end;
    return true;
  }
  void expect_word(std::string_view w) {
    if (!accept_word(w)) expected("'" + std::string(w) + "'");
  }
  // A name; with `leading_digit`, a run of name characters that may start with a digit (the
  // labels of a convolution's kernel gradient: 01io->01bf).
  std::string name(const std::string& what, bool leading_digit = false) {
    skip_ws();
    if (pos_ >= s_.size() || !(leading_digit ? is_name_char : is_name_start)(s_[pos_]))
      expected(what);
    std::size_t start = pos_;
    while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
    return std::string(s_.substr(start, pos_ - start));
  }
  std::string percent_name(const std::string& what) {
    expect('%');
    return name(what);
  }
  std::int64_t integer() {
    skip_ws();
    std::size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    if (pos_ >= s_.size() || !is_digit(s_[pos_])) {
      pos_ = start;
      expected("an integer");
    }
    while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
    std::int64_t v = 0;
    auto r = std::from_chars(s_.data() + start, s_.data() + pos_, v);
    if (r.ec != std::errc()) fail_at(start, "integer out of range");
    return v;
  }
  std::vector<std::int64_t> int_list() {  // {1,2,3}
    std::vector<std::int64_t> v;
    expect('{');
    if (accept('}')) return v;
    do {
      v.push_back(integer());
    } while (accept(','));
    expect('}');
    return v;
  }

  // ---- shapes -----------------------------------------------------------------------------

  DType element_type() {
    std::size_t start = here();
    std::string t = name("an element type");
    for (DType d : kAllDTypes)
      if (hlo_type_name(d) == t) return d;
    fail_at(start, "unknown element type '" + t + "'");
  }

  // f32[2,3]{1,0} (the layout is optional and must be row-major) or a tuple (f32[], s32[3]).
  HloShape shape() {
    if (accept('(')) {
      std::vector<HloShape> elements;
      if (!accept(')')) {
        do {
          elements.push_back(shape());
        } while (accept(','));
        expect(')');
      }
      return HloShape::tuple(std::move(elements));
    }
    DType dtype = element_type();
    Shape dims;
    expect('[');
    if (!accept(']')) {
      std::int64_t size = 1;
      do {
        std::size_t at = here();
        dims.push_back(integer());
        if (dims.back() < 0) fail_at(at, "expected a dimension size >= 0");
        // Element counts must fit comfortably in int64 (byte sizes multiply by 8).
        if (dims.back() > 0 && size > (std::int64_t{1} << 56) / dims.back())
          fail_at(at, "the shape has too many elements");
        size *= std::max<std::int64_t>(dims.back(), 1);
      } while (accept(','));
      expect(']');
    }
    if (pos_ < s_.size() && s_[pos_] == '{') {  // a layout touches the `]`; a body's `{` does not
      std::size_t at = pos_;
      std::vector<std::int64_t> layout = int_list();
      std::vector<std::int64_t> row_major;
      for (auto d = static_cast<std::int64_t>(dims.size()) - 1; d >= 0; --d) row_major.push_back(d);
      if (layout != row_major) fail_at(at, "expected a row-major layout");
    }
    return HloShape::array(dtype, std::move(dims));
  }
  // ---- literals ---------------------------------------------------------------------------

  // One element's text: 1, -2.5, 1e-05, inf, -inf, nan, true.
  std::pair<std::string_view, std::size_t> element_token() {
    std::size_t start = here();
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '.' || s_[pos_] == '-' || s_[pos_] == '+'))
      ++pos_;
    if (pos_ == start) expected("a literal value");
    return {s_.substr(start, pos_ - start), start};
  }

  // Nested braces, one level per dimension, with the dimension's element count.
  void literal_elements(const Shape& dims, std::size_t d,
                        std::vector<std::pair<std::string_view, std::size_t>>& out) {
    if (d == dims.size()) {
      out.push_back(element_token());
      return;
    }
    std::size_t open = here();
    expect('{');
    std::int64_t n = 0;
    if (peek() != '}') {
      do {
        literal_elements(dims, d + 1, out);
        ++n;
      } while (accept(','));
    }
    expect('}');
    if (n != dims[d])
      fail_at(open, "expected " + std::to_string(dims[d]) + " elements in dimension " +
                        std::to_string(d) + ", got " + std::to_string(n));
  }

  template <class T>
  T element_value(std::string_view tok, std::size_t at, DType dtype) {
    auto bad = [&]() -> T {
      fail_at(at, "expected a " + std::string(hlo_type_name(dtype)) + " value, got '" +
                      std::string(tok) + "'");
    };
    if constexpr (std::is_same_v<T, bool>) {
      if (tok == "true") return true;
      if (tok == "false") return false;
      return bad();
    } else {
      // A 16-bit float's value is printed as the float it is exactly.
      compute_t<T> v{};
      auto r = std::from_chars(tok.data(), tok.data() + tok.size(), v);
      if (r.ec == std::errc::result_out_of_range)
        fail_at(at, "value out of range for " + std::string(hlo_type_name(dtype)));
      if (r.ec != std::errc() || r.ptr != tok.data() + tok.size()) return bad();
      return static_cast<T>(v);
    }
  }

  Array literal(const HloShape& shape) {
    if (shape.is_tuple) fail("expected an array shape for a constant");
    std::vector<std::pair<std::string_view, std::size_t>> tokens;
    literal_elements(shape.dims, 0, tokens);
    Array out = make_array(ShapedArray{shape.dims, shape.dtype, false});
    dispatch(shape.dtype, [&]<class T>() {
      T* data = out.impl()->buffer->as<T>();
      for (std::size_t k = 0; k < tokens.size(); ++k)
        data[k] = element_value<T>(tokens[k].first, tokens[k].second, shape.dtype);
    });
    return out;
  }

  // ---- attributes -------------------------------------------------------------------------

  // slice={[0:2], [1:5:2]} → start, limit, stride triples.
  std::vector<std::int64_t> slice_attr() {
    std::vector<std::int64_t> v;
    expect('{');
    if (accept('}')) return v;
    do {
      expect('[');
      v.push_back(integer());
      expect(':');
      v.push_back(integer());
      v.push_back(accept(':') ? integer() : 1);
      expect(']');
    } while (accept(','));
    expect('}');
    return v;
  }

  // padding=0_1x2_3_1 → low, high, interior triples (interior omitted when 0).
  std::vector<std::int64_t> padding_attr() {
    std::vector<std::int64_t> v;
    char c = peek();
    if (!is_digit(c) && c != '-') return v;  // a rank-0 pad prints nothing
    auto next_is = [&](char ch) { return pos_ < s_.size() && s_[pos_] == ch; };
    while (true) {
      v.push_back(integer());
      expect_text("_");
      v.push_back(integer());
      v.push_back(next_is('_') ? (++pos_, integer()) : 0);
      if (!next_is('x')) return v;
      ++pos_;
    }
  }

  // window={size=3x1 stride=2x1 pad=2_0x0_0 lhs_dilate=1x1 rhs_dilate=1x1}: fields in any
  // order, each once, all of one rank; size is required unless the window is empty (rank 0).
  std::vector<std::int64_t> window_attr() {
    expect('{');
    std::vector<std::vector<std::int64_t>> fields(5);  // size stride pad lhs_dilate rhs_dilate
    std::vector<bool> seen(5, false);
    static const std::vector<std::string> kNames{"size", "stride", "pad", "lhs_dilate",
                                                 "rhs_dilate"};
    std::size_t rank = 0;
    bool first = true;
    while (peek() != '}') {
      std::size_t at = here();
      std::string field = name("a window field");
      auto it = std::find(kNames.begin(), kNames.end(), field);
      if (it == kNames.end()) fail_at(at, "unknown window field '" + field + "'");
      auto k = static_cast<std::size_t>(it - kNames.begin());
      if (seen[k]) fail_at(at, "duplicate window field '" + field + "'");
      seen[k] = true;
      expect('=');
      auto next_is = [&](char ch) { return pos_ < s_.size() && s_[pos_] == ch; };
      std::size_t count = 0;
      while (true) {
        fields[k].push_back(integer());
        if (field == "pad") {
          expect_text("_");
          fields[k].push_back(integer());
        }
        ++count;
        if (!next_is('x')) break;
        ++pos_;
      }
      if (!first && count != rank) fail_at(at, "window fields must have one entry per dimension");
      rank = count;
      first = false;
    }
    expect('}');
    if (!first && !seen[0]) fail("a window needs its size");
    std::vector<std::int64_t> attr;
    for (std::size_t d = 0; d < rank; ++d) {
      auto get = [&](std::size_t k, std::size_t i, std::int64_t def) {
        return seen[k] ? fields[k][i] : def;
      };
      attr.insert(attr.end(), {fields[0][d], get(1, d, 1), get(2, 2 * d, 0), get(2, 2 * d + 1, 0),
                               get(3, d, 1), get(4, d, 1)});
    }
    return attr;
  }

  void callee(Instruction* inst, int slot) {
    std::size_t at = here();
    calls_.push_back({inst, percent_name("a computation name"), at, slot});
  }

  void attribute(Instruction* inst) {
    std::size_t at = here();
    std::string key = name("an attribute name");
    expect('=');
    if (key == "to_apply" || key == "calls") return callee(inst, -1);
    if (key == "condition") return callee(inst, 0);
    if (key == "body") return callee(inst, 1);
    if (key == "branch_computations") {
      expect('{');
      int slot = 0;
      do {
        callee(inst, slot++);
      } while (accept(','));
      return expect('}');
    }
    if (inst->attrs.has(key)) fail_at(at, "duplicate attribute '" + key + "'");
    if (key == "slice") return inst->attrs.set(key, slice_attr());
    if (key == "padding") return inst->attrs.set(key, padding_attr());
    if (key == "window") return inst->attrs.set(key, window_attr());
    if (key == "dim_labels") {  // b01f_01io->b01f: labels, "->", labels
      std::string labels = name("dim_labels", true);
      expect('>');
      return inst->attrs.set(key, labels + ">" + name("dim_labels", true));
    }
    char c = peek();
    if (c == '{') return inst->attrs.set(key, int_list());
    if (is_digit(c) || c == '-') return inst->attrs.set(key, integer());
    if (is_name_start(c)) return inst->attrs.set(key, name("an attribute value"));
    expected("an attribute value");
  }

  // ---- instructions and computations ------------------------------------------------------

  struct Scope {
    Computation* computation;
    std::unordered_map<std::string, Instruction*> names;
    std::size_t num_params;
    bool has_root = false;
  };

  void instruction(Scope& scope) {
    std::size_t start = here();
    bool is_root = accept_word("ROOT");
    if (is_root && scope.has_root)
      fail_at(start, "a second ROOT in computation %" + scope.computation->name());
    std::size_t name_at = here();
    std::string inst_name = percent_name("an instruction name");
    if (!names_.insert(inst_name).second) fail_at(name_at, "duplicate name %" + inst_name);
    expect('=');
    auto inst = std::make_unique<Instruction>();
    inst->name = inst_name;
    inst->shape = shape();
    std::size_t op_at = here();
    std::string op_name = name("an opcode");
    auto opcode = opcode_from_name(op_name);
    if (!opcode) fail_at(op_at, "unknown opcode '" + op_name + "'");
    inst->opcode = *opcode;
    expect('(');
    if (inst->opcode == Opcode::kParameter) {
      std::size_t at = here();
      inst->parameter_number = integer();
      if (inst->parameter_number < 0 ||
          inst->parameter_number >= static_cast<std::int64_t>(scope.num_params))
        fail_at(at, "parameter number " + std::to_string(inst->parameter_number) +
                        " is out of range: the signature has " + std::to_string(scope.num_params) +
                        " parameter(s)");
      const auto& params = scope.computation->parameters();
      if (static_cast<std::size_t>(inst->parameter_number) < params.size() &&
          params[inst->parameter_number])
        fail_at(at, "duplicate parameter number " + std::to_string(inst->parameter_number));
    } else if (inst->opcode == Opcode::kConstant) {
      inst->literal = literal(inst->shape);
    } else if (peek() != ')') {
      do {
        inst->operands.push_back(operand(scope));
      } while (accept(','));
    }
    expect(')');
    Instruction* added = scope.computation->add(std::move(inst));
    module_->reserve_name(inst_name);
    scope.names[inst_name] = added;
    while (accept(',')) attribute(added);
    if (is_root) {
      scope.computation->set_root(added);
      scope.has_root = true;
    }
  }

  // `f32[3]{0} %x` (the shape is optional) naming an earlier instruction of this computation.
  Instruction* operand(Scope& scope) {
    std::optional<HloShape> written;
    if (peek() != '%') written = shape();
    std::size_t at = here();
    std::string n = percent_name("an operand name");
    auto it = scope.names.find(n);
    if (it == scope.names.end()) fail_at(at, "unknown instruction %" + n);
    if (written && *written != it->second->shape)
      fail_at(at, "operand %" + n + " has shape " + it->second->shape.str() + ", not " +
                      written->str());
    return it->second;
  }

  void computation() {
    bool entry = accept_word("ENTRY");
    if (entry && module_->entry()) fail("a second ENTRY computation");
    skip_ws();
    std::size_t name_at = pos_;
    accept('%');
    std::string comp_name = name("a computation name");
    if (computations_.count(comp_name)) fail_at(name_at, "duplicate computation %" + comp_name);
    std::vector<std::pair<std::string, HloShape>> signature;
    expect('(');
    if (!accept(')')) {
      do {
        std::string p = name("a parameter name");
        expect(':');
        signature.emplace_back(p, shape());
      } while (accept(','));
      expect(')');
    }
    expect_text("->");
    HloShape result = shape();
    Computation* c = module_->add_computation(comp_name, entry);
    c->set_name(comp_name);
    module_->reserve_name(comp_name);
    computations_[comp_name] = c;
    Scope scope{c, {}, signature.size()};
    expect('{');
    do {
      instruction(scope);
    } while (peek() != '}' && peek() != '\0');
    expect('}');
    if (!scope.has_root) c->set_root(c->owned().back());  // XLA's rule: the last instruction
    // The signature repeats what the parameters and the root say: they must agree.
    const auto& params = c->parameters();
    for (std::size_t k = 0; k < signature.size(); ++k) {
      const Instruction* p = k < params.size() ? params[k] : nullptr;
      if (!p)
        fail_at(name_at,
                "computation %" + comp_name + " has no parameter(" + std::to_string(k) + ")");
      if (p->name != signature[k].first || p->shape != signature[k].second)
        fail_at(name_at,
                "the signature of %" + comp_name + " does not match parameter %" + p->name);
    }
    if (c->root()->shape != result)
      fail_at(name_at, "the signature of %" + comp_name + " says it returns " + result.str() +
                           ", its root is " + c->root()->shape.str());
  }

  void check_layout(const std::pair<std::vector<HloShape>, HloShape>& layout, std::size_t at) {
    const Computation* entry = module_->entry();
    std::vector<HloShape> params;
    for (const Instruction* p : entry->parameters()) params.push_back(p->shape);
    if (params != layout.first || entry->root()->shape != layout.second)
      fail_at(at, "entry_computation_layout does not match the ENTRY computation");
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  std::unique_ptr<Module> module_;
  std::unordered_map<std::string, Computation*> computations_;
  std::unordered_set<std::string> names_;  // instruction names are unique in a module
  std::vector<PendingCall> calls_;
};

}  // namespace

std::unique_ptr<Module> parse_module(std::string_view text) { return Parser(text).parse(); }

}  // namespace jx::hlo
