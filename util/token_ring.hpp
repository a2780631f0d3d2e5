// Storage for the tokens of a oneTBB parallel_pipeline.
//
// When the pipeline's last filter is serial_in_order, at most N tokens are alive at once and they leave in the
// order they entered, so token i can reuse the slot of token i - N. Tokens then travel as plain pointers into the
// ring, and the ring owns every slot: when a filter throws and the pipeline is cancelled, oneTBB does not destroy
// tokens of class type that are still in flight (LeakSanitizer caught a Batch leaked that way), but the ring frees
// them with the rest of the scope.
#pragma once

#include <cstddef>
#include <vector>

namespace ccpack {

template <class T>
class TokenRing {
 public:
  explicit TokenRing(std::size_t size) : slots_(size) {}
  [[nodiscard]] std::size_t size() const noexcept { return slots_.size(); }
  // The slot for the next token; the caller resets what it needs.
  T& next() { return slots_[count_++ % slots_.size()]; }

 private:
  std::vector<T> slots_;
  std::size_t count_ = 0;
};

}  // namespace ccpack
