// memplan: the command-line tool. `memplan --help` lists the commands,
// `memplan COMMAND --help` describes one. Exit status: 0 on success, 1 when
// the work fails (an input that cannot be read, an invalid plan, a planner
// error), 2 on a usage error (an unknown command or flag, a bad flag value,
// missing arguments).

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "commands.h"
#include "flags.h"
#include "memplan/spelling.h"
#ifdef MEMPLAN_HAVE_CP
#include "memplan/planners/cp.h"
#endif
#ifdef MEMPLAN_HAVE_CPSAT
#include "memplan/planners/cpsat.h"
#endif

#ifndef MEMPLAN_VERSION
#define MEMPLAN_VERSION "unknown"
#endif

namespace memplan::tool {
namespace {

constexpr int kUsageError = 2;

const std::vector<Command>& Commands() {
  static const auto* const kCommands = new std::vector<Command>{
      PlanCommand(),    VerifyCommand(), StatsCommand(), PlannersCommand(),
      CompareCommand(), ReportCommand(), RematCommand(),
  };
  return *kCommands;
}

std::string Synopsis(const Command& command) {
  return absl::StrCat("memplan ", command.name,
                      command.synopsis.empty() ? "" : " ", command.synopsis);
}

std::string ToolUsage() {
  std::string out =
      "memplan: plans where every tensor of a compiled ML program lives in "
      "memory.\n\nusage:\n";
  for (const Command& command : Commands()) {
    absl::StrAppend(&out, "  ", Synopsis(command), "\n");
  }
  absl::StrAppend(
      &out,
      "  memplan --version\n\n"
      "INPUT is a memplan-graph-v1 JSON (.json, .json.gz), a buffer CSV "
      "(.csv)\nor an ONNX model (.onnx); --dim NAME=VALUE binds a symbolic "
      "dimension\n(a graph JSON's \"dims\", an ONNX dim_param).\n"
      "A file may hold at most 2 GiB once decompressed (--max-input-size "
      "raises it),\na name at most 64 KiB; directories and devices are "
      "refused.\n"
      "Sizes take units: 512KiB, 2M (K, M, G, T = powers of 1024; KB, MB, "
      "GB, TB =\npowers of 1000).\n"
      "Run `memplan COMMAND --help` for a command's flags. Exit status: 0 "
      "success,\n1 failure, 2 usage error.\n");
  return out;
}

std::string CommandUsage(const Command& command) {
  std::string out = absl::StrCat("usage: ", Synopsis(command), "\n\n");
  // The description wrapped to 80 columns.
  std::string line;
  for (absl::string_view word : absl::StrSplit(command.description, ' ')) {
    if (!line.empty() && line.size() + word.size() >= 80) {
      absl::StrAppend(&out, line, "\n");
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  absl::StrAppend(&out, line, "\n");
  if (!command.flags.empty()) {
    absl::StrAppend(&out, "\nflags:\n", FlagHelp(command.flags));
  }
  absl::StrAppend(&out, "  -h, --help\n      this text\n");
  return out;
}

int UsageError(absl::string_view context, absl::string_view message,
               absl::string_view help) {
  std::cerr << context << ": " << message << "\nRun `" << help
            << " --help` for usage.\n";
  return kUsageError;
}

// A plan or report written to standard output and lost (a full disk, a
// closed pipe) is an error, not a success: flush and check.
int CheckStandardOutput(const std::string& context) {
  std::cout.flush();
  if (std::cout.fail() || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    const int error = errno;
    std::cerr << context << ": writing standard output failed"
              << (error != 0 ? absl::StrCat(": ", std::strerror(error)) : "")
              << "\n";
    return 1;
  }
  return 0;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << ToolUsage();
    return kUsageError;
  }
  const std::string& name = args[0];
  if (name == "-h" || name == "--help" || name == "help") {
    std::cout << ToolUsage();
    return CheckStandardOutput("memplan");
  }
  if (name == "--version") {
    std::cout << "memplan " << MEMPLAN_VERSION << "\n";
    return CheckStandardOutput("memplan");
  }
  const Command* command = nullptr;
  for (const Command& c : Commands()) {
    if (c.name == name) command = &c;
  }
  if (command == nullptr) {
    std::vector<std::string> names;
    for (const Command& c : Commands()) names.emplace_back(c.name);
    return UsageError(
        "memplan",
        absl::StrCat("unknown command \"", name, "\"", DidYouMean(name, names)),
        "memplan");
  }
  const std::string context = absl::StrCat("memplan ", command->name);
  absl::StatusOr<Arguments> parsed = ParseArguments(
      std::vector<std::string>(args.begin() + 1, args.end()), command->flags);
  if (!parsed.ok()) {
    return UsageError(context, parsed.status().message(), context);
  }
  if (parsed->help) {
    std::cout << CommandUsage(*command);
    return CheckStandardOutput(context);
  }
  const int count = static_cast<int>(parsed->positional.size());
  if (count < command->min_positional ||
      (command->max_positional >= 0 && count > command->max_positional)) {
    return UsageError(context, absl::StrCat("expected ", Synopsis(*command)),
                      context);
  }
  if (command->check != nullptr) {
    if (absl::Status s = command->check(*parsed); !s.ok()) {
      return UsageError(context, s.message(), context);
    }
  }
  if (absl::Status s = command->run(*parsed); !s.ok()) {
    std::cerr << context << ": " << s.message() << "\n";
    return 1;
  }
  return CheckStandardOutput(context);
}

}  // namespace
}  // namespace memplan::tool

int main(int argc, char** argv) {
#ifdef __GLIBC__
  // A large input allocates and frees arrays of hundreds of megabytes, one
  // phase after another (reading, planning, verifying, writing). Kept in
  // the heap, freed memory serves the next phase, where memory mapped for
  // each array and unmapped after it was faulted in (and zeroed by the
  // kernel) page by page again: at 10^6 buffers that was 0.25 s of system
  // time, about half the page faults.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
#ifdef MEMPLAN_HAVE_CP
  // The optional planners this build links, before anything looks one up.
  if (absl::Status s = memplan::RegisterCpPlanner(); !s.ok()) {
    std::cerr << "memplan: " << s.message() << "\n";
    return 1;
  }
#endif
#ifdef MEMPLAN_HAVE_CPSAT
  if (absl::Status s = memplan::RegisterCpsatPlanner(); !s.ok()) {
    std::cerr << "memplan: " << s.message() << "\n";
    return 1;
  }
#endif
  return memplan::tool::Main(argc, argv);
}
