#include "archive/archive_server.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "base/clip.h"
#include "net/json.h"
#include "net/secret.h"
#include "net/stats_writer.h"
#include "wire/generation.h"
#include "wire/headers.h"
#include "wire/refusals.h"

namespace clickatron::archive {

namespace {

// A relaxed add by the only writer: no locked instruction on the hot path.
inline void Bump(std::atomic<uint64_t>& counter, uint64_t n = 1) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

net::ServerOptions ServerOptionsOf(const ArchiveOptions& o) {
  net::ServerOptions s;
  s.address = o.address;
  s.port = o.port;
  s.threads = o.threads;
  // An /mget of many encoded keys needs a long request line; keys are capped at 4 KiB.
  s.max_url_bytes = 64 * 1024;
  s.max_body_bytes = 64 * 1024;  // nothing here reads a body
  s.log_requests = o.log_requests;
  s.limits = o.limits;
  return s;
}

}  // namespace

ArchiveServer::ArchiveServer(ArchiveOptions options)
    : options_(std::move(options)),
      db_(options_.db_file, DbFileOptions{.separator = options_.separator,
                                          .populate = options_.populate}),
      server_(ServerOptionsOf(options_)),
      counters_(new LoopCounters[static_cast<size_t>(std::max(1, options_.threads))]),
      scratch_(new LoopScratch[static_cast<size_t>(std::max(1, options_.threads))]),
      started_(std::chrono::steady_clock::now()),
      mailboxes_(new ReloadMailbox[static_cast<size_t>(std::max(1, options_.threads))]),
      watcher_(&db_, std::max(1, options_.file_check_ms),
               [this](const std::shared_ptr<const DbFile>& db, DamageSource source) { FileDamaged(*db, source, 0); }),
      reloader_(&db_, [this](const Status& s) { OnReloaded(s); }) {
  const net::RouteOptions alias{.trailing_slash_alias = true};
  // /reload needs the cluster secret; the sortdb reads too with require_secret_for_reads
  // (net/secret.h). An empty secret admits at once (no header lookup on the hot path).
  const std::string_view secret = options_.secret;
  const std::string_view read = options_.require_secret_for_reads ? secret : std::string_view();
  server_.Handle("/get", [this, read](net::Request& r) { if (net::AdmitSecret(r, read)) OnGet(r); }, alias);
  server_.Handle("/mget", [this, read](net::Request& r) { if (net::AdmitSecret(r, read)) OnMget(r); }, alias);
  server_.Handle("/fwmatch", [this, read](net::Request& r) { if (net::AdmitSecret(r, read)) OnFwmatch(r); }, alias);
  server_.Handle("/reload", [this, secret](net::Request& r) { if (net::AdmitSecret(r, secret)) OnReload(r); }, alias);
  net::HandleStats(&server_, read, [this](net::StatsWriter& w) { WriteStats(w); }, alias);  // /stats, /metrics
  server_.Handle("/ping", [this](net::Request& r) { OnPing(r); }, alias);
  server_.OnSighup([this] { reloader_.Request({}); });
  // The last moment the loops run: no reload may post to them after this.
  server_.OnStop([this] {
    reloader_.Stop();
    watcher_.Stop();
  });
}

ArchiveServer::~ArchiveServer() = default;

Status ArchiveServer::Start() {
  if (Status c = net::CheckListenSecret(options_.address, options_.secret); !c.ok()) return c;
  if (options_.require_secret_for_reads && options_.secret.empty()) {
    return Status::Error("SECRET_REQUIRED: require-secret-for-reads is set but no secret-file names the cluster secret");
  }
  // Before the first read of a mapping (the verification): a fault in a guarded read is a
  // result from now on (mapped_read.h).
  if (Status h = InstallMappedReadHandler(); !h.ok()) return h;
  Status s = db_.Open();
  if (!s.ok()) return Status::Error("refusing to serve " + s.message());
  std::shared_ptr<const DbFile> db = db_.Current();
  std::fprintf(stderr, "clickatron-archive: serving %s (%llu records, %zu bytes%s%s)\n",
               db->path().c_str(), static_cast<unsigned long long>(db->records()), db->size(),
               db->has_manifest() ? ", generation " : "",
               db->has_manifest() ? db->manifest().generation.c_str() : "");
  clickatron::Status ls = server_.Listen();
  if (!ls.ok()) return Status::Error(ls.message());
  std::fprintf(stderr, "clickatron-archive: listening on %s:%u with %d thread(s)\n",
               options_.address.c_str(), static_cast<unsigned>(server_.port()),
               options_.threads);
  // The watcher first: a reload tells it to move (Retarget) once it runs.
  if (options_.file_check_ms > 0) {
    if (std::string note = watcher_.Start(); !note.empty()) {
      std::fprintf(stderr, "clickatron-archive: %s\n", note.c_str());
    }
  }
  reloader_.Start();
  return Status::OK();
}

void ArchiveServer::Run() { server_.Run(); }

void ArchiveServer::Stop() { server_.Stop(); }

void ArchiveServer::AddFileHeaders(net::Request& req, const DbFile& db) {
  if (!db.has_manifest()) return;
  req.AddHeader(wire::kLastDayHeader, db.manifest().last_day.c_str());
  req.AddHeader(wire::kGenerationHeader, db.manifest().generation.c_str());
  if (db.manifest().rollups) req.AddHeader(wire::kRollupsHeader, "1");
  if (!db.etag().empty()) req.AddHeader(wire::kEtagHeader, db.etag().c_str());
}

bool ArchiveServer::ReplyNotModified(net::Request& req, LoopScratch& scratch, const DbFile& db) {
  const char* held = req.Header(wire::kIfNoneMatchHeader);
  if (held == nullptr || !db.has_manifest() || !wire::EtagMatches(held, db.manifest().generation)) {
    return false;
  }
  Bump(counters_[req.loop_index()].not_modified);
  req.AddHeader("Date", scratch.date.Now());
  req.Reply(304, {});  // no body, no Content-Length: the client holds the answer (RFC 9110 15.4.5)
  return true;
}

void ArchiveServer::ReplyText(net::Request& req, LoopScratch& scratch, int code,
                              std::string_view body) {
  char length[24];
  auto [end, ec] = std::to_chars(length, length + sizeof(length) - 1, body.size());
  *end = '\0';
  req.AddHeader("Date", scratch.date.Now());
  req.AddHeader("Content-Length", length);
  req.Reply(code, body);
}

void ArchiveServer::ReplyBadRequest(net::Request& req, const char* status_txt,
                                    const std::string& message) {
  Bump(counters_[req.loop_index()].bad_requests);
  req.ReplyJsonError(400, status_txt, message);
}

void ArchiveServer::ReplyAnswerTooLarge(net::Request& req, const char* what) {
  Bump(counters_[req.loop_index()].answers_too_large);
  ReplyBadRequest(req, "ANSWER_TOO_LARGE",
                  std::string("the ") + what + " answer would be over " +
                      std::to_string(options_.max_answer_bytes) + " bytes; ask for fewer " +
                      (what[1] == 'm' ? "keys" : "lines (limit)"));
}

void ArchiveServer::OnGet(net::Request& req) {
  LoopScratch& scratch = scratch_[req.loop_index()];
  LoopCounters& counters = counters_[req.loop_index()];
  std::shared_ptr<const DbFile> db = db_.Current();
  AddFileHeaders(req, *db);
  if (!scratch.params.Parse(req.raw_query(), KeyParams::Mode::kFirstKey)) {
    ReplyBadRequest(req, scratch.params.error_name(), scratch.params.error());
    return;
  }
  if (scratch.params.keys().empty()) {
    ReplyBadRequest(req, wire::kMissingArgKey, "missing argument: key");
    return;
  }
  if (db->health().damaged()) return ReplyDamaged(req, *db);
  if (ReplyNotModified(req, scratch, *db)) return;
  const std::string_view key = scratch.params.keys()[0];
  bool found = false;
  const MappedFault fault = db->Read([&] {
    Line line;
    found = db->Find(key, &line);
    if (found) std::memcpy(scratch.Room(line.value_nl.size()), line.value_nl.data(), line.value_nl.size());
  });
  if (!ReadWasWhole(req, *db, fault)) return;
  if (found) {
    Bump(counters.get_hits);
    ReplyText(req, scratch, 200, scratch.answer());
  } else {
    Bump(counters.get_misses);
    ReplyText(req, scratch, 404, {});
  }
}

void ArchiveServer::OnMget(net::Request& req) {
  LoopScratch& scratch = scratch_[req.loop_index()];
  LoopCounters& counters = counters_[req.loop_index()];
  std::shared_ptr<const DbFile> db = db_.Current();
  AddFileHeaders(req, *db);
  if (!scratch.params.Parse(req.raw_query(), KeyParams::Mode::kEveryK)) {
    ReplyBadRequest(req, scratch.params.error_name(), scratch.params.error());
    return;
  }
  const auto& keys = scratch.params.keys();
  if (keys.empty()) {
    ReplyBadRequest(req, wire::kMissingArgKey, "missing argument: key");
    return;
  }
  if (keys.size() > options_.max_mget_keys) {
    // Bounds the answer a request can make the loop build (keys x the largest line).
    Bump(counters.too_many_keys);
    ReplyBadRequest(req, wire::kTooManyKeys, std::to_string(keys.size()) + " keys; at most " +
                                              std::to_string(options_.max_mget_keys) + " per /mget");
    return;
  }
  if (db->health().damaged()) return ReplyDamaged(req, *db);
  if (ReplyNotModified(req, scratch, *db)) return;
  std::vector<std::string_view>& lines = scratch.lines;
  lines.clear();
  bool fits = false;
  const MappedFault fault = db->Read([&] {
    // Batched lookups overlap the keys' cache misses: 1.9x faster than one by one
    // (BM_Mget10Batched, docs/benchmarks.md).
    db->FindEach(keys.data(), keys.size(), [&lines](size_t, const Line& line) { lines.push_back(line.whole); });
    fits = CopyLines(scratch);
  });
  if (!ReadWasWhole(req, *db, fault)) return;
  Bump(counters.mget_keys, keys.size());
  Bump(counters.mget_hits, lines.size());
  if (!fits) {
    ReplyAnswerTooLarge(req, "/mget");
  } else {
    ReplyText(req, scratch, 200, scratch.answer());
  }
  TrimScratch(scratch);
}

void ArchiveServer::OnFwmatch(net::Request& req) {
  LoopScratch& scratch = scratch_[req.loop_index()];
  LoopCounters& counters = counters_[req.loop_index()];
  std::shared_ptr<const DbFile> db = db_.Current();
  AddFileHeaders(req, *db);
  KeyParams& params = scratch.params;
  if (!params.Parse(req.raw_query(), KeyParams::Mode::kFirstKey)) {
    // An empty prefix would dump the whole file: a bad request, not a match-everything.
    ReplyBadRequest(req, params.error_name(),
                    params.error() == "key is empty"
                        ? "key (the prefix) is empty; /fwmatch does not dump the file"
                        : params.error());
    return;
  }
  if (params.keys().empty()) {
    ReplyBadRequest(req, wire::kMissingArgKey, "missing argument: key");
    return;
  }
  size_t limit;
  if (!FwmatchLimit(req, params, &limit)) return;
  if (db->health().damaged()) return ReplyDamaged(req, *db);
  if (ReplyNotModified(req, scratch, *db)) return;
  std::vector<std::string_view>& lines = scratch.lines;
  lines.clear();
  bool fits = false;
  bool more = false;
  const MappedFault fault = db->Read([&] {
    db->ForEachPrefixed(
        params.keys()[0], limit, [&lines](const Line& line) { lines.push_back(line.whole); },
        params.after(), &more);
    fits = CopyLines(scratch);
  });
  if (!ReadWasWhole(req, *db, fault)) return;
  Bump(counters.fwmatch_lines, lines.size());
  if (!fits) {
    ReplyAnswerTooLarge(req, "/fwmatch");
  } else {
    // The limit cut the answer: the client asks again with after=<the last key it got>.
    if (more) req.AddHeader(wire::kFwmatchMoreHeader, "1");
    ReplyText(req, scratch, 200, scratch.answer());
  }
  TrimScratch(scratch);
}

bool ArchiveServer::FwmatchLimit(net::Request& req, const KeyParams& params, size_t* limit) {
  *limit = options_.fwmatch_limit;
  if (!params.limit()) return true;
  std::string_view text = *params.limit();
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n == 0) {
    ReplyBadRequest(req, wire::kInvalidArgLimit, "limit '" + Clipped(text, 64) + "' is not a positive integer");
    return false;
  }
  if (n > *limit) {
    // Never a silent cut: the client pages with after= (docs/operations.md#limits). The
    // header tells a client that asked for too much what it may ask for.
    req.AddHeader(wire::kFwmatchLimitHeader, std::to_string(*limit).c_str());
    ReplyBadRequest(req, wire::kInvalidArgLimit,
                    "limit " + std::to_string(n) + " is above this server's --fwmatch-limit " +
                        std::to_string(*limit) + "; ask for at most that, page with after=");
    return false;
  }
  *limit = n;
  return true;
}

