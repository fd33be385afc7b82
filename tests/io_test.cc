// File formats: round trips, gzip, and errors that say where.

#include "memplan/io.h"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "memplan/load.h"
#include "memplan/memplan.h"
#include "memplan/registry.h"
#include "memplan/reorder.h"
#include "memplan/verify.h"
#include "test_util.h"

namespace memplan {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/memplan_io_test_" + name;
}

std::string ErrorOf(const absl::Status& status) {
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  return std::string(status.message());
}

TEST(GraphJsonTest, RoundTripsEveryField) {
  Graph graph{
      .name = "g",
      .tensors = {{.name = "x",
                   .size = 12,
                   .kind = TensorKind::kInput,
                   .shape = {1, 3},
                   .dtype = "float32"},
                  {.name = "w", .size = 4, .kind = TensorKind::kConstant},
                  {.name = "ws", .size = 64, .kind = TensorKind::kScratch},
                  {.name = "y",
                   .size = 12,
                   .kind = TensorKind::kOutput,
                   .alignment = 16,
                   .pools = {"sram", "dram"},
                   .fixed =
                       FixedTensorPlacement{.pool = "dram", .offset = 64}}},
      .ops = {{.name = "op",
               .type = "Add",
               .inputs = {"x", "w"},
               .outputs = {"y"},
               .scratch = {"ws"},
               .inplace = {{.output = 0, .input = 0}},
               .alias = {},
               .writes = {1, 0},
               .pinned = true}},
      .pools = {{.name = "sram", .capacity = 1024, .alignment = 8},
                {.name = "dram", .capacity = 0, .alignment = 64}},
      .conflicts = {{.a = "x", .b = "y"}},
  };
  absl::StatusOr<Graph> back = ParseGraphJson(GraphToJson(graph));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, graph);
}

TEST(GraphJsonTest, ReadsEveryBundledGraphAndGzip) {
  for (const std::string& path : testing::ModelGraphs()) {
    absl::StatusOr<std::string> text = ReadFile(testing::DataPath(path));
    ASSERT_TRUE(text.ok()) << text.status();
    absl::StatusOr<Graph> graph = ParseGraphJson(*text);
    ASSERT_TRUE(graph.ok()) << path << ": " << graph.status();
    EXPECT_FALSE(graph->ops.empty());
  }
  // Gzipped, written and read back through zlib.
  absl::StatusOr<std::string> text =
      ReadFile(testing::DataPath("models/resnet18.json"));
  ASSERT_TRUE(text.ok());
  const std::string gz = TempPath("resnet18.json.gz");
  ASSERT_TRUE(WriteFile(gz, *text).ok());
  absl::StatusOr<std::string> inflated = ReadFile(gz);
  ASSERT_TRUE(inflated.ok()) << inflated.status();
  EXPECT_EQ(*inflated, *text);
  absl::StatusOr<LoadedInput> from_gz = LoadInput(gz, {});
  absl::StatusOr<LoadedInput> from_json =
      LoadInput(testing::DataPath("models/resnet18.json"), {});
  ASSERT_TRUE(from_gz.ok()) << from_gz.status();
  ASSERT_TRUE(from_json.ok());
  EXPECT_EQ(from_gz->problem, from_json->problem);
  std::remove(gz.c_str());
}

TEST(GraphJsonTest, ThePlainReaderGivesTheGeneralOnesGraph) {
  // Plain graphs are read without a JSON value per element; an escape in
  // "format" (the same string) sends the text to the general reader.
  std::vector<std::string> paths = testing::ModelGraphs();
  for (const char* path :
       {"training/mobilenet_v2_train.json",
        "training/transformer_lm_train.json", "order/mobilenet_v2_step.json",
        "training_steps/swin_t_train_b8.json.gz",
        "training_steps/tx_gpt_small_train.json.gz"}) {
    paths.push_back(path);
  }
  const std::string format = "\"memplan-graph-v1\"";
  for (const std::string& path : paths) {
    absl::StatusOr<std::string> text = ReadFile(testing::DataPath(path));
    ASSERT_TRUE(text.ok()) << text.status();
    const size_t at = text->find(format);
    ASSERT_NE(at, std::string::npos) << path;
    std::string escaped = *text;
    escaped.replace(at, format.size(), "\"memplan-graph-v\\u0031\"");
    absl::StatusOr<Graph> plain = ParseGraphJson(*text);
    absl::StatusOr<Graph> general = ParseGraphJson(escaped);
    ASSERT_TRUE(plain.ok()) << path << ": " << plain.status();
    ASSERT_TRUE(general.ok()) << path << ": " << general.status();
    EXPECT_EQ(*plain, *general) << path;
    EXPECT_FALSE(plain->ops.empty()) << path;
  }
  // What only the general reader takes, or refuses: the same as before.
  const std::string head = R"({"format": "memplan-graph-v1", "ops": [], )";
  absl::StatusOr<Graph> other = ParseGraphJson(
      head +
      R"("tensors": [{"name": "caf\u00e9", "size": 15, "kind": null}]})");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->tensors[0].name, "caf\xc3\xa9");
  EXPECT_EQ(other->tensors[0].kind, TensorKind::kActivation);
  EXPECT_THAT(
      ErrorOf(
          ParseGraphJson(head + R"("tensors": [{"name": "a", "size": 1.5e1}]})")
              .status()),
      HasSubstr("must be an integer"));
  EXPECT_THAT(
      ErrorOf(ParseGraphJson(
                  head + R"("tensors": [{"name": "a", "size": 1, "size": 2}]})")
                  .status()),
      HasSubstr("key \"size\" appears twice"));
  EXPECT_THAT(
      ErrorOf(ParseGraphJson(head + R"("tensors": [{"name": "a", "size": 1}])")
                  .status()),
      HasSubstr("malformed JSON"));
  EXPECT_THAT(
      ErrorOf(ParseGraphJson(
                  head +
                  R"("tensors": [{"name": "a", "size": 1, "alignment": 0}]})")
                  .status()),
      HasSubstr("alignment 0"));
  EXPECT_THAT(
      ErrorOf(ParseGraphJson(
                  head +
                  R"("tensors": [{"name": "a", "size": 9223372036854775808}]})")
                  .status()),
      HasSubstr("overflows int64"));
}

TEST(GraphJsonTest, MalformedJsonSaysWhere) {
  const std::string message = ErrorOf(
      ParseGraphJson("{\n\"format\": \"memplan-graph-v1\",\n  \"ops\": [}")
          .status());
  EXPECT_THAT(message, HasSubstr("malformed JSON at line 3, column 11"));
}

