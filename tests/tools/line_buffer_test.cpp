// `locus run`'s LineBuffer: rank output cut into whole lines, progress bars and long lines included.

#include "tools/locus/line_buffer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace locus::cli {
namespace {

// Feeds the chunks one by one, then end of file; returns the pieces handed out.
std::vector<std::string> pieces(const std::vector<std::string>& chunks, size_t max_piece = LineBuffer::kDefaultMaxPiece) {
  LineBuffer buffer(max_piece);
  std::vector<std::string> out;
  const auto emit = [&](std::string_view piece) { out.emplace_back(piece); };
  for (const std::string& chunk : chunks) buffer.feed(chunk, emit);
  buffer.finish(emit);
  return out;
}

using Pieces = std::vector<std::string>;

TEST(LineBuffer, WholeLinesWhateverTheChunks) {
  EXPECT_EQ(pieces({"one\ntwo\n"}), (Pieces{"one\n", "two\n"}));
  EXPECT_EQ(pieces({"o", "ne\ntw", "o", "\n"}), (Pieces{"one\n", "two\n"}));
  EXPECT_EQ(pieces({"\n\n"}), (Pieces{"\n", "\n"}));
  EXPECT_EQ(pieces({}), Pieces{});
}

TEST(LineBuffer, UnterminatedLastLineGetsANewline) {
  EXPECT_EQ(pieces({"done\nno newline"}), (Pieces{"done\n", "no newline\n"}));
}

TEST(LineBuffer, ProgressBarsRedrawInPlace) {
  // `locus train` draws "\repoch ..." and ends the epoch with "\n".
  EXPECT_EQ(pieces({"\repoch 1 [=> ]", "\repoch 1 [==>]", "\n"}), (Pieces{"epoch 1 [=> ]\r", "epoch 1 [==>]\n"}));
  EXPECT_EQ(pieces({"10%\r20%\r"}), (Pieces{"10%\r", "20%\r"}));
}

TEST(LineBuffer, CrLfIsOneTerminator) {
  EXPECT_EQ(pieces({"a\r\nb\r\n"}), (Pieces{"a\r\n", "b\r\n"}));
}

TEST(LineBuffer, LongLinesAreCut) {
  EXPECT_EQ(pieces({"abcdefg\n"}, 3), (Pieces{"abc\n", "def\n", "g\n"}));
  EXPECT_EQ(pieces({"abc", "\n"}, 3), (Pieces{"abc\n", "\n"}));
}

}  // namespace
}  // namespace locus::cli
