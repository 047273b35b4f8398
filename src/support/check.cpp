#include "support/check.hpp"

namespace jx::detail {

void check_failed(const char* cond, const char* file, int line, const std::string& msg) {
  std::ostringstream os;
  os << "internal error in jx: check `" << cond << "` failed at " << file << ":" << line;
  if (!msg.empty()) os << ": " << msg;
  throw Error(os.str());
}

}  // namespace jx::detail
