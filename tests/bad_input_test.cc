// Bad input of every kind gets a clear InvalidArgument naming the item at
// fault: numbers that do not fit, steps and sizes out of range, columns and
// keys the formats do not define, files that are not what they claim, fixed
// placements that cannot be honoured, and plans that do not fit int64. Each
// case here was once a crash, a hang, an internal error or a silently wrong
// answer.

#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <limits>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/io.h"
#include "memplan/memplan.h"
#include "memplan/planner.h"
#include "memplan/problem.h"
#include "memplan/registry.h"
#include "memplan/verify.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

std::string ErrorOf(const absl::Status& status) {
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  return std::string(status.message());
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/memplan_bad_input_test_" + name;
}

void WriteRaw(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

const std::string kHead =
    R"({"format":"memplan-graph-v1","ops":[],"tensors":[)";

// ---------------------------------------------------------------------------
// Graph JSON.

TEST(BadGraphJsonTest, NumbersThatFitNoDoubleAreAnErrorNotAnAbort) {
  EXPECT_THAT(
      ErrorOf(
          ParseGraphJson(kHead + R"({"name":"t","size":1e400}]})").status()),
      HasSubstr("1e400"));
  EXPECT_THAT(
      ErrorOf(ParseGraphJson(
                  R"({"format":"memplan-graph-v1","tensors":[],"ops":[],)"
                  R"("pools":[{"name":"p","capacity":-1e400}]})")
                  .status()),
      HasSubstr("malformed JSON"));
  Problem problem{
      .buffers = {Buffer{.name = "a", .size = 4, .lifetime = {0, 1}}},
      .pools = {Pool{.name = "default"}}};
  EXPECT_THAT(
      ErrorOf(ParsePlanJson(R"({"format":"memplan-plan-v1","peak":1e400,)"
                            R"("buffers":[{"name":"a","offset":0}]})",
                            problem)
                  .status()),
      HasSubstr("1e400"));
}

TEST(BadGraphJsonTest, DuplicateKeysAreNamed) {
  EXPECT_THAT(
      ErrorOf(ParseGraphJson(R"({"format":"memplan-graph-v1","tensors":[],)"
                             R"("ops":[],"ops":[]})")
                  .status()),
      HasSubstr("key \"ops\" appears twice"));
  EXPECT_THAT(
      ErrorOf(ParseGraphJson(kHead + R"({"name":"t","size":1,"size":2}]})")
                  .status()),
      HasSubstr("key \"size\" appears twice in an object under "
                "\"tensors\""));
}

TEST(BadGraphJsonTest, UnknownKeysAreNamedWithWhereTheyAre) {
  const std::string graph =
      R"({"format":"memplan-graph-v1","tensors":[{"name":"x","size":4,"kind":"input"},)"
      R"({"name":"y","size":4,"kind":"output"}],"ops":[{"name":"op","inputs":["x"],)"
      R"("outputs":["y"]}]})";
  ASSERT_TRUE(ParseGraphJson(graph).ok());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = graph;
    text.replace(text.find(from), from.size(), to);
    return ParseGraphJson(text).status();
  };
  EXPECT_THAT(
      ErrorOf(with(R"("outputs":["y"]})", R"("outputs":["y"],"scrach":[]})")),
      HasSubstr("op \"op\" has unknown key \"scrach\""));
  EXPECT_THAT(
      ErrorOf(with(R"("kind":"input"})", R"("kind":"input","align":8})")),
      HasSubstr("tensor \"x\" has unknown key \"align\""));
  EXPECT_THAT(ErrorOf(with(R"("ops":[)", R"("pool":[],"ops":[)")),
              HasSubstr("the graph has unknown key \"pool\""));
  EXPECT_THAT(ErrorOf(with(R"("ops":[)",
                           R"("pools":[{"name":"p","capacty":8}],"ops":[)")),
              HasSubstr("pool \"p\" has unknown key \"capacty\""));
  EXPECT_THAT(
      ErrorOf(with(R"("kind":"input"})",
                   R"("kind":"input","fixed":{"offset":0,"pol":"p"}})")),
      HasSubstr("tensor \"x\": \"fixed\" has unknown key \"pol\""));
}

