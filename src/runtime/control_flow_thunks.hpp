// Thunks that run nested executables: HLO while and conditional. Each called computation is
// compiled into an Executable of its own, run on this execution's buffers.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/executable.hpp"

namespace jx::runtime {

// Copies the initial carry into the while's output buffers, then alternates between running
// the condition and the body; the body writes each iteration's carry into the other of the two
// buffer sets (outputs, spare), so it never reads what it writes.
class WhileThunk : public Thunk {
 public:
  // With a known trip count (a scan's length), the body runs that often and the condition
  // never runs: a loop of small steps then costs one nested execution per step, not two.
  WhileThunk(std::string name, std::shared_ptr<const Executable> condition,
             std::shared_ptr<const Executable> body, std::vector<Allocation> init,
             std::vector<Allocation> carry, std::vector<Allocation> spare,
             std::optional<std::int64_t> trip_count);
  void execute(const ExecutionContext& ctx) const override;
  std::string str() const override;
  bool reads_back() const override { return true; }

 private:
  std::string name_;
  std::shared_ptr<const Executable> condition_, body_;
  std::vector<Allocation> init_, carry_, spare_;
  std::optional<std::int64_t> trip_count_;
};

// Runs the branch the s32 index picks (out of range: the last one) from the operand buffers
// into the output buffers.
class ConditionalThunk : public Thunk {
 public:
  ConditionalThunk(std::string name, std::vector<std::shared_ptr<const Executable>> branches,
                   Allocation index, std::vector<Allocation> operands,
                   std::vector<Allocation> outputs);
  void execute(const ExecutionContext& ctx) const override;
  std::string str() const override;
  bool reads_back() const override { return true; }

 private:
  std::string name_;
  std::vector<std::shared_ptr<const Executable>> branches_;
  Allocation index_;
  std::vector<Allocation> operands_, outputs_;
};

}  // namespace jx::runtime
