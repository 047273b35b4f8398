// An Executable: a thunk sequence over one arena, plus what keeps its code and constants alive.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "jx/array.hpp"
#include "runtime/thunks.hpp"

namespace jx::runtime {

struct Scratch;  // per-thread buffers of one execution (executable.cpp)

class Executable {
 public:
  Executable(std::string name, std::vector<std::unique_ptr<Thunk>> thunks, std::int64_t arena_bytes,
             std::vector<ShapedArray> in_avals, std::vector<ShapedArray> out_avals,
             std::vector<Array> constants, std::vector<std::pair<int, int>> donations,
             std::shared_ptr<const void> code,
             std::shared_ptr<const DeviceRuntime> device = nullptr);

  // Runs the thunks on concrete arguments; outputs are fresh arrays, except that a donated
  // argument's buffer becomes its output's (when nothing else holds it; else it is copied
  // there) and the argument is deleted. On a device, arguments elsewhere are copied there
  // first, outputs live there, and the call returns once the work is enqueued.
  std::vector<Array> execute(const std::vector<Array>& args) const;
  // Runs the thunks on raw buffers, one per input and output aval, the outputs the caller's
  // (distinct from the inputs): how control-flow thunks run their nested programs.
  void run(std::span<void* const> params, std::span<void* const> outputs) const;

  const std::vector<ShapedArray>& in_avals() const { return in_avals_; }
  const std::vector<ShapedArray>& out_avals() const { return out_avals_; }
  std::int64_t arena_bytes() const { return arena_bytes_; }
  std::string thunk_sequence() const;                            // one thunk per line
  const DeviceRuntime* device() const { return device_.get(); }  // null: the host
  std::size_t num_thunks() const { return thunks_.size(); }

 private:
  void run_thunks(Scratch& scratch) const;
  void run_each(const ExecutionContext& ctx) const;
  void execute_on_device(const std::vector<Array>& args, Scratch& scratch,
                         std::vector<Array>& outs) const;

  std::string name_;  // the program's ("jit_f", "jit_f.body"): profiler traces name it
  std::vector<std::unique_ptr<Thunk>> thunks_;
  std::int64_t arena_bytes_;
  std::vector<ShapedArray> in_avals_, out_avals_;
  std::vector<Array> constants_;                // buffers of the HLO constants, by constant number
  std::vector<std::pair<int, int>> donations_;  // (argument, output) sharing a buffer
  std::shared_ptr<const void> code_;  // the JIT'd code: freed with the last executable using it
  std::shared_ptr<const DeviceRuntime> device_;
  std::vector<std::shared_ptr<DeviceStorage>> device_constants_;  // constants_, on device_
  bool replayable_ = false;  // on a device, no thunk reads back to the host
};

}  // namespace jx::runtime