TEST(GraphJsonTest, SchemaErrorsNameTheItem) {
  const std::string head =
      R"({"format":"memplan-graph-v1","ops":[],"tensors":[)";
  EXPECT_THAT(
      ErrorOf(ParseGraphJson(head + R"({"name":"t","size":-1e3}]})").status()),
      HasSubstr("tensor \"t\""));
  EXPECT_THAT(ErrorOf(ParseGraphJson(
                          head + R"({"name":"t","size":9223372036854775808}]})")
                          .status()),
              HasSubstr("overflows int64"));
  EXPECT_THAT(
      ErrorOf(ParseGraphJson(head + R"({"name":"t","size":null}]})").status()),
      HasSubstr("tensor \"t\" has no size"));
  EXPECT_THAT(
      ErrorOf(ParseGraphJson(head + R"({"name":"t","size":1,"kind":"weird"}]})")
                  .status()),
      HasSubstr("unknown kind \"weird\""));
  EXPECT_THAT(
      ErrorOf(ParseGraphJson(R"({"format":"other","ops":[],"tensors":[]})")
                  .status()),
      HasSubstr("unsupported graph format \"other\""));
  EXPECT_THAT(
      ErrorOf(
          ParseGraphJson(
              R"({"format":"memplan-graph-v1","tensors":[],"ops":[{"name":"o","inputs":[3]}]})")
              .status()),
      HasSubstr("op \"o\""));
}

// "writes" are input indices, each once; an error names the op.
TEST(GraphJsonTest, WritesAreCheckedInputIndices) {
  auto parse = [](const std::string& writes) {
    return ParseGraphJson(
        R"({"format":"memplan-graph-v1","tensors":[)"
        R"({"name":"x","size":4,"kind":"input"},{"name":"w","size":4,)"
        R"("kind":"input"},{"name":"y","size":4,"kind":"output"}],)"
        R"("ops":[{"name":"add_","inputs":["x","w"],"outputs":["y"],)"
        R"("alias":[[0,0]],"writes":)" +
        writes + "}]}");
  };
  absl::StatusOr<Graph> graph = parse("[0]");
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->ops[0].writes, std::vector<int>{0});
  EXPECT_THAT(GraphToJson(*graph), HasSubstr(R"("writes":[0])"));
  EXPECT_TRUE(parse("[]").ok());
  EXPECT_THAT(ErrorOf(parse("[2]").status()),
              AllOf(HasSubstr("op \"add_\""), HasSubstr("out of range")));
  EXPECT_THAT(ErrorOf(parse("[-1]").status()),
              AllOf(HasSubstr("op \"add_\""), HasSubstr("out of range")));
  EXPECT_THAT(ErrorOf(parse("[1, 1]").status()),
              AllOf(HasSubstr("op \"add_\""), HasSubstr("twice")));
  EXPECT_THAT(ErrorOf(parse("[\"x\"]").status()), HasSubstr("op \"add_\""));
  EXPECT_THAT(ErrorOf(parse("0").status()), HasSubstr("op \"add_\""));
  // A graph built in code is checked when it is planned.
  Graph bad = *graph;
  bad.ops[0].writes = {5};
  EXPECT_THAT(ErrorOf(BuildProblem(bad).status()),
              AllOf(HasSubstr("op \"add_\""), HasSubstr("out of range")));
  bad.ops[0].writes = {0, 0};
  EXPECT_THAT(ErrorOf(BuildProblem(bad).status()),
              AllOf(HasSubstr("op \"add_\""), HasSubstr("twice")));
}

// "pinned" is true or false, written only when true; an error names the op.
TEST(GraphJsonTest, PinnedIsABoolean) {
  auto parse = [](const std::string& pinned) {
    return ParseGraphJson(
        R"({"format":"memplan-graph-v1","tensors":[)"
        R"({"name":"x","size":4,"kind":"input"},)"
        R"({"name":"y","size":4,"kind":"output"}],)"
        R"("ops":[{"name":"print","inputs":["x"],"outputs":["y"],)"
        R"("pinned":)" +
        pinned + "}]}");
  };
  absl::StatusOr<Graph> graph = parse("true");
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_TRUE(graph->ops[0].pinned);
  EXPECT_THAT(GraphToJson(*graph), HasSubstr(R"("pinned":true)"));
  graph = parse("false");
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_FALSE(graph->ops[0].pinned);
  EXPECT_THAT(GraphToJson(*graph), Not(HasSubstr("pinned")));
  for (const char* bad : {"1", "\"true\"", "[]"}) {
    EXPECT_THAT(ErrorOf(parse(bad).status()),
                AllOf(HasSubstr("op \"print\""), HasSubstr("\"pinned\"")))
        << bad;
  }
}

// "cost" is a non-negative finite number, written as an integer when it is
// one; "recomputable" is true or false. Both are written only when given,
// and read back as written.
TEST(GraphJsonTest, CostAndRecomputableRoundTrip) {
  auto parse = [](const std::string& fields) {
    return ParseGraphJson(
        R"({"format":"memplan-graph-v1","tensors":[)"
        R"({"name":"x","size":4,"kind":"input"},)"
        R"({"name":"y","size":4,"kind":"output"}],)"
        R"("ops":[{"name":"relu","inputs":["x"],"outputs":["y"])" +
        fields + "}]}");
  };
  absl::StatusOr<Graph> graph = parse(R"(,"cost":1000,"recomputable":true)");
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->ops[0].cost, 1000.0);
  EXPECT_TRUE(graph->ops[0].recomputable);
  EXPECT_THAT(GraphToJson(*graph), AllOf(HasSubstr(R"("cost":1000,)"),
                                         HasSubstr(R"("recomputable":true)")));
  graph = parse("");
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_FALSE(graph->ops[0].cost.has_value());
  EXPECT_FALSE(graph->ops[0].recomputable);
  EXPECT_THAT(GraphToJson(*graph),
              AllOf(Not(HasSubstr("cost")), Not(HasSubstr("recomputable"))));
  for (const char* cost : {"0", "0.5", "1e19", "1.0000000000000002",
                           "123456789012345678", "2.5e-300", "-0.0"}) {
    graph = parse(absl::StrCat(R"(,"cost":)", cost));
    ASSERT_TRUE(graph.ok()) << cost << ": " << graph.status();
    absl::StatusOr<Graph> back = ParseGraphJson(GraphToJson(*graph));
    ASSERT_TRUE(back.ok()) << cost << ": " << back.status();
    EXPECT_EQ(*back, *graph) << cost;
    EXPECT_EQ(GraphToJson(*back), GraphToJson(*graph)) << cost;
  }
  graph = parse(R"(,"cost":0.5)");
  ASSERT_TRUE(graph.ok());
  EXPECT_THAT(GraphToJson(*graph), HasSubstr(R"("cost":0.5)"));
}

