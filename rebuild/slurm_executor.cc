#include "rebuild/slurm_executor.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include "base/durable_file.h"
#include "base/errno_status.h"
#include "keyformat/day_ring.h"
#include "keyformat/key_value.h"
#include "keyformat/ymdh.h"
#include "rebuild/file.h"
#include "rebuild/progress.h"
#include "rebuild/subprocess.h"

namespace clickatron::rebuild {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(500);
constexpr int kSqueueFailuresTolerated = 120;  // about a minute of a controller not answering
constexpr size_t kRunsKept = 10;               // DIR/slurm/<run> directories kept
// The steps of a graph, in the order they run (and are reported).
constexpr const char* kSteps[] = {"split", "import", "export", "segment", "late", "compact", "merge", "publish", "release"};

struct Task {
  std::string name;   // export-2013-05-10-0: the --task name, the file names in the run directory
  std::string step;   // one of kSteps
  std::vector<std::vector<std::string>> commands;  // run in order, each a clickatron-rebuild argv
  std::vector<size_t> deps;
  std::string job;    // Slurm job id
  bool done = false;
};

// What a task's script recorded of its last attempt (NAME.exit).
struct TaskExit {
  int status = -1;
  uint64_t attempt = 0;
  std::string node;
};

// A sum of task reports (task_report.h).
struct Totals {
  uint64_t records = 0, bytes = 0, max_rss_kb = 0;
  double cpu_seconds = 0, seconds = 0;
  std::set<std::string> nodes;
};

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

Result<std::string> AbsolutePath(const std::string& path, const std::string& what) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) {
    return ErrnoStatus(what, path);
  }
  return std::string(buf);
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

// The last n lines of a file, each prefixed with "  | ".
std::string TailOf(const std::string& path, size_t n) {
  Result<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return "  | (" + text.status().message() + ")\n";
  std::vector<std::string> lines;
  size_t start = 0;
  const std::string& t = *text;
  while (start < t.size()) {
    const size_t nl = t.find('\n', start);
    const size_t end = nl == std::string::npos ? t.size() : nl;
    lines.push_back(t.substr(start, end - start));
    start = end + 1;
  }
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += "  | " + lines[i] + "\n";
  return out;
}

std::optional<TaskExit> ReadExit(const std::string& path) {
  if (!Exists(path)) return std::nullopt;
  Result<KeyValueText> kv = ReadKeyValueFile(path);
  uint64_t status;
  TaskExit e;
  if (!kv.ok() || !ParseCount(kv->Get("status"), &status) || !ParseCount(kv->Get("attempt"), &e.attempt)) {
    return std::nullopt;
  }
  e.status = int(status);
  e.node = kv->Get("node");
  return e;
}

void AddReport(const std::string& path, Totals* totals) {
  if (!Exists(path)) return;
  Result<KeyValueText> kv = ReadKeyValueFile(path);
  if (!kv.ok()) return;
  uint64_t n;
  if (ParseCount(kv->Get("records"), &n)) totals->records += n;
  if (ParseCount(kv->Get("bytes"), &n)) totals->bytes += n;
  if (ParseCount(kv->Get("max_rss_kb"), &n)) totals->max_rss_kb = std::max(totals->max_rss_kb, n);
  totals->cpu_seconds += std::strtod(kv->Get("cpu_seconds").c_str(), nullptr);
  totals->seconds += std::strtod(kv->Get("seconds").c_str(), nullptr);
  if (!kv->Get("node").empty()) totals->nodes.insert(kv->Get("node"));
}

// Job id → state (PENDING, RUNNING, COMPLETED, FAILED, ...) of the jobs Slurm still knows.
Result<std::map<std::string, std::string>> JobStates(const std::vector<std::string>& jobs) {
  std::map<std::string, std::string> states;
  if (jobs.empty()) return states;
  std::string list;
  for (const std::string& j : jobs) list += (list.empty() ? "" : ",") + j;
  Result<ProgramOutput> r = RunProgram({"squeue", "-h", "-t", "all", "-j", list, "-o", "%i %T"});
  if (!r.ok()) return r.status();
  // squeue exits 1 with "Invalid job id specified" when it knows none of them (all purged).
  if (r->status != 0 && r->err.find("Invalid job id") == std::string::npos) {
    return Status::Error("squeue exited " + std::to_string(r->status) + ": " + Trimmed(r->err));
  }
  size_t start = 0;
  const std::string& out = r->out;
  while (start < out.size()) {
    const size_t nl = out.find('\n', start);
    const std::string line = out.substr(start, (nl == std::string::npos ? out.size() : nl) - start);
    start = nl == std::string::npos ? out.size() : nl + 1;
    const size_t space = line.find(' ');
    if (space != std::string::npos) states[line.substr(0, space)] = line.substr(space + 1);
  }
  return states;
}

