// The rebuild steps that change the cluster or the work directory as a whole — export,
// compact, publish, release — run against a real work directory and, where they call
// servers, small in-process HTTP servers (net/test_server.h) that answer like a realtime
// shard or an archive server would, or fail the way one can: down, refusing, stale.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "base/test_dir.h"
#include "keyformat/footer.h"
#include "keyformat/hex64.h"
#include "keyformat/ymdh.h"
#include "net/test_server.h"
#include "rebuild/commands.h"
#include "rebuild/export_files.h"
#include "rebuild/merged.h"
#include "rebuild/publish.h"
#include "rebuild/sorted_file.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {
namespace {

namespace fs = std::filesystem;

Day D(const char* text) { return Day(*ParseDay(text)); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// What `tool -dc` (gzip, zstd: the tools ops/restore-archive unpacks with) makes of a file
// ("" when it fails).
std::string Unpacked(const std::string& tool, const std::string& path) {
  if (std::system((tool + " -dc " + path + " > " + path + ".out").c_str()) != 0) return "";
  std::string out = ReadFile(path + ".out");
  fs::remove(path + ".out");
  return out;
}
std::string Gunzip(const std::string& path) { return Unpacked("gzip", path); }
std::string Unzstd(const std::string& path) { return Unpacked("zstd -q", path); }

// A work directory opened for one test, and the options a command line would give.
class Work {
 public:
  Work() : work_(dir_.path() + "/work") {
    fs::create_directories(work_.root());
    Status s = work_.Open();
    EXPECT_TRUE(s.ok()) << s.message();
    options.work = work_.root();
    options.archive_shards = 1;
    options.memory = 64 << 20;
    options.timeout_ms = 5000;
  }
  WorkDir* work() { return &work_; }
  const std::string& root() const { return work_.root(); }
  std::string Path(const std::string& rel) const { return work_.Path(rel); }
  std::string Temp(const std::string& name) const { return dir_.path() + "/" + name; }

  Status Run(Status (*step)(const Options&, WorkDir*)) { return step(options, &work_); }
  // import of these realtime-format lines, then merge.
  Status ImportAndMerge(const std::string& lines) {
    const std::string input = Temp("input-" + std::to_string(imports_++) + ".csv");
    WriteFile(input, lines);
    Options o = options;
    o.input = input;
    if (Status s = RunImport(o, &work_); !s.ok()) return s;
    return RunMerge(options, &work_);
  }
  // The names of the segments, in order.
  std::vector<std::string> SegmentNames() {
    std::vector<std::string> names;
    Result<std::vector<SegmentInfo>> segs = work_.Segments();
    EXPECT_TRUE(segs.ok()) << segs.status().message();
    if (segs.ok()) {
      for (const SegmentInfo& s : *segs) names.push_back(s.name);
    }
    return names;
  }

  Options options;

 private:
  TestDir dir_;
  WorkDir work_;
  int imports_ = 0;
};

// Every key,value line of a segment's shard file.
std::vector<std::string> SegmentLines(const std::string& path) {
  SegmentReader reader;
  EXPECT_TRUE(reader.Open(path).ok()) << path;
  std::vector<std::string> lines;
  std::string_view key, value;
  while (reader.Next(&key, &value)) lines.push_back(std::string(key) + "," + std::string(value));
  EXPECT_TRUE(reader.status().ok()) << reader.status().message();
  return lines;
}

// A body with its #END footer, as a realtime shard's /export answers.
std::string Footed(const std::string& lines) {
  uint64_t count = 0;
  for (char c : lines) count += c == '\n';
  return lines + FormatFooter(Footer{count, XXH64(lines.data(), lines.size(), 0)});
}

// An archive server as publish and release see it: /stats tells the generation and last
// day it serves, POST /reload makes it serve what WORK/current/manifest says.
class FakeArchive {
 public:
  enum class Reload { kServe, kRefuse, kStale };

  explicit FakeArchive(std::string work_root)
      : work_root_(std::move(work_root)), server_([this](net::Server& s) {
          s.Handle("/stats", [this](net::Request& r) { r.Reply(200, Stats()); });
          s.Handle("/reload", [this](net::Request& r) { OnReload(r); });
        }) {}

  net::HostPort address() const { return server_.address(); }
  void set_reload(Reload mode) {
    std::lock_guard<std::mutex> lock(mu_);
    mode_ = mode;
  }
  void Serve(std::string generation, std::string last_day) {
    std::lock_guard<std::mutex> lock(mu_);
    generation_ = std::move(generation);
    last_day_ = std::move(last_day);
  }
  std::string generation() const {
    std::lock_guard<std::mutex> lock(mu_);
    return generation_;
  }
  int reloads() const {
    std::lock_guard<std::mutex> lock(mu_);
    return reloads_;
  }

 private:
  std::string Stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    return R"({"data": {"generation": ")" + generation_ + R"(", "last_day": ")" + last_day_ + R"("}})";
  }
  void OnReload(net::Request& r) {
    std::lock_guard<std::mutex> lock(mu_);
    ++reloads_;
    if (mode_ == Reload::kRefuse) return r.Reply(500, "boom\n");
    if (mode_ == Reload::kServe) {
      Result<KeyValueText> manifest = ReadKeyValueFile(work_root_ + "/current/manifest");
      generation_ = manifest.ok() ? manifest->Get("generation") : "";
      last_day_ = manifest.ok() ? manifest->Get("last_day") : "";
    }
    r.Reply(200, "{}");
  }

  const std::string work_root_;
  mutable std::mutex mu_;
  Reload mode_ = Reload::kServe;
  std::string generation_, last_day_;
  int reloads_ = 0;
  net::TestServer server_;  // last: its thread stops before the state above goes
};

// A realtime shard as export and release see it: day slots in /stats, POST /close?day=
// (open slots <= day become closed), POST /release?day= (of an open or closed slot: the
// fake does not refuse an open one), and GET /export?day= answering the body set for that day.
class FakeRealtime {
 public:
  FakeRealtime()
      : server_([this](net::Server& s) {
          s.Handle("/stats", [this](net::Request& r) { r.Reply(200, Stats()); });
          s.Handle("/close", [this](net::Request& r) { OnClose(r); });
          s.Handle("/release", [this](net::Request& r) { OnRelease(r); });
          s.Handle("/export", [this](net::Request& r) { OnExport(r); });
          s.Handle("/close", [this](net::Request& r) { OnClose(r); });
        }) {}

