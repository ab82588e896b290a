#include "watched_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace harness::injector {

namespace {

core::Error fileError(const char* op, const std::filesystem::path& path, int error) {
  return core::makeError(std::string(op) + " " + path.string() + ": " + std::strerror(error));
}

// Reads a file that stat() found; `st` tells a directory apart. os.ReadFile opens a directory
// and then fails to read it (EISDIR); an ifstream would read it as empty text.
core::Result<std::string> readStatted(const std::filesystem::path& path, const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return fileError("read", path, EISDIR);
  std::ifstream in(path, std::ios::binary);
  if (!in) return fileError("open", path, errno);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return fileError("read", path, errno);
  return ss.str();
}

}  // namespace

core::Result<std::string> readFileText(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return fileError("open", path, errno);
  return readStatted(path, st);
}

core::Result<std::string> WatchedFile::read() {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) return fileError("open", path_, errno);
  Identity now{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
               static_cast<std::uint64_t>(st.st_size),
               static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
  std::lock_guard lock(mutex_);
  if (loaded_ && now == identity_) return content_;
  auto text = readStatted(path_, st);
  if (!text) return text;
  content_ = std::move(*text);
  identity_ = now;
  loaded_ = true;
  ++loads_;
  return content_;
}

std::uint64_t WatchedFile::loads() const {
  std::lock_guard lock(mutex_);
  return loads_;
}

}  // namespace harness::injector
