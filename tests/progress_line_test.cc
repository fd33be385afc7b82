// The tool's progress line: its text, its rate limits and its final line,
// at made-up times (the line reads no clock).

#include "progress_line.h"

#include <string>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace memplan::tool {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

absl::Duration Ms(int64_t ms) { return absl::Milliseconds(ms); }

TEST(ProgressLineTest, InPlaceWaitsForItsFirstSecond) {
  ProgressLine line(ProgressStyle::kInPlace, ProgressLine::kInPlaceFirst, 100,
                    "best");
  line.Improved(150, "exact");
  EXPECT_THAT(line.Tick(Ms(999)), IsEmpty());
  const std::string first = line.Tick(Ms(1000));
  EXPECT_THAT(first, StartsWith("\r\033[K"));
  EXPECT_THAT(first, HasSubstr("best peak 150 bytes = 1.5000x lower bound"));
  EXPECT_THAT(first, HasSubstr("(exact)  [best]"));
  EXPECT_EQ(first.find('\n'), std::string::npos);
}

// At most ten redraws a second however often the plan improves; one a
// second while nothing changes.
TEST(ProgressLineTest, InPlaceIsRateLimited) {
  ProgressLine line(ProgressStyle::kInPlace, absl::ZeroDuration(), 0, "best");
  int drawn = 0;
  for (int ms = 0; ms < 2000; ms += 5) {  // a smaller plan every 5 ms
    line.Improved(1'000'000 - ms, "hill_climb");
    if (!line.Tick(Ms(ms)).empty()) ++drawn;
  }
  EXPECT_EQ(drawn, 20);
  int idle = 0;
  for (int ms = 2000; ms < 5000; ms += 5) {
    if (!line.Tick(Ms(ms)).empty()) ++idle;
  }
  // At 2 s (the plan of 1.995 s), then at 3 and 4 s.
  EXPECT_EQ(idle, 3);
  line.Running("exact");
  EXPECT_THAT(line.Tick(Ms(4050)), IsEmpty());  // within 100 ms of the last
  EXPECT_THAT(line.Tick(Ms(4100)), HasSubstr("[exact]"));
}

TEST(ProgressLineTest, LinesComeEveryFiveSecondsAfterTwo) {
  ProgressLine line(ProgressStyle::kLines, ProgressLine::kLinesFirst, 0,
                    "symbolic_search");
  EXPECT_THAT(line.Tick(Ms(1999)), IsEmpty());
  const std::string first = line.Tick(Ms(2000));
  EXPECT_EQ(first, "memplan:    2.0 s  no plan yet  [symbolic_search]\n");
  for (int ms = 2100; ms < 7000; ms += 100) {
    line.Improved(10'000 - ms, "x");
    EXPECT_THAT(line.Tick(Ms(ms)), IsEmpty()) << ms;
  }
  EXPECT_THAT(line.Tick(Ms(7000)), HasSubstr("    7.0 s  best peak 3100"));
  EXPECT_THAT(line.Tick(Ms(11999)), IsEmpty());
}

TEST(ProgressLineTest, FinalLineSaysWhyTheRunStopped) {
  ProgressLine in_place(ProgressStyle::kInPlace, ProgressLine::kInPlaceFirst,
                        1000, "exact");
  in_place.Improved(1000, "exact");
  ASSERT_FALSE(in_place.Tick(Ms(1500)).empty());
  EXPECT_EQ(in_place.Final(Ms(1600), "proven optimal"),
            "\r\033[Kmemplan:    1.6 s  best peak 1000 bytes = 1.0000x lower "
            "bound  [exact]; stopped: proven optimal\n");

  ProgressLine lines(ProgressStyle::kLines, ProgressLine::kLinesFirst, 0,
                     "best");
  EXPECT_EQ(lines.Final(Ms(10'000), "time limit"),
            "memplan:   10.0 s  no plan yet  [best]; stopped: time limit\n");
}

// A run shorter than the first line's wait ends as silently as it ran.
TEST(ProgressLineTest, QuickRunStaysSilent) {
  ProgressLine line(ProgressStyle::kLines, ProgressLine::kLinesFirst, 10,
                    "best");
  line.Improved(10, "best");
  EXPECT_THAT(line.Tick(Ms(100)), IsEmpty());
  EXPECT_THAT(line.Final(Ms(150), "done"), IsEmpty());
  ProgressLine always(ProgressStyle::kLines, absl::ZeroDuration(), 10, "best");
  EXPECT_THAT(always.Final(Ms(150), "done"), HasSubstr("stopped: done"));
}

}  // namespace
}  // namespace memplan::tool