bool IsActive(const std::string& state) {
  return state == "PENDING" || state == "RUNNING" || state == "CONFIGURING" || state == "COMPLETING" ||
         state == "REQUEUED" || state == "REQUEUE_HOLD" || state == "REQUEUE_FED" || state == "RESIZING" ||
         state == "SUSPENDED" || state == "STAGE_OUT" || state == "SIGNALING";
}

class Graph {
 public:
  Graph(const Options& options, std::string bin, std::string work, std::string config, std::string run)
      : o_(options), bin_(std::move(bin)), work_(std::move(work)), config_(std::move(config)), run_(std::move(run)) {}

  // Adds a task; returns its index.
  size_t Add(const std::string& name, const std::string& step, const std::vector<std::vector<std::string>>& commands,
             std::vector<size_t> deps) {
    Task t{name, step, {}, std::move(deps), "", false};
    for (size_t i = 0; i < commands.size(); ++i) t.commands.push_back(Command(name, i, commands[i]));
    tasks_.push_back(std::move(t));
    return tasks_.size() - 1;
  }

  Status Submit();
  Status Wait();
  void PrintSummary();
  size_t size() const { return tasks_.size(); }

 private:
  std::vector<std::string> Command(const std::string& task, size_t i, const std::vector<std::string>& args) const;
  std::string Path(const Task& t, const std::string& suffix) const { return run_ + "/" + t.name + suffix; }
  std::string Script(const Task& t) const;
  Status Failure(size_t index, const std::map<std::string, std::string>& states);
  void CancelUnfinished();
  std::string ProgressLine() const;

  const Options& o_;
  const std::string bin_, work_, config_, run_;
  std::vector<Task> tasks_;
};

std::vector<std::string> Graph::Command(const std::string& task, size_t i, const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {bin_, args[0], "--work", work_, "--executor", "local"};
  if (!config_.empty()) {
    argv.push_back("--config");
    argv.push_back(config_);
  }
  argv.insert(argv.end(), args.begin() + 1, args.end());
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--archive-shards", std::to_string(o_.archive_shards)},
           {"--jobs", std::to_string(o_.jobs)},
           {"--memory", std::to_string(o_.memory)},
           {"--timeout-ms", std::to_string(o_.timeout_ms)},
           {"--keep-generations", std::to_string(o_.keep_generations)},
           {"--task", task},
           {"--task-report", run_ + "/" + task + "." + std::to_string(i) + ".report"}}) {
    argv.push_back(flag);
    argv.push_back(value);
  }
  if (!o_.secret_file.empty()) {
    // Given on the command line the driver's secret-file is not in --config: every task
    // that calls a server needs it (docs/operations.md#threat-model).
    Result<std::string> secret_file = AbsolutePath(o_.secret_file, "--secret-file");
    argv.push_back("--secret-file");
    argv.push_back(secret_file.ok() ? *secret_file : o_.secret_file);
  }
  if (!o_.backup.empty()) {
    argv.push_back("--backup");
    argv.push_back(o_.backup);
    argv.push_back("--backup-codec");
    argv.push_back(std::string(BackupCodecName(o_.backup_codec)));
  }
  if (o_.replace) argv.push_back("--replace");
  return argv;
}

