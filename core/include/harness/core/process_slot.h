#pragma once

// One process-wide value that any thread may read while another replaces it: the hooks a process
// installs once (Kubernetes' CEL, its Pod update validation, protobuf decoding, strict field
// checking) and every request reads. Readers get a copy, so a replacement never changes what a
// request already holds. A function-local static of this type is the only form the project uses
// for such state:
//   core::ProcessSlot<Checker>& checkerSlot() {
//     static core::ProcessSlot<Checker> slot;
//     return slot;
//   }

#include <mutex>
#include <utility>

namespace harness::core {

template <typename T>
class ProcessSlot {
 public:
  void set(T value) {
    std::lock_guard lock(mutex_);
    value_ = std::move(value);
  }

  [[nodiscard]] T get() const {
    std::lock_guard lock(mutex_);
    return value_;
  }

  // One member of a struct value, read under the same lock as the whole (a group installed
  // together is read consistently without copying the rest).
  template <typename M>
  [[nodiscard]] M get(M T::*member) const {
    std::lock_guard lock(mutex_);
    return value_.*member;
  }

 private:
  mutable std::mutex mutex_;
  T value_{};
};

}  // namespace harness::core