TEST(GraphJsonTest, CostAndRecomputableErrorsNameTheOp) {
  auto parse = [](const std::string& fields) {
    return ParseGraphJson(
        R"({"format":"memplan-graph-v1","tensors":[)"
        R"({"name":"x","size":4,"kind":"input"},)"
        R"({"name":"y","size":4,"kind":"output"}],)"
        R"("ops":[{"name":"mul_","inputs":["x"],"outputs":["y"])" +
        fields + "}]}");
  };
  EXPECT_THAT(ErrorOf(parse(R"(,"cost":-1)").status()),
              AllOf(HasSubstr("op \"mul_\""), HasSubstr("\"cost\" is -1"),
                    HasSubstr("not a non-negative finite number")));
  EXPECT_THAT(ErrorOf(parse(R"(,"cost":-0.25)").status()),
              AllOf(HasSubstr("op \"mul_\""), HasSubstr("-0.25")));
  for (const char* bad : {"\"12\"", "true", "[]", "{}"}) {
    EXPECT_THAT(ErrorOf(parse(absl::StrCat(R"(,"cost":)", bad)).status()),
                AllOf(HasSubstr("op \"mul_\""),
                      HasSubstr("\"cost\" must be a non-negative number")))
        << bad;
  }
  EXPECT_THAT(ErrorOf(parse(R"(,"cost":1e400)").status()),
              HasSubstr("malformed JSON"));
  for (const char* bad : {"1", "\"true\"", "[]"}) {
    EXPECT_THAT(
        ErrorOf(parse(absl::StrCat(R"(,"recomputable":)", bad)).status()),
        AllOf(HasSubstr("op \"mul_\""),
              HasSubstr("\"recomputable\" must be true or false")))
        << bad;
  }
  // An op that writes is never recomputed: the two together are refused.
  EXPECT_THAT(
      ErrorOf(parse(R"(,"writes":[0],"recomputable":true)").status()),
      AllOf(HasSubstr("op \"mul_\" is \"recomputable\" but writes input 0"),
            HasSubstr("drop \"recomputable\"")));
  EXPECT_TRUE(parse(R"(,"writes":[0],"recomputable":false,"cost":3)").ok());
  // A graph made in code is checked when it is planned.
  absl::StatusOr<Graph> graph = parse("");
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_TRUE(BuildProblem(*graph).ok());
  for (double cost : {-1.0, std::numeric_limits<double>::quiet_NaN(),
                      std::numeric_limits<double>::infinity()}) {
    Graph bad = *graph;
    bad.ops[0].cost = cost;
    EXPECT_THAT(ErrorOf(BuildProblem(bad).status()),
                AllOf(HasSubstr("op \"mul_\" has cost"),
                      HasSubstr("not a non-negative finite number")))
        << cost;
  }
  Graph bad = *graph;
  bad.ops[0].writes = {0};
  bad.ops[0].recomputable = true;
  EXPECT_THAT(ErrorOf(BuildProblem(bad).status()),
              HasSubstr("op \"mul_\" is recomputable but writes input 0"));
  bad.ops[0].recomputable = false;
  bad.ops[0].cost = 0;
  EXPECT_TRUE(BuildProblem(bad).ok());
}

TEST(BufferCsvTest, ReadsMiniMallocFilesAndWritesThemBack) {
  absl::StatusOr<std::string> text =
      ReadFile(testing::DataPath("minimalloc/input.12.csv"));
  ASSERT_TRUE(text.ok());
  absl::StatusOr<BufferCsv> csv = ParseBufferCsv(*text);
  ASSERT_TRUE(csv.ok()) << csv.status();
  EXPECT_EQ(csv->problem.buffers[0].name, "b1");
  EXPECT_EQ(csv->problem.buffers[0].lifetime, (Lifetime{0, 3}));
  EXPECT_FALSE(csv->plan.has_value());
  absl::StatusOr<BufferCsv> again = ParseBufferCsv(BufferCsvText(csv->problem));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->problem, csv->problem);
}

TEST(BufferCsvTest, AnOffsetColumnIsAPlan) {
  absl::StatusOr<BufferCsv> csv = ParseBufferCsv(
      "id,lower,upper,size,offset\na,0,2,8,0\nb,1,3,4,8\nc,2,4,8,0\n");
  ASSERT_TRUE(csv.ok()) << csv.status();
  ASSERT_TRUE(csv->plan.has_value());
  EXPECT_TRUE(VerifyPlan(csv->problem, *csv->plan).ok());
  EXPECT_EQ(csv->plan->peak, 12);
  const std::string text = BufferCsvText(csv->problem, &*csv->plan);
  EXPECT_EQ(text,
            "id,lower,upper,size,offset\na,0,2,8,0\nb,1,3,4,8\nc,2,4,8,0\n");
}

TEST(BufferCsvTest, ErrorsNameTheLine) {
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv("id,lower,upper,size\n0,5,5,10\n").status()),
      HasSubstr("CSV line 2: buffer \"0\" has lower 5 >= upper 5"));
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv("id,lower,upper,size\n0,0,1,x\n").status()),
      HasSubstr("CSV line 2, column 4"));
  EXPECT_THAT(ErrorOf(ParseBufferCsv("id,lower,upper,size\n0,0,1\n").status()),
              HasSubstr("CSV line 2: 3 fields"));
  EXPECT_THAT(ErrorOf(ParseBufferCsv(
                          "id,lower,upper,size\n0,0,1,99999999999999999999\n")
                          .status()),
              HasSubstr("overflows int64"));
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv("id,lower,upper,size\n0,0,1,-4\n").status()),
      HasSubstr("negative size"));
  EXPECT_THAT(
      ErrorOf(
          ParseBufferCsv("id,lower,upper,size\n7,0,1,4\n7,1,2,4\n").status()),
      HasSubstr("CSV line 3: buffer id \"7\" appears twice"));
  EXPECT_THAT(ErrorOf(ParseBufferCsv("id,begin,upper,size\n").status()),
              HasSubstr("unknown column \"begin\""));
  EXPECT_THAT(ErrorOf(ParseBufferCsv("").status()), HasSubstr("empty"));
}

