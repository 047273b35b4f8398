// jx::config(): the global options, and the JX_FLAGS parser that fills them.
#include "jx/config.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <regex>
#include <vector>

#include "jx/errors.hpp"

namespace jx {
namespace {

struct BoolFlag {
  std::string_view name;
  bool Config::*field;
};
struct StringFlag {
  std::string_view name;
  std::string Config::*field;
  std::string_view metavar;
};

constexpr BoolFlag kBoolFlags[] = {
    {"dump_jaxpr", &Config::dump_jaxpr},
    {"dump_hlo", &Config::dump_hlo},
    {"dump_llvm", &Config::dump_llvm},
    {"dump_ptx", &Config::dump_ptx},
    {"dump_dot", &Config::dump_dot},
    {"log_compiles", &Config::log_compiles},
    {"explain_cache_misses", &Config::explain_cache_misses},
    {"strict_retraces", &Config::strict_retraces},
    {"debug_nans", &Config::debug_nans},
    {"debug_infs", &Config::debug_infs},
    {"disable_jit", &Config::disable_jit},
    {"gpu_graphs", &Config::gpu_graphs},
    {"cpu_flush_denormals", &Config::cpu_flush_denormals},
    {"cpu_huge_pages", &Config::cpu_huge_pages},
    {"enable_x64", &Config::enable_x64},
    {"precise_math", &Config::precise_math},
    {"verify_persistent_cache", &Config::verify_persistent_cache},
};
constexpr StringFlag kStringFlags[] = {
    {"dump_to", &Config::dump_to, "DIR"},
    {"dump_hlo_pass_re", &Config::dump_hlo_pass_re, "REGEX"},
    {"compilation_cache_dir", &Config::compilation_cache_dir, "DIR"},
};

[[noreturn]] void bad_value(std::string_view name, std::string_view value, std::string_view want) {
  throw Error("Bad value for --" + std::string(name) + " in JX_FLAGS: '" + std::string(value) +
              "' (expected " + std::string(want) + ")");
}

// Splits at whitespace outside double quotes; the quotes themselves are dropped.
std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  bool in_token = false, quoted = false;
  for (char c : text) {
    if (c == '"') {
      quoted = !quoted;
      in_token = true;
    } else if (!quoted && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
      if (in_token) out.push_back(std::move(cur));
      cur.clear();
      in_token = false;
    } else {
      cur += c;
      in_token = true;
    }
  }
  if (quoted) throw Error("Bad JX_FLAGS: unterminated double quote");
  if (in_token) out.push_back(std::move(cur));
  return out;
}

void apply_flag(const std::string& token, Config& c) {
  if (token.size() < 3 || token.compare(0, 2, "--") != 0)
    throw Error("Bad flag in JX_FLAGS: '" + token + "' (flags look like --name or --name=value)");
  std::string_view body = std::string_view(token).substr(2);
  std::size_t eq = body.find('=');
  std::string_view name = body.substr(0, eq);
  bool has_value = eq != std::string_view::npos;
  std::string_view value = has_value ? body.substr(eq + 1) : std::string_view();

  for (const auto& f : kBoolFlags) {
    if (f.name != name) continue;
    if (!has_value || value == "true" || value == "1")
      c.*f.field = true;
    else if (value == "false" || value == "0")
      c.*f.field = false;
    else
      bad_value(name, value, "true or false");
    return;
  }
  for (const auto& f : kStringFlags) {
    if (f.name != name) continue;
    if (!has_value)
      throw Error("Missing value for --" + std::string(name) + " in JX_FLAGS (expected --" +
                  std::string(name) + "=" + std::string(f.metavar) + ")");
    if (f.field == &Config::dump_hlo_pass_re) {
      try {
        std::regex re{std::string(value)};
      } catch (const std::regex_error&) {
        bad_value(name, value, "a regular expression");
      }
    }
    c.*f.field = std::string(value);
    return;
  }
  // Integer flags: the value must parse whole and reach the minimum.
  auto integer = [&](long long min, std::string_view want,
                     long long max = std::numeric_limits<long long>::max()) {
    long long n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (!has_value || ec != std::errc() || end != value.data() + value.size() || n < min ||
        n > max)
      bad_value(name, value, want);
    return n;
  };
  if (name == "cache_capacity") {
    c.cache_capacity = static_cast<int>(
        integer(1, "a positive integer up to 2147483647", std::numeric_limits<int>::max()));
    return;
  }
  if (name == "default_matmul_precision") {
    if (value != "default" && value != "high" && value != "highest")
      bad_value(name, value, "default, high or highest");
    c.default_matmul_precision = std::string(value);
    return;
  }
  if (name == "cpu_isa") {
    if (value != "avx2" && value != "avx512" && value != "native")
      bad_value(name, value, "avx2, avx512 or native");
    c.cpu_isa = std::string(value);
    return;
  }
  if (name == "cpu_vector_width") {
    long long bits = integer(0, "0, 256 or 512");
    if (bits != 0 && bits != 256 && bits != 512) bad_value(name, value, "0, 256 or 512");
    c.cpu_vector_width = static_cast<int>(bits);
    return;
  }
  if (name == "cpu_threads") {
    c.cpu_threads = static_cast<int>(std::min(integer(0, "a non-negative integer"), 1LL << 16));
    return;
  }
  if (name == "compilation_cache_max_bytes") {
    c.compilation_cache_max_bytes = integer(0, "a non-negative integer");
    return;
  }
  if (name == "cpu_parallel_min_bytes") {
    c.cpu_parallel_min_bytes = integer(0, "a non-negative integer");
    return;
  }
  throw Error("Unknown flag in JX_FLAGS: --" + std::string(name));
}

Config from_environment() {
  Config c;
  if (const char* flags = std::getenv("JX_FLAGS")) parse_flags(flags, c);
  return c;
}

}  // namespace

namespace detail {
void log_message(const std::string& message) {
  const auto& sink = config().log;
  sink ? sink(message) : log_to_stderr(message);
}

void log_to_stderr(const std::string& message) {
  std::fwrite(message.data(), 1, message.size(), stderr);
  std::fputc('\n', stderr);
}
}  // namespace detail

void parse_flags(std::string_view flags, Config& config) {
  Config updated = config;  // all or nothing: a bad flag leaves `config` as it was
  for (const auto& token : tokenize(flags)) apply_flag(token, updated);
  config = std::move(updated);
}

Config& config() {
  static Config instance = from_environment();
  return instance;
}

}  // namespace jx
