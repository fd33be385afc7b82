// The buffer CSV (MiniMalloc's format, memplan/io.h): ParseBufferCsv and
// BufferCsvText. Both are on the path of 10^6-row inputs, so the reader
// works a record at a time on views of the text and the writer formats each
// row into one buffer; the comments say what each shortcut saved.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "memplan/formats.h"
#include "memplan/problem.h"

namespace memplan {
namespace {

bool IsBlank(char c) { return c != '\n' && absl::ascii_isspace(c); }

// A field for an error message: as it is, or when longer than a name may be,
// its start and its length.
std::string Excerpt(absl::string_view field) {
  if (field.size() <= 64) return std::string(field);
  return absl::StrCat(field.substr(0, 32), "... (", field.size(), " bytes)");
}

// Reads CSV text (RFC 4180) one record at a time: a field in double quotes
// may hold commas, line breaks and doubled quotes. Outside quotes, spaces and
// tabs around a field and a carriage return before a line break are dropped;
// blank lines are skipped. A record at a time rather than a table of every
// field: at 10^6 rows, filling the table's memory cost as much as the rest of
// the parse.
class CsvReader {
 public:
  // `text` must outlive the reader.
  explicit CsvReader(absl::string_view text) : text_(text) {}

  // Reads the next record; false at the end of the text, or with `*status`
  // set when a quoted field is malformed.
  bool Next(absl::Status* status);

  // The record's fields: views of the text, or for a quoted field of its
  // unescaped copy, valid until the next call.
  std::span<const absl::string_view> fields() const { return fields_; }
  // The line the record starts on (1-based).
  int line() const { return record_line_; }

  // The first malformed quoted field in the rest of the text, if any.
  absl::Status Rest() {
    absl::Status status;
    while (Next(&status)) {
    }
    return status;
  }