// The rows are read once, but the errors come as if the whole text were
// checked in order: quoting first, then row by row, a row's id checked for a
// repeat after its field count, emptiness and encoding and before its numbers.
TEST(BufferCsvTest, TheFirstErrorInTheTextIsReported) {
  const std::string head = "id,lower,upper,size\n";
  // An error in an earlier row wins over a repeated id.
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv(head + "7,0,1,4\n8,1,1,4\n7,1,2,4\n").status()),
      HasSubstr("CSV line 3: buffer \"8\" has lower 1 >= upper 1"));
  // A repeated id wins over an error later in its row or after it.
  EXPECT_THAT(ErrorOf(ParseBufferCsv(head + "7,0,1,4\n7,1,2,x\n").status()),
              HasSubstr("CSV line 3: buffer id \"7\" appears twice"));
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv(head + "7,0,1,4\n7,1,2,4\n8,0\n").status()),
      HasSubstr("CSV line 3: buffer id \"7\" appears twice"));
  EXPECT_THAT(ErrorOf(ParseBufferCsv(head + "a,0,1,4\nb,0,1,4\nb,0,1,4\n"
                                            "a,0,1,4\n")
                          .status()),
              HasSubstr("CSV line 4: buffer id \"b\" appears twice"));
  // The repeat's row counts its lines, quoted line breaks included.
  EXPECT_THAT(
      ErrorOf(
          ParseBufferCsv(head + "\"x\ny\",0,1,4\n\n\"x\ny\",0,1,4\n").status()),
      HasSubstr("CSV line 5: buffer id \"x\ny\" appears twice"));
  // A row's field count, empty id or encoding come before its repeat check.
  EXPECT_THAT(ErrorOf(ParseBufferCsv(head + "7,0,1,4\n7,1\n").status()),
              HasSubstr("CSV line 3: 2 fields, the header has 4"));
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv(head + "\"\",0,1,4\n\"\",0,1,4\n").status()),
      HasSubstr("CSV line 2: empty id"));
  // Malformed quoting anywhere wins over every other error.
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv(head + "0,0,1,x\n7,0,1,4\n7,0,1,4\n\"open\n")
                  .status()),
      HasSubstr("CSV line 5: a quoted field is not closed"));
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv("id,lower,upper,sise\n\"a\"b,0,1,4\n").status()),
      HasSubstr("CSV line 2: text after a quoted field"));
  // The problem's own checks come after every row's.
  EXPECT_THAT(ErrorOf(ParseBufferCsv(head + "a,0,1,4611686018427387904\n"
                                            "b,0,1,x\n")
                          .status()),
              HasSubstr("CSV line 3, column 4"));
  EXPECT_THAT(ErrorOf(ParseBufferCsv(head + "a,0,1,4611686018427387904\n"
                                            "a,0,1,4\n")
                          .status()),
              HasSubstr("CSV line 3: buffer id \"a\" appears twice"));
  EXPECT_THAT(
      ErrorOf(ParseBufferCsv(head + "a,0,1,4611686018427387904\n").status()),
      HasSubstr("the sizes of the buffers exceed the largest supported arena"));
}

