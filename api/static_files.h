// StaticFiles: the dashboard's files (docs/dashboard.md#how-it-is-served), read whole at
// start-up and served from memory by clickatron-api:
//
//   GET /               the directory's index.html
//   GET /ui/NAME        the file NAME of the directory (flat: sub-directories are not served)
//   GET /ui/chart.js    Chart.js, from the file ui-chartjs names (Debian's libjs-chart.js)
//
// Only names of [A-Za-z0-9_-] parts joined by single dots, not starting with a dot, of a
// known extension are loaded, so a request can never name anything outside the directory:
// a path with any other byte ('/', "..", '%') is 400 INVALID_PATH, an unknown name 404
// NOT_FOUND — the API's JSON error envelope. Content-Type comes from the extension
// (ContentTypeOf). Bounds: at most kMaxUiFiles files of at most kMaxUiFileBytes each.
// A missing directory, index.html or Chart.js file is an error naming the path: the API
// refuses to start rather than serve a dashboard that cannot draw.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron {

namespace net {
class Request;
}

inline constexpr size_t kMaxUiFiles = 64;
inline constexpr size_t kMaxUiFileBytes = size_t{4} << 20;
// Where Debian's libjs-chart.js installs its UMD build (it sets window.Chart).
inline constexpr std::string_view kDefaultChartJs = "/usr/share/javascript/chart.js/chart.min.js";

// The Content-Type of a file name by its extension; empty for an extension not served.
std::string_view ContentTypeOf(std::string_view name);
// True for a name StaticFiles serves: [A-Za-z0-9_-]+ parts joined by single dots, the
// first part not empty, with a known extension.
bool IsServableName(std::string_view name);

// The default ui-dir of the executable exe: "ui" beside it when that is a directory (a build
// tree: the build copies ui/ there), else ../share/clickatron/ui from its directory (an
// installed tree: /usr/bin/clickatron-api finds /usr/share/clickatron/ui, where
// `cmake --install` and the Debian package put the files; docs/operations.md#the-debian-package).
std::string UiDirBeside(const std::filesystem::path& exe);
// UiDirBeside of the running executable (/proc/self/exe).
Result<std::string> DefaultUiDir();

class StaticFiles {
 public:
  // Reads dir's servable files and the Chart.js file. Errors name the path and problem.
  static Result<StaticFiles> Load(const std::string& dir, const std::string& chartjs);

  // Answers a GET or HEAD of "/" or "/ui/..." (see above); other methods 405.
  void Serve(net::Request& req) const;
  size_t size() const { return files_.size(); }

 private:
  struct File {
    std::string_view content_type;
    std::string body;
  };
  std::map<std::string, File, std::less<>> files_;
};

}  // namespace clickatron
