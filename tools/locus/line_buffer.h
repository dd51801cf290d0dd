#pragma once
// Cuts a rank's output, which arrives in chunks of any size, into the lines `locus run` prefixes.

#include <cstddef>
#include <string>
#include <string_view>

namespace locus::cli {

/// Accumulates the bytes of one stream and hands out whole pieces of it, each with its terminator:
/// '\n', "\r\n", or a lone '\r', so that a progress bar (`locus train`'s) still redraws in place
/// under the prefix. A piece that grows to `max_piece` bytes without a terminator is handed out
/// with a '\n' added, so that a rank that never ends its line can neither hold back its output
/// forever nor grow the buffer without bound; `finish` hands out an unterminated rest the same way.
/// Not thread-safe; one buffer per stream.
class LineBuffer {
 public:
  static constexpr size_t kDefaultMaxPiece = 64 * 1024;

  explicit LineBuffer(size_t max_piece = kDefaultMaxPiece) : max_piece_(max_piece) {}

  /// Appends `bytes` and calls `emit(std::string_view piece)` for every piece completed so far.
  template <class Emit>
  void feed(std::string_view bytes, Emit&& emit) {
    for (const char c : bytes) {
      if (ends_with_cr()) {
        // "\r\n" is one terminator; any other byte after '\r' starts the next piece.
        if (c == '\n') {
          pending_.push_back(c);
          flush(emit);
          continue;
        }
        flush(emit);
      }
      pending_.push_back(c);
      if (c == '\n') {
        flush(emit);
      } else if (c != '\r' && pending_.size() >= max_piece_) {
        pending_.push_back('\n');
        flush(emit);
      }
    }
    // A '\r' waits for the next byte only within a chunk: a bar drawn as "...\r" shows at once.
    if (ends_with_cr()) flush(emit);
  }

  /// End of file: hands out an unterminated rest, with '\n' added.
  template <class Emit>
  void finish(Emit&& emit) {
    if (pending_.empty()) return;
    pending_.push_back('\n');
    flush(emit);
  }

 private:
  bool ends_with_cr() const { return !pending_.empty() && pending_.back() == '\r'; }

  template <class Emit>
  void flush(Emit& emit) {
    // A lone '\r' (a progress bar starts its line with one) would print a prefix and nothing else.
    if (pending_ != "\r") emit(std::string_view(pending_));
    pending_.clear();
  }

  size_t max_piece_;
  std::string pending_;
};

}  // namespace locus::cli