// ---------------------------------------------------------------------------
// Buffer CSV.

TEST(BadCsvTest, NumbersAreDigitsWithAnOptionalMinus) {
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv("id,lower,upper,size\na,0,1,+4\n").status()),
      HasSubstr("CSV line 2, column 4 (\"size\"): \"+4\""));
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv("id,lower,upper,size\na,0,1 0,4\n").status()),
      HasSubstr("column 3 (\"upper\")"));
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv("id,lower,upper,size\na,0,1,1e400\n").status()),
      HasSubstr("column 4 (\"size\")"));
  EXPECT_THAT(ErrorOf(ParseBufferCsv("id,lower,upper,size\na,0,1,"
                                     "9223372036854775808\n")
                          .status()),
              HasSubstr("overflows int64"));
  EXPECT_THAT(ErrorOf(ParseBufferCsv("id,lower,upper,size,offset\na,0,1,4,"
                                     "99999999999999999999\n")
                          .status()),
              HasSubstr("column 5 (\"offset\")"));
}

TEST(BadCsvTest, NegativeAndOverflowingSteps) {
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv("id,lower,upper,size\na,-3,1,4\n").status()),
      HasSubstr("CSV line 2: buffer \"a\" has a negative lower -3"));
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv("id,lower,upper,size\na,0,9223372036854775807,4\n")
                  .status()),
      HasSubstr("outside the supported steps"));
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv("id,start,end,size\na,0,9223372036854775807,4\n")
                  .status()),
      HasSubstr("beyond the largest supported step"));
}

TEST(BadCsvTest, ColumnsTheFormatDoesNotDefineAreNamed) {
  EXPECT_THAT(
      ErrorOf(
          ParseBufferCsv("id,lower,upper,size,colour\na,0,1,4,red\n").status()),
      HasSubstr("unknown column \"colour\""));
  EXPECT_THAT(ErrorOf(ParseBufferCsv("id,lower,upper,size,size\n").status()),
              HasSubstr("column \"size\" repeats column \"size\""));
  EXPECT_THAT(ErrorOf(ParseBufferCsv("id,buffer,lower,upper,size\n").status()),
              HasSubstr("column \"buffer\" repeats column \"id\""));
  EXPECT_THAT(ErrorOf(ParseBufferCsv("id,lower,end,size\n").status()),
              HasSubstr("not a mix"));
  EXPECT_THAT(ErrorOf(ParseBufferCsv("id,lower,upper,size,pool\n").status()),
              HasSubstr("a pool column belongs to a plan"));
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv("id,lower,upper,size\n\"a,0,1,4\n").status()),
      HasSubstr("not closed"));
}

TEST(BadCsvTest, AcceptedVariantsReadAsDocumented) {
  // Columns in any order, spaces around fields, CRLF, a closed start,end.
  absl::StatusOr<BufferCsv> reordered =
      ParseBufferCsv("size , upper,id,lower\r\n 4 ,2, a ,0\r\n\r\n8,3,b,1\r\n");
  ASSERT_TRUE(reordered.ok()) << reordered.status();
  ASSERT_EQ(reordered->problem.buffers.size(), 2u);
  EXPECT_EQ(reordered->problem.buffers[0].name, "a");
  EXPECT_EQ(reordered->problem.buffers[0].size, 4);
  EXPECT_EQ(reordered->problem.buffers[0].lifetime, (Lifetime{0, 2}));
  absl::StatusOr<BufferCsv> closed =
      ParseBufferCsv("buffer,start,end,size\na,0,2,4\nb,3,3,8\n");
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(closed->problem.buffers[0].lifetime, (Lifetime{0, 3}));
  EXPECT_EQ(closed->problem.buffers[1].lifetime, (Lifetime{3, 4}));
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv("buffer,start,end,size\na,3,2,4\n").status()),
      HasSubstr("has start 3 > end 2"));
}