 private:
  absl::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int record_line_ = 0;
  bool done_ = false;
  std::vector<absl::string_view> fields_;
  std::deque<std::string> unquoted_;  // a deque: views stay valid as it grows
};

bool CsvReader::Next(absl::Status* status) {
  const absl::string_view text = text_;
  const size_t n = text.size();
  while (!done_) {
    fields_.clear();
    if (!unquoted_.empty()) unquoted_.clear();
    record_line_ = line_;
    bool any = false;  // the record has a comma or a quoted field
    size_t k = pos_;
    while (true) {
      while (k < n && IsBlank(text[k])) ++k;
      if (k < n && text[k] == '"') {
        any = true;
        std::string& value = unquoted_.emplace_back();
        for (++k;; ++k) {
          if (k >= n) {
            done_ = true;
            *status = absl::InvalidArgumentError(absl::StrCat(
                "CSV line ", record_line_, ": a quoted field is not closed"));
            return false;
          }
          if (text[k] == '"') {
            if (k + 1 < n && text[k + 1] == '"') {
              value += '"';
              ++k;
              continue;
            }
            break;
          }
          if (text[k] == '\n') ++line_;
          value += text[k];
        }
        for (++k; k < n && IsBlank(text[k]);) ++k;
        if (k < n && text[k] != ',' && text[k] != '\n') {
          done_ = true;
          *status = absl::InvalidArgumentError(
              absl::StrCat("CSV line ", line_, ": text after a quoted field"));
          return false;
        }
        fields_.push_back(value);
      } else {
        const size_t begin = k;
        while (k < n && text[k] != ',' && text[k] != '\n') ++k;
        size_t end = k;
        while (end > begin && absl::ascii_isspace(text[end - 1])) --end;
        fields_.push_back(text.substr(begin, end - begin));
      }
      if (k < n && text[k] == ',') {
        any = true;
        ++k;
        continue;
      }
      break;
    }
    if (k >= n) {
      done_ = true;
    } else {
      pos_ = k + 1;  // past the line break
      ++line_;
    }
    if (any || !fields_[0].empty()) return true;  // else a blank line
  }
  return false;
}

// Appends `s` as a CSV field, quoted where the reader would not give it back
// as it is.
void AppendCsvField(absl::string_view s, std::string* out) {
  bool plain = !s.empty() && !absl::ascii_isspace(s.front()) &&
               !absl::ascii_isspace(s.back());
  for (size_t i = 0; plain && i < s.size(); ++i) {
    plain = s[i] != ',' && s[i] != '"' && s[i] != '\r' && s[i] != '\n';
  }
  if (plain) {
    out->append(s.data(), s.size());
    return;
  }
  *out += '"';
  for (char c : s) {
    if (c == '"') *out += '"';
    *out += c;
  }
  *out += '"';
}

// An integer as the CSV formats write it: an optional '-' and digits, inside
// int64. By hand rather than absl::SimpleAtoi, which checks again for the
// signs, spaces and bases the format has no use for: at 10^6 rows that was a
// tenth of the parse.
inline bool ParseCsvInt(absl::string_view s, int64_t* value) {
  const bool negative = !s.empty() && s[0] == '-';
  const char* p = s.data() + (negative ? 1 : 0);
  const char* const end = s.data() + s.size();
  if (p == end) return false;
  uint64_t magnitude = 0;  // unsigned: -2^63 is an int64, 2^63 is none
  if (end - p <= 18) {
    // No overflow this short. Two digits a step halve the chain of
    // multiplications: 3 * 10^6 numbers took 11 ms instead of 21.
    if ((end - p) % 2 != 0) {
      const uint64_t digit = static_cast<unsigned char>(*p++) - uint64_t{'0'};
      if (digit > 9) return false;
      magnitude = digit;
    }
    for (; p < end; p += 2) {
      const uint64_t high = static_cast<unsigned char>(p[0]) - uint64_t{'0'};
      const uint64_t low = static_cast<unsigned char>(p[1]) - uint64_t{'0'};
      if ((high > 9) | (low > 9)) return false;
      magnitude = magnitude * 100 + high * 10 + low;
    }
  } else {
    const uint64_t max = (uint64_t{1} << 63) - (negative ? 0 : 1);
    for (; p < end; ++p) {
      const uint64_t digit = static_cast<unsigned char>(*p) - uint64_t{'0'};
      if (digit > 9) return false;
      if (magnitude > (max - digit) / 10) return false;
      magnitude = magnitude * 10 + digit;
    }
  }
  *value = static_cast<int64_t>(negative ? 0 - magnitude : magnitude);
  return true;
}

bool ValidUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int extra = 0;
    uint32_t code = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      code = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      code = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      code = c & 0x07;
    } else {
      return false;
    }
    if (i + extra >= s.size()) return false;
    for (int k = 1; k <= extra; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      code = (code << 6) | (d & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (code < kMin[extra] || code > 0x10FFFF ||
        (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    i += extra + 1;
  }
  return true;
}

// The index of the first of `buffers` whose name repeats an earlier one's, or
// -1. `hashes[i]` is the hash of buffers[i]'s name. An open-addressing table
// of (hash, index) rather than a set of names: a probe compares names only on
// equal hashes, so it reads the table and not the names, and the next rows'
// slots can be fetched ahead. Probing the same table as each row was read,
// with nothing fetched ahead, cost 140 ms more at 10^6 rows.
int64_t FirstRepeatedName(std::span<const Buffer> buffers,
                          std::span<const uint64_t> hashes) {
  size_t slots = 16;
  while (slots < 2 * buffers.size()) slots *= 2;
  const size_t mask = slots - 1;
  // A slot holds the hash's upper half and the index + 1; 0 is empty.
  std::vector<uint64_t> table(slots, 0);
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (i + kAhead < buffers.size()) {
      __builtin_prefetch(&table[hashes[i + kAhead] & mask]);
    }
    const uint64_t tag = hashes[i] >> 32;
    for (size_t s = hashes[i] & mask;; s = (s + 1) & mask) {
      const uint64_t slot = table[s];
      if (slot == 0) {
        table[s] = tag << 32 | (i + 1);
        break;
      }
      if (slot >> 32 == tag &&
          buffers[(slot & 0xFFFFFFFF) - 1].name == buffers[i].name) {
        return static_cast<int64_t>(i);
      }
    }
  }
  return -1;
}

enum class CsvColumn { kId, kLower, kUpper, kSize, kOffset, kPool };

// ParseBufferCsv's state: the columns of the header, the buffers read so
// far with the hashes of their names, and the offsets and pools of a plan.
// One pass over the rows; an error found in a row first looks for an
// earlier one (Fail).
class BufferCsvParser {
 public:
  // `text` must outlive the parser.
  explicit BufferCsvParser(absl::string_view text)
      : text_(text), reader_(text) {}

  absl::StatusOr<BufferCsv> Parse();

 private:
  // The errors come in the order of a check of the whole text's quoting
  // first, then of the rows one by one, each row's id checked for a repeat
  // after its emptiness and encoding; the rows are read once, so an error
  // found in a row first looks for an earlier one. The first `checked`
  // buffers have had their ids checked for a repeat.
  absl::Status Fail(absl::Status error, size_t checked);
  // The header names the columns, in any order, each once.
  absl::Status ReadHeader();
  absl::Status CheckColumns(const std::string& where);
  // One row: a buffer, and with an offset column its assignment.
  absl::Status ReadRow(std::span<const absl::string_view> row);
  absl::Status ReadLifetimeAndSize(std::span<const absl::string_view> row,
                                   Buffer& buffer);
  absl::Status ReadPlacement(std::span<const absl::string_view> row);
  // "CSV line L" of the current record. Made only for an error: building it
  // for every row costs more than the row.
  std::string Where() const {
    return absl::StrCat("CSV line ", reader_.line());
  }
  absl::Status NotInteger(std::span<const absl::string_view> row, int c) const;

  const absl::string_view text_;
  CsvReader reader_;
  BufferCsv csv_;
  // Each buffer's hash of its name, for FirstRepeatedName.
  std::vector<uint64_t> hashes_;
  std::vector<Assignment> assignments_;
  absl::flat_hash_map<std::string, PoolId> pool_index_;
  std::vector<std::string> names_;  // the header's column names, lower case
  int col_[6] = {-1, -1, -1, -1, -1, -1};  // by CsvColumn: the field index
  int col_id_ = -1, col_lower_ = -1, col_upper_ = -1, col_size_ = -1;
  int col_offset_ = -1, col_pool_ = -1;
  bool start_end_ = false;  // start/end: MiniMalloc reads end as inclusive
};

absl::Status BufferCsvParser::Fail(absl::Status error, size_t checked) {
  MEMPLAN_RETURN_IF_ERROR(reader_.Rest());
  const std::vector<Buffer>& buffers = csv_.problem.buffers;
  const int64_t repeat = FirstRepeatedName(std::span(buffers).first(checked),
                                           std::span(hashes_).first(checked));
  if (repeat < 0) return error;
  CsvReader again(text_);
  absl::Status ignored;
  for (int64_t r = 0; r <= repeat + 1; ++r) again.Next(&ignored);
  return absl::InvalidArgumentError(
      absl::StrCat("CSV line ", again.line(), ": buffer id \"",
                   buffers[repeat].name, "\" appears twice"));
}

absl::Status BufferCsvParser::ReadHeader() {
  const std::span<const absl::string_view> header = reader_.fields();
  const std::string where = Where();
  bool lower_upper = false;
  for (int c = 0; c < static_cast<int>(header.size()); ++c) {
    const std::string name = absl::AsciiStrToLower(header[c]);
    CsvColumn column;
    if (name == "id" || name == "buffer") {
      column = CsvColumn::kId;
    } else if (name == "lower" || name == "start") {
      column = CsvColumn::kLower;
    } else if (name == "upper" || name == "end") {
      column = CsvColumn::kUpper;
    } else if (name == "size") {
      column = CsvColumn::kSize;
    } else if (name == "offset") {
      column = CsvColumn::kOffset;
    } else if (name == "pool") {
      column = CsvColumn::kPool;
    } else {
      return Fail(absl::InvalidArgumentError(absl::StrCat(
                      where, ": unknown column \"", Excerpt(header[c]),
                      "\" (expected id,lower,upper,size[,offset][,pool])")),
                  0);
    }
    (name == "start" || name == "end" ? start_end_ : lower_upper) |=
        column == CsvColumn::kLower || column == CsvColumn::kUpper;
    int& slot = col_[static_cast<int>(column)];
    if (slot >= 0) {
      return Fail(absl::InvalidArgumentError(
                      absl::StrCat(where, ": column \"", header[c],
                                   "\" repeats column \"", header[slot], "\"")),
                  0);
    }
    slot = c;
    names_.push_back(name);
  }
  if (start_end_ && lower_upper) {
    return Fail(absl::InvalidArgumentError(
                    absl::StrCat(where,
                                 ": use lower,upper (half-open) or start,end "
                                 "(closed), not a mix")),
                0);
  }
  return CheckColumns(where);
}

absl::Status BufferCsvParser::CheckColumns(const std::string& where) {
  col_id_ = col_[static_cast<int>(CsvColumn::kId)];
  col_lower_ = col_[static_cast<int>(CsvColumn::kLower)];
  col_upper_ = col_[static_cast<int>(CsvColumn::kUpper)];
  col_size_ = col_[static_cast<int>(CsvColumn::kSize)];
  col_offset_ = col_[static_cast<int>(CsvColumn::kOffset)];
  col_pool_ = col_[static_cast<int>(CsvColumn::kPool)];
  if (col_id_ < 0 || col_lower_ < 0 || col_upper_ < 0 || col_size_ < 0) {
    return Fail(
        absl::InvalidArgumentError(absl::StrCat(
            where,
            ": the header must name the columns id, lower, upper and size")),
        0);
  }
  if (col_pool_ >= 0 && col_offset_ < 0) {
    return Fail(
        absl::InvalidArgumentError(absl::StrCat(
            where, ": a pool column belongs to a plan, with an offset")),
        0);
  }
  return absl::OkStatus();
}

absl::Status BufferCsvParser::NotInteger(std::span<const absl::string_view> row,
                                         int c) const {
  return absl::InvalidArgumentError(absl::StrCat(
      Where(), ", column ", c + 1, " (\"", names_[c], "\"): \"",
      Excerpt(row[c]),
      "\" is not an integer (digits with an optional '-') or overflows "
      "int64"));
}

inline absl::Status BufferCsvParser::ReadRow(
    std::span<const absl::string_view> row) {
  std::vector<Buffer>& buffers = csv_.problem.buffers;
  if (row.size() != names_.size()) {
    return Fail(absl::InvalidArgumentError(
                    absl::StrCat(Where(), ": ", row.size(),
                                 " fields, the header has ", names_.size())),
                buffers.size());
  }
  const absl::string_view id = row[col_id_];
  if (id.empty()) {
    return Fail(absl::InvalidArgumentError(Where() + ": empty id"),
                buffers.size());
  }
  if (id.size() > kMaxNameBytes) {
    return Fail(
        absl::InvalidArgumentError(absl::StrCat(
            Where(), ": the id \"", Excerpt(id),
            "\" is longer than the limit of ", kMaxNameBytes, " bytes")),
        buffers.size());
  }
  if (!ValidUtf8(id)) {
    return Fail(absl::InvalidArgumentError(
                    absl::StrCat(Where(), ": the id is not valid UTF-8")),
                buffers.size());
  }
  Buffer& buffer = buffers.emplace_back();
  buffer.name.assign(id.data(), id.size());
  hashes_.push_back(absl::Hash<absl::string_view>{}(id));
  buffer.tensors = {buffer.name};
  // This row's id counts among the checked from here on.
  if (absl::Status s = ReadLifetimeAndSize(row, buffer); !s.ok()) {
    return Fail(std::move(s), buffers.size());
  }
  if (col_offset_ >= 0) {
    if (absl::Status s = ReadPlacement(row); !s.ok()) {
      return Fail(std::move(s), buffers.size());
    }
  }
  return absl::OkStatus();
}

inline absl::Status BufferCsvParser::ReadLifetimeAndSize(
    std::span<const absl::string_view> row, Buffer& buffer) {
  if (!ParseCsvInt(row[col_lower_], &buffer.lifetime.start)) {
    return NotInteger(row, col_lower_);
  }
  if (!ParseCsvInt(row[col_upper_], &buffer.lifetime.end)) {
    return NotInteger(row, col_upper_);
  }
  if (!ParseCsvInt(row[col_size_], &buffer.size)) {
    return NotInteger(row, col_size_);
  }
  if (buffer.lifetime.start < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(Where(), ": buffer \"", buffer.name, "\" has a negative ",
                     names_[col_lower_], " ", buffer.lifetime.start));
  }
  if (start_end_) {
    if (buffer.lifetime.end >= kMaxStep) {
      return absl::InvalidArgumentError(
          absl::StrCat(Where(), ": end ", buffer.lifetime.end,
                       " is beyond the largest supported step ", kMaxStep));
    }
    ++buffer.lifetime.end;  // closed [start, end] is half-open [start, end+1)
  }
  if (buffer.lifetime.start >= buffer.lifetime.end) {
    return absl::InvalidArgumentError(absl::StrCat(
        Where(), ": buffer \"", buffer.name, "\" has ", names_[col_lower_], " ",
        buffer.lifetime.start, start_end_ ? " > " : " >= ", names_[col_upper_],
        " ", buffer.lifetime.end - (start_end_ ? 1 : 0)));
  }
  if (buffer.size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(Where(), ": buffer \"", buffer.name,
                     "\" has a negative size ", buffer.size));
  }
  return absl::OkStatus();
}

