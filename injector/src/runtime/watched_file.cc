#include "watched_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace harness::injector {

core::Result<std::string> WatchedFile::read() {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    return core::makeError("open " + path_.string() + ": " + std::strerror(errno));
  }
  Identity now{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
               static_cast<std::uint64_t>(st.st_size),
               static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
  std::lock_guard lock(mutex_);
  if (loaded_ && now == identity_) return content_;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return core::makeError("open " + path_.string() + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  content_ = ss.str();
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