void ArchiveServer::TrimScratch(LoopScratch& scratch) {
  if (scratch.out.capacity() > (1u << 20)) {
    std::string().swap(scratch.out);
    scratch.out_size = 0;
  }
  if (scratch.lines.capacity() > (1u << 16)) std::vector<std::string_view>().swap(scratch.lines);
}

bool ArchiveServer::CopyLines(LoopScratch& scratch) const {
  size_t total = 0;
  for (std::string_view line : scratch.lines) total += line.size();
  if (total > options_.max_answer_bytes) return false;
  char* to = scratch.Room(total);  // may allocate: no mapped byte is read inside it
  for (std::string_view line : scratch.lines) {
    std::memcpy(to, line.data(), line.size());
    to += line.size();
  }
  return true;
}

bool ArchiveServer::ReadWasWhole(net::Request& req, const DbFile& db, const MappedFault& fault) {
  if (fault) {
    FileDamaged(db, fault.kind == MappedFault::Kind::kSigbus ? DamageSource::kSigbus : DamageSource::kBadBytes,
                fault.offset);
    ReplyDamaged(req, db);
    return false;
  }
  if (db.health().damaged_after_reads()) {
    ReplyDamaged(req, db);
    return false;
  }
  return true;
}

void ArchiveServer::ReplyDamaged(net::Request& req, const DbFile& db) {
  Bump(counters_[req.loop_index()].damaged_reads);
  std::optional<Damage> damage = db.health().damage();
  req.ReplyJsonError(503, wire::kArchiveFileDamaged,
                     (damage ? damage->what : db.real_path() + ": damaged") +
                         "; restore the file or publish a new generation, then reload");
}

