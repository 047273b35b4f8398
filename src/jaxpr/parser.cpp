// Reads the jaxpr text format (what printer.cpp writes) back: a lexer and a small
// recursive-descent parser. Bad input throws jx::CompileError naming the line and column.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "core/array_impl.hpp"
#include "core/dtype_dispatch.hpp"
#include "core/element_convert.hpp"
#include "jaxpr/jaxpr.hpp"

namespace jx {
namespace {

// ---- lexer --------------------------------------------------------------------------------------

struct Token {
  enum class Kind { kIdent, kNumber, kPunct, kEnd };
  Kind kind;
  std::string text;
  int line = 0, col = 0;
  bool line_start = false;  // the first token on its line
};

[[noreturn]] void fail_at(int line, int col, const std::string& msg) {
  throw CompileError("jaxpr parse error at line " + std::to_string(line) + ", column " +
                     std::to_string(col) + ": " + msg);
}

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::vector<Token> lex(std::string_view s) {
  std::vector<Token> out;
  int line = 1, col = 1;
  bool line_start = true;
  std::size_t i = 0;
  auto at = [&](std::size_t k) { return k < s.size() ? s[k] : '\0'; };
  while (i < s.size()) {
    char c = s[i];
    if (c == '\n') {
      ++i, ++line, col = 1, line_start = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i, ++col;
      continue;
    }
    Token t{Token::Kind::kPunct, "", line, col, line_start};
    std::size_t start = i;
    if (is_alpha(c)) {
      t.kind = Token::Kind::kIdent;
      // Dotted names (enum-like param values such as `Precision.HIGHEST`) stay one token, and
      // so do hyphenated primitive names (`scatter-add`): jaxprs never subtract.
      while (is_alpha(at(i)) || is_digit(at(i)) ||
             ((at(i) == '.' || at(i) == '-') && is_alpha(at(i + 1))))
        ++i;
    } else if (is_digit(c) || (c == '-' && is_digit(at(i + 1)))) {
      t.kind = Token::Kind::kNumber;
      if (c == '-') ++i;
      while (is_digit(at(i))) ++i;
      if (at(i) == '.' && is_digit(at(i + 1)))
        for (++i; is_digit(at(i));) ++i;
      bool sign = at(i + 1) == '+' || at(i + 1) == '-';
      if ((at(i) == 'e' || at(i) == 'E') && is_digit(at(i + 1 + sign)))
        for (i += 1 + sign; is_digit(at(i));) ++i;
    } else if (std::string_view("{}()[]:;.,=-<>").find(c) != std::string_view::npos) {
      ++i;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
      fail_at(line, col,
              "unexpected character '" + (c > ' ' && c < 127 ? std::string(1, c) : hex) + "'");
    }
    t.text = std::string(s.substr(start, i - start));
    col += static_cast<int>(i - start);
    line_start = false;
    out.push_back(std::move(t));
  }
  out.push_back(Token{Token::Kind::kEnd, "", line, col, line_start});
  return out;
}

// ---- parser -------------------------------------------------------------------------------------

std::optional<DType> dtype_from(std::string_view name, bool short_name) {
  for (DType d : kAllDTypes)
    if ((short_name ? dtype_short_name(d) : dtype_name(d)) == name) return d;
  return std::nullopt;
}

bool is_literal_word(const std::string& s) {
  return s == "True" || s == "False" || s == "inf" || s == "nan";
}

constexpr int kMaxDepth = 200;  // nesting of jaxprs and tuples; deeper input is rejected

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : toks_(std::move(tokens)) {}

  // (`let NAME = { ... } in`)* { ... } — shared sub-jaxprs come first, as the printer puts them.
  Jaxpr top() {
    while (ident(peek(), "let")) {
      next();
      Token name = expect_ident("a name for the shared jaxpr");
      expect('=', "'=' after the shared jaxpr's name");
      auto j = std::make_shared<ClosedJaxprData>(ClosedJaxprData{jaxpr(), {}});
      if (!ident(peek(), "in")) fail(peek(), "'in' after the shared jaxpr");
      next();
      shared_[name.text] = std::move(j);
    }
    Jaxpr j = jaxpr();
    if (peek().kind != Token::Kind::kEnd) fail(peek(), "the end of the text");
    return j;
  }

 private:
  // A jaxpr's variables. A name read before its binder is kept as a forward reference, so that
  // typecheck can report the use before definition; a name never bound is a parse error.
  struct Scope {
    std::unordered_map<std::string, Var> vars;
    std::vector<std::pair<Token, Var>> forward;  // first use of each name not yet bound
  };

