#include "runtime/kernel_workspaces.hpp"

#include <mutex>
#include <new>
#include <vector>

namespace jx::runtime {
namespace {

constexpr std::size_t kHeldBytes = 64 << 20;

class Released {
 public:
  // The smallest that holds `bytes`, of those the most recently released.
  std::unique_ptr<Buffer> take(std::size_t bytes) {
    std::lock_guard lock(mu_);
    std::size_t best = free_.size();
    for (std::size_t i = free_.size(); i-- > 0;)
      if (free_[i]->nbytes() >= bytes &&
          (best == free_.size() || free_[i]->nbytes() < free_[best]->nbytes()))
        best = i;
    if (best == free_.size()) return nullptr;
    std::unique_ptr<Buffer> workspace = std::move(free_[best]);
    free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(best));
    held_ -= workspace->nbytes();
    return workspace;
  }

  // Never throws (it runs in a destructor): without memory to keep it, `workspace` is freed.
  void give(std::unique_ptr<Buffer> workspace) noexcept {
    std::size_t bytes = workspace->nbytes();
    std::lock_guard lock(mu_);
    try {
      free_.push_back(std::move(workspace));
    } catch (const std::bad_alloc&) {
      return;
    }
    held_ += bytes;
    while (held_ > kHeldBytes) {
      held_ -= free_.front()->nbytes();
      free_.erase(free_.begin());
    }
  }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<Buffer>> free_;  // least recently released first
  std::size_t held_ = 0;
};

// Never destroyed: kernels may still run from static destructors of user code.
Released& released() {
  static auto* instance = new Released;
  return *instance;
}

}  // namespace

std::unique_ptr<Buffer> take_workspace(std::size_t bytes) {
  if (std::unique_ptr<Buffer> workspace = released().take(bytes)) return workspace;
  return std::make_unique<Buffer>(bytes, Buffer::Uninitialized{});
}

void release_workspace(std::unique_ptr<Buffer> workspace) noexcept {
  released().give(std::move(workspace));
}

}  // namespace jx::runtime
