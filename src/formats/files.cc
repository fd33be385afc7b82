// Whole files, and gzip-compressed ones through zlib: ReadFile, WriteFile and
// the one test of a compressed file's name, UncompressedName (memplan/io.h).

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "memplan/formats.h"

namespace memplan {
namespace {

constexpr std::string_view kGzSuffix = ".gz";

absl::StatusOr<std::string> ReadGzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    return absl::NotFoundError(absl::StrCat("cannot open \"", path, "\""));
  }
  std::string out;
  char chunk[1 << 16];
  int n = 0;
  while ((n = gzread(file, chunk, sizeof(chunk))) > 0) out.append(chunk, n);
  // zlib reads a file that is not gzip as it is ("transparent"), and
  // reports a stream cut short (even at a flush point) only by Z_BUF_ERROR.
  const bool not_gzip = gzdirect(file) == 1 && !out.empty();
  int error = Z_OK;
  const char* message = gzerror(file, &error);
  const std::string what = message != nullptr ? message : "";
  gzclose(file);
  if (not_gzip) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", path, "\" is not gzip data, although its name ends in .gz"));
  }
  if (n < 0 || error != Z_OK) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot decompress \"", path, "\": ",
        error == Z_BUF_ERROR ? "the compressed data is cut short" : what));
  }
  return out;
}

absl::StatusOr<std::string> ReadPlain(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::NotFoundError(absl::StrCat("cannot open \"", path, "\""));
  // A regular file is read in one piece into a string of its size: through a
  // stringstream, 27 MB took 40 ms and twice the memory.
  std::string contents;
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size > 0) {
    contents.resize(size);
    in.read(contents.data(), static_cast<std::streamsize>(size));
    contents.resize(static_cast<size_t>(in.gcount()));
  }
  // The rest: all of a pipe's, or what a file grew by meanwhile.
  if (in.good()) {
    std::ostringstream rest;
    rest << in.rdbuf();
    contents += rest.view();
  }
  if (in.bad())
    return absl::DataLossError(absl::StrCat("cannot read \"", path, "\""));
  return contents;
}

absl::Status WriteGzip(const std::string& path, std::string_view contents) {
  gzFile file = gzopen(path.c_str(), "wb");
  if (file == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write \"", path, "\""));
  }
  size_t done = 0;
  while (done < contents.size()) {
    const unsigned chunk = static_cast<unsigned>(
        std::min<size_t>(contents.size() - done, 1 << 20));
    if (gzwrite(file, contents.data() + done, chunk) !=
        static_cast<int>(chunk)) {
      gzclose(file);
      return absl::DataLossError(absl::StrCat("cannot write \"", path, "\""));
    }
    done += chunk;
  }
  if (gzclose(file) != Z_OK) {
    return absl::DataLossError(absl::StrCat("cannot write \"", path, "\""));
  }
  return absl::OkStatus();
}

absl::Status WritePlain(const std::string& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write \"", path, "\""));
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
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

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  return IsCompressedName(path) ? ReadGzip(path) : ReadPlain(path);
}

absl::Status WriteFile(const std::string& path, std::string_view contents) {
  return IsCompressedName(path) ? WriteGzip(path, contents)
                                : WritePlain(path, contents);
}

}  // namespace memplan
