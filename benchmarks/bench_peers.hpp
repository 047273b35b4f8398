// The peers' times for a benchmark's cases, measured on the same machine by
// benchmarks/peers.py and passed on the command line:
//   --jax_ms=case:ms,case:ms,...   JAX (jax.jit)
//   --torch_ms=case:ms,...         PyTorch (eager)
// Each case then prints the peer's time and its ratio to jx's (above 1: jx is faster).
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace bench {

// A peer's times by case name, in ms.
struct PeerTimes {
  std::string name;
  std::map<std::string, double> ms;

  // The peer's time for `case_name`, 0 when it has none.
  double of(const std::string& case_name) const {
    auto it = ms.find(case_name);
    return it == ms.end() ? 0 : it->second;
  }
};

// "case:ms,case:ms,..."
inline PeerTimes parse_peer(std::string name, const std::string& list) {
  PeerTimes t{std::move(name), {}};
  std::size_t at = 0;
  while (at < list.size()) {
    std::size_t comma = std::min(list.find(',', at), list.size());
    std::string item = list.substr(at, comma - at);
    std::size_t colon = item.find(':');
    if (colon != std::string::npos)
      t.ms[item.substr(0, colon)] = std::strtod(item.c_str() + colon + 1, nullptr);
    at = comma + 1;
  }
  return t;
}

// The peers named among a benchmark's arguments.
inline std::vector<PeerTimes> parse_peers(int argc, char** argv) {
  std::vector<PeerTimes> peers;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--jax_ms=", 9) == 0) peers.push_back(parse_peer("JAX", argv[i] + 9));
    if (std::strncmp(argv[i], "--torch_ms=", 11) == 0)
      peers.push_back(parse_peer("PyTorch", argv[i] + 11));
  }
  return peers;
}

// The repetition scale beside the peers' flags: the first argument that is not a --flag
// (default 1).
inline int repetition_scale(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--", 2) != 0) return std::max(1, std::atoi(argv[i]));
  return 1;
}

inline void print_peers(const std::vector<PeerTimes>& peers, const std::string& case_name,
                        double jx_ms) {
  for (const PeerTimes& p : peers)
    if (double ms = p.of(case_name); ms > 0)
      std::printf("  %s %.3f ms: %s / jx = %.2f\n", p.name.c_str(), ms, p.name.c_str(), ms / jx_ms);
}

}  // namespace bench
