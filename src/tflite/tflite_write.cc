// A planned model out (WriteTflitePlan) and a model's own offline plan back
// in (TfliteRecordedPlan): memplan/tflite.h.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "memplan/emit.h"
#include "memplan/problem.h"
#include "memplan/tflite.h"
#include "schema_generated.h"

namespace memplan {
namespace {

// TFLM ignores the version; 1 marks arrays memplan writes.
constexpr int32_t kOfflinePlanVersion = 1;

// Flatbuffer index of each of the model's tensors, by graph name.
absl::flat_hash_map<std::string, int> TensorIndices(const TfliteModel& model) {
  absl::flat_hash_map<std::string, int> indices;
  for (int i = 0; i < model.tensor_count; ++i) {
    indices[model.graph.tensors[i].name] = i;
  }
  return indices;
}

// Whether anything but metadata `entry` refers to buffer `buffer`.
bool BufferShared(const tflite::ModelT& model, uint32_t buffer, size_t entry) {
  if (buffer == 0) return true;  // the empty buffer by convention
  for (const auto& subgraph : model.subgraphs) {
    for (const auto& tensor : subgraph->tensors) {
      if (tensor->buffer == buffer) return true;
    }
  }
  for (size_t i = 0; i < model.metadata.size(); ++i) {
    if (i != entry && model.metadata[i]->buffer == buffer) return true;
  }
  return std::find(model.metadata_buffer.begin(), model.metadata_buffer.end(),
                   static_cast<int32_t>(buffer)) != model.metadata_buffer.end();
}

// Puts `data` into the model's OfflineMemoryAllocation entry: the first of
// that name (others removed), its buffer reused when nothing else uses it.
void SetOfflinePlan(tflite::ModelT& model, std::vector<uint8_t> data) {
  auto& metadata = model.metadata;
  int entry = -1;
  for (size_t i = 0; i < metadata.size();) {
    if (metadata[i]->name != kTfliteOfflinePlanName) {
      ++i;
    } else if (entry < 0) {
      entry = static_cast<int>(i++);
    } else {
      metadata.erase(metadata.begin() + i);
    }
  }
  if (entry < 0) {
    auto added = std::make_unique<tflite::MetadataT>();
    added->name = std::string(kTfliteOfflinePlanName);
    entry = static_cast<int>(metadata.size());
    metadata.push_back(std::move(added));
  } else {
    const uint32_t buffer = metadata[entry]->buffer;
    if (buffer < model.buffers.size() && !BufferShared(model, buffer, entry)) {
      model.buffers[buffer]->data = std::move(data);
      return;
    }
  }
  auto buffer = std::make_unique<tflite::BufferT>();
  buffer->data = std::move(data);
  metadata[entry]->buffer = static_cast<uint32_t>(model.buffers.size());
  model.buffers.push_back(std::move(buffer));
}

// A union whose type names a table the file does not hold: FlatBuffers'
// verifier accepts it, and TFLite reads it as no options, but the object API
// would pack the missing table through a null pointer. Written as none.
template <typename Union>
void DropIfEmpty(Union& u) {
  if (u.value == nullptr) u.Reset();
}

void DropEmptyUnions(tflite::ModelT& model) {
  for (const auto& subgraph : model.subgraphs) {
    for (const auto& op : subgraph->operators) {
      DropIfEmpty(op->builtin_options);
      DropIfEmpty(op->builtin_options_2);
    }
    for (const auto& tensor : subgraph->tensors) {
      if (tensor->quantization) DropIfEmpty(tensor->quantization->details);
      if (!tensor->sparsity) continue;
      for (const auto& dim : tensor->sparsity->dim_metadata) {
        DropIfEmpty(dim->array_segments);
        DropIfEmpty(dim->array_indices);
      }
    }
  }
}

absl::Status CheckOrder(const std::vector<int>& op_order, size_t ops) {
  if (op_order.empty()) return absl::OkStatus();
  std::vector<bool> seen(ops, false);
  bool ok = op_order.size() == ops;
  for (const int op : op_order) {
    if (!ok || op < 0 || static_cast<size_t>(op) >= ops || seen[op]) {
      ok = false;
      break;
    }
    seen[op] = true;
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "the op order is no permutation of the model's ", ops, " operators"));
}

}  // namespace