  net::HostPort address() const { return server_.address(); }
  void SetSlot(const std::string& day, const std::string& state) {
    std::lock_guard<std::mutex> lock(mu_);
    slots_[day] = state;
  }
  std::string slot(const std::string& day) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = slots_.find(day);
    return it == slots_.end() ? "" : it->second;
  }
  void set_stats_body(std::string body) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_body_ = std::move(body);
  }
  void set_release_status(int status) {
    std::lock_guard<std::mutex> lock(mu_);
    release_status_ = status;
  }
  void SetExport(const std::string& day, std::string body) {
    std::lock_guard<std::mutex> lock(mu_);
    exports_[day] = std::move(body);
  }
  std::vector<std::string> release_requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return release_requests_;
  }
  int export_requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return export_requests_;
  }
  // "close <day>" and "export <day>" in the order they came.
  std::vector<std::string> calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  std::vector<std::string> close_requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return close_requests_;
  }
  void set_close_status(int status) {
    std::lock_guard<std::mutex> lock(mu_);
    close_status_ = status;
  }
  void set_export_status(int status) {
    std::lock_guard<std::mutex> lock(mu_);
    export_status_ = status;
  }

 private:
  std::string Stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stats_body_.empty()) return stats_body_;
    std::string slots;
    for (const auto& [day, state] : slots_) {
      slots += std::string(slots.empty() ? "" : ", ") + R"({"day": ")" + day + R"(", "state": ")" + state + R"("})";
    }
    const std::string closed = closed_through_.empty() ? "null" : "\"" + closed_through_ + "\"";
    return R"({"data": {"slots": [)" + slots + R"(], "closed_through": )" + closed + "}}";
  }
  void OnRelease(net::Request& r) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string day(r.Param("day").value_or(""));
    release_requests_.push_back(day);
    if (release_status_ != 0) return r.Reply(release_status_, "nope\n");
    auto it = slots_.find(day);
    if (it == slots_.end()) return r.Reply(404, "no such slot\n");
    if (it->second == "open") return r.Reply(409, "DAY_NOT_CLOSED\n");
    it->second = "released";
    r.Reply(200, "{}");
  }
  // Every open day <= D becomes closed (docs/api.md#realtime-close).
  void OnClose(net::Request& r) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string day(r.Param("day").value_or(""));
    close_requests_.push_back(day);
    calls_.push_back("close " + day);
    if (close_status_ != 0) return r.Reply(close_status_, "cannot close\n");
    for (auto& [d, state] : slots_) {
      if (d <= day && state == "open") state = "closed";
    }
    closed_through_ = std::max(closed_through_, day);
    r.Reply(200, R"({"data": {"day": ")" + day + R"(", "closed_through": ")" + closed_through_ + R"("}})");
  }
  void OnExport(net::Request& r) {
    std::lock_guard<std::mutex> lock(mu_);
    ++export_requests_;
    calls_.push_back("export " + std::string(r.Param("day").value_or("")));
    if (export_status_ != 0) return r.Reply(export_status_, "export broke\n");
    auto it = exports_.find(std::string(r.Param("day").value_or("")));
    if (it == exports_.end()) return r.Reply(404, "day not in the ring\n");
    r.Reply(200, it->second);
  }

  mutable std::mutex mu_;
  std::map<std::string, std::string> slots_;
  std::string closed_through_;  // W, "" before the first close
  std::string stats_body_;
  int release_status_ = 0;  // 0: answer as a shard would
  std::map<std::string, std::string> exports_;
  std::vector<std::string> release_requests_;
  std::vector<std::string> calls_;
  std::vector<std::string> close_requests_;
  int export_requests_ = 0;
  int close_status_ = 0, export_status_ = 0;  // 0: answer as a shard would
  net::TestServer server_;  // last: its thread stops before the state above goes
};

// An API as the nightly sees it: GET /late?after= answers its late entries after that id
// (at most page_size of them, X-Late-More: 1 when more remain), POST /late/release drops
// entries through an id.
class FakeApi {
 public:
  FakeApi()
      : server_([this](net::Server& s) {
          s.Handle("/late", [this](net::Request& r) { OnLate(r); });
          s.Handle("/late/release", [this](net::Request& r) { OnRelease(r); });
        }) {}

  net::HostPort address() const { return server_.address(); }
  // Entry id -> its realtime records.
  void AddEntry(uint64_t id, std::string lines) {
    std::lock_guard<std::mutex> lock(mu_);
    entries_[id] = std::move(lines);
  }
  void set_page_size(size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    page_size_ = n;
  }
  std::vector<std::string> late_requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return late_requests_;
  }
  std::vector<std::string> release_requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return release_requests_;
  }
  size_t entries() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
  }

 private:
  void OnLate(net::Request& r) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string after_text(r.Param("after").value_or("0"));
    late_requests_.push_back(after_text);
    const uint64_t after = std::stoull(after_text);
    std::string body;
    uint64_t first = 0, last = after;
    size_t n = 0;
    bool more = false;
    for (auto it = entries_.upper_bound(after); it != entries_.end(); ++it) {
      if (n == page_size_) {
        more = true;
        break;
      }
      if (first == 0) first = it->first;
      last = it->first;
      body += it->second;
      ++n;
    }
    if (first != 0) r.AddHeader("X-Late-First", std::to_string(first).c_str());
    r.AddHeader("X-Late-Last", std::to_string(last).c_str());
    if (more) r.AddHeader("X-Late-More", "1");
    r.Reply(200, Footed(body));
  }
  void OnRelease(net::Request& r) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string through(r.Param("through").value_or(""));
    release_requests_.push_back(through);
    entries_.erase(entries_.begin(), entries_.upper_bound(std::stoull(through)));
    r.Reply(200, "{}");
  }

  mutable std::mutex mu_;
  std::map<uint64_t, std::string> entries_;
  size_t page_size_ = 100;
  std::vector<std::string> late_requests_, release_requests_;
  net::TestServer server_;  // last
};

// An address where nothing listens: a server's port after it stopped.
net::HostPort DownServer() {
  net::TestServer gone([](net::Server&) {});
  return gone.address();
}

constexpr char kTwoDays[] = "u|a.c3p0,1\nu|b.c3p1,2\nu|a.c3q0,3\n";  // 2012-03-25 and -26

// ---------------------------------------------------------------- export

TEST(ExportStep, WritesEachShardsVerifiedAnswer) {
  Work w;
  FakeRealtime shard0, shard1;
  const std::string body0 = Footed("u|a.c3p0,1\nu|b.c3p1,2\n");
  const std::string body1 = Footed("");  // a shard with no record that day
  shard0.SetExport("2012-03-25", body0);
  shard1.SetExport("2012-03-25", body1);
  w.options.realtime = {shard0.address(), shard1.address()};
  w.options.day = D("2012-03-25");
  ASSERT_TRUE(w.Run(RunExport).ok());
  EXPECT_EQ(ReadFile(ExportPath(*w.work(), w.options.day, 0)), body0);
  EXPECT_EQ(ReadFile(ExportPath(*w.work(), w.options.day, 1)), body1);
  EXPECT_FALSE(fs::exists(ExportPath(*w.work(), w.options.day, 0) + ".tmp"));

  // Again: the files are there and verified, nothing is fetched (the close is repeated:
  // it is idempotent, and a day must be closed before anything is done with its export).
  ASSERT_TRUE(w.Run(RunExport).ok());
  EXPECT_EQ(shard0.export_requests(), 1);
  EXPECT_EQ(shard1.export_requests(), 1);
  const std::vector<std::string> calls = {"close 2012-03-25", "export 2012-03-25", "close 2012-03-25"};
  EXPECT_EQ(shard0.calls(), calls);
}