absl::Status BufferCsvParser::ReadPlacement(
    std::span<const absl::string_view> row) {
  Assignment a{.buffer =
                   static_cast<BufferId>(csv_.problem.buffers.size() - 1)};
  if (!ParseCsvInt(row[col_offset_], &a.offset)) {
    return NotInteger(row, col_offset_);
  }
  if (col_pool_ >= 0) {
    const absl::string_view pool = row[col_pool_];
    if (pool.size() > kMaxNameBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          Where(), ": the pool \"", Excerpt(pool),
          "\" is longer than the limit of ", kMaxNameBytes, " bytes"));
    }
    if (pool.empty() || !ValidUtf8(pool)) {
      return absl::InvalidArgumentError(
          absl::StrCat(Where(), ": the pool is empty or not valid UTF-8"));
    }
    auto it = pool_index_.find(pool);
    if (it == pool_index_.end()) {
      it = pool_index_
               .emplace(std::string(pool),
                        static_cast<PoolId>(csv_.problem.pools.size()))
               .first;
      csv_.problem.pools.push_back(Pool{.name = std::string(pool)});
    }
    a.pool = it->second;
  }
  assignments_.push_back(a);
  return absl::OkStatus();
}

absl::StatusOr<BufferCsv> BufferCsvParser::Parse() {
  absl::Status status;
  if (!reader_.Next(&status)) {
    MEMPLAN_RETURN_IF_ERROR(status);
    return absl::InvalidArgumentError(
        "the CSV is empty (expected a header id,lower,upper,size)");
  }
  MEMPLAN_RETURN_IF_ERROR(ReadHeader());
  csv_.pool_column = col_pool_ >= 0;
  if (col_pool_ < 0) {
    csv_.problem.pools.push_back(
        Pool{.name = "default", .capacity = 0, .alignment = 1});
  }
  // A row that parses has a character in each field, a comma between them
  // and a line break after all but the last: this many rows at most, and
  // usually about as many, as every line is one.
  const size_t max_rows =
      std::min<size_t>(std::count(text_.begin(), text_.end(), '\n'),
                       (text_.size() + 1) / (2 * names_.size()));
  csv_.problem.buffers.reserve(max_rows);
  hashes_.reserve(max_rows);
  if (col_offset_ >= 0) assignments_.reserve(max_rows);
  while (reader_.Next(&status)) {
    MEMPLAN_RETURN_IF_ERROR(ReadRow(reader_.fields()));
  }
  MEMPLAN_RETURN_IF_ERROR(status);
  if (csv_.problem.pools.empty()) {  // a pool column and no rows
    csv_.problem.pools.push_back(
        Pool{.name = "default", .capacity = 0, .alignment = 1});
  }
  MEMPLAN_RETURN_IF_ERROR(Fail(absl::OkStatus(), csv_.problem.buffers.size()));
  MEMPLAN_RETURN_IF_ERROR(ValidateProblem(csv_.problem));
  if (col_offset_ >= 0) {
    Plan plan;
    plan.planner = "csv";
    plan.assignments = std::move(assignments_);
    ComputePlanStatistics(csv_.problem, plan);
    csv_.plan = std::move(plan);
  }
  return std::move(csv_);
}

}  // namespace