TEST(BufferCsvTest, IntegersFillInt64AndNoMore) {
  const std::string head = "id,lower,upper,size,offset\n";
  absl::StatusOr<BufferCsv> csv =
      ParseBufferCsv(head +
                     "a,0,4611686018427387904,00000000000000000000000000004,"
                     "9223372036854775807\nb,0,1,0,-9223372036854775808\n");
  ASSERT_TRUE(csv.ok()) << csv.status();
  EXPECT_EQ(csv->problem.buffers[0].lifetime.end, int64_t{1} << 62);
  EXPECT_EQ(csv->problem.buffers[0].size, 4);
  EXPECT_EQ(csv->plan->assignments[0].offset,
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(csv->plan->assignments[1].offset,
            std::numeric_limits<int64_t>::min());
  for (const char* bad :
       {"9223372036854775808", "-9223372036854775809", "18446744073709551616",
        "99999999999999999999", "-", "--1", "1-", ""}) {
    EXPECT_THAT(
        ErrorOf(ParseBufferCsv(head + "a,0,1,4," + bad + "\n").status()),
        HasSubstr(absl::StrCat("CSV line 2, column 5 (\"offset\"): \"", bad,
                               "\" is not an integer")))
        << bad;
  }
  EXPECT_THAT(ErrorOf(ParseBufferCsv(
                          "id,lower,upper,size\na,-9223372036854775808,1,4\n")
                          .status()),
              HasSubstr("has a negative lower -9223372036854775808"));
}

TEST(BufferCsvTest, QuotedFieldsBlankLinesAndSpaces) {
  absl::StatusOr<BufferCsv> csv = ParseBufferCsv(
      "\n \"id\" ,lower,upper,size\r\n\r\n \"a,\"\"b\"\"\nc\" , 0 ,\"1\",4\r\n"
      "\t\n  d e  ,1,2,\"8\"");
  ASSERT_TRUE(csv.ok()) << csv.status();
  ASSERT_EQ(csv->problem.buffers.size(), 2);
  EXPECT_EQ(csv->problem.buffers[0].name, "a,\"b\"\nc");
  EXPECT_EQ(csv->problem.buffers[0].tensors,
            std::vector<std::string>{"a,\"b\"\nc"});
  EXPECT_EQ(csv->problem.buffers[0].lifetime, (Lifetime{0, 1}));
  EXPECT_EQ(csv->problem.buffers[1].name, "d e");
  EXPECT_EQ(csv->problem.buffers[1].size, 8);
  EXPECT_EQ(BufferCsvText(csv->problem),
            "id,lower,upper,size\n\"a,\"\"b\"\"\nc\",0,1,4\nd e,1,2,8\n");
  // A field that would lose its spaces, or is empty, is quoted.
  Problem spaced{
      .buffers = {Buffer{.name = " x\t", .size = 4, .lifetime = {0, 1}},
                  Buffer{.name = "y\r", .size = 4, .lifetime = {0, 1}},
                  Buffer{.name = "", .size = 4, .lifetime = {0, 1}}},
      .pools = {Pool{.name = "default"}}};
  EXPECT_EQ(BufferCsvText(spaced),
            "id,lower,upper,size\n\" x\t\",0,1,4\n\"y\r\",0,1,4\n\"\",0,1,4\n");
}

TEST(BufferCsvTest, APlanInAnyOrderIsWrittenInBufferOrder) {
  Problem problem{
      .buffers = {Buffer{.name = "a", .size = 8, .lifetime = {0, 2}},
                  Buffer{.name = "b", .size = 4, .lifetime = {1, 3}},
                  Buffer{.name = "c", .size = 8, .lifetime = {2, 4}}},
      .pools = {Pool{.name = "fast"}, Pool{.name = "slow, big"}}};
  Plan plan;
  plan.assignments = {{.buffer = 2, .pool = 1, .offset = 16},
                      {.buffer = 0, .pool = 0, .offset = -9}};
  EXPECT_EQ(BufferCsvText(problem, &plan),
            "id,lower,upper,size,offset,pool\na,0,2,8,-9,fast\n"
            "b,1,3,4,0,fast\nc,2,4,8,16,\"slow, big\"\n");
  // One per buffer but out of order: the last of a buffer's wins, and a pool
  // that does not exist is written empty.
  plan.assignments = {{.buffer = 1, .pool = 5, .offset = 4},
                      {.buffer = 0, .pool = 1, .offset = 1},
                      {.buffer = 0, .pool = 0, .offset = 2}};
  EXPECT_EQ(BufferCsvText(problem, &plan),
            "id,lower,upper,size,offset,pool\na,0,2,8,2,fast\n"
            "b,1,3,4,4,\"\"\nc,2,4,8,0,fast\n");
  problem.pools.pop_back();
  plan.assignments = {{.buffer = 0, .offset = 0},
                      {.buffer = 1, .offset = 8},
                      {.buffer = 2, .offset = 9223372036854775807}};
  EXPECT_EQ(BufferCsvText(problem, &plan),
            "id,lower,upper,size,offset\na,0,2,8,0\nb,1,3,4,8\n"
            "c,2,4,8,9223372036854775807\n");
}

TEST(PlanJsonTest, RoundTripsAPlan) {
  absl::StatusOr<Problem> problem =
      testing::LoadProblem("models/resnet18.json");
  ASSERT_TRUE(problem.ok());
  absl::StatusOr<Plan> plan = PlanMemory(*problem, {.planner = "naive"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  absl::StatusOr<Plan> back =
      ParsePlanJson(PlanToJson(*problem, *plan), *problem);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->assignments, plan->assignments);
  EXPECT_EQ(back->peak, plan->peak);
  EXPECT_EQ(back->pool_used, plan->pool_used);
  EXPECT_EQ(back->planner, "naive");
  EXPECT_TRUE(VerifyPlan(*problem, *back).ok());
}

// A chain of `n` ops, each reading the previous one's output.
Graph ChainGraph(int n) {
  Graph graph{.name = "chain"};
  graph.tensors.push_back(
      {.name = "t0", .size = 64, .kind = TensorKind::kInput});
  for (int i = 1; i <= n; ++i) {
    graph.tensors.push_back({.name = absl::StrCat("t", i), .size = 64});
    graph.ops.push_back({.name = absl::StrCat("op", i),
                         .type = "Relu",
                         .inputs = {absl::StrCat("t", i - 1)},
                         .outputs = {absl::StrCat("t", i)}});
  }
  return graph;
}

TEST(PlanJsonTest, WrittenInPiecesOfAboutAMegabyte) {
  const Graph graph = ChainGraph(20000);
  absl::StatusOr<GraphPlan> planned = PlanMemory(graph, {});
  ASSERT_TRUE(planned.ok()) << planned.status();
  ASSERT_TRUE(VerifyPlan(planned->problem, planned->plan).ok());
  const PlanJsonOptions options{.graph = &graph};
  std::vector<std::string> pieces;
  WritePlanJson(planned->problem, planned->plan, options,
                [&](std::string_view piece) { pieces.emplace_back(piece); });
  const std::string text = absl::StrJoin(pieces, "");
  EXPECT_EQ(text, PlanToJson(planned->problem, planned->plan, options));
  ASSERT_GE(pieces.size(), 2u) << text.size() << " bytes";
  for (const std::string& piece : pieces) {
    EXPECT_FALSE(piece.empty());
    EXPECT_LT(piece.size(), size_t{1} << 21);
  }
  EXPECT_THAT(text, HasSubstr("\"tensors\":[\n{\"name\":\"t0\""));
  absl::StatusOr<Plan> back = ParsePlanJson(text, planned->problem);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->assignments, planned->plan.assignments);
  EXPECT_TRUE(VerifyPlan(planned->problem, *back).ok());
  // Written to a file as it comes, plain or compressed: the same text.
  for (const std::string name : {"pieces.plan.json", "pieces.plan.json.gz"}) {
    const std::string path = TempPath(name);
    ASSERT_TRUE(WriteFile(path, [&](const TextSink& write) {
                  for (const std::string& piece : pieces) write(piece);
                }).ok());
    absl::StatusOr<std::string> read = ReadFile(path);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_TRUE(*read == text) << name;
    std::remove(path.c_str());
  }
  const absl::Status unwritable = WriteFile(
      "/nonexistent/dir/plan.json", [](const TextSink& write) { write("{}"); });
  EXPECT_EQ(unwritable.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(unwritable.message(),
              HasSubstr("cannot write \"/nonexistent/dir/plan.json\""));
}

TEST(PlanJsonTest, NamesAreEscapedAsJsonAndReadBack) {
  // Written without building a JSON document: every character that needs
  // it is still escaped, UTF-8 kept, and the names read back the same.
  Problem problem{
      .buffers =
          {Buffer{.name = "q\"b\\s", .size = 4, .lifetime = {0, 1}},
           Buffer{.name = "tab\tnl\nctl\x01", .size = 4, .lifetime = {0, 2}},
           Buffer{.name = "caf\xc3\xa9 \x7f", .size = 8, .lifetime = {1, 2}}},
      .pools = {Pool{.name = "p\"ool"}}};
  for (Buffer& b : problem.buffers) b.tensors = {b.name, b.name + "/view"};
  absl::StatusOr<Plan> plan = PlanMemory(problem, {.planner = "naive"});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(VerifyPlan(problem, *plan).ok());
  const std::string text = PlanToJson(problem, *plan);
  EXPECT_THAT(text,
              AllOf(HasSubstr(R"("name":"q\"b\\s")"),
                    HasSubstr(R"("name":"tab\tnl\nctl\u0001")"),
                    HasSubstr("\"name\":\"caf\xc3\xa9 \x7f\""),
                    HasSubstr(R"("pool":"p\"ool")"),
                    HasSubstr(R"("tensors":["q\"b\\s","q\"b\\s/view"])")));
  absl::StatusOr<Plan> back = ParsePlanJson(text, problem);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->assignments, plan->assignments);
  EXPECT_TRUE(VerifyPlan(problem, *back).ok());
  // Bytes that are not UTF-8 become replacement characters, as before.
  problem.buffers[0].name = "bad\xff";
  problem.buffers[0].tensors = {"bad\xff"};
  EXPECT_THAT(PlanToJson(problem, *plan),
              HasSubstr("\"name\":\"bad\xef\xbf\xbd\""));
}

TEST(PlanJsonTest, UnknownBuffersAndPoolsAreNamed) {
  Problem problem{
      .buffers = {Buffer{.name = "a", .size = 4, .lifetime = {0, 1}}},
      .pools = {Pool{.name = "default"}}};
  EXPECT_THAT(
      ErrorOf(
          ParsePlanJson(
              R"({"format":"memplan-plan-v1","buffers":[{"name":"zz","offset":0}]})",
              problem)
              .status()),
      HasSubstr("\"zz\""));
  EXPECT_THAT(
      ErrorOf(
          ParsePlanJson(
              R"({"format":"memplan-plan-v1","buffers":[{"name":"a","pool":"hbm","offset":0}]})",
              problem)
              .status()),
      HasSubstr("unknown pool \"hbm\""));
}

TEST(LoadInputTest, MissingFilesAndUnknownTypes) {
  absl::StatusOr<LoadedInput> missing =
      LoadInput("/nonexistent/graph.json", {});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("/nonexistent/graph.json"));
  EXPECT_THAT(
      ErrorOf(LoadInput(testing::DataPath("models/README.md"), {}).status()),
      HasSubstr("unknown input type"));
}

TEST(LoadInputTest, ACsvInputTakesTheOptionsAlignmentAndPools) {
  const std::string path = TempPath("aligned.csv");
  // Within the arena as they are; beyond it once both round up to 16.
  ASSERT_TRUE(WriteFile(path,
                        "id,lower,upper,size\na,0,1,5\n"
                        "b,0,2,4611686018427387888\n")
                  .ok());
  absl::StatusOr<LoadedInput> plain = LoadInput(path, {.capacity = 100});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->problem.buffers[0].size, 5);
  EXPECT_EQ(plain->problem.buffers[0].alignment, 1);
  EXPECT_EQ(plain->problem.buffers[0].tensors, std::vector<std::string>{"a"});
  ASSERT_EQ(plain->problem.pools.size(), 1);
  EXPECT_EQ(plain->problem.pools[0],
            (Pool{.name = "default", .capacity = 100, .alignment = 1}));
  EXPECT_THAT(ErrorOf(LoadInput(path, {.alignment = 16}).status()),
              HasSubstr("the sizes of the buffers exceed the largest "
                        "supported arena"));
  absl::StatusOr<LoadedInput> aligned = LoadInput(path, {.alignment = 4});
  ASSERT_TRUE(aligned.ok()) << aligned.status();
  EXPECT_EQ(aligned->problem.buffers[0].size, 8);
  EXPECT_EQ(aligned->problem.buffers[0].alignment, 4);
  EXPECT_EQ(aligned->content_hash, plain->content_hash);
  EXPECT_THAT(ErrorOf(LoadInput(path, {.alignment = 3}).status()),
              HasSubstr("alignment 3 is not a power of two"));
  std::remove(path.c_str());
}