TEST(ExportStep, RefusesAnAnswerWithoutItsFooterAndKeepsNoFile) {
  Work w;
  FakeRealtime shard;
  w.options.realtime = {shard.address()};
  w.options.day = D("2012-03-25");
  const std::string where = "export of 2012-03-25 from realtime shard 0 (" + shard.address().ToString() + ") refused: ";
  const std::string path = ExportPath(*w.work(), w.options.day, 0);

  shard.SetExport("2012-03-25", "u|a.c3p0,1\n");  // cut before its footer
  EXPECT_EQ(w.Run(RunExport).message(), where + "the answer does not end with an #END footer (truncated)");
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  shard.SetExport("2012-03-25", "u|a.c3p0,1\n#END count=2 xxh64=0000000000000000\n");
  EXPECT_EQ(w.Run(RunExport).message(), where + "footer says 2 records but 1 were read");
  EXPECT_FALSE(fs::exists(path));

  shard.SetExport("2012-03-25", Footed("u|a.c3p0,1\n").substr(0, 20));
  EXPECT_EQ(w.Run(RunExport).message(), where + "the answer ends in the middle of a line (truncated)");

  w.options.day = D("2012-03-26");
  EXPECT_EQ(w.Run(RunExport).message(),
            "export of 2012-03-26 from realtime shard 0 (" + shard.address().ToString() +
                ") refused: the shard does not hold 2012-03-26 (404: day not in the ring)");
}

TEST(ExportStep, AServerDownFailsTheStepNamingIt) {
  Work w;
  const net::HostPort down = DownServer();
  w.options.realtime = {down};
  w.options.day = D("2012-03-25");
  const Status s = w.Run(RunExport);
  EXPECT_EQ(s.message().rfind("export of 2012-03-25 from realtime shard 0 (" + down.ToString() + ") refused: ", 0), 0u)
      << s.message();
  EXPECT_FALSE(fs::exists(ExportPath(*w.work(), w.options.day, 0)));
}

TEST(ExportStep, AnInterruptedFetchOrADamagedFileIsFetchedAgain) {
  Work w;
  FakeRealtime shard;
  const std::string body = Footed("u|a.c3p0,1\n");
  shard.SetExport("2012-03-25", body);
  w.options.realtime = {shard.address()};
  w.options.day = D("2012-03-25");
  const std::string path = ExportPath(*w.work(), w.options.day, 0);
  fs::create_directories(fs::path(path).parent_path());
  WriteFile(path + ".tmp", "u|a.c3p0,1\nu|");  // a fetch killed midway
  ASSERT_TRUE(w.Run(RunExport).ok());
  EXPECT_EQ(ReadFile(path), body);
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  WriteFile(path, "u|a.c3p0,1\n");  // damaged: no footer
  ASSERT_TRUE(w.Run(RunExport).ok());
  EXPECT_EQ(ReadFile(path), body);
  EXPECT_EQ(shard.export_requests(), 2);
}

// ---------------------------------------------------------------- compact

TEST(CompactStep, FoldsTheDaysOfAWholeMonthIntoOneSegment) {
  Work w;
  ASSERT_TRUE(w.ImportAndMerge(kTwoDays).ok());
  ASSERT_EQ(w.SegmentNames().size(), 2u);

  w.options.before = D("2012-03-31");  // March has not ended by then
  ASSERT_TRUE(w.Run(RunCompact).ok());
  ASSERT_EQ(w.SegmentNames().size(), 2u);

  w.options.before = D("2012-04-01");
  ASSERT_TRUE(w.Run(RunCompact).ok());
  Result<std::vector<SegmentInfo>> segs = w.work()->Segments();
  ASSERT_TRUE(segs.ok());
  ASSERT_EQ(segs->size(), 1u);
  const SegmentInfo& month = segs->front();
  EXPECT_EQ(month.span, "2012-03");
  EXPECT_EQ(month.covers.size(), 2u);
  EXPECT_TRUE(month.covers.count("2012-03-25") && month.covers.count("2012-03-26"));
  EXPECT_EQ(SegmentLines(month.ShardPath(0)),
            (std::vector<std::string>{"u|a,c3p0:1 c3q0:3", "u|b,c3p1:2"}));
  EXPECT_EQ(month.files[0].records, 2u);

  // Again: already one month segment, nothing changes.
  ASSERT_TRUE(w.Run(RunCompact).ok());
  EXPECT_EQ(w.SegmentNames(), std::vector<std::string>{month.name});
}

TEST(CompactStep, ADayImportedLaterIsFoldedIn) {
  Work w;
  ASSERT_TRUE(w.ImportAndMerge(kTwoDays).ok());
  w.options.before = D("2012-04-01");
  ASSERT_TRUE(w.Run(RunCompact).ok());
  ASSERT_TRUE(w.ImportAndMerge("u|a.c3r0,5\n").ok());  // 2012-03-27
  ASSERT_EQ(w.SegmentNames().size(), 2u);
  ASSERT_TRUE(w.Run(RunCompact).ok());
  Result<std::vector<SegmentInfo>> segs = w.work()->Segments();
  ASSERT_TRUE(segs.ok());
  ASSERT_EQ(segs->size(), 1u);
  EXPECT_EQ(segs->front().covers.size(), 3u);
  EXPECT_EQ(SegmentLines(segs->front().ShardPath(0)),
            (std::vector<std::string>{"u|a,c3p0:1 c3q0:3 c3r0:5", "u|b,c3p1:2"}));
}

TEST(CompactStep, ADamagedSegmentFailsAndLeavesTheDaysAsTheyWere) {
  Work w;
  ASSERT_TRUE(w.ImportAndMerge(kTwoDays).ok());
  const std::vector<std::string> before = w.SegmentNames();
  Result<std::vector<SegmentInfo>> segs = w.work()->Segments();
  ASSERT_TRUE(segs.ok());
  const std::string victim = segs->front().ShardPath(0);
  fs::resize_file(victim, fs::file_size(victim) - 3);
  w.options.before = D("2012-04-01");
  const Status s = w.Run(RunCompact);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(victim), std::string::npos) << s.message();
  EXPECT_EQ(w.SegmentNames(), before);
}

// ---------------------------------------------------------------- publish

// The manifest of the live generation.
KeyValueText LiveManifest(const Work& w) {
  Result<KeyValueText> m = ReadKeyValueFile(w.Path("current/manifest"));
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : KeyValueText();
}