// The batch script of a task (see the top of slurm_executor.h).
std::string Graph::Script(const Task& t) const {
  std::string s = "#!/bin/sh\n# Task " + t.name + " of a clickatron-rebuild nightly graph (rebuild/slurm_executor.h).\n";
  s += "attempt=${SLURM_RESTART_COUNT:-0}\nnode=${SLURMD_NODENAME:-$(hostname)}\n";
  s += "echo \"== task " + t.name + ", attempt $attempt, on $node, $(date -u +%FT%TZ)\"\nstatus=0\n";
  for (const std::vector<std::string>& argv : t.commands) {
    std::string line;
    for (const std::string& a : argv) line += (line.empty() ? "" : " ") + ShellQuote(a);
    s += "[ $status -ne 0 ] || " + line + " || status=$?\n";
  }
  const std::string exit_file = ShellQuote(Path(t, ".exit"));
  s += "printf 'status = %s\\nattempt = %s\\nnode = %s\\n' \"$status\" \"$attempt\" \"$node\" > " +
       ShellQuote(Path(t, ".exit.tmp")) + " && mv -f " + ShellQuote(Path(t, ".exit.tmp")) + " " + exit_file + "\n";
  if (o_.slurm_requeue_exit != 0) {
    const std::string code = std::to_string(o_.slurm_requeue_exit);
    s += "if [ $status -ne 0 ] && [ \"$attempt\" -lt " + std::to_string(o_.slurm_retries) + " ]; then\n";
    s += "  echo \"== task " + t.name + " failed (exit $status): asking Slurm to run it again (exit " + code + ")\"\n";
    s += "  exit " + code + "\nfi\n";
  }
  s += "exit $status\n";
  return s;
}

Status Graph::Submit() {
  std::string jobs;
  for (Task& t : tasks_) {
    const std::string script = Path(t, ".sh");
    if (Status s = WriteFileAtomic(script, Script(t)); !s.ok()) return s;
    if (::chmod(script.c_str(), 0755) != 0) return ErrnoStatus("chmod", script);
    std::vector<std::string> argv = {"sbatch", "--parsable", "--job-name=clickatron-" + t.name,
                                     "--output=" + Path(t, ".log"), "--open-mode=append", "--requeue",
                                     "--kill-on-invalid-dep=yes", "--cpus-per-task=" + std::to_string(o_.jobs)};
    if (!o_.slurm_partition.empty()) argv.push_back("--partition=" + o_.slurm_partition);
    if (!t.deps.empty()) {
      std::string dep = "--dependency=afterok";
      for (size_t d : t.deps) dep += ":" + tasks_[d].job;
      argv.push_back(dep);
    }
    argv.push_back(script);
    Result<ProgramOutput> r = RunProgram(argv);
    Status error;
    if (!r.ok()) {
      error = r.status();
    } else if (r->status != 0) {
      error = Status::Error("sbatch exited " + std::to_string(r->status) + ": " + Trimmed(r->err));
    } else {
      t.job = Trimmed(r->out.substr(0, r->out.find(';')));
      if (t.job.empty() || t.job.find_first_not_of("0123456789") != std::string::npos) {
        error = Status::Error("sbatch printed '" + Trimmed(r->out) + "', not a job id");
      }
    }
    if (!error.ok()) {
      CancelUnfinished();
      return Status::Error("submitting task " + t.name + ": " + error.message() + " (the graph's jobs so far were cancelled)");
    }
    jobs += t.job + " " + t.name + "\n";
    if (Status s = WriteFileAtomic(run_ + "/jobs", jobs); !s.ok()) return s;
  }
  return Status::OK();
}

void Graph::CancelUnfinished() {
  std::vector<std::string> argv = {"scancel"};
  for (const Task& t : tasks_) {
    if (!t.done && !t.job.empty()) argv.push_back(t.job);
  }
  if (argv.size() > 1) RunProgram(argv);
}

std::string Graph::ProgressLine() const {
  std::string line;
  Totals totals;
  for (const char* step : kSteps) {
    size_t done = 0, all = 0;
    for (const Task& t : tasks_) {
      if (t.step != step) continue;
      ++all;
      if (!t.done) continue;
      ++done;
      for (size_t i = 0; i < t.commands.size(); ++i) AddReport(Path(t, "." + std::to_string(i) + ".report"), &totals);
    }
    if (all) line += (line.empty() ? "" : ", ") + std::string(step) + " " + std::to_string(done) + "/" + std::to_string(all);
  }
  return line + " tasks done; " + HumanCount(totals.records) + " records, " + HumanBytes(totals.bytes);
}