// An importer reads the names that end in its extension, from the bytes
// Load() read (once: they are hashed too); its graph is reordered and built
// like a graph JSON's.
TEST(LoadTest, AnImporterReadsItsFilesBytes) {
  const std::string path = TempPath("model.fake");
  const std::string bytes = "not JSON";
  ASSERT_TRUE(WriteFile(path, bytes).ok());
  absl::StatusOr<LoadedInput> unknown = Load(path, {});
  EXPECT_THAT(ErrorOf(unknown.status()), HasSubstr("unknown input type"));
  absl::StatusOr<Graph> graph =
      ParseGraphJson(*ReadFile(testing::DataPath("models/resnet18.json")));
  ASSERT_TRUE(graph.ok()) << graph.status();
  int calls = 0;
  LoadOptions options;
  options.build.alignment = 64;
  options.reorder = "memory";
  options.importers.push_back(
      {.extension = ".fake",
       .import = [&](const std::string& name,
                     std::string_view contents) -> absl::StatusOr<Graph> {
         ++calls;
         EXPECT_EQ(name, path);
         EXPECT_EQ(contents, bytes);
         return *graph;
       }});
  // A name no importer reads: the error lists every type, the importer's too.
  EXPECT_THAT(
      ErrorOf(Load(testing::DataPath("models/README.md"), options).status()),
      HasSubstr("(expected .json, .json.gz, .csv, .csv.gz, .fake)"));
  absl::StatusOr<LoadedInput> input = Load(path, options);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(input->content_hash, ContentHash(bytes));
  absl::StatusOr<Graph> reordered =
      ReorderGraph(*graph, "memory", options.build);
  ASSERT_TRUE(reordered.ok()) << reordered.status();
  EXPECT_EQ(input->graph, *reordered);
  EXPECT_EQ(input->problem, *BuildProblem(*reordered, options.build));
  std::remove(path.c_str());
}

TEST(LoadTest, ABufferCsvHasNoOpsToReorder) {
  LoadOptions options;
  options.reorder = "memory";
  EXPECT_THAT(
      ErrorOf(
          Load(testing::DataPath("minimalloc/input.12.csv"), options).status()),
      HasSubstr("a buffer CSV has no ops"));
}

TEST(LoadTest, APlanFileIsJsonOrCsvByItsName) {
  absl::StatusOr<LoadedInput> input =
      Load(testing::DataPath("minimalloc/input.12.csv"), {});
  ASSERT_TRUE(input.ok()) << input.status();
  absl::StatusOr<Plan> plan = PlanMemory(input->problem);
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const std::string name : {"plan.csv.gz", "plan.json"}) {
    const std::string path = TempPath(name);
    const std::string text = name.starts_with("plan.csv")
                                 ? BufferCsvText(input->problem, &*plan)
                                 : PlanToJson(input->problem, *plan);
    ASSERT_TRUE(WriteFile(path, text).ok());
    absl::StatusOr<PlanFile> file = ReadPlanFile(path);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_EQ(file->text, text);
    EXPECT_EQ(file->csv, name.starts_with("plan.csv"));
    absl::StatusOr<std::optional<PlanProvenance>> provenance =
        RecordedProvenance(*file);
    ASSERT_TRUE(provenance.ok()) << provenance.status();
    EXPECT_FALSE(provenance->has_value());
    absl::StatusOr<Plan> back = ParsePlanFile(*file, input->problem);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->assignments, plan->assignments);
    std::remove(path.c_str());
  }
}