void ArchiveServer::FileDamaged(const DbFile& db, DamageSource source, size_t offset) {
  if (db.health().damaged()) return;
  std::string what = db.DescribeDamage(source, offset);
  if (!db.health().MarkDamaged(source, what)) return;  // another thread saw it first
  damage_episodes_.fetch_add(1, std::memory_order_relaxed);
  std::fprintf(stderr,
               "clickatron-archive: FILE DAMAGED (seen by %s): %s; reads answer 503 ARCHIVE_FILE_DAMAGED "
               "until a reload verifies a whole file\n",
               DamageSourceName(source), what.c_str());
}

std::string ArchiveServer::ReloadRefusal(const Status& s) const {
  if (db_.Current()->health().damaged()) {
    return "reload refused, the served file stays damaged (ARCHIVE_FILE_DAMAGED): " + s.message();
  }
  return "reload refused, still serving the old file: " + s.message();
}

// On the reloader's thread, after every reload.
void ArchiveServer::OnReloaded(const Status& s) {
  std::shared_ptr<const DbFile> db = db_.Current();
  if (s.ok()) {
    watcher_.Retarget();
    std::fprintf(stderr, "clickatron-archive: reloaded %s (%llu records, %zu bytes%s%s)\n",
                 db->path().c_str(), static_cast<unsigned long long>(db->records()),
                 db->size(), db->has_manifest() ? ", generation " : "",
                 db->has_manifest() ? db->manifest().generation.c_str() : "");
  } else {
    std::fprintf(stderr, "clickatron-archive: %s\n", ReloadRefusal(s).c_str());
  }
}

