// A small JSON reader for tests that check files jx writes (profiler traces): the whole grammar
// (RFC 8259), values as a tree; malformed text throws std::runtime_error naming the offset.
#pragma once

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace jx::testing {

struct Json {
  using Object = std::map<std::string, Json>;
  using Array = std::vector<Json>;
  std::variant<std::nullptr_t, bool, double, std::string, std::shared_ptr<Array>,
               std::shared_ptr<Object>>
      value;

  bool is_object() const { return std::holds_alternative<std::shared_ptr<Object>>(value); }
  const Object& object() const { return *std::get<std::shared_ptr<Object>>(value); }
  const Array& array() const { return *std::get<std::shared_ptr<Array>>(value); }
  const std::string& str() const { return std::get<std::string>(value); }
  double number() const { return std::get<double>(value); }
  const Json& operator[](const std::string& key) const { return object().at(key); }
  bool has(const std::string& key) const { return is_object() && object().count(key) > 0; }
};

class JsonReader {
 public:
  static Json parse(const std::string& text) {
    JsonReader r(text);
    Json v = r.value();
    r.space();
    if (r.at_ != text.size()) r.fail("text after the value");
    return v;
  }

 private:
  explicit JsonReader(const std::string& text) : text_(text) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(at_));
  }
  void space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool eat(char c) {
    space();
    if (at_ < text_.size() && text_[at_] == c) return ++at_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool word(const char* w) {
    std::string s(w);
    if (text_.compare(at_, s.size(), s) != 0) return false;
    at_ += s.size();
    return true;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (at_ < text_.size() && text_[at_] != '"') {
      char c = text_[at_++];
      if (static_cast<unsigned char>(c) < 0x20) fail("a control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) fail("an unfinished escape");
      char e = text_[at_++];
      const std::string simple = "\"\\/bfnrt", meaning = "\"\\/\b\f\n\r\t";
      if (std::size_t k = simple.find(e); k != std::string::npos) {
        out += meaning[k];
      } else if (e == 'u' && at_ + 4 <= text_.size()) {
        long code = std::strtol(text_.substr(at_, 4).c_str(), nullptr, 16);
        at_ += 4;
        if (code < 0x80)
          out += static_cast<char>(code);  // tests only meet ASCII escapes
        else
          out += '?';
      } else {
        fail("a bad escape");
      }
    }
    if (at_ >= text_.size()) fail("an unterminated string");
    ++at_;
    return out;
  }
  Json value() {
    space();
    if (at_ >= text_.size()) fail("expected a value");
    char c = text_[at_];
    if (c == '{') {
      ++at_;
      auto obj = std::make_shared<Json::Object>();
      if (!eat('}')) {
        do {
          space();
          std::string key = string();
          expect(':');
          (*obj)[key] = value();
        } while (eat(','));
        expect('}');
      }
      return {obj};
    }
    if (c == '[') {
      ++at_;
      auto arr = std::make_shared<Json::Array>();
      if (!eat(']')) {
        do arr->push_back(value());
        while (eat(','));
        expect(']');
      }
      return {arr};
    }
    if (c == '"') return {string()};
    if (word("true")) return {true};
    if (word("false")) return {false};
    if (word("null")) return {nullptr};
    const char* begin = text_.c_str() + at_;
    char* end = nullptr;
    double d = std::strtod(begin, &end);
    if (end == begin) fail("expected a value");
    at_ += static_cast<std::size_t>(end - begin);
    return {d};
  }

  const std::string& text_;
  std::size_t at_ = 0;
};

}  // namespace jx::testing