// The error of the night when task `index` failed for good (or was cancelled, or vanished).
Status Graph::Failure(size_t index, const std::map<std::string, std::string>& states) {
  const Task& t = tasks_[index];
  const auto state = states.find(t.job);
  const std::string slurm_state = state == states.end() ? "no longer known to Slurm" : state->second;
  std::string what = "task " + t.name + " failed (Slurm job " + t.job + " " + slurm_state;
  if (std::optional<TaskExit> e = ReadExit(Path(t, ".exit"))) {
    what += ", exit " + std::to_string(e->status) + " on " + e->node + ", attempt " + std::to_string(e->attempt + 1) +
            " of " + std::to_string(o_.slurm_retries + 1);
    if (e->status != 0 && e->attempt < o_.slurm_retries && o_.slurm_requeue_exit != 0) {
      what += "; it asked for a retry with exit " + std::to_string(o_.slurm_requeue_exit) +
              ", which this cluster does not requeue: set RequeueExit=" + std::to_string(o_.slurm_requeue_exit) +
              " in slurm.conf";
    }
  }
  what += "): its log is " + Path(t, ".log") + "\n" + TailOf(Path(t, ".log"), 12);
  CancelUnfinished();
  what += "the rest of the graph was cancelled; run the same command again (or let the next night) to carry on: "
          "every task is idempotent";
  return Status::Error(what);
}

Status Graph::Wait() {
  std::string last_line;
  int squeue_failures = 0;
  while (true) {
    size_t open = 0;
    std::vector<std::string> jobs;
    for (Task& t : tasks_) {
      if (t.done) continue;
      std::optional<TaskExit> e = ReadExit(Path(t, ".exit"));
      if (e && e->status == 0) {
        t.done = true;
      } else {
        ++open;
        jobs.push_back(t.job);
      }
    }
    if (const std::string line = ProgressLine(); line != last_line) {
      std::printf("%s on slurm: %s\n", o_.command.c_str(), line.c_str());
      std::fflush(stdout);
      last_line = line;
    }
    if (open == 0) return Status::OK();
    Result<std::map<std::string, std::string>> states = JobStates(jobs);
    if (!states.ok()) {
      if (++squeue_failures > kSqueueFailuresTolerated) return states.status().Prefixed("waiting for the graph: ");
      std::this_thread::sleep_for(kPollInterval);
      continue;
    }
    squeue_failures = 0;
    // The root cause first: a failed task whose own command ran, in graph order; then any.
    std::optional<size_t> failed, cancelled;
    for (size_t i = 0; i < tasks_.size(); ++i) {
      const Task& t = tasks_[i];
      if (t.done) continue;
      const auto s = states->find(t.job);
      if (s != states->end() && IsActive(s->second)) continue;
      // Done between the exit-file read and squeue: seen next round.
      if (std::optional<TaskExit> e = ReadExit(Path(t, ".exit")); e && e->status == 0) continue;
      if (Exists(Path(t, ".exit")) && !failed) failed = i;
      if (!cancelled) cancelled = i;
    }
    if (failed || cancelled) return Failure(failed ? *failed : *cancelled, *states);
    std::this_thread::sleep_for(kPollInterval);
  }
}

void Graph::PrintSummary() {
  for (const char* step : kSteps) {
    Totals totals;
    size_t count = 0, retries = 0;
    for (const Task& t : tasks_) {
      if (t.step != step) continue;
      ++count;
      for (size_t i = 0; i < t.commands.size(); ++i) AddReport(Path(t, "." + std::to_string(i) + ".report"), &totals);
      if (std::optional<TaskExit> e = ReadExit(Path(t, ".exit"))) retries += e->attempt;
    }
    if (count == 0) continue;
    std::string nodes;
    for (const std::string& n : totals.nodes) nodes += (nodes.empty() ? "" : ",") + n;
    std::printf("%s on slurm: %s: %zu task(s) on %s: %s records, %s, %.2f s CPU, max RSS %s%s\n",
                o_.command.c_str(), step, count, nodes.c_str(), HumanCount(totals.records).c_str(), HumanBytes(totals.bytes).c_str(),
                totals.cpu_seconds, HumanBytes(totals.max_rss_kb * 1024).c_str(),
                retries ? (", " + std::to_string(retries) + " retried attempt(s)").c_str() : "");
  }
  std::fflush(stdout);
}