TEST(PublishStep, WritesTheGenerationFlipsCurrentAndReloadsEveryReplica) {
  Work w;
  ASSERT_TRUE(w.ImportAndMerge(kTwoDays).ok());
  FakeArchive a(w.root()), b(w.root());
  w.options.archive = {{a.address(), b.address()}};
  ASSERT_TRUE(w.Run(RunPublish).ok());

  Result<std::string> live = LiveGeneration(*w.work());
  ASSERT_TRUE(live.ok());
  Result<MergedInfo> merged = ReadMergedInfo(w.Path("merged"));
  ASSERT_TRUE(merged.ok());
  const KeyValueText manifest = LiveManifest(w);
  EXPECT_EQ(manifest.Get("generation"), *live);
  EXPECT_EQ(live->rfind("20120326-", 0), 0u) << *live;
  EXPECT_EQ(manifest.Get("last_day"), "2012-03-26");
  EXPECT_EQ(manifest.Get("shards"), "1");
  EXPECT_EQ(manifest.Get("shard.0.file"), "shard-0.csv");
  EXPECT_EQ(manifest.Get("shard.0.records"), std::to_string(merged->files[0].records));
  EXPECT_EQ(manifest.Get("shard.0.bytes"), std::to_string(merged->files[0].bytes));
  EXPECT_EQ(ReadFile(w.Path("gen/" + *live + "/shard-0.csv")), ReadFile(w.Path("merged/shard-0.csv")));
  EXPECT_EQ(a.generation(), *live);
  EXPECT_EQ(b.generation(), *live);

  // Again: everything is there and served; nobody is asked to reload.
  ASSERT_TRUE(w.Run(RunPublish).ok());
  EXPECT_EQ(*LiveGeneration(*w.work()), *live);
  EXPECT_EQ(a.reloads(), 1);
  EXPECT_EQ(b.reloads(), 1);
}

TEST(PublishStep, WritesTheZstdBackupByDefaultOnce) {
  Work w;
  ASSERT_TRUE(w.ImportAndMerge(kTwoDays).ok());
  w.options.backup = w.Temp("backup");
  ASSERT_TRUE(w.Run(RunPublish).ok());
  const std::string generation = *LiveGeneration(*w.work());
  const std::string dir = w.options.backup + "/" + generation;
  EXPECT_EQ(ReadFile(dir + "/manifest"), ReadFile(w.Path("current/manifest")));
  EXPECT_EQ(ReadFile(dir + "/shard-0.csv.zst").substr(0, 4), "\x28\xb5\x2f\xfd");  // a zstd frame
  EXPECT_FALSE(fs::exists(dir + "/shard-0.csv.gz"));
  EXPECT_EQ(Unzstd(dir + "/shard-0.csv.zst"), ReadFile(w.Path("merged/shard-0.csv")));
  const auto written = fs::last_write_time(dir + "/shard-0.csv.zst");
  ASSERT_TRUE(w.Run(RunPublish).ok());
  EXPECT_EQ(fs::last_write_time(dir + "/shard-0.csv.zst"), written);
}

TEST(PublishStep, WritesTheGzipBackupOnce) {
  Work w;
  ASSERT_TRUE(w.ImportAndMerge(kTwoDays).ok());
  w.options.backup = w.Temp("backup");
  w.options.backup_codec = BackupCodec::kGzip;
  ASSERT_TRUE(w.Run(RunPublish).ok());
  const std::string generation = *LiveGeneration(*w.work());
  const std::string dir = w.options.backup + "/" + generation;
  EXPECT_EQ(ReadFile(dir + "/manifest"), ReadFile(w.Path("current/manifest")));
  const std::string gz = ReadFile(dir + "/shard-0.csv.gz");
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(gz.substr(0, 2), "\x1f\x8b");  // RFC 1952
  EXPECT_EQ(Gunzip(dir + "/shard-0.csv.gz"), ReadFile(w.Path("merged/shard-0.csv")));
  const auto written = fs::last_write_time(dir + "/shard-0.csv.gz");
  ASSERT_TRUE(w.Run(RunPublish).ok());
  EXPECT_EQ(fs::last_write_time(dir + "/shard-0.csv.gz"), written);
}

TEST(PublishStep, TheBackupOfAPublishedGenerationIsMadeFromItsFiles) {
  Work w;
  ASSERT_TRUE(w.ImportAndMerge(kTwoDays).ok());
  ASSERT_TRUE(w.Run(RunPublish).ok());
  const std::string generation = *LiveGeneration(*w.work());
  w.options.backup = w.Temp("backup");
  ASSERT_TRUE(w.Run(RunPublish).ok());
  const std::string dir = w.options.backup + "/" + generation;
  EXPECT_EQ(Unzstd(dir + "/shard-0.csv.zst"), ReadFile(w.Path("gen/" + generation + "/shard-0.csv")));
  EXPECT_EQ(ReadFile(dir + "/manifest"), ReadFile(w.Path("current/manifest")));
}

