// What the benchmarks print about the machine they ran on: cores, CPU model, load.
#pragma once

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

namespace bench {

// Every reference runs on this many threads: all the cores jx may use.
inline int hardware_threads() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// What `nproc` prints: the CPUs this process may run on.
inline int affinity_cpus() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

inline std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace bench