void ArchiveServer::OnReload(net::Request& req) {
  if (!net::RequireMethod(req, {net::Method::kGet, net::Method::kPost})) return;
  const int loop = req.loop_index();
  ReloadMailbox& box = mailboxes_[loop];
  if (!box.waker) {
    box.waker = std::make_unique<net::LoopWaker>(req.base(), [this, loop] { DeliverReloads(loop); });
  }
  std::shared_ptr<net::AsyncReply> reply = req.Defer();
  // The reply moves into the mailbox, so it is only ever touched (and destroyed) on its
  // loop; a request the reloader never served is destroyed after the loops have stopped.
  reloader_.Request([&box, reply = std::move(reply)](const Status& s) mutable {
    {
      std::lock_guard<std::mutex> lock(box.mu);
      box.ready.emplace_back(std::move(reply), s);
    }
    box.waker->Wake();
  });
}

// Runs on the loop that received the /reload requests.
void ArchiveServer::DeliverReloads(int loop) {
  std::vector<std::pair<std::shared_ptr<net::AsyncReply>, Status>> ready;
  {
    std::lock_guard<std::mutex> lock(mailboxes_[loop].mu);
    ready.swap(mailboxes_[loop].ready);
  }
  for (auto& [reply, s] : ready) {
    if (s.ok()) {
      reply->Reply(200, "db reloaded\n");
    } else {
      reply->Reply(500, ReloadRefusal(s) + "\n");
    }
  }
}