// Refuses to start while the graph of an earlier run still has jobs in Slurm; keeps the
// newest kRunsKept run directories.
Status CheckEarlierRuns(const WorkDir& work) {
  if (Status s = MakeDirs(work.Path("slurm")); !s.ok()) return s;
  Result<std::vector<std::string>> runs = ListDir(work.Path("slurm"));
  if (!runs.ok()) return runs.status();
  if (!runs->empty()) {
    const std::string last = work.Path("slurm/" + runs->back());
    if (Result<std::string> text = ReadSmallFile(last + "/jobs"); text.ok()) {
      std::vector<std::string> jobs;
      size_t start = 0;
      while (start < text->size()) {
        const size_t nl = text->find('\n', start);
        const std::string line = text->substr(start, (nl == std::string::npos ? text->size() : nl) - start);
        start = nl == std::string::npos ? text->size() : nl + 1;
        if (!line.empty()) jobs.push_back(line.substr(0, line.find(' ')));
      }
      Result<std::map<std::string, std::string>> states = JobStates(jobs);
      if (!states.ok()) return states.status().Prefixed("checking the jobs of the previous graph (" + last + "): ");
      std::string active;
      for (const auto& [job, state] : *states) {
        if (IsActive(state)) active += " " + job + "(" + state + ")";
      }
      if (!active.empty()) {
        return Status::Error("the graph of an earlier run (" + last + ") still has jobs in Slurm:" + active +
                             "; wait for them or scancel them, then run again");
      }
    }
  }
  for (size_t i = 0; i + kRunsKept < runs->size(); ++i) {
    if (Status s = RemoveAll(work.Path("slurm/" + (*runs)[i])); !s.ok()) return s;
  }
  return Status::OK();
}

Result<std::string> SelfPath() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ErrnoStatus("readlink", "/proc/self/exe");
  return std::string(buf, size_t(n));
}

// The newest day any segment covers once the days through `last` are segmented.
Day LastCoveredAfter(const std::string& covered_before, Day last) {
  Result<int64_t> before = ParseDay(covered_before);
  return before.ok() ? std::max<Day>(Day(*before), last) : last;
}

// The jobs of days[done, end): each day's exports (after the previous group's release)
// and segment, the late records with the last group, then compact, the shards' merges,
// publish and release. Returns the job the next group waits for (its release, or its
// publish when it releases nothing).
size_t AddNightGroup(Graph* graph, const Options& options, const std::vector<Day>& days, size_t done, size_t end,
                     Day through, const std::string& covered_before, std::optional<size_t> previous_release) {
  const Day group_last = end > done ? days[end - 1] : through;
  const std::string g = std::to_string(done / size_t(kRingSlots));
  std::vector<size_t> after_previous;
  if (previous_release) after_previous.push_back(*previous_release);
  std::vector<size_t> before_compact;
  for (size_t i = done; i < end; ++i) {
    const std::string day = FormatDay(days[i]);
    std::vector<size_t> exports;
    for (size_t n = 0; n < options.realtime.size(); ++n) {
      exports.push_back(graph->Add("export-" + day + "-" + std::to_string(n), "export",
                                   {{"export", "--day", day, "--shard", std::to_string(n)}}, after_previous));
    }
    before_compact.push_back(graph->Add("segment-" + day, "segment", {{"segment", "--day", day}}, exports));
  }
  if (end == days.size()) {
    before_compact.push_back(
        graph->Add("late-" + g, "late", {{"late", "--through", FormatDay(through)}}, after_previous));
  }
  const size_t compact =
      graph->Add("compact-" + g, "compact", {{"compact", "--before", FormatDay(group_last)}}, before_compact);
  std::vector<size_t> merges;
  for (uint32_t k = 0; k < options.archive_shards; ++k) {
    merges.push_back(graph->Add("merge-" + g + "-" + std::to_string(k), "merge",
                                {{"merge", "--shard", std::to_string(k)}}, {compact}));
  }
  const size_t publish = graph->Add("publish-" + g, "publish", {{"merge"}, {"publish"}}, merges);
  // The local nightly releases through min(group's last day, the published last_day):
  // the published last day is the newest covered day, known here in advance.
  const Day release_through = std::min(group_last, LastCoveredAfter(covered_before, end > 0 ? days[end - 1] : 0));
  if (release_through == 0) return publish;
  return graph->Add("release-" + g, "release", {{"release", "--through", FormatDay(release_through)}}, {publish});
}

}  // namespace

