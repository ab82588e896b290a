#pragma once

// Headless Chromium (Debian's `chromium`) for the HTML report tests: where it is, and one run of
// it on a page with a fresh profile under the test's scratch folder.

#include <filesystem>
#include <string>
#include <vector>

#include "harness/testing/support.h"

namespace harness::sim::test {

// Empty when Chromium is not installed.
inline std::filesystem::path chromium() {
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (std::filesystem::exists(candidate)) return candidate;
  }
  return {};
}

// Runs `browser` headless on `page` with `extra` arguments before the page (e.g. --dump-dom, or
// --screenshot=FILE), its profile and HOME in `dir`.
inline testing::CommandOutput runChromium(const std::filesystem::path& browser,
                                          const std::filesystem::path& page,
                                          const std::filesystem::path& dir,
                                          const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {browser.string(), "--headless", "--no-sandbox",
                                   "--disable-gpu", "--no-first-run",
                                   "--user-data-dir=" + (dir / "profile").string(),
                                   "--enable-logging=stderr", "--v=0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("file://" + page.string());
  return testing::runCapture(argv, {"HOME=" + dir.string()});
}

}  // namespace harness::sim::test