ArchiveServer::CounterSums ArchiveServer::SumCounters() const {
  CounterSums sum;
  for (int i = 0; i < options_.threads; ++i) {
    const LoopCounters& c = counters_[i];
    sum.get_hits += c.get_hits.load(std::memory_order_relaxed);
    sum.get_misses += c.get_misses.load(std::memory_order_relaxed);
    sum.mget_keys += c.mget_keys.load(std::memory_order_relaxed);
    sum.mget_hits += c.mget_hits.load(std::memory_order_relaxed);
    sum.fwmatch_lines += c.fwmatch_lines.load(std::memory_order_relaxed);
    sum.bad_requests += c.bad_requests.load(std::memory_order_relaxed);
    sum.too_many_keys += c.too_many_keys.load(std::memory_order_relaxed);
    sum.answers_too_large += c.answers_too_large.load(std::memory_order_relaxed);
    sum.not_modified += c.not_modified.load(std::memory_order_relaxed);
    sum.damaged_reads += c.damaged_reads.load(std::memory_order_relaxed);
  }
  return sum;
}

void ArchiveServer::WriteStats(net::StatsWriter& w) const {
  std::shared_ptr<const DbFile> db = db_.Current();
  const auto [get_hits, get_misses, mget_keys, mget_hits, fwmatch_lines, bad, too_many_keys, answers_too_large,
              not_modified, damaged_reads] = SumCounters();
  w.BeginObject();
  w.Info("db_file", db->path(), "clickatron_archive_db_file_info", "The file served (--db-file).");
  w.Field("real_path", db->real_path());
  w.Gauge("records", db->records(), "clickatron_archive_records", "Records of the file served.");
  w.Gauge("bytes", db->size(), "clickatron_archive_file_bytes", "Bytes of the file served.");
  if (db->has_manifest()) {
    w.Info("generation", db->manifest().generation, "clickatron_archive_generation_info", "The generation served.");
    w.Key("last_day");  // the watermark: every later hour is realtime's (docs/architecture.md#the-watermark)
    w.Day(db->manifest().last_day, "clickatron_archive_last_day_timestamp_seconds",
          "The newest day of the generation served (its manifest's last_day), 00:00 UTC.");
  }
  w.Gauge("threads", options_.threads, "clickatron_archive_threads", "Event loops (--threads).");
  w.Gauge("uptime_seconds",
          std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started_).count(),
          "clickatron_archive_uptime_seconds", "Seconds since the server started.");
  w.Counter("reloads", db_.reloads(), "clickatron_archive_reloads_total", "Reloads that swapped a file in.");
  // How long this file has been served: the release's lease.
  w.Gauge("served_ms", db_.ServedMs(), "clickatron_archive_served_seconds", "Time the file now served has been.", 1000);
  w.Counter("failed_reloads", db_.failed_reloads(), "clickatron_archive_failed_reloads_total",
            "Reloads refused (the old file kept).");
  w.Counter("hits", get_hits + mget_hits, "clickatron_archive_hits_total", "Keys found by /get and /mget.");
  w.Counter("misses", get_misses + (mget_keys - mget_hits), "clickatron_archive_misses_total",
            "Keys not found by /get and /mget.");
  w.Counter("get_hits", get_hits, "clickatron_archive_get_hits_total", "/get keys found.");
  w.Counter("get_misses", get_misses, "clickatron_archive_get_misses_total", "/get keys not found.");
  w.Counter("mget_keys", mget_keys, "clickatron_archive_mget_keys_total", "/mget keys asked for.");
  w.Counter("mget_hits", mget_hits, "clickatron_archive_mget_hits_total", "/mget keys found.");
  w.Counter("fwmatch_lines", fwmatch_lines, "clickatron_archive_fwmatch_lines_total", "/fwmatch lines answered.");
  w.Counter("not_modified", not_modified, "clickatron_archive_not_modified_total", "Conditional requests answered 304.");
  w.Counter("bad_requests", bad, "clickatron_archive_bad_requests_total", "Requests answered 400.");
  WriteDamageFields(&w, *db, damaged_reads);
  w.BeginObject("limits");  // docs/operations.md#limits
  server_.WriteLimitFields(&w);
  w.Gauge("max_mget_keys", uint64_t(options_.max_mget_keys), "clickatron_archive_max_mget_keys",
          "Keys one /mget may ask for (--max-mget-keys).");
  w.Gauge("fwmatch_limit", uint64_t(options_.fwmatch_limit), "clickatron_archive_fwmatch_limit",
          "Lines one /fwmatch answers at most (--fwmatch-limit).");
  w.Gauge("max_answer_bytes", uint64_t(options_.max_answer_bytes), "clickatron_archive_max_answer_bytes",
          "Largest /mget or /fwmatch answer (--max-answer-mb).");
  w.Counter("too_many_keys", too_many_keys, "clickatron_archive_too_many_keys_total", "/mget refused 400 TOO_MANY_KEYS.");
  w.Counter("answers_too_large", answers_too_large, "clickatron_archive_answers_too_large_total",
            "Answers refused 400 ANSWER_TOO_LARGE.");
  w.EndObject();
  w.Key("requests");  // per endpoint: count and latency quantiles in microseconds
  server_.WriteLatencyJson(&w);
  w.EndObject();
}

