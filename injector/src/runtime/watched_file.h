#pragma once

// A file whose content is re-read when it changes on disk. Files mounted from ConfigMaps and
// Secrets change by an atomic swap of the `..data` symlink; stat() follows the links, so the
// target's inode and mtime change and the next read() sees the new content.

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>

#include "harness/core/result.h"

namespace harness::injector {

// The whole content of a configuration file, as Go's os.ReadFile gives it: an error naming the
// path when it cannot be opened or read. A directory is an error ("read <path>: Is a
// directory"), never empty content.
core::Result<std::string> readFileText(const std::filesystem::path& path);

class WatchedFile {
 public:
  explicit WatchedFile(std::filesystem::path path) : path_(std::move(path)) {}

  // The current content; re-read only when the file's identity (device, inode, mtime, size)
  // changed since the last read. An unreadable file is an error naming it.
  core::Result<std::string> read();
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  // How many times the content was (re)loaded.
  [[nodiscard]] std::uint64_t loads() const;

 private:
  struct Identity {
    std::uint64_t device = 0, inode = 0, size = 0;
    std::int64_t mtime_ns = -1;
    bool operator==(const Identity&) const = default;
  };
  std::filesystem::path path_;
  mutable std::mutex mutex_;
  Identity identity_;
  std::string content_;
  bool loaded_ = false;
  std::uint64_t loads_ = 0;
};

}  // namespace harness::injector