absl::StatusOr<std::vector<int32_t>> TfliteOfflineOffsets(
    const TfliteModel& model, const Problem& problem, const Plan& plan) {
  if (problem.pools.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TFLM has one arena; the plan uses ", problem.pools.size(), " pools"));
  }
  const absl::flat_hash_map<std::string, int> indices = TensorIndices(model);
  std::vector<int32_t> offsets(model.tensor_count, -1);
  for (const Assignment& a : plan.assignments) {
    if (a.buffer < 0 || static_cast<size_t>(a.buffer) >= problem.buffers.size())
      continue;
    const Buffer& buffer = problem.buffers[a.buffer];
    for (const std::string& name : buffer.tensors) {
      const auto it = indices.find(name);
      if (it == indices.end()) continue;  // kernel scratch: TFLM's own
      if (a.offset > std::numeric_limits<int32_t>::max()) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor \"", name, "\" is placed at offset ", a.offset,
                         ", beyond int32"));
      }
      offsets[it->second] = static_cast<int32_t>(a.offset);
    }
  }
  return offsets;
}

std::string TfliteOfflinePlanBytes(const std::vector<int32_t>& offsets) {
  std::vector<int32_t> words = {kOfflinePlanVersion, 0,
                                static_cast<int32_t>(offsets.size())};
  words.insert(words.end(), offsets.begin(), offsets.end());
  return TflmOfflinePlanBytes(words);
}

absl::StatusOr<std::string> WriteTflitePlan(const TfliteModel& model,
                                            const std::vector<int32_t>& offsets,
                                            const std::vector<int>& op_order) {
  if (offsets.size() != static_cast<size_t>(model.tensor_count)) {
    return absl::InvalidArgumentError(
        absl::StrCat(offsets.size(), " offsets for the model's ",
                     model.tensor_count, " tensors"));
  }
  flatbuffers::Verifier verifier(
      reinterpret_cast<const uint8_t*>(model.bytes.data()), model.bytes.size());
  if (!tflite::VerifyModelBuffer(verifier) ||
      tflite::GetModel(model.bytes.data())->subgraphs() == nullptr ||
      tflite::GetModel(model.bytes.data())->subgraphs()->size() == 0) {
    return absl::InvalidArgumentError(
        "the model's bytes are no TFLite model (read it with "
        "ReadTfliteModel)");
  }
  std::unique_ptr<tflite::ModelT> unpacked(
      tflite::GetModel(model.bytes.data())->UnPack());
  for (size_t b = 0; b < unpacked->buffers.size(); ++b) {
    if (unpacked->buffers[b]->offset > 1) {
      return absl::UnimplementedError(absl::StrCat(
          "buffer ", b,
          " lies outside the flatbuffer (a model over 2 GiB); memplan writes "
          "models whose data is inside it"));
    }
  }
  DropEmptyUnions(*unpacked);
  auto& operators = unpacked->subgraphs[0]->operators;
  MEMPLAN_RETURN_IF_ERROR(CheckOrder(op_order, operators.size()));
  if (!op_order.empty()) {
    std::vector<std::unique_ptr<tflite::OperatorT>> ordered;
    for (const int op : op_order) ordered.push_back(std::move(operators[op]));
    operators = std::move(ordered);
  }
  const std::string data = TfliteOfflinePlanBytes(offsets);
  SetOfflinePlan(*unpacked, std::vector<uint8_t>(data.begin(), data.end()));
  flatbuffers::FlatBufferBuilder builder(model.bytes.size() + 1024);
  tflite::FinishModelBuffer(builder,
                            tflite::Model::Pack(builder, unpacked.get()));
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()),
                     builder.GetSize());
}

