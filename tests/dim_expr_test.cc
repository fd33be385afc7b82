#include "memplan/dim_expr.h"

#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace memplan {
namespace {

using ::testing::HasSubstr;

DimExpr P(const std::string& text) {
  absl::StatusOr<DimExpr> e = DimExpr::Parse(text);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? *e : DimExpr();
}

TEST(DimExprTest, ParsesAndPrintsCanonically) {
  EXPECT_EQ(P("32*seq*seq + 64").ToString(), "32*seq*seq + 64");
  EXPECT_EQ(P("64 + seq*32*seq").ToString(), "32*seq*seq + 64");
  EXPECT_EQ(P("2*batch*seq").ToString(), "2*batch*seq");
  EXPECT_EQ(P("seq*batch*2").ToString(), "2*batch*seq");
  EXPECT_EQ(P("  7 ").ToString(), "7");
  EXPECT_EQ(P("seq + seq").ToString(), "2*seq");
  EXPECT_EQ(P("seq - seq").ToString(), "0");
  EXPECT_EQ(P("-3*seq + 5").ToString(), "-3*seq + 5");
  EXPECT_EQ(P("5 - 3*seq").ToString(), "-3*seq + 5");
  EXPECT_EQ(P("a*b + a*a + b").ToString(), "a*a + a*b + b");
  EXPECT_TRUE(P("0").IsConstant());
  EXPECT_EQ(P("0"), DimExpr());
  EXPECT_EQ(P("12").ConstantTerm(), 12);
  EXPECT_EQ(P("3*seq*seq*batch").Degree("seq"), 2);
  EXPECT_EQ(P("3*seq*seq*batch").Degree("batch"), 1);
  EXPECT_EQ(P("3*seq*seq*batch").Dims(),
            (std::vector<std::string>{"batch", "seq"}));
}

TEST(DimExprTest, ParseErrorsNameTheTextAndPosition) {
  for (const char* bad :
       {"", "32*", "32 seq", "2seq", "seq +", "*seq", "seq ** 2", "seq^2",
        "(seq)", "99999999999999999999", "--seq"}) {
    absl::StatusOr<DimExpr> e = DimExpr::Parse(bad);
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(e.status().message(), HasSubstr(absl::StrCat("\"", bad, "\"")));
    EXPECT_THAT(e.status().message(), HasSubstr("position"));
  }
  EXPECT_THAT(DimExpr::Parse("2seq").status().message(),
              HasSubstr("write 2*seq"));
  std::string power = "seq";
  for (int i = 0; i < 64; ++i) power += "*seq";
  EXPECT_THAT(DimExpr::Parse(power).status().message(),
              HasSubstr("a dim's power exceeds 64"));
  // A product whose coefficient overflows.
  EXPECT_THAT(DimExpr::Parse("4611686018427387904*4*seq").status().message(),
              HasSubstr("overflows"));
}

TEST(DimExprTest, RoundTripsRandomExpressions) {
  std::mt19937_64 rng(7);
  const char* dims[] = {"a", "b", "seq"};
  for (int trial = 0; trial < 300; ++trial) {
    std::string text;
    const int terms = 1 + static_cast<int>(rng() % 4);
    for (int t = 0; t < terms; ++t) {
      if (t > 0) text += rng() % 2 ? " + " : " - ";
      text += std::to_string(rng() % 100);
      for (int f = static_cast<int>(rng() % 3); f > 0; --f) {
        text += "*";
        text += dims[rng() % 3];
      }
    }
    const DimExpr e = P(text);
    EXPECT_EQ(P(e.ToString()), e) << text;
    // Printing then parsing keeps the value too.
    const DimValues at = {{"a", 3}, {"b", 5}, {"seq", 11}};
    EXPECT_EQ(*P(e.ToString()).Evaluate(at), *e.Evaluate(at)) << text;
  }
}

TEST(DimExprTest, Evaluates) {
  EXPECT_EQ(*P("32*seq*seq + 64").Evaluate({{"seq", 3}}), 32 * 9 + 64);
  EXPECT_EQ(*P("2*batch*seq - 1").Evaluate({{"batch", 4}, {"seq", 5}}), 39);
  EXPECT_EQ(*P("17").Evaluate({}), 17);
  absl::StatusOr<int64_t> missing = P("2*batch*seq").Evaluate({{"seq", 5}});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(),
              HasSubstr("\"2*batch*seq\" uses dim \"batch\""));
  absl::StatusOr<int64_t> overflow =
      P("seq*seq*seq").Evaluate({{"seq", int64_t{1} << 22}});
  ASSERT_FALSE(overflow.ok());
  EXPECT_THAT(overflow.status().message(),
              HasSubstr("\"seq*seq*seq\" at seq=4194304 overflows"));
  absl::StatusOr<int64_t> sum_overflow =
      P("4611686018427387904 + 4611686018427387904*seq").Evaluate({{"seq", 1}});
  EXPECT_FALSE(sum_overflow.ok());
}

