// The protocol buffer wire format of the few CP-SAT messages the cpsat
// planner exchanges with OR-tools' C entry point, written and read by hand.
//
// Why by hand: OR-tools' Python package carries the solver's shared library
// but neither its C++ headers nor its .proto files, and that library brings
// its own protobuf runtime (libprotobuf.so.33). Generated classes would need
// protoc and a second protobuf runtime in the same process as the one the
// ONNX importer links (Debian's 3.21), whose symbols share their names. The
// wire format is stable by design: what both sides agree on is the field
// numbers and types below, taken from the package's own descriptors
// (ortools/sat/cp_model_pb2.py, sat_parameters_pb2.py of ortools 9.15;
// tests/cpsat_wire_test.py checks them against an installed package).

#ifndef MEMPLAN_PLANNERS_CPSAT_WIRE_H_
#define MEMPLAN_PLANNERS_CPSAT_WIRE_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace memplan::cpsat_wire {

// Field numbers (operations_research.sat, cp_model.proto, proto3).
namespace field {
// CpModelProto
inline constexpr int kModelVariables = 2;
inline constexpr int kModelConstraints = 3;
inline constexpr int kModelObjective = 4;
inline constexpr int kModelSolutionHint = 6;
// IntegerVariableProto
inline constexpr int kVariableDomain = 2;
// ConstraintProto
inline constexpr int kConstraintEnforcement = 2;
inline constexpr int kConstraintLinear = 12;
inline constexpr int kConstraintInterval = 19;
inline constexpr int kConstraintNoOverlap = 20;
inline constexpr int kConstraintNoOverlap2D = 21;
inline constexpr int kConstraintExactlyOne = 29;
// LinearConstraintProto
inline constexpr int kLinearVars = 1;
inline constexpr int kLinearCoeffs = 2;
inline constexpr int kLinearDomain = 3;
// IntervalConstraintProto (LinearExpressionProto each)
inline constexpr int kIntervalStart = 4;
inline constexpr int kIntervalEnd = 5;
inline constexpr int kIntervalSize = 6;
// LinearExpressionProto
inline constexpr int kExpressionVars = 1;
inline constexpr int kExpressionCoeffs = 2;
inline constexpr int kExpressionOffset = 3;
// NoOverlapConstraintProto
inline constexpr int kNoOverlapIntervals = 1;
// NoOverlap2DConstraintProto
inline constexpr int kNoOverlap2DX = 1;
inline constexpr int kNoOverlap2DY = 2;
// BoolArgumentProto
inline constexpr int kBoolLiterals = 1;
// CpObjectiveProto
inline constexpr int kObjectiveVars = 1;
inline constexpr int kObjectiveCoeffs = 4;
// PartialVariableAssignment
inline constexpr int kHintVars = 1;
inline constexpr int kHintValues = 2;
// SatParameters (sat_parameters.proto, proto2)
inline constexpr int kParamRandomSeed = 31;
inline constexpr int kParamMaxTimeInSeconds = 36;
inline constexpr int kParamMaxDeterministicTime = 67;
inline constexpr int kParamNumWorkers = 206;
// CpSolverResponse
inline constexpr int kResponseStatus = 1;
inline constexpr int kResponseSolution = 2;
inline constexpr int kResponseObjectiveValue = 3;
inline constexpr int kResponseBestObjectiveBound = 4;
inline constexpr int kResponseNumBooleans = 10;
inline constexpr int kResponseNumConflicts = 11;
inline constexpr int kResponseNumBranches = 12;
inline constexpr int kResponseDeterministicTime = 17;
inline constexpr int kResponseSolutionInfo = 20;
}  // namespace field

// CpSolverStatus.
enum class SolverStatus {
  kUnknown = 0,
  kModelInvalid = 1,
  kFeasible = 2,
  kInfeasible = 3,
  kOptimal = 4,
};

// Appends fields of one message to a byte string.
class Writer {
 public:
  // A varint field (int32, int64, bool, enum; negative values take ten
  // bytes, as protobuf writes them).
  void Int(int field, int64_t value);
  void Double(int field, double value);
  // A packed repeated varint field; nothing when empty.
  void Packed(int field, std::span<const int64_t> values);
  void Packed(int field, std::span<const int32_t> values);
  // A nested message (or bytes).
  void Message(int field, const Writer& message);

  const std::string& bytes() const { return bytes_; }

 private:
  void Tag(int field, int wire_type);
  void Varint(uint64_t value);

  std::string bytes_;
};

// A LinearExpressionProto: sum of coeffs[i] * vars[i] + offset.
Writer Expression(std::span<const int32_t> vars,
                  std::span<const int64_t> coeffs, int64_t offset);

// The fields of a CpSolverResponse the planner reads; the others skipped.
struct Response {
  SolverStatus status = SolverStatus::kUnknown;
  std::vector<int64_t> solution;
  double objective_value = 0;
  double best_objective_bound = 0;
  int64_t num_booleans = 0;
  int64_t num_conflicts = 0;
  int64_t num_branches = 0;
  double deterministic_time = 0;
  std::string solution_info;
};

// InvalidArgument (with the offset) when `bytes` is not a well-formed
// message.
absl::StatusOr<Response> ParseResponse(std::string_view bytes);

}  // namespace memplan::cpsat_wire

#endif  // MEMPLAN_PLANNERS_CPSAT_WIRE_H_