absl::StatusOr<BufferCsv> ParseBufferCsv(std::string_view std_text) {
  return BufferCsvParser(absl::string_view(std_text.data(), std_text.size()))
      .Parse();
}

std::string BufferCsvText(const Problem& problem, const Plan* plan) {
  const size_t n = problem.buffers.size();
  // Planners emit the assignments in buffer order; only another order needs
  // an index of them.
  bool in_order = plan != nullptr && plan->assignments.size() == n;
  for (size_t b = 0; in_order && b < n; ++b) {
    in_order = plan->assignments[b].buffer == static_cast<BufferId>(b);
  }
  std::vector<const Assignment*> placed;
  if (plan != nullptr && !in_order) {
    placed.assign(n, nullptr);
    for (const Assignment& a : plan->assignments) {
      if (a.buffer >= 0 && a.buffer < static_cast<BufferId>(n)) {
        placed[a.buffer] = &a;
      }
    }
  }
  // A plan over several pools says which pool each buffer is in.
  const bool pools = plan != nullptr && problem.pools.size() > 1;
  std::string out = plan == nullptr ? "id,lower,upper,size\n"
                    : pools         ? "id,lower,upper,size,offset,pool\n"
                                    : "id,lower,upper,size,offset\n";
  // Enough for short ids and numbers; the string grows past it if need be.
  out.reserve(out.size() + n * 64);
  // A row's numbers are formatted into `line` and appended at once: the
  // pieces one by one, through a temporary per row, took twice as long.
  constexpr int kIntChars = 20;  // -9223372036854775808
  char line[4 * (1 + kIntChars) + 1];
  for (size_t b = 0; b < n; ++b) {
    const Buffer& buffer = problem.buffers[b];
    AppendCsvField(buffer.name, &out);
    char* p = line;
    auto number = [&p](int64_t value) {
      *p++ = ',';
      p = std::to_chars(p, p + kIntChars, value).ptr;
    };
    number(buffer.lifetime.start);
    number(buffer.lifetime.end);
    number(buffer.size);
    const Assignment* a = nullptr;
    if (plan != nullptr) {
      a = in_order ? &plan->assignments[b] : placed[b];
      number(a != nullptr ? a->offset : 0);
    }
    if (pools) {
      *p++ = ',';
      out.append(line, p - line);
      const PoolId pool = a != nullptr ? a->pool : 0;
      AppendCsvField(
          pool >= 0 && pool < static_cast<PoolId>(problem.pools.size())
              ? problem.pools[pool].name
              : "",
          &out);
      out += '\n';
    } else {
      *p++ = '\n';
      out.append(line, p - line);
    }
  }
  return out;
}

}  // namespace memplan