namespace {

// The graph without kernel scratch; RESHAPE's alias kept only where the plan
// gives its input and output one offset.
Graph RecordedGraph(const TfliteModel& model,
                    const std::vector<int32_t>& offsets) {
  const absl::flat_hash_map<std::string, int> indices = TensorIndices(model);
  Graph graph = model.graph;
  graph.tensors.resize(model.tensor_count);
  for (Op& op : graph.ops) {
    op.scratch.clear();
    std::erase_if(op.alias, [&](const OperandPair& pair) {
      const auto in = indices.find(op.inputs[pair.input]);
      const auto out = indices.find(op.outputs[pair.output]);
      return in == indices.end() || out == indices.end() ||
             offsets[in->second] != offsets[out->second];
    });
  }
  return graph;
}

// `problem` without the buffers of `dropped`, its conflicts renumbered.
Problem WithoutBuffers(const Problem& problem,
                       const std::vector<bool>& dropped) {
  Problem kept;
  kept.name = problem.name;
  kept.pools = problem.pools;
  std::vector<BufferId> index(problem.buffers.size(), -1);
  for (size_t b = 0; b < problem.buffers.size(); ++b) {
    if (dropped[b]) continue;
    index[b] = static_cast<BufferId>(kept.buffers.size());
    kept.buffers.push_back(problem.buffers[b]);
  }
  for (const BufferConflict& c : problem.conflicts) {
    if (index[c.a] >= 0 && index[c.b] >= 0) {
      kept.conflicts.push_back({index[c.a], index[c.b]});
    }
  }
  return kept;
}

}  // namespace

absl::StatusOr<TflitePlanCheck> TfliteRecordedPlan(const TfliteModel& model) {
  if (!model.offline_plan.has_value()) {
    return absl::FailedPreconditionError(
        model.offline_plan_problem.empty()
            ? std::string("the model has no OfflineMemoryAllocation metadata; "
                          "write one with memplan plan MODEL.tflite "
                          "--out=MODEL.planned.tflite")
            : absl::StrCat("the model's offline plan is unusable: ",
                           model.offline_plan_problem));
  }
  const std::vector<int32_t>& offsets = *model.offline_plan;
  TflitePlanCheck check;
  check.graph = RecordedGraph(model, offsets);
  BuildOptions options;
  options.alignment = 16;
  MEMPLAN_ASSIGN_OR_RETURN(Problem built, BuildProblem(check.graph, options));
  const absl::flat_hash_map<std::string, int> indices = TensorIndices(model);
  // Buffers whose every tensor has -1: TFLM places them at run time.
  std::vector<bool> online(built.buffers.size(), true);
  std::vector<Offset> at(built.buffers.size(), 0);
  for (size_t b = 0; b < built.buffers.size(); ++b) {
    for (const std::string& name : built.buffers[b].tensors) {
      const int32_t offset = offsets[indices.at(name)];
      if (offset < -1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "tensor ", indices.at(name), " \"", name,
            "\" has the negative offset ", offset, " in the offline plan"));
      }
      if (offset == -1) continue;
      online[b] = false;
      at[b] = offset;
    }
  }
  check.problem = WithoutBuffers(built, online);
  for (size_t b = 0, kept = 0; b < built.buffers.size(); ++b) {
    if (online[b]) continue;
    const Buffer& buffer = check.problem.buffers[kept];
    check.plan.assignments.push_back(
        {.buffer = static_cast<BufferId>(kept), .pool = 0, .offset = at[b]});
    check.plan.peak = std::max(check.plan.peak, at[b] + buffer.size);
    ++kept;
  }
  check.plan.pool_used = {check.plan.peak};
  check.plan.naive_total = NaiveTotal(check.problem);
  check.plan.lower_bound = LowerBound(check.problem);
  check.plan.planner = "offline plan";
  return check;
}

}  // namespace memplan
