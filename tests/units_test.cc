// Sizes and durations as people write them (memplan/units.h).

#include "memplan/units.h"

#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/types.h"

namespace memplan {
namespace {

using ::testing::HasSubstr;

TEST(ParseByteSizeTest, WholeNumbersAndUnits) {
  EXPECT_EQ(*ParseByteSize("0"), 0);
  EXPECT_EQ(*ParseByteSize("512KiB"), 524288);
  EXPECT_EQ(*ParseByteSize("512k"), 524288);
  EXPECT_EQ(*ParseByteSize("1MB"), 1000000);
  EXPECT_EQ(*ParseByteSize(" 2g "), Bytes{2} << 30);
  EXPECT_EQ(*ParseByteSize("3TB"), Bytes{3000000000000});
}

TEST(ParseByteSizeTest, AFractionOfAUnitIsRoundedDownToAWholeByte) {
  EXPECT_EQ(*ParseByteSize("1.5G"), Bytes{1610612736});
  EXPECT_EQ(*ParseByteSize("0.5KiB"), 512);
  EXPECT_EQ(*ParseByteSize("1.25MB"), 1250000);
  EXPECT_EQ(*ParseByteSize("1.1K"), 1126);  // 1126.4
  EXPECT_EQ(*ParseByteSize("2.999"), 2);
  EXPECT_EQ(*ParseByteSize("7."), 7);
}

TEST(ParseByteSizeTest, WhatIsNotASizeSaysSo) {
  for (const char* text : {"", "-5", ".5G", "G", "1.0000000000000000001G"}) {
    auto size = ParseByteSize(text);
    ASSERT_FALSE(size.ok()) << text;
    EXPECT_THAT(size.status().message(), HasSubstr("is not a size")) << text;
  }
  EXPECT_THAT(ParseByteSize("1.5X").status().message(),
              HasSubstr("unknown unit \"x\""));
  EXPECT_THAT(ParseByteSize("1e9").status().message(),
              HasSubstr("unknown unit \"e9\""));
  EXPECT_THAT(ParseByteSize("1.5.2G").status().message(),
              HasSubstr("unknown unit \".2g\""));
}

TEST(ParseByteSizeTest, OverflowIsAnError) {
  EXPECT_EQ(ParseByteSize("9223372036854775807").value(),
            std::numeric_limits<Bytes>::max());
  EXPECT_EQ(ParseByteSize("9223372036854775.807KB").value(),
            std::numeric_limits<Bytes>::max());
  for (const char* text : {"9223372036854775808", "8388608T",
                           "9223372036854775.999KB", "99999999999999999999"}) {
    auto size = ParseByteSize(text);
    ASSERT_FALSE(size.ok()) << text;
  }
}

}  // namespace
}  // namespace memplan