Status RunNightlyOnSlurm(const Options& options, WorkDir* work, const std::vector<Day>& days, Day through) {
  Result<std::string> bin = SelfPath();
  if (!bin.ok()) return bin.status();
  Result<std::string> root = AbsolutePath(work->root(), "--work");
  if (!root.ok()) return root.status();
  Result<std::string> config = AbsolutePath(options.config, "--config");
  if (!config.ok()) return config.status();
  if (Status s = CheckEarlierRuns(*work); !s.ok()) return s;
  Result<std::vector<SegmentInfo>> segments = work->Segments();
  if (!segments.ok()) return segments.status();
  const std::string covered_before = LastCoveredDay(*segments);

  const std::string run = *root + "/slurm/" + WorkDir::NewId();
  if (Status s = MakeDirs(run); !s.ok()) return s;
  Graph graph(options, *bin, *root, *config, run);
  std::optional<size_t> previous_release;
  size_t done = 0;
  do {  // a ring's worth of days at a time: the ring holds no more open days
    const size_t end = std::min(days.size(), done + size_t(kRingSlots));
    previous_release = AddNightGroup(&graph, options, days, done, end, through, covered_before, previous_release);
    done = end;
  } while (done < days.size());

  if (Status s = work->ShareLock(); !s.ok()) return s;
  std::printf("nightly on slurm: %zu job(s) in %s (scripts, logs, exit files, reports)\n", graph.size(),
              run.c_str());
  std::fflush(stdout);
  if (Status s = graph.Submit(); !s.ok()) return s;
  if (Status s = graph.Wait(); !s.ok()) return s;
  graph.PrintSummary();
  return Status::OK();
}

Status RunImportOnSlurm(const Options& options, WorkDir* work) {
  Progress progress("import on slurm");
  Result<std::string> bin = SelfPath();
  if (!bin.ok()) return bin.status();
  Result<std::string> root = AbsolutePath(work->root(), "--work");
  if (!root.ok()) return root.status();
  Result<std::string> input = AbsolutePath(options.input, "--input");
  if (!input.ok()) return input.status();
  std::string config;
  if (!options.config.empty()) {
    Result<std::string> c = AbsolutePath(options.config, "--config");
    if (!c.ok()) return c.status();
    config = *c;
  }
  if (Status s = CheckEarlierRuns(*work); !s.ok()) return s;
  const std::string id = WorkDir::NewId();
  const std::string run = *root + "/slurm/" + id;
  const std::string chunks = *root + "/bulk/" + id;
  if (Status s = MakeDirs(run); !s.ok()) return s;
  Graph graph(options, *bin, *root, config, run);
  const size_t split = graph.Add("split", "split",
                                 {{"split", "--input", *input, "--output", chunks, "--chunks",
                                   std::to_string(options.chunks)}}, {});
  std::vector<size_t> imports;
  for (uint32_t i = 0; i < options.chunks; ++i) {
    imports.push_back(graph.Add("import-" + std::to_string(i), "import",
                                {{"import", "--input", chunks + "/chunk-" + std::to_string(i) + ".csv", "--max-errors",
                                  std::to_string(options.max_errors)}}, {split}));
  }
  std::vector<size_t> merges;
  for (uint32_t k = 0; k < options.archive_shards; ++k) {
    merges.push_back(graph.Add("merge-" + std::to_string(k), "merge", {{"merge", "--shard", std::to_string(k)}},
                               imports));
  }
  graph.Add("merge-all", "merge", {{"merge"}}, merges);

  if (Status s = work->ShareLock(); !s.ok()) return s;
  std::printf("import on slurm: %zu job(s) in %s (scripts, logs, exit files, reports)\n", graph.size(), run.c_str());
  std::fflush(stdout);
  if (Status s = graph.Submit(); !s.ok()) return s;
  if (Status s = graph.Wait(); !s.ok()) return s;
  graph.PrintSummary();
  if (Status s = RemoveAll(chunks); !s.ok()) return s;
  progress.Summary("done: " + *input + " imported in " + std::to_string(options.chunks) + " chunk(s) and merged into " +
                   std::to_string(options.archive_shards) + " shard(s)");
  return Status::OK();
}

}  // namespace clickatron::rebuild