  const Token& peek(std::size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  Token next() {
    Token t = peek();
    if (pos_ < toks_.size() - 1) ++pos_;
    return t;
  }
  static bool punct(const Token& t, char c) {
    return t.kind == Token::Kind::kPunct && t.text.size() == 1 && t.text[0] == c;
  }
  static bool ident(const Token& t, std::string_view s = {}) {
    return t.kind == Token::Kind::kIdent && (s.empty() || t.text == s);
  }
  [[noreturn]] static void fail(const Token& t, const std::string& expected) {
    std::string got = t.kind == Token::Kind::kEnd ? "the end of the text" : "'" + t.text + "'";
    fail_at(t.line, t.col, "expected " + expected + ", got " + got);
  }
  void expect(char c, const std::string& what) {
    if (!punct(peek(), c)) fail(peek(), what);
    next();
  }
  Token expect_ident(const std::string& what) {
    if (!ident(peek())) fail(peek(), what);
    return next();
  }
  // The keyword `in` is always followed by the output tuple; a variable may be named `in`.
  bool at_in() const { return ident(peek(), "in") && punct(peek(1), '('); }

  struct DepthGuard {
    explicit DepthGuard(Parser& p) : p(p) {
      if (++p.depth_ > kMaxDepth) fail_at(p.peek().line, p.peek().col, "nesting is too deep");
    }
    ~DepthGuard() { --p.depth_; }
    Parser& p;
  };

  // { lambda CONSTVARS ; INVARS . let EQNS in ( OUTS ) }
  Jaxpr jaxpr() {
    DepthGuard guard(*this);
    expect('{', "'{' to open a jaxpr");
    if (!ident(peek(), "lambda")) fail(peek(), "'lambda'");
    next();
    Jaxpr j;
    Scope scope;  // each jaxpr binds its own variables
    while (!punct(peek(), ';')) j.constvars.push_back(define(scope, binder()));
    next();
    while (!punct(peek(), '.')) j.invars.push_back(define(scope, binder()));
    next();
    if (!ident(peek(), "let")) fail(peek(), "'let' after the input binders");
    next();
    int eqn_col = -1;
    for (;;) {
      while (punct(peek(), ';')) next();
      if (at_in()) break;
      if (peek().kind == Token::Kind::kEnd || punct(peek(), '}'))
        fail(peek(), "an equation or 'in'");
      if (eqn_col < 0) eqn_col = peek().col;
      j.eqns.push_back(eqn(scope, eqn_col));
    }
    next();
    expect('(', "'(' to open the outputs");
    while (!punct(peek(), ')')) {
      j.outvars.push_back(atom(scope));
      if (!punct(peek(), ')')) expect(',', "',' or ')' in the outputs");
    }
    next();
    expect('}', "'}' to close the jaxpr");
    for (const auto& [t, v] : scope.forward)
      if (!scope.vars.count(t.text)) fail_at(t.line, t.col, "undefined variable '" + t.text + "'");
    return j;
  }

  // NAME : TYPE, returning the name's token and a fresh variable (`_` is a dropped one).
  std::pair<Token, Var> binder() {
    Token name = expect_ident("a variable name");
    expect(':', "':' and a type after variable '" + name.text + "'");
    Var v = new_var(type());
    v->dropped = name.text == "_";
    return {name, v};
  }

  Var define(Scope& scope, const std::pair<Token, Var>& b) {
    const auto& [name, v] = b;
    if (v->dropped) return v;
    if (scope.vars.count(name.text))
      fail_at(name.line, name.col, "variable '" + name.text + "' is already defined");
    for (const auto& [t, fwd] : scope.forward) {
      if (t.text != name.text) continue;
      fwd->aval = v->aval;  // the reads already hold this node
      return scope.vars[name.text] = fwd;
    }
    return scope.vars[name.text] = v;
  }

  // "a dtype (bool, i8, ..., f32 or f64)": every short name a jaxpr may use.
  static std::string dtype_expectation() {
    std::string list;
    for (std::size_t i = 0; i < std::size(kAllDTypes); ++i)
      list += (i == 0                           ? ""
               : i + 1 == std::size(kAllDTypes) ? " or "
                                                : ", ") +
              std::string(dtype_short_name(kAllDTypes[i]));
    return "a dtype (" + list + ")";
  }

  // DTYPE [ DIMS ]: f32[2,3], bool[]
  ShapedArray type() {
    Token t = peek();
    auto d = ident(t) ? dtype_from(t.text, true) : std::nullopt;
    if (!d) fail(t, dtype_expectation());
    next();
    ShapedArray aval{{}, *d, false};
    expect('[', "'[' after the dtype");
    while (!punct(peek(), ']')) {
      Token n = peek();
      std::int64_t dim = -1;
      if (n.kind == Token::Kind::kNumber)
        std::from_chars(n.text.data(), n.text.data() + n.text.size(), dim);
      if (dim < 0 || n.text.find_first_of(".eE") != std::string::npos)
        fail(n, "a dimension size (a non-negative integer)");
      next();
      aval.shape.push_back(dim);
      if (!punct(peek(), ']')) expect(',', "',' or ']' in the shape");
    }
    next();
    return aval;
  }

  // [BINDERS =] PRIMITIVE [PARAMS] ATOMS
  Eqn eqn(Scope& scope, int eqn_col) {
    Eqn e;
    std::vector<std::pair<Token, Var>> outs;
    if (ident(peek()) && punct(peek(1), ':')) {
      while (!punct(peek(), '=')) outs.push_back(binder());
      next();
    }
    Token name = expect_ident("a primitive name");
    e.prim = find_primitive(name.text);
    if (!e.prim) fail_at(name.line, name.col, "unknown primitive '" + name.text + "'");
    if (punct(peek(), '[')) e.params = params();
    if (e.prim->text.read) {
      std::vector<ShapedArray> out_avals;
      for (const auto& b : outs) out_avals.push_back(b.second->aval);
      e.params = e.prim->text.read(std::move(e.params), out_avals);
    }
    while (!atoms_end(eqn_col)) e.inputs.push_back(atom(scope));
    for (const auto& b : outs) e.outvars.push_back(define(scope, b));  // visible after the eqn
    return e;
  }

  bool atoms_end(int eqn_col) const {
    const Token& t = peek();
    if (t.kind == Token::Kind::kEnd || punct(t, ';') || punct(t, '}') || at_in()) return true;
    // Multi-line form: the next equation starts a line at the equations' column.
    if (t.line_start && t.col <= eqn_col) return true;
    // `b:f32[]` starts the next equation's binders unless it is a literal like `inf:f32[]`.
    return ident(t) && punct(peek(1), ':') && !is_literal_word(t.text);
  }

  Atom atom(Scope& scope) {
    const Token& t = peek();
    if (ident(t) && !punct(peek(1), ':')) {
      if (t.text == "_") fail(t, "a variable that can be read (`_` is never bound)");
      Token name = next();
      if (auto it = scope.vars.find(name.text); it != scope.vars.end()) return it->second;
      for (const auto& [ft, fwd] : scope.forward)
        if (ft.text == name.text) return fwd;
      scope.forward.emplace_back(name, new_var(ShapedArray{}));
      return scope.forward.back().second;
    }
    if (ident(t) || t.kind == Token::Kind::kNumber || punct(t, '-')) return literal();
    fail(t, "a variable or a literal");
  }

  // VALUE : TYPE with a 0-d type: 2.0:f32[], -3:i32[], True:bool[], -inf:f64[]
  Array literal() {
    bool negative = punct(peek(), '-');
    if (negative) next();
    Token v = next();
    bool word = ident(v) && is_literal_word(v.text);
    if (!word && v.kind != Token::Kind::kNumber) fail(v, "a literal value");
    if (negative && !(v.text == "inf" || v.text == "nan")) fail(v, "'inf' or 'nan' after '-'");
    expect(':', "':' and a type after the literal " + v.text);
    Token type_tok = peek();
    ShapedArray aval = type();
    if (!aval.shape.empty())
      fail_at(type_tok.line, type_tok.col,
              "expected a scalar type for a literal, got " + aval.str());
    bool is_bool_word = v.text == "True" || v.text == "False";
    if ((aval.dtype == bool_) != is_bool_word)
      fail(v, aval.dtype == bool_ ? "True or False for a bool literal"
                                  : "a number for a " + aval.str() + " literal");
    Array lit = make_array(aval);
    dispatch(aval.dtype, [&]<class T>() {
      T* out = lit.impl()->buffer->as<T>();
      if constexpr (std::is_same_v<T, bool>) {
        *out = v.text == "True";
      } else if constexpr (is_float_element_v<T>) {
        double x = v.text == "inf"   ? std::numeric_limits<double>::infinity()
                   : v.text == "nan" ? std::numeric_limits<double>::quiet_NaN()
                                     : number(v);
        *out = convert_element<T>(negative ? -x : x);
      } else {
        std::int64_t x = integer(v);
        if (x < static_cast<std::int64_t>(std::numeric_limits<T>::lowest()) ||
            x > static_cast<std::int64_t>(std::numeric_limits<T>::max()))
          fail_at(v.line, v.col, "literal " + v.text + " does not fit in " + aval.str());
        *out = static_cast<T>(x);
      }
    });
    return lit;
  }

  static double number(const Token& t) {
    double x = 0;
    auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), x);
    if (t.kind != Token::Kind::kNumber || r.ec != std::errc()) fail(t, "a number");
    return x;
  }

