// Whole files, and gzip-compressed ones through zlib: ReadFile, WriteFile and
// the one test of a compressed file's name, UncompressedName (memplan/io.h).

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "memplan/formats.h"

namespace memplan {
namespace {

constexpr std::string_view kGzSuffix = ".gz";

absl::Status TooLarge(const std::string& path, int64_t max_bytes,
                      bool decompressed) {
  return absl::ResourceExhaustedError(absl::StrCat(
      "\"", path, "\"", decompressed ? " decompresses to" : " holds",
      " more than ", max_bytes,
      " bytes, the input size limit (raise it with --max-input-size)"));
}

// Refuses what is not a file that ends: a directory, a character device
// (/dev/zero never ends), a socket. A pipe is read up to the size limit.
absl::Status CheckReadable(const std::string& path, const ReadOptions& options,
                           bool compressed) {
  std::error_code error;
  const std::filesystem::file_status status =
      std::filesystem::status(path, error);
  if (error || !std::filesystem::exists(status)) {
    return absl::NotFoundError(absl::StrCat("cannot open \"", path, "\""));
  }
  switch (status.type()) {
    case std::filesystem::file_type::directory:
      return absl::InvalidArgumentError(
          absl::StrCat("\"", path, "\" is a directory, not a file"));
    case std::filesystem::file_type::character:
    case std::filesystem::file_type::socket:
      return absl::InvalidArgumentError(absl::StrCat(
          "\"", path,
          "\" is a device or socket, not a file (it may never end)"));
    case std::filesystem::file_type::regular:
      if (!compressed) {
        const uintmax_t size = std::filesystem::file_size(path, error);
        if (!error && size > static_cast<uintmax_t>(options.max_bytes)) {
          return TooLarge(path, options.max_bytes, false);
        }
      }
      return absl::OkStatus();
    default:  // a pipe, a block device: read up to the limit
      return absl::OkStatus();
  }
}

// A byte that no JSON or CSV file holds (ReadOptions::text).
bool NotText(char byte) {
  const auto c = static_cast<unsigned char>(byte);
  return c < 0x20 && c != '\t' && c != '\n' && c != '\r';
}

// InvalidArgument when `chunk`, read at byte `offset` of `path`, holds a
// byte that NotText().
absl::Status CheckText(const std::string& path, std::string_view chunk,
                       int64_t offset) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  size_t i = 0;
  while (i < chunk.size()) {
    // Eight bytes at a time, looked at one by one only when one of them is
    // below 0x20 (a newline, mostly).
    size_t end = i + 1;
    if (i + 8 <= chunk.size()) {
      uint64_t word;
      std::memcpy(&word, chunk.data() + i, 8);
      if (((word - 0x20 * kOnes) & ~word & 0x80 * kOnes) == 0) {
        i += 8;
        continue;
      }
      end = i + 8;
    }
    for (; i < end; ++i) {
      if (!NotText(chunk[i])) continue;
      return absl::InvalidArgumentError(absl::StrFormat(
          "\"%s\" is not a text file (JSON or CSV): byte %d is 0x%02x%s", path,
          offset + static_cast<int64_t>(i),
          static_cast<unsigned char>(chunk[i]),
          IsCompressedName(path) ? " after decompression" : ""));
    }
  }
  return absl::OkStatus();
}

// The ISIZE field of the gzip trailer: the last four bytes, little-endian.
std::optional<uint32_t> RecordedSize(const std::string& path) {
  std::error_code error;  // not of a pipe: opening it twice could lose data
  if (!std::filesystem::is_regular_file(path, error)) return std::nullopt;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in || in.tellg() < 18) return std::nullopt;  // header and trailer
  in.seekg(-4, std::ios::end);
  unsigned char bytes[4];
  if (!in.read(reinterpret_cast<char*>(bytes), 4)) return std::nullopt;
  return uint32_t{bytes[0]} | uint32_t{bytes[1]} << 8 |
         uint32_t{bytes[2]} << 16 | uint32_t{bytes[3]} << 24;
}