TEST(BadCsvTest, NamesWithCommasQuotesAndNewlinesReadBack) {
  Problem problem{.buffers = {Buffer{.name = "a,b",
                                     .tensors = {"a,b"},
                                     .size = 4,
                                     .lifetime = {0, 2}},
                              Buffer{.name = "line\nbreak",
                                     .tensors = {"line\nbreak"},
                                     .size = 8,
                                     .lifetime = {1, 3}},
                              Buffer{.name = "say \"hi\"",
                                     .tensors = {"say \"hi\""},
                                     .size = 8,
                                     .lifetime = {0, 1}},
                              Buffer{.name = " padded ",
                                     .tensors = {" padded "},
                                     .size = 8,
                                     .lifetime = {0, 1}}},
                  .pools = {Pool{.name = "default"}}};
  absl::StatusOr<BufferCsv> back = ParseBufferCsv(BufferCsvText(problem));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->problem, problem);
}

TEST(BadCsvTest, IdsThatAreNotUtf8AreRejectedAndNeverThrowInJson) {
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv("id,lower,upper,size\n\xff\xfe,0,1,4\n").status()),
      HasSubstr("CSV line 2: the id is not valid UTF-8"));
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv("id,lower,upper,size\n\xc0\x80,0,1,4\n").status()),
      HasSubstr("not valid UTF-8"));  // an overlong encoding of NUL
  ASSERT_TRUE(
      ParseBufferCsv("id,lower,upper,size\n\xc3\xa9t\xc3\xa9,0,1,4\n").ok());
  // A problem made in code with such a name still writes (with replacement
  // characters) instead of throwing.
  Problem problem{
      .buffers = {Buffer{
          .name = "\xff", .tensors = {"\xff"}, .size = 4, .lifetime = {0, 1}}},
      .pools = {Pool{.name = "default"}}};
  absl::StatusOr<Plan> plan = PlanMemory(problem, {.planner = "naive"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::string json = PlanToJson(problem, *plan);
  EXPECT_THAT(json, HasSubstr("\xef\xbf\xbd"));
}

TEST(BadCsvTest, AMultiPoolPlanWrittenAsCsvReadsBack) {
  testing::RandomProblemOptions options{
      .buffers = 40, .pools = 3, .capacity = 2000};
  const Problem problem = testing::RandomProblem(7, options);
  absl::StatusOr<Plan> plan =
      PlanMemory(problem, {.planner = "greedy_by_size"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::set<PoolId> used;
  for (const Assignment& a : plan->assignments) used.insert(a.pool);
  ASSERT_GT(used.size(), 1u) << "the plan should use several pools";
  const std::string text = BufferCsvText(problem, &*plan);
  EXPECT_THAT(text, HasSubstr("id,lower,upper,size,offset,pool\n"));
  absl::StatusOr<Plan> back = ParsePlanCsv(text, problem);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->assignments, plan->assignments);
  EXPECT_TRUE(VerifyPlan(problem, *back).ok());
  // Pools the problem does not have, and rows it does not have, are named.
  std::string other = text;
  const size_t p0 = other.find(",p0\n");
  ASSERT_NE(p0, std::string::npos);
  other.replace(p0, 4, ",hbm\n");
  EXPECT_THAT(ErrorOf(ParsePlanCsv(other, problem).status()),
              HasSubstr("in unknown pool \"hbm\""));
  EXPECT_THAT(
      ErrorOf(ParsePlanCsv("id,lower,upper,size,offset\nzz,0,1,4,0\n", problem)
                  .status()),
      HasSubstr("\"zz\""));
}

TEST(BadCsvTest, AnInputWithAnOffsetColumnIsNoInput) {
  const std::string path = TempPath("offset.csv");
  WriteRaw(path, "id,lower,upper,size,offset\na,0,1,4,0\n");
  EXPECT_THAT(ErrorOf(LoadInput(path, {}).status()),
              HasSubstr("an input's CSV has no offset or pool column"));
  std::remove(path.c_str());
}

// ---------------------------------------------------------------------------
// Files that claim to be gzip.

TEST(BadFileTest, GzipCutAtAFlushPointIsAnError) {
  const std::string path = TempPath("cut.csv.gz");
  std::string first = "id,lower,upper,size\n";
  for (int i = 0; i < 100; ++i) absl::StrAppend(&first, "a", i, ",0,1,4\n");
  std::string second;
  for (int i = 0; i < 100; ++i) absl::StrAppend(&second, "b", i, ",0,1,4\n");
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  gzwrite(file, first.data(), static_cast<unsigned>(first.size()));
  ASSERT_EQ(gzflush(file, Z_FULL_FLUSH), Z_OK);
  const auto cut = std::filesystem::file_size(path);
  gzwrite(file, second.data(), static_cast<unsigned>(second.size()));
  gzclose(file);
  absl::StatusOr<std::string> whole = ReadFile(path);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(*whole, first + second);
  std::filesystem::resize_file(path, cut);
  EXPECT_THAT(ErrorOf(ReadFile(path).status()), HasSubstr("cut short"));
  EXPECT_THAT(ErrorOf(LoadInput(path, {}).status()), HasSubstr("cut short"));
  std::remove(path.c_str());
}

TEST(BadFileTest, AGzNameOnDataThatIsNotGzipIsAnError) {
  const std::string path = TempPath("plain.json.gz");
  WriteRaw(path, R"({"format":"memplan-graph-v1","tensors":[],"ops":[]})");
  EXPECT_THAT(ErrorOf(ReadFile(path).status()), HasSubstr("is not gzip data"));
  std::remove(path.c_str());
}

// ---------------------------------------------------------------------------
// Hostile files: what is not a file, what is larger than the limit, what
// nests or names without end.

TEST(HostileInputTest, ADirectoryOrADeviceIsNotReadAsAFile) {
  const std::string dir = TempPath("dir.json");
  std::filesystem::create_directory(dir);
  EXPECT_THAT(ErrorOf(ReadFile(dir).status()), HasSubstr("is a directory"));
  EXPECT_THAT(ErrorOf(LoadInput(dir, {}).status()),
              HasSubstr("is a directory"));
  std::filesystem::remove(dir);
  const std::string zero = TempPath("zero.json.gz");
  std::filesystem::remove(zero);
  std::filesystem::create_symlink("/dev/zero", zero);
  EXPECT_THAT(ErrorOf(ReadFile(zero).status()), HasSubstr("not a file"));
  EXPECT_THAT(ErrorOf(ReadFile("/dev/zero").status()), HasSubstr("not a file"));
  std::filesystem::remove(zero);
}

TEST(HostileInputTest, AFileLargerThanTheLimitIsResourceExhausted) {
  const std::string plain = TempPath("big.json");
  WriteRaw(plain, std::string(4096, ' ') + "{}");
  absl::StatusOr<std::string> read = ReadFile(plain, {.max_bytes = 4096});
  EXPECT_EQ(read.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(read.status().message(), HasSubstr(plain));
  EXPECT_TRUE(ReadFile(plain, {.max_bytes = 4098}).ok());
  LoadOptions options;
  options.read.max_bytes = 100;
  EXPECT_EQ(Load(plain, options).status().code(),
            absl::StatusCode::kResourceExhausted);
  std::remove(plain.c_str());

  // 1 KiB of gzip that decompresses to 1 MiB.
  const std::string bomb = TempPath("bomb.json.gz");
  gzFile file = gzopen(bomb.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  const std::string zeros(1 << 20, '\0');
  gzwrite(file, zeros.data(), static_cast<unsigned>(zeros.size()));
  gzclose(file);
  read = ReadFile(bomb, {.max_bytes = 1 << 16});
  EXPECT_EQ(read.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(read.status().message(), HasSubstr("decompresses to more than"));
  EXPECT_TRUE(ReadFile(bomb, {.max_bytes = 1 << 20}).ok());
  std::remove(bomb.c_str());
}

TEST(HostileInputTest, DeepNestingIsAnErrorNotAStackOverflow) {
  const int depth = 1000000;
  EXPECT_THAT(
      ErrorOf(ParseGraphJson(std::string(depth, '[') + std::string(depth, ']'))
                  .status()),
      HasSubstr("nested deeper than"));
  std::string objects;
  for (int i = 0; i < depth; ++i) objects += R"({"a":)";
  objects += "1" + std::string(depth, '}');
  EXPECT_THAT(ErrorOf(ParseGraphJson(objects).status()),
              HasSubstr("nested deeper than"));
}

TEST(HostileInputTest, ANameLongerThanTheLimitIsAnError) {
  const std::string name(kMaxNameBytes + 1, 'n');
  EXPECT_THAT(
      ErrorOf(ParseGraphJson(kHead + R"({"name":")" + name + R"(","size":1}]})")
                  .status()),
      HasSubstr("longer than the limit"));
  EXPECT_TRUE(ParseGraphJson(kHead + R"({"name":")" + name.substr(1) +
                             R"(","size":1}]})")
                  .ok());
  const std::string csv = "id,lower,upper,size\n" + name + ",0,1,1\n";
  const std::string message = ErrorOf(ParseBufferCsv(csv).status());
  EXPECT_THAT(message, HasSubstr("longer than the limit"));
  EXPECT_LT(message.size(), 1000u);
}

TEST(HostileInputTest, NotJsonIsOneMessageWithThePositionOnce) {
  const std::string message = ErrorOf(ParseGraphJson("hello\n").status());
  EXPECT_THAT(message, HasSubstr("malformed JSON at line 1, column 1: "));
  EXPECT_EQ(message.find("line 1"), message.rfind("line 1")) << message;
  EXPECT_THAT(message, ::testing::Not(HasSubstr("json.exception")));
  // Whitespace around the document is skipped, and still counted.
  EXPECT_THAT(ErrorOf(ParseGraphJson(std::string(1000, '\n') + "  x").status()),
              HasSubstr("malformed JSON at line 1001, column 3: "));
  EXPECT_THAT(ErrorOf(ParseGraphJson("\n {\"format\": } \n").status()),
              HasSubstr("malformed JSON at line 2, column 13: "));
  EXPECT_THAT(ErrorOf(ParseGraphJson(" \n ").status()),
              HasSubstr("malformed JSON at line 2, column 2: "));
  const std::string graph =
      std::string(1 << 20, ' ') +
      R"({"format":"memplan-graph-v1","tensors":[],"ops":[]})" +
      std::string(1 << 20, '\n');
  EXPECT_TRUE(ParseGraphJson(graph).ok());
}

TEST(HostileInputTest, AlignmentZeroInAGraphIsAnErrorNamingTheTensor) {
  EXPECT_THAT(
      ErrorOf(ParseGraphJson(kHead + R"({"name":"t","size":8,"alignment":0}]})")
                  .status()),
      HasSubstr("tensor \"t\" has alignment 0"));
  EXPECT_TRUE(
      ParseGraphJson(kHead + R"({"name":"t","size":8,"alignment":null}]})")
          .ok());
}

// ---------------------------------------------------------------------------
// Problems: limits, steps and fixed placements.

Problem TwoBuffers() {
  return Problem{
      .buffers = {Buffer{.name = "a", .size = 64, .lifetime = {0, 2}},
                  Buffer{.name = "b", .size = 64, .lifetime = {1, 3}}},
      .pools = {Pool{.name = "default"}}};
}

TEST(BadProblemTest, AbsurdAlignmentsAndCapacitiesAreRejectedUpFront) {
  Problem problem = TwoBuffers();
  problem.pools[0].alignment = int64_t{1} << 62;
  EXPECT_THAT(ErrorOf(ValidateProblem(problem)),
              HasSubstr("pool \"default\" has alignment 4611686018427387904, "
                        "more than the largest supported"));
  for (const PlannerInfo& info : RegisteredPlanners()) {
    EXPECT_THAT(
        ErrorOf(
            PlanMemory(problem, {.planner = std::string(info.name)}).status()),
        HasSubstr("pool \"default\" has alignment"))
        << info.name;
  }
  problem = TwoBuffers();
  problem.pools[0].capacity = kInt64Max;
  EXPECT_THAT(ErrorOf(ValidateProblem(problem)), HasSubstr("has capacity"));
  problem = TwoBuffers();
  problem.buffers[0].size = kMaxBytes;
  EXPECT_THAT(ErrorOf(ValidateProblem(problem)),
              HasSubstr("exceed the largest supported arena"));
  // A size at the int64 limit, found by the fuzzer (the size plus its
  // alignment overflowed before the check).
  problem.buffers[0].size = kInt64Max;
  EXPECT_THAT(ErrorOf(ValidateProblem(problem)),
              HasSubstr("bytes) at buffer \"a\""));
  EXPECT_THAT(ErrorOf(BuildProblem(testing::RandomGraph(1),
                                   {.alignment = int64_t{1} << 40})
                          .status()),
              HasSubstr("alignment 1099511627776 is more than the largest"));
  // From the tool's pool flag and a graph's pools alike.
  Graph graph = testing::RandomGraph(2);
  graph.pools = {
      Pool{.name = "p", .capacity = 0, .alignment = int64_t{1} << 62}};
  EXPECT_THAT(ErrorOf(BuildProblem(graph).status()),
              HasSubstr("pool \"p\" has alignment"));
}

TEST(BadProblemTest, LifetimesAtTheInt64LimitsAndNegativeSteps) {
  Problem problem = TwoBuffers();
  problem.buffers[0].lifetime = {std::numeric_limits<Step>::min(), kInt64Max};
  EXPECT_THAT(ErrorOf(ValidateProblem(problem)),
              HasSubstr("buffer \"a\" has lifetime"));
  for (const PlannerInfo& info : RegisteredPlanners()) {
    EXPECT_FALSE(PlanMemory(problem, {.planner = std::string(info.name)}).ok());
  }
  problem.buffers[0].lifetime = {-1, 2};
  EXPECT_THAT(ErrorOf(ValidateProblem(problem)), HasSubstr("[-1, 2)"));
  problem.buffers[0].lifetime = {0, kMaxStep};
  EXPECT_TRUE(ValidateProblem(problem).ok());
  absl::StatusOr<Plan> plan =
      PlanMemory(problem, {.planner = "greedy_by_size"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->peak, 128);
}

TEST(BadProblemTest, APlanOffsetOfInt64MaxIsRejectedWithoutOverflow) {
  const Problem problem = TwoBuffers();
  Plan plan;
  plan.assignments = {{.buffer = 0, .pool = 0, .offset = kInt64Max},
                      {.buffer = 1, .pool = 0, .offset = 0}};
  ComputePlanStatistics(problem, plan);
  EXPECT_THAT(
      ErrorOf(VerifyPlan(problem, plan)),
      HasSubstr("buffer \"a\" at offset 9223372036854775807 overflows"));
  absl::StatusOr<Plan> parsed = ParsePlanJson(
      R"({"format":"memplan-plan-v1","buffers":[{"name":"a","offset":9223372036854775807},)"
      R"({"name":"b","offset":0}]})",
      problem);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(ErrorOf(VerifyPlan(problem, *parsed)), HasSubstr("overflows"));
}

// Fixed placements that cannot be honoured are one input error up front,
// naming the fixed buffer and the pool, from every planner.
void ExpectFixedError(const Problem& problem, const std::string& culprit) {
  EXPECT_THAT(ErrorOf(ValidateProblem(problem)), HasSubstr(culprit));
  for (const PlannerInfo& info : RegisteredPlanners()) {
    absl::StatusOr<Plan> plan =
        PlanMemory(problem, {.planner = std::string(info.name)});
    EXPECT_THAT(ErrorOf(plan.status()), HasSubstr(culprit)) << info.name;
  }
}

TEST(BadProblemTest, FixedPlacementsThatCannotBeHonoured) {
  Problem problem = TwoBuffers();
  problem.buffers[0].fixed = Placement{.pool = 0, .offset = 0};
  problem.buffers[1].fixed = Placement{.pool = 0, .offset = 32};
  ExpectFixedError(problem,
                   "the fixed placements cannot be honoured: buffers \"a\" "
                   "(alive [0, 2), bytes [0, 64)) and \"b\" (alive [1, 3), "
                   "bytes [32, 96)) are alive at the same time and share bytes "
                   "in pool \"default\"");

  problem = TwoBuffers();
  problem.pools[0].capacity = 100;
  problem.buffers[1].fixed = Placement{.pool = 0, .offset = 64};
  ExpectFixedError(problem,
                   "buffer \"b\" is fixed at bytes [64, 128) of pool "
                   "\"default\", beyond its capacity 100");

  problem = TwoBuffers();
  problem.pools[0].alignment = 64;
  problem.buffers[1].fixed = Placement{.pool = 0, .offset = 32};
  ExpectFixedError(problem,
                   "buffer \"b\" has fixed offset 32, not a "
                   "non-negative multiple of 64");

  problem = TwoBuffers();
  problem.pools.push_back(Pool{.name = "slow"});
  problem.buffers[1].pools = {0};
  problem.buffers[1].fixed = Placement{.pool = 1, .offset = 0};
  ExpectFixedError(problem,
                   "buffer \"b\" is fixed in pool \"slow\", which it "
                   "is not allowed in");

  problem = TwoBuffers();  // touching lifetimes may share bytes
  problem.buffers[1].lifetime = {2, 3};
  problem.buffers[0].fixed = Placement{.pool = 0, .offset = 0};
  problem.buffers[1].fixed = Placement{.pool = 0, .offset = 0};
  EXPECT_TRUE(ValidateProblem(problem).ok());
  problem.conflicts = {{.a = 0, .b = 1}};  // unless they conflict explicitly
  ExpectFixedError(problem, "conflict explicitly");
}

TEST(BadProblemTest, FixedPlacementsFromAGraphNameTheTensorAndThePool) {
  Graph graph{
      .tensors = {{.name = "x",
                   .size = 64,
                   .kind = TensorKind::kInput,
                   .fixed = FixedTensorPlacement{.pool = "", .offset = 0}},
                  {.name = "y",
                   .size = 64,
                   .kind = TensorKind::kOutput,
                   .fixed = FixedTensorPlacement{.pool = "", .offset = 0}}},
      .ops = {{.name = "op", .inputs = {"x"}, .outputs = {"y"}}}};
  EXPECT_THAT(ErrorOf(PlanMemory(graph, {}).status()),
              HasSubstr("\"x\" (alive [0, 1), bytes [0, 64)) and \"y\""));
  graph.tensors[1].fixed->offset = 64;
  graph.pools = {Pool{.name = "sram", .capacity = 100}};
  EXPECT_THAT(ErrorOf(PlanMemory(graph, {}).status()),
              HasSubstr("buffer \"y\" is fixed at bytes [64, 128) of pool "
                        "\"sram\", beyond its capacity 100"));
}

// ---------------------------------------------------------------------------
// Through the tool.

TEST(BadInputToolTest, AMultiPoolPlanWrittenAsCsvIsVerifiedByTheTool) {
  const std::string input = testing::DataPath("minimalloc/input.12.csv");
  const std::string plan = TempPath("two_pools_plan.csv");
  const std::string pools = "--pool=fast:8:1 --pool=slow:0:1";
  testing::ToolRun run = testing::RunTool(absl::StrCat(
      "plan ", input, " --planner=greedy_by_size --out=", plan, " ", pools));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  absl::StatusOr<std::string> text = ReadFile(plan);
  ASSERT_TRUE(text.ok());
  EXPECT_THAT(*text, HasSubstr("id,lower,upper,size,offset,pool\n"));
  EXPECT_THAT(*text, HasSubstr(",slow\n"));
  run = testing::RunTool(absl::StrCat("verify ", input, " ", plan, " ", pools));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("valid plan"));
  std::remove(plan.c_str());
}

TEST(BadInputToolTest, AViewLargerThanItsBaseIsAnInputError) {
  const std::string graph = TempPath("big_view.json");
  WriteRaw(graph,
           R"({"format":"memplan-graph-v1","tensors":[)"
           R"({"name":"in","size":8,"kind":"input"},{"name":"x","size":100},)"
           R"({"name":"y","size":200},{"name":"t","size":100},)"
           R"({"name":"out","size":8,"kind":"output"}],"ops":[)"
           R"({"name":"op0","inputs":["in"],"outputs":["x"]},)"
           R"({"name":"view","inputs":["x"],"outputs":["y"],"alias":[[0,0]]},)"
           R"({"name":"op2","inputs":["y"],"outputs":["t"]},)"
           R"({"name":"op3","inputs":["t","y"],"outputs":["out"]}]})");
  const testing::ToolRun run =
      testing::RunTool(absl::StrCat("plan ", graph, " --planner=exact"));
  EXPECT_GT(run.exit_code, 0) << run.output;  // an error, not a crash
  EXPECT_THAT(run.output, HasSubstr("view \"y\" of \"x\""));
  std::remove(graph.c_str());
}

}  // namespace
}  // namespace memplan