  static std::int64_t integer(const Token& t) {
    std::int64_t x = 0;
    auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), x);
    if (t.kind != Token::Kind::kNumber || r.ec != std::errc() ||
        r.ptr != t.text.data() + t.text.size())
      fail(t, "an integer (that fits in 64 bits)");
    return x;
  }

  // [ KEY=VALUE ... ]
  Params params() {
    next();
    Params out;
    while (!punct(peek(), ']')) {
      Token key = expect_ident("a parameter name or ']'");
      if (out.has(key.text)) fail_at(key.line, key.col, "parameter '" + key.text + "' given twice");
      expect('=', "'=' after parameter '" + key.text + "'");
      // A call's name is a name, where a shared jaxpr has it too: JAX names a jit's jaxpr, printed
      // once up front, after its function.
      bool name = key.text == "name" && ident(peek()) && shared_.count(peek().text);
      out.set(key.text, name ? Param::name(next().text) : param());
    }
    next();
    return out;
  }

  Param param() {
    DepthGuard guard(*this);
    const Token& t = peek();
    if (punct(t, '{')) return jaxpr_param();
    if (punct(t, '(')) return tuple_param();
    if (punct(t, '[')) {
      next();
      std::vector<Param> items;
      while (!punct(peek(), ']')) {
        items.push_back(param());
        if (!punct(peek(), ']')) expect(',', "',' or ']' in the list");
      }
      next();
      return Param::list(std::move(items));
    }
    if (punct(t, '-')) {
      next();
      if (!ident(peek(), "inf")) fail(peek(), "'inf' after '-'");
      next();
      return Param::floating(-std::numeric_limits<double>::infinity());
    }
    if (t.kind == Token::Kind::kNumber) {
      Token n = next();
      if (n.text.find_first_of(".eE") == std::string::npos) return Param::integer(integer(n));
      return Param::floating(number(n));
    }
    if (punct(t, '<')) {  // a Python function's name: name=<lambda>
      next();
      Token w = expect_ident("a name after '<'");
      expect('>', "'>' after <" + w.text);
      return Param::name("<" + w.text + ">");
    }
    if (!ident(t)) fail(t, "a parameter value");
    Token w = next();
    if (w.text == "None") return Param();
    if (w.text == "True" || w.text == "False") return Param::boolean(w.text == "True");
    if (w.text == "inf") return Param::floating(std::numeric_limits<double>::infinity());
    if (w.text == "nan") return Param::floating(std::numeric_limits<double>::quiet_NaN());
    if (auto d = dtype_from(w.text, false)) return Param::dtype(*d);
    if (auto it = shared_.find(w.text); it != shared_.end()) return Param::jaxpr(it->second);
    if (punct(peek(), '(')) return record_param(w.text);
    return Param::name(w.text);
  }

  // Type(field=value, ...) or Type(value, ...): a named record, its fields named or positional.
  Param record_param(const std::string& type) {
    next();
    std::vector<std::pair<std::string, Param>> fields;
    while (!punct(peek(), ')')) {
      std::string key;
      if (ident(peek()) && punct(peek(1), '=')) {
        key = next().text;
        next();
      }
      fields.emplace_back(key, param());
      if (!punct(peek(), ')')) expect(',', "',' or ')' in " + type);
    }
    next();
    return Param::record(type, std::move(fields));
  }

  Param jaxpr_param() {
    return Param::jaxpr(std::make_shared<ClosedJaxprData>(ClosedJaxprData{jaxpr(), {}}));
  }

  bool at_jaxpr() const {
    return punct(peek(), '{') || (ident(peek()) && shared_.count(peek().text));
  }

  // (1, 2) (1,) () — or a tuple of jaxprs, which JAX separates by spaces: ({ ... } { ... }).
  Param tuple_param() {
    next();
    std::vector<Param> items;
    bool jaxprs = at_jaxpr();
    while (!punct(peek(), ')')) {
      if (jaxprs) {
        if (!at_jaxpr()) fail(peek(), "a jaxpr or ')' in the tuple of jaxprs");
        items.push_back(punct(peek(), '{') ? jaxpr_param() : Param::jaxpr(shared_.at(next().text)));
        if (punct(peek(), ',')) next();
        continue;
      }
      items.push_back(param());
      if (!punct(peek(), ')')) expect(',', "',' or ')' in the tuple");
    }
    next();
    return Param::tuple(std::move(items));
  }

  std::vector<Token> toks_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  std::map<std::string, std::shared_ptr<const ClosedJaxprData>> shared_;
};

}  // namespace

Jaxpr read_jaxpr(std::string_view text) {
  Jaxpr j = Parser(lex(text)).top();
  typecheck(j);
  return j;
}

}  // namespace jx