void ArchiveServer::WriteDamageFields(net::StatsWriter* w, const DbFile& db, uint64_t damaged_reads) const {
  std::optional<Damage> damage = db.health().damage();
  w->Flag("file_damaged", damage.has_value(), "clickatron_archive_file_damaged",
          "1 while the file served was found truncated or rewritten in place (503 ARCHIVE_FILE_DAMAGED).");
  w->Key("damage");  // null while the served file is whole
  if (!damage) {
    w->Null();
  } else {
    const std::time_t since = std::chrono::system_clock::to_time_t(damage->since);
    struct tm utc;
    gmtime_r(&since, &utc);
    char text[32];
    std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
    w->BeginObject();
    w->Field("since", std::string_view(text));
    w->Field("seconds", std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now() - damage->since).count());
    w->Field("seen_by", DamageSourceName(damage->source));
    w->Field("message", damage->what);
    w->EndObject();
  }
  w->Counter("damaged_reads", damaged_reads, "clickatron_archive_damaged_reads_total",
             "Reads answered 503 ARCHIVE_FILE_DAMAGED.");
  w->Counter("damage_episodes", damage_episodes_.load(std::memory_order_relaxed),
             "clickatron_archive_damage_episodes_total", "Served files found damaged.");
}

void ArchiveServer::OnPing(net::Request& req) { req.Reply(200, "OK\n"); }

}  // namespace clickatron::archive
