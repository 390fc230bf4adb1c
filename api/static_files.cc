#include "api/static_files.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "base/read_file.h"
#include "net/request.h"
#include "wire/refusals.h"

namespace clickatron {

namespace {

constexpr std::string_view kChartJsName = "chart.js";

struct TypeOf {
  std::string_view extension;
  std::string_view content_type;
};
constexpr TypeOf kTypes[] = {
    {".html", "text/html; charset=utf-8"},  {".js", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},    {".json", "application/json"},
    {".svg", "image/svg+xml"},              {".png", "image/png"},
    {".ico", "image/x-icon"},
};

bool NameByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

Result<std::string> ReadWhole(const std::filesystem::path& path, std::string_view what) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Status::Error(std::string(what) + " " + path.string() + ": " + ec.message());
  if (size > kMaxUiFileBytes) {
    return Status::Error(std::string(what) + " " + path.string() + " is larger than " +
                         std::to_string(kMaxUiFileBytes) + " bytes");
  }
  Result<std::string> body = ReadFile(path.string());
  if (!body.ok()) return body.status().Prefixed(std::string(what) + ": ");
  return body;
}

}  // namespace

std::string_view ContentTypeOf(std::string_view name) {
  for (const TypeOf& t : kTypes) {
    if (name.size() > t.extension.size() && name.ends_with(t.extension)) return t.content_type;
  }
  return {};
}

bool IsServableName(std::string_view name) {
  if (name.empty() || name.size() > 128 || ContentTypeOf(name).empty()) return false;
  bool part_empty = true;  // no leading dot, no "..", no trailing dot
  for (char c : name) {
    if (c == '.') {
      if (part_empty) return false;
      part_empty = true;
    } else if (NameByte(c)) {
      part_empty = false;
    } else {
      return false;
    }
  }
  return !part_empty;
}

std::string UiDirBeside(const std::filesystem::path& exe) {
  const std::filesystem::path beside = exe.parent_path() / "ui";
  std::error_code ec;
  if (std::filesystem::is_directory(beside, ec)) return beside.string();
  return (exe.parent_path().parent_path() / "share" / "clickatron" / "ui").string();
}

Result<std::string> DefaultUiDir() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return Status::Error("cannot find the running executable (/proc/self/exe): " + ec.message());
  return UiDirBeside(exe);
}

Result<StaticFiles> StaticFiles::Load(const std::string& dir, const std::string& chartjs) {
  StaticFiles files;
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return Status::Error("ui-dir " + dir + ": " + ec.message());
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file(ec) || !IsServableName(name)) continue;  // not served, not read
    if (name == kChartJsName) {
      return Status::Error("ui-dir " + dir + " holds " + name + ", the name Chart.js is served as (ui-chartjs)");
    }
    if (files.files_.size() == kMaxUiFiles) {
      return Status::Error("ui-dir " + dir + " holds more than " + std::to_string(kMaxUiFiles) + " files to serve");
    }
    Result<std::string> body = ReadWhole(entry.path(), "ui-dir file");
    if (!body.ok()) return body.status();
    files.files_.emplace(name, File{ContentTypeOf(name), std::move(body).value()});
  }
  if (files.files_.count("index.html") == 0) {
    return Status::Error("ui-dir " + dir + " has no index.html (the dashboard's files are installed beside "
                         "clickatron-api by the build; or give ui-dir)");
  }
  Result<std::string> chart = ReadWhole(chartjs, "ui-chartjs");
  if (!chart.ok()) {
    return Status::Error(chart.status().message() +
                         " (Chart.js: install Debian's libjs-chart.js, ops/install-deps, or give ui-chartjs)");
  }
  files.files_.emplace(std::string(kChartJsName), File{ContentTypeOf(kChartJsName), std::move(chart).value()});
  return files;
}

void StaticFiles::Serve(net::Request& req) const {
  if (!net::RequireMethod(req, {net::Method::kGet, net::Method::kHead})) return;
  std::string_view path = req.path();
  std::string_view name;
  if (path == "/") {
    name = "index.html";
  } else if (path.starts_with("/ui/")) {
    name = path.substr(4);
  } else {
    return req.ReplyJsonError(404, wire::kNotFound, "no such path");
  }
  if (!IsServableName(name)) {
    return req.ReplyJsonError(400, "INVALID_PATH",
                              "a dashboard file is named by letters, digits, '_', '-' and single dots "
                              "with a known extension, directly under /ui/");
  }
  auto it = files_.find(name);
  if (it == files_.end()) {
    return req.ReplyJsonError(404, wire::kNotFound, "no dashboard file /ui/" + std::string(name));
  }
  req.AddHeader("Content-Type", std::string(it->second.content_type).c_str());
  // Files change only with a new install (and API restart): revalidate, never go stale.
  req.AddHeader("Cache-Control", "no-cache");
  req.Reply(200, it->second.body);
}

}  // namespace clickatron