absl::StatusOr<std::string> ReadGzip(const std::string& path,
                                     const ReadOptions& options) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    return absl::NotFoundError(absl::StrCat("cannot open \"", path, "\""));
  }
  gzbuffer(file, 1 << 17);
  std::string out;
  // The size the gzip trailer records (modulo 2^32, of the last member
  // only): a hint that spares the copies of a doubling string, which at
  // 1 GiB needed 1.5 GiB.
  if (const std::optional<uint32_t> size = RecordedSize(path);
      size.has_value() && *size <= options.max_bytes) {
    out.reserve(*size);
  }
  char chunk[1 << 16];
  int n = 0;
  bool too_large = false;
  absl::Status text = absl::OkStatus();
  while ((n = gzread(file, chunk, sizeof(chunk))) > 0) {
    if (static_cast<int64_t>(out.size()) + n > options.max_bytes) {
      too_large = true;
      break;
    }
    if (options.text) {
      text = CheckText(path, std::string_view(chunk, n), out.size());
      if (!text.ok()) break;
    }
    out.append(chunk, n);
  }
  // zlib reads a file that is not gzip as it is ("transparent"), and
  // reports a stream cut short (even at a flush point) only by Z_BUF_ERROR.
  const bool not_gzip = gzdirect(file) == 1 && (!out.empty() || !text.ok());
  int error = Z_OK;
  const char* message = gzerror(file, &error);
  const std::string what = message != nullptr ? message : "";
  gzclose(file);
  if (not_gzip) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", path, "\" is not gzip data, although its name ends in .gz"));
  }
  if (too_large) return TooLarge(path, options.max_bytes, true);
  if (!text.ok()) return text;
  if (n < 0 || error != Z_OK) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot decompress \"", path, "\": ",
        error == Z_BUF_ERROR ? "the compressed data is cut short" : what));
  }
  return out;
}

absl::StatusOr<std::string> ReadPlain(const std::string& path,
                                      const ReadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::NotFoundError(absl::StrCat("cannot open \"", path, "\""));
  // A regular file is read in one piece into a string of its size: through a
  // stringstream, 27 MB took 40 ms and twice the memory.
  std::string contents;
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size > 0) {
    if (size > static_cast<uintmax_t>(options.max_bytes)) {
      return TooLarge(path, options.max_bytes, false);
    }
    contents.resize(size);
    in.read(contents.data(), static_cast<std::streamsize>(size));
    contents.resize(static_cast<size_t>(in.gcount()));
  }
  // The rest, up to the limit: all of a pipe's, or what a file grew by
  // meanwhile.
  char chunk[1 << 16];
  while (in.good()) {
    in.read(chunk, sizeof(chunk));
    const int64_t n = in.gcount();
    if (static_cast<int64_t>(contents.size()) + n > options.max_bytes) {
      return TooLarge(path, options.max_bytes, false);
    }
    contents.append(chunk, static_cast<size_t>(n));
  }
  if (in.bad())
    return absl::DataLossError(absl::StrCat("cannot read \"", path, "\""));
  if (options.text) {
    if (absl::Status s = CheckText(path, contents, 0); !s.ok()) return s;
  }
  return contents;
}

absl::Status WriteGzip(const std::string& path,
                       const std::function<void(const TextSink&)>& contents) {
  gzFile file = gzopen(path.c_str(), "wb");
  if (file == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write \"", path, "\""));
  }
  bool failed = false;  // the pieces after a failed write are dropped
  contents([&](std::string_view piece) {
    size_t done = 0;
    while (!failed && done < piece.size()) {
      const unsigned chunk =
          static_cast<unsigned>(std::min<size_t>(piece.size() - done, 1 << 20));
      failed =
          gzwrite(file, piece.data() + done, chunk) != static_cast<int>(chunk);
      done += chunk;
    }
  });
  if (gzclose(file) != Z_OK || failed) {
    return absl::DataLossError(absl::StrCat("cannot write \"", path, "\""));
  }
  return absl::OkStatus();
}

absl::Status WritePlain(const std::string& path,
                        const std::function<void(const TextSink&)>& contents) {
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write \"", path, "\""));
  contents([&](std::string_view piece) {
    if (out)
      out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  });
  out.close();
  if (!out)
    return absl::DataLossError(absl::StrCat("cannot write \"", path, "\""));
  return absl::OkStatus();
}

}  // namespace

bool IsCompressedName(std::string_view path) {
  return path.ends_with(kGzSuffix);
}

std::string_view UncompressedName(std::string_view path) {
  return IsCompressedName(path) ? path.substr(0, path.size() - kGzSuffix.size())
                                : path;
}

absl::StatusOr<std::string> ReadFile(const std::string& path,
                                     const ReadOptions& options) {
  const bool compressed = IsCompressedName(path);
  if (absl::Status s = CheckReadable(path, options, compressed); !s.ok()) {
    return s;
  }
  // Memory runs out before the limit where the machine has less: that is
  // the file's fault too, not a reason to abort.
  try {
    return compressed ? ReadGzip(path, options) : ReadPlain(path, options);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  return absl::ResourceExhaustedError(
      absl::StrCat("\"", path, "\" does not fit in memory"));
}

absl::Status WriteFile(const std::string& path, std::string_view contents) {
  return WriteFile(path, [&](const TextSink& write) { write(contents); });
}

absl::Status WriteFile(const std::string& path,
                       const std::function<void(const TextSink&)>& contents) {
  return IsCompressedName(path) ? WriteGzip(path, contents)
                                : WritePlain(path, contents);
}

}  // namespace memplan