// A graph x -> y -> z (256 bytes each) whose file declares `pools` (JSON,
// empty for none) and `x_alignment`, and a plan file of it recording
// `build` (the JSON of a plan's "build") and placing `buffers`.
struct PlanOfGraph {
  std::string graph_path;
  PlanFile plan;
};

PlanOfGraph WritePlanOfGraph(const std::string& name, const std::string& pools,
                             const std::string& build,
                             const std::string& buffers, int x_alignment = 0) {
  PlanOfGraph out;
  out.graph_path = TempPath(name + "_graph.json");
  const std::string graph = absl::StrCat(
      R"({"format": "memplan-graph-v1", "name": "g",)",
      pools.empty() ? "" : absl::StrCat(R"( "pools": )", pools, ","),
      R"( "tensors": [{"name": "x", "size": 256, "kind": "input")",
      x_alignment == 0 ? "" : absl::StrCat(R"(, "alignment": )", x_alignment),
      R"(}, {"name": "y", "size": 256},)",
      R"( {"name": "z", "size": 256, "kind": "output"}],)",
      R"( "ops": [{"name": "a", "type": "A", "inputs": ["x"],)",
      R"( "outputs": ["y"]},)",
      R"( {"name": "b", "type": "B", "inputs": ["y"], "outputs": ["z"]}]})");
  EXPECT_TRUE(WriteFile(out.graph_path, graph).ok());
  out.plan.path = TempPath(name + "_plan.json");
  out.plan.text = absl::StrCat(
      R"({"format": "memplan-plan-v1", "input": {"name": ")", out.graph_path,
      R"(", "hash": ")", ContentHash(graph), R"("}, "build": )", build,
      R"(, "planner": "by hand", "buffers": )", buffers, "}");
  return out;
}

// The problem `plan` is checked against and its notes, or the error.
absl::StatusOr<PlanInput> InputOf(const PlanOfGraph& plan) {
  return LoadInputOfPlan(plan.graph_path, plan.plan, {}, false);
}

constexpr char kAllPlaced[] =
    R"([{"name": "x", "pool": "sram", "offset": 0},
        {"name": "y", "pool": "sram", "offset": 5000},
        {"name": "z", "pool": "sram", "offset": 0}])";

// The input's pools are the contract: a recorded pool may tighten one (a
// note), never loosen it or add one.
TEST(LoadInputOfPlanTest, ARecordedPoolNeverLoosensADeclaredOne) {
  const std::string sram =
      R"([{"name": "sram", "capacity": 1024, "alignment": 16}])";
  PlanOfGraph unbounded = WritePlanOfGraph(
      "unbounded", sram,
      R"({"pools": [{"name": "sram", "capacity": 0, "alignment": 16}]})",
      kAllPlaced);
  EXPECT_THAT(ErrorOf(InputOf(unbounded).status()),
              AllOf(HasSubstr(unbounded.plan.path),
                    HasSubstr("plan records pool \"sram\" with capacity 0; "
                              "the graph declares capacity 1024")));
  PlanOfGraph larger =
      WritePlanOfGraph("larger", sram, R"({"capacity": 8192})", kAllPlaced);
  EXPECT_THAT(ErrorOf(InputOf(larger).status()),
              HasSubstr("with capacity 8192; the graph declares capacity "
                        "1024"));
  PlanOfGraph coarse = WritePlanOfGraph(
      "coarse", sram,
      R"({"pools": [{"name": "sram", "capacity": 1024, "alignment": 1}]})",
      kAllPlaced);
  EXPECT_THAT(ErrorOf(InputOf(coarse).status()),
              HasSubstr("plan records pool \"sram\" with alignment 1; the "
                        "graph declares alignment 16"));
  PlanOfGraph other = WritePlanOfGraph(
      "other", sram,
      R"({"pools": [{"name": "sram", "capacity": 1024, "alignment": 16},
                    {"name": "dram"}]})",
      kAllPlaced);
  EXPECT_THAT(ErrorOf(InputOf(other).status()),
              HasSubstr("plan records pool \"dram\", which the graph does not "
                        "declare"));
  // Tighter: checked as recorded, and said.
  PlanOfGraph tighter = WritePlanOfGraph(
      "tighter", sram,
      R"({"pools": [{"name": "sram", "capacity": 768, "alignment": 64}]})",
      kAllPlaced);
  absl::StatusOr<PlanInput> input = InputOf(tighter);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_EQ(
      input->input.problem.pools,
      (std::vector<Pool>{{.name = "sram", .capacity = 768, .alignment = 64}}));
  EXPECT_THAT(input->build.notes,
              ::testing::ElementsAre(HasSubstr("pool \"sram\" of 768 bytes"),
                                     HasSubstr("pool \"sram\" aligned to 64")));
  // A graph without pools takes the recorded ones, silently.
  PlanOfGraph open = WritePlanOfGraph(
      "open", "",
      R"({"pools": [{"name": "sram", "capacity": 0, "alignment": 1}]})",
      kAllPlaced);
  input = InputOf(open);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_TRUE(input->build.recorded);
  EXPECT_TRUE(input->build.notes.empty());
  EXPECT_EQ(input->input.problem.pools[0].name, "sram");
  for (const PlanOfGraph* p :
       {&unbounded, &larger, &coarse, &other, &tighter, &open}) {
    std::remove(p->graph_path.c_str());
  }
}

// A plan that leaves the graph's inputs to the caller is accepted as such,
// and says so; options given replace the record and are used as given.
TEST(LoadInputOfPlanTest, InputsLeftToTheCallerAreNamed) {
  PlanOfGraph plan = WritePlanOfGraph(
      "no_inputs", "", R"({"plan_inputs": false})",
      R"([{"name": "y", "offset": 0}, {"name": "z", "offset": 256}])");
  absl::StatusOr<PlanInput> input = InputOf(plan);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_THAT(input->build.notes,
              ::testing::ElementsAre(
                  "graph inputs left to the caller, as the plan records"));
  absl::StatusOr<Plan> parsed = ParsePlanFile(plan.plan, input->input.problem);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(VerifyPlan(input->input.problem, *parsed).ok());
  // Asked for a full plan: the input is missing.
  absl::StatusOr<PlanInput> full =
      LoadInputOfPlan(plan.graph_path, plan.plan, {}, true);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_FALSE(full->build.recorded);
  EXPECT_TRUE(full->build.notes.empty());
  parsed = ParsePlanFile(plan.plan, full->input.problem);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(ErrorOf(VerifyPlan(full->input.problem, *parsed)),
              HasSubstr("\"x\""));
  std::remove(plan.graph_path.c_str());
}

