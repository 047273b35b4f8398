// What the benchmarks print about the machine they ran on: cores, CPU model, load.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

namespace bench {

// The machine's hardware threads (jx uses those the process may run on: affinity_cpus).
inline int hardware_threads() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// What `nproc` prints: the CPUs this process may run on.
inline int affinity_cpus() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

// Binds the calling thread to the k-th of the CPUs this process may run on (k modulo their
// count). A reference's threads are bound, one to a core: Linux starts a new thread on a core it
// takes for busy, and after a jx call its pool's workers poll on theirs for a while, so an
// unbound reference often ran two threads on one core (a triad after a jx call: 57-60 GB/s
// unbound, 90 bound).
inline void bind_to_cpu(int k) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) == 0) return;
  int skip = k % CPU_COUNT(&allowed);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed) || skip-- > 0) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    return;
  }
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