TEST(PublishStep, ADamagedMergedFileWritesNeitherGenerationNorBackup) {
  Work w;
  ASSERT_TRUE(w.ImportAndMerge(kTwoDays).ok());
  const std::string merged = w.Path("merged/shard-0.csv");
  std::string bytes = ReadFile(merged);
  bytes[0] ^= 1;  // same size, other content
  fs::remove(merged);  // not through the hard link of a generation
  WriteFile(merged, bytes);
  w.options.backup = w.Temp("backup");
  const Status s = w.Run(RunPublish);
  EXPECT_NE(s.message().find(merged + " does not match merged/meta"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(w.Path("current")));
  EXPECT_TRUE(fs::is_empty(w.options.backup));
  EXPECT_TRUE(fs::is_empty(w.Path("gen")));
}

TEST(PublishStep, ARefusedReloadPutsThePreviousGenerationBack) {
  Work w;
  ASSERT_TRUE(w.ImportAndMerge(kTwoDays).ok());
  FakeArchive archive(w.root());
  w.options.archive = {{archive.address()}};
  ASSERT_TRUE(w.Run(RunPublish).ok());
  const std::string first = *LiveGeneration(*w.work());

  ASSERT_TRUE(w.ImportAndMerge("u|a.c3r0,5\n").ok());
  archive.set_reload(FakeArchive::Reload::kRefuse);
  const Status s = w.Run(RunPublish);
  const std::string second = s.message().substr(std::string("publish of generation ").size(), first.size());
  EXPECT_EQ(s.message(), "publish of generation " + second + " failed: archive " + archive.address().ToString() +
                             " refused the reload (HTTP 500: boom); generation " + first + " stays live");
  EXPECT_EQ(second.rfind("20120327-", 0), 0u) << second;
  EXPECT_EQ(*LiveGeneration(*w.work()), first);
  EXPECT_EQ(archive.reloads(), 3);  // the first publish, the refused one, the way back
  EXPECT_TRUE(fs::exists(w.Path("gen/" + second + "/manifest")));  // kept for the re-run

  // Re-run once the server is back: the written generation goes live.
  archive.set_reload(FakeArchive::Reload::kServe);
  ASSERT_TRUE(w.Run(RunPublish).ok());
  EXPECT_EQ(*LiveGeneration(*w.work()), second);
  EXPECT_EQ(archive.generation(), second);
}

TEST(PublishStep, AStaleOrDownServerFailsAndNothingStaysLive) {
  Work w;
  ASSERT_TRUE(w.ImportAndMerge(kTwoDays).ok());
  FakeArchive stale(w.root());
  stale.set_reload(FakeArchive::Reload::kStale);
  stale.Serve("20110101-00", "2011-01-01");
  w.options.archive = {{stale.address()}};
  Status s = w.Run(RunPublish);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("failed: archive " + stale.address().ToString() +
                             " reloaded but serves generation '20110101-00', not "),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("(is its --db-file under DIR/current?); no generation was live before"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(*LiveGeneration(*w.work()), "");
  EXPECT_FALSE(fs::exists(w.Path("current")));

  // At a first publish (nothing live yet) a server that does not answer is not running yet:
  // it serves the generation when it starts (its --db-file is under DIR/current).
  const net::HostPort down = DownServer();
  w.options.archive = {{down}};
  ASSERT_TRUE(w.Run(RunPublish).ok());
  const std::string first = *LiveGeneration(*w.work());
  EXPECT_NE(first, "");
  // Once a generation is live, one that does not answer fails the publish: the old one stays.
  ASSERT_TRUE(w.ImportAndMerge("u|a.c3r0,5\n").ok());  // 2012-03-27
  s = w.Run(RunPublish);
  EXPECT_NE(s.message().find("failed: POST /reload to " + down.ToString() + ": "), std::string::npos) << s.message();
  EXPECT_EQ(*LiveGeneration(*w.work()), first);
}

TEST(PublishStep, ClosesEveryRealtimeShardThroughItsLastDayAndRefusesWhatOneHoldsUnmerged) {
  Work w;
  ASSERT_TRUE(w.ImportAndMerge(kTwoDays).ok());  // 2012-03-25..26
  FakeRealtime shard0, shard1;
  shard0.SetSlot("2012-03-27", "open");
  w.options.realtime = {shard0.address(), shard1.address()};
  ASSERT_TRUE(w.Run(RunPublish).ok());
  EXPECT_EQ(shard0.close_requests(), (std::vector<std::string>{"2012-03-26"}));
  EXPECT_EQ(shard1.close_requests(), (std::vector<std::string>{"2012-03-26"}));
  EXPECT_EQ(shard0.slot("2012-03-27"), "open");  // a later day is realtime's

  // A shard holding a day the generation would own, which the merged files lack: refused
  // before anything is closed or written, naming the nightly.
  Work w2;
  ASSERT_TRUE(w2.ImportAndMerge(kTwoDays).ok());
  FakeRealtime held;
  held.SetSlot("2012-03-26", "open");
  w2.options.realtime = {held.address()};
  const Status s = w2.Run(RunPublish);
  EXPECT_EQ(s.message(), "refusing to publish through 2012-03-26: realtime holds 2012-03-26@0 (day@shard) and the "
                         "merged files lack it; run clickatron-rebuild nightly, which exports it and adds it to the "
                         "archive first");
  EXPECT_TRUE(held.close_requests().empty());
  EXPECT_EQ(*LiveGeneration(*w2.work()), "");
}

TEST(PublishStep, RefusesWhatItCannotPublish) {
  Work w;
  Status s = w.Run(RunPublish);
  EXPECT_EQ(s.message().rfind("nothing merged to publish (", 0), 0u) << s.message();
  EXPECT_TRUE(s.message().ends_with("): run merge first")) << s.message();

  ASSERT_TRUE(w.ImportAndMerge(kTwoDays).ok());
  FakeArchive a(w.root()), b(w.root());
  w.options.archive = {{a.address()}, {b.address()}};
  EXPECT_EQ(w.Run(RunPublish).message(), "the merged files have 1 shard(s) but the config has 2 archive shard(s)");
  EXPECT_FALSE(fs::exists(w.Path("current")));
}

TEST(PublishStep, AnInterruptedWriteIsCleanedUpAndRedone) {
  Work w;
  ASSERT_TRUE(w.ImportAndMerge(kTwoDays).ok());
  ASSERT_TRUE(w.Run(RunPublish).ok());
  const std::string generation = *LiveGeneration(*w.work());
  // As if killed before the rename: a temp directory, and the generation without manifest.
  fs::remove_all(w.Path("current"));
  fs::remove(w.Path("gen/" + generation + "/manifest"));
  fs::create_directories(w.Path("gen/.tmp-killed"));
  WriteFile(w.Path("gen/.tmp-killed/shard-0.csv"), "u|a,");
  ASSERT_TRUE(w.Run(RunPublish).ok());
  EXPECT_EQ(*LiveGeneration(*w.work()), generation);
  EXPECT_FALSE(fs::exists(w.Path("gen/.tmp-killed")));
  EXPECT_EQ(ReadFile(w.Path("gen/" + generation + "/shard-0.csv")), ReadFile(w.Path("merged/shard-0.csv")));
  EXPECT_EQ(LiveManifest(w).Get("generation"), generation);
}

TEST(PublishStep, KeepsOnlyTheNewestGenerations) {
  Work w;
  w.options.keep_generations = 2;
  std::vector<std::string> generations;
  for (const char* lines : {"u|a.c3p0,1\n", "u|a.c3q0,1\n", "u|a.c3r0,1\n"}) {
    ASSERT_TRUE(w.ImportAndMerge(lines).ok());
    ASSERT_TRUE(w.Run(RunPublish).ok());
    generations.push_back(*LiveGeneration(*w.work()));
    // mtime has a granularity of a second in what publish compares
    fs::last_write_time(w.Path("gen/" + generations.back()),
                        fs::file_time_type::clock::now() - std::chrono::hours(10 - generations.size()));
  }
  std::set<std::string> kept;
  for (const auto& e : fs::directory_iterator(w.Path("gen"))) kept.insert(e.path().filename().string());
  EXPECT_EQ(kept, (std::set<std::string>{generations[1], generations[2]}));
}

// ---------------------------------------------------------------- release

// A work directory with 2012-03-25..26 published (imported: no day is recorded as exported)
// and served by `archive`. Published without realtime shards (as `publish` without the
// cluster config does): the realtime shards the test sets up are not told of it, which is
// the state release must handle.
void Publish(Work* w, FakeArchive* archive) {
  ASSERT_TRUE(w->ImportAndMerge(kTwoDays).ok());
  w->options.archive = {{archive->address()}};
  const auto realtime = w->options.realtime;
  w->options.realtime.clear();
  ASSERT_TRUE(w->Run(RunPublish).ok());
  w->options.realtime = realtime;
}

// Two realtime shards holding 2012-03-25..27 open, each day's export set.
struct TwoShards {
  FakeRealtime shard[2];
  TwoShards() {
    for (const char* day : {"2012-03-25", "2012-03-26", "2012-03-27"}) {
      for (FakeRealtime& s : shard) s.SetSlot(day, "open");
    }
    shard[0].SetExport("2012-03-25", Footed("u|a.c3p0,1\n"));
    shard[1].SetExport("2012-03-25", Footed("u|b.c3p1,2\n"));
    shard[0].SetExport("2012-03-26", Footed("u|a.c3q0,3\n"));
    shard[1].SetExport("2012-03-26", Footed(""));
    shard[0].SetExport("2012-03-27", Footed("u|a.c3r0,4\n"));
    shard[1].SetExport("2012-03-27", Footed(""));
  }
  std::vector<net::HostPort> addresses() const { return {shard[0].address(), shard[1].address()}; }
  std::vector<std::string> slots(const std::string& day) const { return {shard[0].slot(day), shard[1].slot(day)}; }
};

// The YMDH token of hour 0 of a day.
std::string YmdhOf(Day day) { return std::string(EncodeYmdh(int64_t(day) * kSecondsPerDay)->view()); }

// Export, segment, merge, publish of these days (closed first, as nightly does).
void PublishExports(Work* w, TwoShards* shards, FakeArchive* archive, const std::vector<std::string>& days) {
  w->options.realtime = shards->addresses();
  w->options.archive = {{archive->address()}};
  for (const std::string& day : days) {
    for (FakeRealtime& s : shards->shard) s.SetSlot(day, "closed");
    w->options.day = D(day.c_str());
    ASSERT_TRUE(w->Run(RunExport).ok());
    ASSERT_TRUE(w->Run(RunSegment).ok());
  }
  ASSERT_TRUE(w->Run(RunMerge).ok());
  ASSERT_TRUE(w->Run(RunPublish).ok());
}

TEST(ReleaseStep, ReleasesTheClosedSlotsTheManifestRecordsThroughTheDay) {
  Work w;
  FakeArchive archive(w.root());
  TwoShards shards;
  PublishExports(&w, &shards, &archive, {"2012-03-25", "2012-03-26"});
  const KeyValueText manifest = LiveManifest(w);
  EXPECT_EQ(manifest.GetAll("day"),
            (std::vector<std::string>{
                "2012-03-25 " + Hex64(XXH64("u|a.c3p0,1\n", 11, 0)) + " " + Hex64(XXH64("u|b.c3p1,2\n", 11, 0)),
                "2012-03-26 " + Hex64(XXH64("u|a.c3q0,3\n", 11, 0)) + " " + Hex64(XXH64("", 0, 0))}));
  shards.shard[0].SetSlot("2012-03-24", "released");
  w.options.through = D("2012-03-26");
  ASSERT_TRUE(w.Run(RunRelease).ok());
  for (const FakeRealtime& s : shards.shard) {
    EXPECT_EQ(s.release_requests(), (std::vector<std::string>{"2012-03-25", "2012-03-26"}));
  }
  EXPECT_EQ(shards.slots("2012-03-25"), (std::vector<std::string>{"released", "released"}));
  EXPECT_EQ(shards.slots("2012-03-26"), (std::vector<std::string>{"released", "released"}));
  EXPECT_EQ(shards.slots("2012-03-27"), (std::vector<std::string>{"open", "open"}));

  // Again: nothing is closed through the day any more, nothing is asked.
  ASSERT_TRUE(w.Run(RunRelease).ok());
  EXPECT_EQ(shards.shard[0].release_requests().size(), 2u);
}

TEST(ReleaseStep, ASlotThatMovedOnMeanwhileIsFine) {
  Work w;
  FakeArchive archive(w.root());
  TwoShards shards;
  PublishExports(&w, &shards, &archive, {"2012-03-25"});
  shards.shard[1].set_release_status(404);
  w.options.through = D("2012-03-25");
  ASSERT_TRUE(w.Run(RunRelease).ok());
  EXPECT_EQ(shards.slots("2012-03-25"), (std::vector<std::string>{"released", "closed"}));
}

TEST(ReleaseStep, RefusesWhenAShardsStatsCannotBeReadAndReleasesNothing) {
  Work w;
  FakeArchive archive(w.root());
  TwoShards shards;
  PublishExports(&w, &shards, &archive, {"2012-03-25"});
  w.options.through = D("2012-03-25");
  const std::string second = "realtime shard 1 (" + shards.shard[1].address().ToString() + ")";
  for (const char* body : {"{}", "not json", R"({"data": {"slots": 3}})"}) {
    shards.shard[1].set_stats_body(body);
    const Status s = w.Run(RunRelease);
    EXPECT_EQ(s.message().rfind("refusing to release: the /stats of " + second +
                                    " cannot be read: not a realtime /stats answer: ",
                                0),
              0u)
        << s.message();
  }
  EXPECT_TRUE(shards.shard[0].release_requests().empty());
  EXPECT_TRUE(shards.shard[1].release_requests().empty());
  EXPECT_EQ(shards.slots("2012-03-25"), (std::vector<std::string>{"closed", "closed"}));
}

TEST(ReleaseStep, LeavesADayTheManifestDoesNotHoldFromThatShardOrThatIsOpen) {
  Work w;
  FakeArchive archive(w.root());
  Publish(&w, &archive);  // imported: in the archive, but never exported from realtime
  FakeRealtime shard;
  shard.SetSlot("2012-03-25", "closed");
  w.options.realtime = {shard.address()};
  w.options.through = D("2012-03-26");
  // Left for the nightly, which adds the shard's part of the day first (rebuild/day_plan.h):
  // nothing is released, nothing refused.
  EXPECT_TRUE(w.Run(RunRelease).ok());
  shard.SetSlot("2012-03-25", "released");
  shard.SetSlot("2012-03-26", "open");
  EXPECT_TRUE(w.Run(RunRelease).ok());
  EXPECT_TRUE(shard.release_requests().empty());

  // Recorded from one realtime shard, but the config now has two more.
  Work w2;
  FakeArchive archive2(w2.root());
  TwoShards shards;
  PublishExports(&w2, &shards, &archive2, {"2012-03-25"});
  FakeRealtime third;
  third.SetSlot("2012-03-25", "closed");
  w2.options.realtime.push_back(third.address());
  w2.options.through = D("2012-03-25");
  EXPECT_TRUE(w2.Run(RunRelease).ok());
  EXPECT_TRUE(third.release_requests().empty());
}

TEST(ReleaseStep, RefusesWhileTheArchiveDoesNotHoldTheDays) {
  Work w;
  FakeRealtime shard;
  shard.SetSlot("2012-03-25", "closed");
  w.options.realtime = {shard.address()};
  w.options.through = D("2012-03-25");
  EXPECT_EQ(w.Run(RunRelease).message(),
            "nothing is published in " + w.root() + ": refusing to release 2012-03-25");

  FakeArchive archive(w.root());
  Publish(&w, &archive);
  const std::string live = *LiveGeneration(*w.work());
  w.options.through = D("2012-03-27");
  EXPECT_EQ(w.Run(RunRelease).message(), "the live generation " + live +
                                             " holds days through 2012-03-26 only: refusing to release 2012-03-27");

  w.options.through = D("2012-03-25");
  archive.Serve("20120324-00", "2012-03-24");  // a replica still on an older generation...
  archive.set_reload(FakeArchive::Reload::kRefuse);  // ...that will not reload
  const int reloads = archive.reloads();
  EXPECT_EQ(w.Run(RunRelease).message(), "refusing to release 2012-03-25: archive " + archive.address().ToString() +
                                             " serves last day '2012-03-24' (run publish first)");
  EXPECT_EQ(archive.reloads(), reloads + 1);
  // One that missed its reload (a publish killed after the flip of DIR/current) is asked to
  // load the live generation: release goes on to its next check instead of refusing every
  // night after.
  archive.set_reload(FakeArchive::Reload::kServe);
  EXPECT_TRUE(w.Run(RunRelease).ok());
  EXPECT_EQ(archive.reloads(), reloads + 2);

  const net::HostPort down = DownServer();
  w.options.archive = {{down}};
  const Status s = w.Run(RunRelease);
  EXPECT_EQ(s.message().rfind("refusing to release: GET /stats to " + down.ToString() + ": ", 0), 0u) << s.message();
  EXPECT_TRUE(shard.release_requests().empty());
  EXPECT_EQ(shard.slot("2012-03-25"), "closed");
}

TEST(ReleaseStep, ARealtimeShardThatRefusesOrIsDownFailsTheStep) {
  Work w;
  FakeArchive archive(w.root());
  TwoShards shards;
  PublishExports(&w, &shards, &archive, {"2012-03-25"});
  shards.shard[0].set_release_status(500);
  w.options.through = D("2012-03-25");
  EXPECT_EQ(w.Run(RunRelease).message(), "realtime shard 0 (" + shards.shard[0].address().ToString() +
                                             ") refused to release 2012-03-25: HTTP 500 nope");

  const net::HostPort down = DownServer();
  w.options.realtime[1] = down;
  const Status s = w.Run(RunRelease);
  EXPECT_EQ(s.message().rfind("refusing to release: the /stats of realtime shard 1 (" + down.ToString() +
                                  ") cannot be read: GET /stats to " + down.ToString() + ": ",
                              0),
            0u)
      << s.message();
}

// ---------------------------------------------------------------- nightly

// Every key,value line of the live generation's shard 0.
std::string LiveShard0(const Work& w) { return ReadFile(w.Path("current/shard-0.csv")); }

TEST(NightlyStep, ArchivesEveryClosedDayOldestFirstThroughTheDayAndReleasesThem) {
  Work w;
  FakeArchive archive(w.root());
  TwoShards shards;
  w.options.realtime = shards.addresses();
  w.options.archive = {{archive.address()}};
  w.options.through = D("2012-03-26");
  ASSERT_TRUE(w.Run(RunNightly).ok());
  // Nothing was published: the first day is the oldest any shard holds. The fence closes
  // through the night's last day before the plan, then each export closes its day.
  for (const FakeRealtime& s : shards.shard) {
    EXPECT_EQ(s.close_requests(), (std::vector<std::string>{"2012-03-26", "2012-03-25", "2012-03-26"}));
    EXPECT_EQ(s.release_requests(), (std::vector<std::string>{"2012-03-25", "2012-03-26"}));
  }
  EXPECT_EQ(LiveShard0(w), "u|a,c3p0:1 c3q0:3\nu|b,c3p1:2\n");
  EXPECT_EQ(LiveManifest(w).Get("last_day"), "2012-03-26");
  EXPECT_EQ(LiveManifest(w).GetAll("day").size(), 2u);
  EXPECT_EQ(shards.slots("2012-03-27"), (std::vector<std::string>{"open", "open"}));

  // The next night (through the 27th): only the 27th; again: nothing to do.
  w.options.through = D("2012-03-27");
  ASSERT_TRUE(w.Run(RunNightly).ok());
  EXPECT_EQ(shards.shard[0].close_requests().back(), "2012-03-27");
  EXPECT_EQ(LiveShard0(w), "u|a,c3p0:1 c3q0:3 c3r0:4\nu|b,c3p1:2\n");
  EXPECT_EQ(shards.slots("2012-03-27"), (std::vector<std::string>{"released", "released"}));
  const std::string generation = *LiveGeneration(*w.work());
  ASSERT_TRUE(w.Run(RunNightly).ok());
  EXPECT_EQ(*LiveGeneration(*w.work()), generation);
  // 3 the first night, the 27th's fence and export the second, none the third (W is the 27th).
  EXPECT_EQ(shards.shard[0].close_requests().size(), 5u);
  EXPECT_EQ(shards.shard[0].export_requests(), 3);
}

TEST(NightlyStep, AfterAFailedNightTheNextArchivesBothDaysAndReleasesOnlyMergedOnes) {
  Work w;
  FakeArchive archive(w.root());
  TwoShards shards;
  w.options.realtime = shards.addresses();
  w.options.archive = {{archive.address()}};
  // Night of the 25th: shard 1 cannot close.
  shards.shard[1].set_close_status(503);
  w.options.through = D("2012-03-25");
  Status s = w.Run(RunNightly);
  EXPECT_EQ(s.message(), "fence: realtime shard 1 (" + shards.shard[1].address().ToString() +
                             ") refused POST /close?day=2012-03-25: HTTP 503: cannot close");
  EXPECT_EQ(*LiveGeneration(*w.work()), "");
  // Night of the 26th: the 25th is exported, but shard 1's export of the 26th breaks.
  shards.shard[1].set_close_status(0);
  shards.shard[1].set_export_status(500);
  w.options.through = D("2012-03-26");
  s = w.Run(RunNightly);
  EXPECT_NE(s.message().find("export of 2012-03-25 from realtime shard 1"), std::string::npos) << s.message();
  shards.shard[1].set_export_status(0);
  w.options.day = D("2012-03-25");
  ASSERT_TRUE(w.Run(RunExport).ok());  // by hand, then the 26th's export breaks
  shards.shard[1].set_export_status(500);
  w.options.day = 0;
  s = w.Run(RunNightly);
  EXPECT_NE(s.message().find("export of 2012-03-26 from realtime shard 1"), std::string::npos) << s.message();
  EXPECT_EQ(*LiveGeneration(*w.work()), "");  // nothing published, nothing released
  for (const FakeRealtime& r : shards.shard) EXPECT_TRUE(r.release_requests().empty());
  EXPECT_EQ(shards.slots("2012-03-25"), (std::vector<std::string>{"closed", "closed"}));

  // Night of the 27th... run for the 26th again once the shard is fixed: both days.
  shards.shard[1].set_export_status(0);
  ASSERT_TRUE(w.Run(RunNightly).ok());
  EXPECT_EQ(LiveShard0(w), "u|a,c3p0:1 c3q0:3\nu|b,c3p1:2\n");
  const KeyValueText manifest = LiveManifest(w);
  EXPECT_EQ(manifest.Get("last_day"), "2012-03-26");
  EXPECT_EQ(manifest.GetAll("day").size(), 2u);
  EXPECT_EQ(shards.slots("2012-03-25"), (std::vector<std::string>{"released", "released"}));
  EXPECT_EQ(shards.slots("2012-03-26"), (std::vector<std::string>{"released", "released"}));
  EXPECT_EQ(shards.slots("2012-03-27"), (std::vector<std::string>{"open", "open"}));
}

TEST(NightlyStep, APublishedNightWhoseReleaseFailedIsReleasedByTheNext) {
  Work w;
  FakeArchive archive(w.root());
  TwoShards shards;
  w.options.realtime = shards.addresses();
  w.options.archive = {{archive.address()}};
  shards.shard[0].set_release_status(500);
  w.options.through = D("2012-03-25");
  EXPECT_FALSE(w.Run(RunNightly).ok());
  EXPECT_EQ(LiveManifest(w).Get("last_day"), "2012-03-25");
  shards.shard[0].set_release_status(0);
  w.options.through = D("2012-03-26");
  ASSERT_TRUE(w.Run(RunNightly).ok());
  EXPECT_EQ(shards.slots("2012-03-25"), (std::vector<std::string>{"released", "released"}));
  EXPECT_EQ(shards.slots("2012-03-26"), (std::vector<std::string>{"released", "released"}));
}

TEST(NightlyStep, CatchesUpMoreDaysThanTheRingHoldsAGroupAtATime) {
  Work w;
  FakeArchive archive(w.root());
  FakeRealtime shard;
  std::string expected;
  for (int d = 0; d < 5; ++d) {
    const std::string day = FormatDay(D("2012-03-25") + d);
    shard.SetSlot(day, "open");
    shard.SetExport(day, Footed("u|a." + YmdhOf(D("2012-03-25") + d) + ",1\n"));
  }
  w.options.realtime = {shard.address()};
  w.options.archive = {{archive.address()}};
  w.options.through = D("2012-03-29");
  ASSERT_TRUE(w.Run(RunNightly).ok());
  EXPECT_EQ(shard.release_requests(),
            (std::vector<std::string>{"2012-03-25", "2012-03-26", "2012-03-27", "2012-03-28", "2012-03-29"}));
  EXPECT_EQ(archive.reloads(), 2);  // one publish per group of three days
  EXPECT_EQ(LiveManifest(w).GetAll("day").size(), 5u);
}

TEST(NightlyStep, DayAndThroughMustAgree) {
  Work w;
  FakeRealtime shard;
  w.options.realtime = {shard.address()};
  w.options.day = D("2012-03-25");
  w.options.through = D("2012-03-26");
  EXPECT_EQ(w.Run(RunNightly).message(),
            "--day 2012-03-25 and --through 2012-03-26 disagree (--day means --through for nightly)");
}

TEST(NightlyStep, LateDataIsAddedToDaysAlreadyArchivedAndReleasedAtTheApiOnce) {
  Work w;
  FakeArchive archive(w.root());
  TwoShards shards;
  FakeApi api;
  const net::HostPort down = DownServer();
  w.options.realtime = shards.addresses();
  w.options.archive = {{archive.address()}};
  w.options.api = {api.address(), down};
  w.options.through = D("2012-03-25");
  ASSERT_TRUE(w.Run(RunNightly).ok());  // no late data yet; the down API is skipped
  EXPECT_EQ(api.late_requests(), std::vector<std::string>{"0"});
  EXPECT_EQ(LiveShard0(w), "u|a,c3p0:1\nu|b,c3p1:2\n");

  // Refused as closed after the 25th was archived: late.
  api.AddEntry(1, "u|a.c3p0,4\n");
  api.AddEntry(2, "_l|h0aMB8AuNw4=,http://x/\nu|c.c3p5,7\n");
  api.AddEntry(3, "u|a.c3q0,10\n");  // the 26th, archived tonight too
  api.set_page_size(2);
  w.options.through = D("2012-03-26");
  ASSERT_TRUE(w.Run(RunNightly).ok());
  EXPECT_EQ(api.late_requests(), (std::vector<std::string>{"0", "0", "2"}));
  EXPECT_EQ(LiveShard0(w), "_l|h0aMB8AuNw4=,http://x/\nu|a,c3p0:5 c3q0:13\nu|b,c3p1:2\nu|c,c3p5:7\n");
  EXPECT_EQ(LiveManifest(w).GetAll("late"), std::vector<std::string>{api.address().ToString() + " 3"});
  EXPECT_EQ(api.release_requests(), std::vector<std::string>{"3"});
  EXPECT_EQ(api.entries(), 0u);

  // The next night asks after 3 only; an API that forgot its release is asked again.
  api.AddEntry(4, "u|b.c3p1,1\n");
  w.options.through = D("2012-03-27");
  ASSERT_TRUE(w.Run(RunNightly).ok());
  EXPECT_EQ(api.late_requests().back(), "3");
  EXPECT_EQ(LiveShard0(w), "_l|h0aMB8AuNw4=,http://x/\nu|a,c3p0:5 c3q0:13 c3r0:4\nu|b,c3p1:3\nu|c,c3p5:7\n");
  EXPECT_EQ(api.release_requests(), (std::vector<std::string>{"3", "4"}));
}

TEST(NightlyStep, LateDataSegmentedByAFailedNightIsNotFetchedAgain) {
  Work w;
  FakeArchive archive(w.root());
  TwoShards shards;
  FakeApi api;
  api.AddEntry(5, "u|a.c3p0,4\n");
  w.options.realtime = shards.addresses();
  w.options.archive = {{archive.address()}};
  w.options.api = {api.address()};
  w.options.through = D("2012-03-25");
  archive.set_reload(FakeArchive::Reload::kRefuse);  // the night fails at publish
  EXPECT_FALSE(w.Run(RunNightly).ok());
  EXPECT_TRUE(api.release_requests().empty());
  api.AddEntry(6, "u|a.c3p0,100\n");
  archive.set_reload(FakeArchive::Reload::kServe);
  ASSERT_TRUE(w.Run(RunNightly).ok());
  EXPECT_EQ(api.late_requests(), (std::vector<std::string>{"0", "5"}));
  EXPECT_EQ(LiveShard0(w), "u|a,c3p0:105\nu|b,c3p1:2\n");
  EXPECT_EQ(api.release_requests(), std::vector<std::string>{"6"});
}

}  // namespace
}  // namespace clickatron::rebuild