// A tensor's own alignment always holds: a smaller recorded alignment does
// not lower it, a larger one rounds its size up (accepted, and said).
TEST(LoadInputOfPlanTest, ATensorsOwnAlignmentHolds) {
  const std::string placed =
      R"([{"name": "x", "offset": 32}, {"name": "y", "offset": 512},
          {"name": "z", "offset": 0}])";
  PlanOfGraph smaller =
      WritePlanOfGraph("align_smaller", "", R"({"alignment": 1})", placed, 64);
  absl::StatusOr<PlanInput> input = InputOf(smaller);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_TRUE(input->build.notes.empty());
  absl::StatusOr<Plan> parsed =
      ParsePlanFile(smaller.plan, input->input.problem);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(ErrorOf(VerifyPlan(input->input.problem, *parsed)),
              HasSubstr("\"x\""));
  PlanOfGraph larger =
      WritePlanOfGraph("align_larger", "", R"({"alignment": 256})",
                       R"([{"name": "x", "offset": 0},
                           {"name": "y", "offset": 256},
                           {"name": "z", "offset": 0}])",
                       16);
  input = InputOf(larger);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_THAT(input->build.notes,
              ::testing::ElementsAre("buffers aligned to 256, as the plan "
                                     "records (tensor \"x\" declares 16)"));
  std::remove(smaller.graph_path.c_str());
  std::remove(larger.graph_path.c_str());
}

TEST(LoadInputOfPlanTest, APlanOfOtherContentsIsAnError) {
  PlanOfGraph plan = WritePlanOfGraph("other_contents", "", "{}", kAllPlaced);
  const std::string text = *ReadFile(plan.graph_path);
  const std::string hash = ContentHash(text);
  ASSERT_TRUE(WriteFile(plan.graph_path, text + "\n").ok());
  EXPECT_THAT(ErrorOf(InputOf(plan).status()),
              AllOf(HasSubstr("is a plan of another input"), HasSubstr(hash),
                    HasSubstr(ContentHash(text + "\n"))));
  std::remove(plan.graph_path.c_str());
}

TEST(FilesTest, TextStopsAtTheFirstByteNoTextHolds) {
  const std::string gz = TempPath("zeros.json.gz");
  ASSERT_TRUE(WriteFile(gz, std::string(1 << 20, '\0')).ok());
  // Read as bytes, the zeros are the contents; read as text, the first one
  // ends the read, named with its position.
  absl::StatusOr<std::string> bytes = ReadFile(gz);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(bytes->size(), size_t{1} << 20);
  EXPECT_THAT(ErrorOf(ReadFile(gz, {.text = true}).status()),
              HasSubstr("is not a text file (JSON or CSV): byte 0 is 0x00 "
                        "after decompression"));
  // The loader reads a graph JSON as text.
  absl::StatusOr<LoadedInput> loaded = LoadInput(gz, {});
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("byte 0 is 0x00"));
  const std::string plain = TempPath("control.csv");
  ASSERT_TRUE(WriteFile(plain, "id,lower,upper,size\r\n\ta,0,1,\x01\n").ok());
  EXPECT_THAT(ErrorOf(ReadFile(plain, {.text = true}).status()),
              HasSubstr("byte 28 is 0x01"));
  std::remove(gz.c_str());
  std::remove(plain.c_str());
}

TEST(GraphJsonTest, ElementsParsedAsReadGiveTheSameGraphAndFirstErrors) {
  // The streamed tensors and ops: the same graph as written, and with a
  // bad tensor and a bad op, the tensor's error first, as before.
  absl::StatusOr<std::string> text =
      ReadFile(testing::DataPath("models/resnet18.json"));
  ASSERT_TRUE(text.ok()) << text.status();
  absl::StatusOr<Graph> graph = ParseGraphJson(*text);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_GT(graph->ops.size(), 10u);
  absl::StatusOr<Graph> again = ParseGraphJson(GraphToJson(*graph));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *graph);
  const std::string bad =
      R"({"ops": [{"name": "o", "inputs": 3}], "format": "memplan-graph-v1",)"
      R"( "tensors": [{"name": "a", "size": 1}, {"name": "b"}]})";
  EXPECT_THAT(ErrorOf(ParseGraphJson(bad).status()),
              HasSubstr("tensor \"b\" has no size"));
  const std::string not_format =
      R"({"tensors": [{"name": "b"}], "ops": [], "format": "x"})";
  EXPECT_THAT(ErrorOf(ParseGraphJson(not_format).status()),
              HasSubstr("unsupported graph format"));
}

TEST(FilesTest, UncompressedNameDropsOneGz) {
  EXPECT_EQ(UncompressedName("plan.json.gz"), "plan.json");
  EXPECT_EQ(UncompressedName("plan.json"), "plan.json");
  EXPECT_EQ(UncompressedName("a.gz.gz"), "a.gz");
  EXPECT_EQ(UncompressedName(".gz"), "");
  EXPECT_TRUE(IsCompressedName("x.csv.gz"));
  EXPECT_FALSE(IsCompressedName("x.gzip"));
}

TEST(RegistryTest, UnknownPlannerIsNotFoundListingValidNames) {
  absl::StatusOr<std::unique_ptr<Planner>> planner = CreatePlanner("magic");
  ASSERT_FALSE(planner.ok());
  EXPECT_EQ(planner.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(planner.status().message()), HasSubstr("\"magic\""));
  EXPECT_THAT(std::string(planner.status().message()), HasSubstr("naive"));
  EXPECT_EQ(
      PlanMemory(Problem{.pools = {Pool{.name = "d"}}}, {.planner = "magic"})
          .status()
          .code(),
      absl::StatusCode::kNotFound);
}

TEST(RegistryTest, EveryRegisteredPlannerIsCreatedUnderItsName) {
  ASSERT_FALSE(RegisteredPlanners().empty());
  for (const PlannerInfo& info : RegisteredPlanners()) {
    absl::StatusOr<std::unique_ptr<Planner>> planner = CreatePlanner(info.name);
    ASSERT_TRUE(planner.ok()) << planner.status();
    EXPECT_EQ((*planner)->name(), info.name);
    EXPECT_FALSE(info.description.empty());
  }
  EXPECT_TRUE(CreatePlanner(DefaultPlannerName()).ok());
}

}  // namespace
}  // namespace memplan
