// The wire format of the cpsat planner's messages. See wire.h.

#include "wire.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace memplan::cpsat_wire {
namespace {

constexpr int kVarint = 0;
constexpr int kFixed64 = 1;
constexpr int kLengthDelimited = 2;
constexpr int kFixed32 = 5;

void AppendVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// Reads one message's fields in order.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  bool done() const { return at_ == bytes_.size(); }
  size_t at() const { return at_; }

  bool Varint(uint64_t& value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ == bytes_.size()) return false;
      const uint8_t byte = static_cast<uint8_t>(bytes_[at_++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }
  bool Fixed64(uint64_t& value) {
    if (bytes_.size() - at_ < 8) return false;
    value = 0;
    for (int i = 7; i >= 0; --i)
      value = (value << 8) | static_cast<uint8_t>(bytes_[at_ + i]);
    at_ += 8;
    return true;
  }
  bool Bytes(std::string_view& value) {
    uint64_t length = 0;
    if (!Varint(length) || length > bytes_.size() - at_) return false;
    value = bytes_.substr(at_, length);
    at_ += length;
    return true;
  }
  bool Skip(int wire_type) {
    uint64_t ignored = 0;
    std::string_view ignored_bytes;
    switch (wire_type) {
      case kVarint:
        return Varint(ignored);
      case kFixed64:
        return Fixed64(ignored);
      case kLengthDelimited:
        return Bytes(ignored_bytes);
      case kFixed32:
        if (bytes_.size() - at_ < 4) return false;
        at_ += 4;
        return true;
      default:  // groups: not in these messages
        return false;
    }
  }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

double AsDouble(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// A repeated varint field, packed or not.
bool ReadRepeated(Reader& reader, int wire_type, std::vector<int64_t>& out) {
  if (wire_type == kVarint) {
    uint64_t value = 0;
    if (!reader.Varint(value)) return false;
    out.push_back(static_cast<int64_t>(value));
    return true;
  }
  if (wire_type != kLengthDelimited) return false;
  std::string_view packed;
  if (!reader.Bytes(packed)) return false;
  Reader values(packed);
  while (!values.done()) {
    uint64_t value = 0;
    if (!values.Varint(value)) return false;
    out.push_back(static_cast<int64_t>(value));
  }
  return true;
}

}  // namespace

void Writer::Tag(int field, int wire_type) {
  AppendVarint(bytes_, (static_cast<uint64_t>(field) << 3) | wire_type);
}

void Writer::Varint(uint64_t value) { AppendVarint(bytes_, value); }

void Writer::Int(int field, int64_t value) {
  Tag(field, kVarint);
  Varint(static_cast<uint64_t>(value));
}

void Writer::Double(int field, double value) {
  Tag(field, kFixed64);
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  for (int i = 0; i < 8; ++i)
    bytes_.push_back(static_cast<char>(bits >> (8 * i)));
}

void Writer::Packed(int field, std::span<const int64_t> values) {
  if (values.empty()) return;
  std::string packed;
  for (int64_t v : values) AppendVarint(packed, static_cast<uint64_t>(v));
  Tag(field, kLengthDelimited);
  Varint(packed.size());
  bytes_ += packed;
}

void Writer::Packed(int field, std::span<const int32_t> values) {
  if (values.empty()) return;
  std::string packed;
  // int32 is sign-extended to 64 bits on the wire.
  for (int32_t v : values)
    AppendVarint(packed, static_cast<uint64_t>(static_cast<int64_t>(v)));
  Tag(field, kLengthDelimited);
  Varint(packed.size());
  bytes_ += packed;
}

void Writer::Message(int field, const Writer& message) {
  Tag(field, kLengthDelimited);
  Varint(message.bytes_.size());
  bytes_ += message.bytes_;
}

Writer Expression(std::span<const int32_t> vars,
                  std::span<const int64_t> coeffs, int64_t offset) {
  Writer w;
  w.Packed(field::kExpressionVars, vars);
  w.Packed(field::kExpressionCoeffs, coeffs);
  if (offset != 0) w.Int(field::kExpressionOffset, offset);
  return w;
}

absl::StatusOr<Response> ParseResponse(std::string_view bytes) {
  Response response;
  Reader reader(bytes);
  while (!reader.done()) {
    const size_t at = reader.at();
    uint64_t tag = 0;
    bool ok = reader.Varint(tag);
    const int field = static_cast<int>(tag >> 3);
    const int wire_type = static_cast<int>(tag & 7);
    uint64_t value = 0;
    std::string_view text;
    if (ok) {
      switch (field) {
        case field::kResponseStatus:
          ok = wire_type == kVarint && reader.Varint(value);
          response.status = static_cast<SolverStatus>(value);
          break;
        case field::kResponseSolution:
          ok = ReadRepeated(reader, wire_type, response.solution);
          break;
        case field::kResponseObjectiveValue:
          ok = wire_type == kFixed64 && reader.Fixed64(value);
          response.objective_value = AsDouble(value);
          break;
        case field::kResponseBestObjectiveBound:
          ok = wire_type == kFixed64 && reader.Fixed64(value);
          response.best_objective_bound = AsDouble(value);
          break;
        case field::kResponseNumBooleans:
          ok = wire_type == kVarint && reader.Varint(value);
          response.num_booleans = static_cast<int64_t>(value);
          break;
        case field::kResponseNumConflicts:
          ok = wire_type == kVarint && reader.Varint(value);
          response.num_conflicts = static_cast<int64_t>(value);
          break;
        case field::kResponseNumBranches:
          ok = wire_type == kVarint && reader.Varint(value);
          response.num_branches = static_cast<int64_t>(value);
          break;
        case field::kResponseDeterministicTime:
          ok = wire_type == kFixed64 && reader.Fixed64(value);
          response.deterministic_time = AsDouble(value);
          break;
        case field::kResponseSolutionInfo:
          ok = wire_type == kLengthDelimited && reader.Bytes(text);
          response.solution_info = std::string(text);
          break;
        default:
          ok = reader.Skip(wire_type);
      }
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "malformed CpSolverResponse at byte ", at, " of ", bytes.size()));
    }
  }
  return response;
}

}  // namespace memplan::cpsat_wire
