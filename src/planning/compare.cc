// Comparing planners (see memplan/compare.h).

#include "memplan/compare.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "memplan/formats.h"
#include "memplan/load.h"
#include "memplan/registry.h"
#include "memplan/verify.h"

namespace memplan {
namespace {

std::vector<std::string> PlannerNames(const CompareOptions& options) {
  if (!options.planners.empty()) return options.planners;
  std::vector<std::string> names;
  for (const PlannerInfo& info : RegisteredPlanners())
    names.emplace_back(info.name);
  return names;
}

double PercentOfNaive(const CompareRow& r) {
  return r.naive_total > 0 ? 100.0 * static_cast<double>(r.peak) / r.naive_total
                           : 100.0;
}
// Only in one pool: the lower bound is a single-pool figure, and a sum over
// several pools says nothing against it.
std::optional<double> RatioToLowerBound(const CompareRow& r) {
  if (r.pool_used.size() > 1) return std::nullopt;
  return r.lower_bound > 0 ? static_cast<double>(r.peak) / r.lower_bound : 1.0;
}

// A FormatSpec, not a char*: clang's absl checks formats at compile time.
std::string FormatRatio(const CompareRow& r,
                        const absl::FormatSpec<double>& format,
                        const char* none) {
  const std::optional<double> ratio = RatioToLowerBound(r);
  return ratio.has_value() ? absl::StrFormat(format, *ratio) : none;
}

// "pools: sram 1024, dram 4096; holding sram 5120, dram 70000" for a plan
// in several pools: each pool's top, then the bytes of the buffers in it.
std::string PoolsNote(const CompareRow& r) {
  if (r.pool_used.size() < 2) return "";
  auto list = [&](const std::vector<Bytes>& bytes) {
    std::vector<std::string> parts;
    for (size_t p = 0; p < bytes.size(); ++p) {
      parts.push_back(absl::StrCat(
          p < r.pool_names.size() ? r.pool_names[p] : "", " ", bytes[p]));
    }
    return absl::StrJoin(parts, ", ");
  };
  std::string note = absl::StrCat("pools: ", list(r.pool_used));
  if (!r.pool_bytes.empty())
    absl::StrAppend(&note, "; holding ", list(r.pool_bytes));
  return note;
}

// The failure of a row in one line: "RESOURCE_EXHAUSTED: buffer ...".
std::string Note(const CompareRow& r, size_t max_length) {
  if (r.status.ok()) return PoolsNote(r);
  std::string text = absl::StrCat(absl::StatusCodeToString(r.status.code()),
                                  ": ", std::string(r.status.message()));
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (text.size() > max_length) text = text.substr(0, max_length - 3) + "...";
  return text;
}

// The cells of a row, formatted for humans.
std::vector<std::string> Cells(const CompareRow& r) {
  std::vector<std::string> c = {r.input, r.planner, absl::StrCat(r.buffers),
                                absl::StrCat(r.naive_total),
                                absl::StrCat(r.lower_bound)};
  if (r.planned) {
    c.push_back(absl::StrCat(r.peak));
    c.push_back(absl::StrFormat("%.2f", PercentOfNaive(r)));
    c.push_back(FormatRatio(r, "%.4f", "-"));
    c.push_back(r.proven_optimal ? "yes" : "no");
  } else {
    c.insert(c.end(), {"-", "-", "-", "-"});
  }
  c.push_back(absl::StrFormat("%.1f", absl::ToDoubleMilliseconds(r.wall_time)));
  c.push_back(r.planned ? (r.verified ? "yes" : "NO") : "-");
  c.push_back(Note(r, 100));
  return c;
}

const std::vector<std::string>& Header() {
  static const auto* h = new std::vector<std::string>{
      "input",       "planner", "buffers",    "naive total",
      "lower bound", "peak",    "% of naive", "x lower bound",
      "optimal",     "time ms", "verified",   "note"};
  return *h;
}

std::string Table(const std::vector<CompareRow>& rows) {
  std::vector<std::vector<std::string>> cells = {Header()};
  for (const CompareRow& r : rows) cells.push_back(Cells(r));
  std::vector<size_t> width(Header().size(), 0);
  for (const auto& line : cells) {
    for (size_t i = 0; i < line.size(); ++i)
      width[i] = std::max(width[i], line[i].size());
  }
  std::string out;
  for (const auto& line : cells) {
    std::string text;
    for (size_t i = 0; i < line.size(); ++i) {
      if (i + 1 == line.size() && line[i].empty()) break;
      const std::string pad(width[i] - line[i].size(), ' ');
      // Text columns (input, planner, note) left, numbers right.
      const bool left = i < 2 || i + 1 == line.size();
      absl::StrAppend(
          &text, i == 0 ? "" : "  ",
          left ? absl::StrCat(line[i], pad) : absl::StrCat(pad, line[i]));
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    absl::StrAppend(&out, text, "\n");
  }
  return out;
}

std::string MarkdownEscape(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string Markdown(const std::vector<CompareRow>& rows) {
  std::string out = absl::StrCat("| ", absl::StrJoin(Header(), " | "), " |\n|");
  for (size_t i = 0; i < Header().size(); ++i) {
    absl::StrAppend(&out, i < 2 || i + 1 == Header().size() ? "---|" : "---:|");
  }
  absl::StrAppend(&out, "\n");
  for (const CompareRow& r : rows) {
    std::vector<std::string> c = Cells(r);
    for (std::string& cell : c) cell = MarkdownEscape(cell);
    absl::StrAppend(&out, "| ", absl::StrJoin(c, " | "), " |\n");
  }
  return out;
}

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Csv(const std::vector<CompareRow>& rows) {
  std::string out =
      "input,planner,buffers,naive_total,lower_bound,peak,percent_of_naive,"
      "ratio_to_lower_bound,proven_optimal,wall_time_ms,verified,status\n";
  for (const CompareRow& r : rows) {
    std::vector<std::string> c = {
        CsvField(r.input), CsvField(r.planner), absl::StrCat(r.buffers),
        absl::StrCat(r.naive_total), absl::StrCat(r.lower_bound)};
    if (r.planned) {
      c.push_back(absl::StrCat(r.peak));
      c.push_back(absl::StrFormat("%.4f", PercentOfNaive(r)));
      c.push_back(FormatRatio(r, "%.6f", ""));
      c.push_back(r.proven_optimal ? "1" : "0");
    } else {
      c.insert(c.end(), {"", "", "", ""});
    }
    c.push_back(
        absl::StrFormat("%.3f", absl::ToDoubleMilliseconds(r.wall_time)));
    c.push_back(r.planned ? (r.verified ? "1" : "0") : "");
    c.push_back(r.status.ok() && r.pool_used.size() < 2
                    ? "ok"
                    : CsvField(Note(r, 1000)));
    absl::StrAppend(&out, absl::StrJoin(c, ","), "\n");
  }
  return out;
}

std::string Summary(const std::vector<CompareRow>& rows) {
  // The smallest verified peak per input, to count who found it.
  std::map<std::string, Bytes> best;
  std::vector<std::string> planners;
  for (const CompareRow& r : rows) {
    if (std::find(planners.begin(), planners.end(), r.planner) ==
        planners.end()) {
      planners.push_back(r.planner);
    }
    if (!r.planned || !r.verified) continue;
    auto [it, inserted] = best.emplace(r.input, r.peak);
    if (!inserted) it->second = std::min(it->second, r.peak);
  }
  std::string out =
      "| planner | inputs | planned | failed | geomean x lower bound | worst x "
      "lower bound "
      "| smallest peak | proven optimal | total time s |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const std::string& planner : planners) {
    int inputs = 0, planned = 0, failed = 0, smallest = 0, optimal = 0;
    int ratios = 0;  // plans in one pool
    double log_sum = 0, worst = 0;
    absl::Duration time;
    for (const CompareRow& r : rows) {
      if (r.planner != planner) continue;
      ++inputs;
      time += r.wall_time;
      if (!r.planned || !r.verified) {
        ++failed;
        continue;
      }
      ++planned;
      smallest += r.peak == best[r.input];
      optimal += r.proven_optimal;
      if (const std::optional<double> ratio = RatioToLowerBound(r)) {
        ++ratios;
        log_sum += std::log(*ratio);
        worst = std::max(worst, *ratio);
      }
    }
    const std::string geomean =
        ratios > 0 ? absl::StrFormat("%.4f", std::exp(log_sum / ratios)) : "-";
    const std::string worst_text =
        ratios > 0 ? absl::StrFormat("%.4f", worst) : "-";
    absl::StrAppend(
        &out, absl::StrFormat(
                  "| %s | %d | %d | %d | %s | %s | %d | %d | %.2f |\n",
                  MarkdownEscape(planner), inputs, planned, failed, geomean,
                  worst_text, smallest, optimal, absl::ToDoubleSeconds(time)));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<CompareRow>> ComparePlanners(
    const Problem& problem, std::string_view input_name,
    const CompareOptions& options) {
  MEMPLAN_RETURN_IF_ERROR(ValidateProblem(problem));
  if (options.plan.time_limit < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("the time limit is negative");
  }
  // Every name is checked before anything runs.
  std::vector<std::pair<std::string, std::unique_ptr<Planner>>> planners;
  for (const std::string& name : PlannerNames(options)) {
    MEMPLAN_ASSIGN_OR_RETURN(std::unique_ptr<Planner> planner,
                             CreatePlanner(name));
    planners.emplace_back(name, std::move(planner));
  }
  const Bytes naive_total = NaiveTotal(problem);
  const Bytes lower_bound = LowerBound(problem);
  std::vector<CompareRow> rows;
  for (const auto& [name, planner] : planners) {
    CompareRow row;
    row.input = std::string(input_name);
    row.planner = name;
    row.buffers = static_cast<int64_t>(problem.buffers.size());
    row.naive_total = naive_total;
    row.lower_bound = lower_bound;
    // The steps of PlanMemory, kept apart so that a planner's failure and a
    // plan the verifier rejects land in different columns.
    const absl::Time start = absl::Now();
    absl::StatusOr<Plan> plan = planner->Solve(problem, options.plan);
    row.wall_time = absl::Now() - start;
    if (!plan.ok()) {
      row.status = plan.status();
    } else {
      row.planned = true;
      row.peak = plan->peak;
      row.pool_used = plan->pool_used;
      row.pool_bytes = PoolBytes(problem, *plan);
      for (const Pool& pool : problem.pools)
        row.pool_names.push_back(pool.name);
      row.proven_optimal = plan->proven_optimal;
      row.status = VerifyPlan(problem, *plan);
      row.verified = row.status.ok();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

absl::StatusOr<std::vector<CompareRow>> CompareInputs(
    const std::vector<std::string>& paths, const CompareOptions& options) {
  std::vector<std::pair<std::string, Problem>> inputs;
  for (const std::string& path : paths) {
    absl::StatusOr<LoadedInput> input = LoadInput(path, options.build);
    if (!input.ok()) {
      return absl::Status(
          input.status().code(),
          absl::StrCat(path, ": ", std::string(input.status().message())));
    }
    inputs.emplace_back(std::filesystem::path(path).filename().string(),
                        std::move(input->problem));
  }
  std::vector<CompareRow> rows;
  for (const auto& [name, problem] : inputs) {
    absl::StatusOr<std::vector<CompareRow>> some =
        ComparePlanners(problem, name, options);
    if (!some.ok()) {
      return absl::Status(
          some.status().code(),
          absl::StrCat(name, ": ", std::string(some.status().message())));
    }
    for (CompareRow& r : *some) rows.push_back(std::move(r));
  }
  return rows;
}

bool AnyUnverified(const std::vector<CompareRow>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const CompareRow& r) {
    return r.planned && !r.verified;
  });
}

absl::StatusOr<CompareFormat> ParseCompareFormat(std::string_view name) {
  if (name == "table") return CompareFormat::kTable;
  if (name == "markdown") return CompareFormat::kMarkdown;
  if (name == "csv") return CompareFormat::kCsv;
  if (name == "summary") return CompareFormat::kSummary;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown format \"", std::string(name),
                   "\"; valid: table, markdown, csv, summary"));
}

std::string FormatComparison(const std::vector<CompareRow>& rows,
                             CompareFormat format) {
  switch (format) {
    case CompareFormat::kTable:
      return Table(rows);
    case CompareFormat::kMarkdown:
      return Markdown(rows);
    case CompareFormat::kCsv:
      return Csv(rows);
    case CompareFormat::kSummary:
      return Summary(rows);
  }
  return "";
}

}  // namespace memplan
