#include "rebuild/task_report.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "base/durable_file.h"
#include "keyformat/key_value.h"
#include "rebuild/progress.h"

namespace clickatron::rebuild {
namespace {

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

std::string NodeName() {
  if (const char* node = std::getenv("SLURMD_NODENAME"); node != nullptr && *node != '\0') return node;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "?";
  return host;
}

}  // namespace

Status WriteTaskReport(const std::string& path, const Status& result, std::chrono::steady_clock::time_point start) {
  struct rusage usage = {};
  ::getrusage(RUSAGE_SELF, &usage);
  const double cpu = double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                     double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  KeyValueText report;
  std::string status = result.ok() ? "ok" : result.message();
  for (char& c : status) {
    if (c == '\n') c = ' ';
  }
  report.Add("status", status);
  report.Add("records", std::to_string(SummarizedRecords()));
  report.Add("bytes", std::to_string(SummarizedBytes()));
  report.Add("seconds", Seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
  report.Add("cpu_seconds", Seconds(cpu));
  report.Add("max_rss_kb", std::to_string(usage.ru_maxrss));
  report.Add("node", NodeName());
  return WriteFileAtomic(path, report.Format());
}

}  // namespace clickatron::rebuild
