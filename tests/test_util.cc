#include "test_util.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "base/arith.h"

namespace memplan::testing {

std::string DataPath(std::string_view relative) {
  return absl::StrCat(MEMPLAN_DATA_DIR, "/", std::string(relative));
}

std::vector<std::string> ModelGraphs() {
  std::vector<std::string> out;
  for (const char* name :
       {"alexnet", "deeplabv3_mobilenet_v3_large", "densenet121",
        "efficientnet_b0", "inception_v3", "mobilenet_v2", "mobilenet_v3_large",
        "mobilenet_v3_small", "resnet18", "resnet50", "shufflenet_v2_x1_0",
        "squeezenet1_1", "transformer_encoder_6l", "vgg16", "vit_b_16"}) {
    out.push_back(absl::StrCat("models/", name, ".json"));
  }
  return out;
}

std::vector<std::string> TrainingGraphs() {
  std::vector<std::string> out;
  for (const char* name : {"mlp_train", "mobilenet_v2_train", "resnet18_train",
                           "transformer_lm_train"}) {
    out.push_back(absl::StrCat("training/", name, ".json"));
  }
  return out;
}

std::vector<std::string> TraceCsvs() {
  return {"traces/G_1.csv", "traces/S_1.csv", "traces/somas_resnet50.csv"};
}

std::vector<std::string> MinimallocCsvs() {
  std::vector<std::string> out;
  for (char c = 'A'; c <= 'K'; ++c)
    out.push_back(
        absl::StrCat("minimalloc/", std::string(1, c), ".1048576.csv"));
  return out;
}

absl::StatusOr<Problem> LoadProblem(std::string_view relative,
                                    const BuildOptions& options) {
  absl::StatusOr<LoadedInput> input = LoadInput(DataPath(relative), options);
  if (!input.ok()) return input.status();
  return std::move(input->problem);
}

namespace {

ToolRun RunCommand(const std::string& command) {
  ToolRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char chunk[4096];
  size_t n = 0;
  while ((n = fread(chunk, 1, sizeof(chunk), pipe)) > 0)
    run.output.append(chunk, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace

ToolRun RunTool(const std::string& args) {
  return RunCommand(std::string(MEMPLAN_TOOL) + " " + args + " 2>&1");
}

ToolRun RunToolStdout(const std::string& args) {
  return RunCommand(std::string(MEMPLAN_TOOL) + " " + args + " 2>/dev/null");
}

std::vector<std::string> OffsetMacros(const std::string& header) {
  std::vector<std::string> macros;
  std::istringstream lines(header);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string define, name;
    words >> define >> name;
    name = name.substr(0, name.find('('));
    if (define == "#define" && name.size() > 7 &&
        name.compare(name.size() - 7, 7, "_OFFSET") == 0) {
      macros.push_back(name);
    }
  }
  return macros;
}

Problem RandomProblem(uint64_t seed, const RandomProblemOptions& options) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) {  // inclusive
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Problem problem;
  problem.name = absl::StrCat("random_", seed);
  for (int p = 0; p < std::max(1, options.pools); ++p) {
    Pool pool{.name = absl::StrCat("p", p), .capacity = 0, .alignment = 1};
    if (options.alignments) pool.alignment = int64_t{1} << uniform(0, 3);
    if (p + 1 < options.pools) pool.capacity = options.capacity;
    problem.pools.push_back(pool);
  }
  for (int i = 0; i < options.buffers; ++i) {
    Buffer b;
    b.name = absl::StrCat("b", i);
    b.tensors = {b.name};
    b.lifetime.start = uniform(0, std::max<Step>(0, options.horizon - 1));
    b.lifetime.end =
        b.lifetime.start + uniform(1, std::max<Step>(1, options.max_lifetime));
    if (options.alignments) b.alignment = int64_t{1} << uniform(0, 4);
    b.size = internal::RoundUp(uniform(1, options.max_size), b.alignment);
    if (options.pools > 1 && uniform(0, 3) == 0) {
      // A random non-empty subset of the pools, in a random preference order.
      std::vector<PoolId> all(options.pools);
      for (int p = 0; p < options.pools; ++p) all[p] = p;
      std::shuffle(all.begin(), all.end(), rng);
      all.resize(uniform(1, options.pools));
      // Keep the last, unbounded pool allowed so the problem stays feasible.
      if (std::find(all.begin(), all.end(), options.pools - 1) == all.end()) {
        all.push_back(options.pools - 1);
      }
      b.pools = all;
    }
    problem.buffers.push_back(std::move(b));
  }
  // Fixed buffers are stacked in the last pool so they never overlap.
  Offset top = 0;
  const PoolId last = static_cast<PoolId>(problem.pools.size()) - 1;
  for (int k = 0; k < std::min(options.fixed, options.buffers); ++k) {
    Buffer& b =
        problem.buffers[k * options.buffers / std::max(1, options.fixed)];
    const Bytes align = std::max(b.alignment, problem.pools[last].alignment);
    top = internal::RoundUp(top, align);
    b.fixed = Placement{.pool = last, .offset = top};
    if (!b.pools.empty() &&
        std::find(b.pools.begin(), b.pools.end(), last) == b.pools.end()) {
      b.pools.push_back(last);
    }
    top += b.size;
  }
  for (int k = 0; k < options.explicit_conflicts && options.buffers > 1; ++k) {
    BufferId a = static_cast<BufferId>(uniform(0, options.buffers - 1));
    BufferId c = static_cast<BufferId>(uniform(0, options.buffers - 1));
    if (a == c) continue;
    problem.conflicts.push_back({.a = std::min(a, c), .b = std::max(a, c)});
  }
  return problem;
}

Graph RandomGraph(uint64_t seed, int ops) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) {  // inclusive
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Graph graph;
  graph.name = absl::StrCat("random_graph_", seed);
  std::vector<std::string> available;  // tensors an op may read
  auto add = [&](TensorKind kind, Bytes size) {
    Tensor t{.name = absl::StrCat("t", graph.tensors.size()),
             .size = size,
             .kind = kind};
    if (uniform(0, 5) == 0) t.alignment = int64_t{1} << uniform(0, 6);
    graph.tensors.push_back(t);
    return graph.tensors.back().name;
  };
  for (int i = uniform(1, 3); i > 0; --i)
    available.push_back(add(TensorKind::kInput, uniform(1, 200)));
  for (int i = uniform(0, 2); i > 0; --i)
    available.push_back(add(TensorKind::kConstant, uniform(1, 200)));
  auto size_of = [&](const std::string& name) {
    return graph.tensors[std::stoi(name.substr(1))].size;
  };
  for (int i = 0; i < ops; ++i) {
    Op op{.name = absl::StrCat("op", i), .type = "Random"};
    const int num_inputs = static_cast<int>(uniform(1, 3));
    for (int k = 0; k < num_inputs; ++k) {
      const std::string& name = available[uniform(0, available.size() - 1)];
      if (std::find(op.inputs.begin(), op.inputs.end(), name) ==
          op.inputs.end()) {
        op.inputs.push_back(name);
      }
    }
    const int num_outputs = static_cast<int>(uniform(1, 2));
    for (int k = 0; k < num_outputs; ++k) {
      const int in = static_cast<int>(uniform(0, op.inputs.size() - 1));
      const int kind = static_cast<int>(uniform(0, 5));
      Bytes size = uniform(1, 200);
      if (kind == 0) {  // a view of an input: spans no more than its base
        size = uniform(1, size_of(op.inputs[in]));
        op.alias.push_back({.output = k, .input = in});
      } else if (kind == 1 || kind == 2) {  // may reuse an input
        op.inplace.push_back({.output = k, .input = in});
      }
      op.outputs.push_back(add(TensorKind::kActivation, size));
    }
    if (uniform(0, 3) == 0) {
      op.scratch.push_back(add(TensorKind::kScratch, uniform(1, 200)));
    }
    available.insert(available.end(), op.outputs.begin(), op.outputs.end());
    graph.ops.push_back(std::move(op));
  }
  // The last op's outputs and a few others become graph outputs.
  for (const std::string& name : graph.ops.back().outputs) {
    graph.tensors[std::stoi(name.substr(1))].kind = TensorKind::kOutput;
  }
  for (Tensor& t : graph.tensors) {
    if (t.kind == TensorKind::kActivation && uniform(0, 9) == 0)
      t.kind = TensorKind::kOutput;
  }
  // Explicit conflicts between tensors no view shares (a view and its base
  // cannot conflict).
  std::vector<std::string> in_views;
  for (const Op& op : graph.ops) {
    for (const OperandPair& pair : op.alias) {
      in_views.push_back(op.outputs[pair.output]);
      in_views.push_back(op.inputs[pair.input]);
    }
  }
  auto pick = [&] {
    return graph.tensors[uniform(0, graph.tensors.size() - 1)].name;
  };
  for (int k = static_cast<int>(uniform(0, 3)); k > 0; --k) {
    const std::string a = pick();
    const std::string b = pick();
    if (a == b || absl::c_linear_search(in_views, a) ||
        absl::c_linear_search(in_views, b)) {
      continue;
    }
    graph.conflicts.push_back({.a = a, .b = b});
  }
  return graph;
}

}  // namespace memplan::testing
