#pragma once
// A hint from the synchronous collectives (async_op = false) to the group they call: this thread
// waits for the collective at once and runs it itself, so the group need not wake its worker
// (each wake-up of a thread costs a scheduler slice on a busy machine).

namespace locus::distributed {

/// True while a synchronous collective is being issued on this thread.
bool caller_waits() noexcept;

/// Marks the calling thread as about to wait for the collective it issues.
class CallerWaits {
 public:
  CallerWaits() noexcept;
  ~CallerWaits();
  CallerWaits(const CallerWaits&) = delete;
  CallerWaits& operator=(const CallerWaits&) = delete;

 private:
  bool previous_;
};

}  // namespace locus::distributed