TEST(DimExprTest, Arithmetic) {
  EXPECT_EQ(*Add(P("seq + 1"), P("2*seq")), P("3*seq + 1"));
  EXPECT_EQ(*Subtract(P("seq + 1"), P("seq")), P("1"));
  EXPECT_EQ(*Multiply(P("seq + 1"), P("seq - 1")), P("seq*seq - 1"));
  EXPECT_EQ(*Multiply(P("a + b"), P("a + b")), P("a*a + 2*a*b + b*b"));
  EXPECT_EQ(*Multiply(P("seq"), P("0")), DimExpr());
  const DimExpr big(std::numeric_limits<int64_t>::max());
  EXPECT_FALSE(Add(big, P("1")).ok());
  EXPECT_FALSE(
      Subtract(DimExpr(std::numeric_limits<int64_t>::min()), P("1")).ok());
  EXPECT_FALSE(Multiply(big, P("2*seq")).ok());
  EXPECT_THAT(Add(big, P("1")).status().message(), HasSubstr("overflows"));
}

TEST(DimExprTest, SubstitutesAndBinds) {
  EXPECT_EQ(*P("32*seq*seq + 64").Substitute({{"seq", P("2*n + 1")}}),
            P("128*n*n + 128*n + 96"));
  EXPECT_EQ(*P("2*batch*seq").Bind({{"batch", 8}}), P("16*seq"));
  EXPECT_EQ(*P("2*batch*seq").Bind({{"batch", 8}, {"seq", 3}}), P("48"));
  EXPECT_EQ(*P("seq").Bind({{"other", 3}}), P("seq"));
  EXPECT_FALSE(P("seq*seq*seq").Bind({{"seq", int64_t{1} << 22}}).ok());
}

TEST(DimExprTest, RangesAndValues) {
  EXPECT_TRUE(ValidateDimRanges({{"seq", {1, 2048}}, {"b", {0, 0}}}).ok());
  EXPECT_THAT(ValidateDimRanges({{"seq", {5, 4}}}).message(),
              HasSubstr("dim \"seq\" has range [5, 4]"));
  EXPECT_THAT(ValidateDimRanges({{"seq", {-1, 4}}}).message(),
              HasSubstr("dim \"seq\" has range [-1, 4]"));
  EXPECT_THAT(ValidateDimRanges({{"2x", {1, 4}}}).message(),
              HasSubstr("dim \"2x\""));
  const DimRanges dims = {{"seq", {1, 2048}}};
  EXPECT_TRUE(CheckDimValues(dims, {{"seq", 2048}}).ok());
  EXPECT_THAT(CheckDimValues(dims, {{"seq", 2049}}).message(),
              HasSubstr("dim \"seq\" is bound to 2049, outside its range [1, "
                        "2048]"));
  EXPECT_THAT(CheckDimValues(dims, {{"batch", 2}}).message(),
              HasSubstr("dim \"batch\" is bound to 2 but the graph declares no "
                        "such dim (its dims: seq)"));
}

}  // namespace
}  // namespace memplan
