#include "realtime/server.h"

#include <event2/event.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "base/clip.h"
#include "base/latency.h"
#include "base/random_id.h"
#include "base/wall_clock.h"
#include "keyformat/footer.h"
#include "keyformat/records.h"
#include "keyformat/ymdh.h"
#include "net/json.h"
#include "net/secret.h"
#include "net/stats_writer.h"
#include "realtime/export_stream.h"
#include "wire/headers.h"
#include "wire/refusals.h"

namespace clickatron::realtime {
namespace {

constexpr size_t kMaxSourceBytes = 64;

bool ValidSource(std::string_view s) {
  if (s.empty() || s.size() > kMaxSourceBytes) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.' || c == ':';
    if (!ok) return false;
  }
  return true;
}

// A sender id: exactly 16 lowercase hex digits (wire/headers.h).
bool ValidSenderId(const char* id) {
  if (id == nullptr) return false;
  size_t n = 0;
  for (; id[n] != '\0'; ++n) {
    const char c = id[n];
    if (n >= 16 || !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return n == 16;
}

// A non-negative decimal int64, nothing else.
bool ParseSeq(std::string_view text, int64_t* out) {
  if (text.empty() || text[0] == '-' || text[0] == '+') return false;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && p == text.data() + text.size();
}

std::string Upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) c = '_';
  }
  return u;
}

// Snapshots waiting to become durable; more only delays synced_seq, never loses it.
constexpr size_t kMaxDurableSnapshots = 64;

constexpr size_t kShown = 64;  // bytes of a bad parameter quoted in an error

// Returns a buffer reused by every request to its normal size once a large request is
// done with it, so one 64 MiB batch does not pin its lines or answer for ever.
template <typename T>
class ShrinkAfter {
 public:
  ShrinkAfter(T* buffer, size_t max_capacity) : buffer_(buffer), max_(max_capacity) {}
  ~ShrinkAfter() {
    if (buffer_->capacity() > max_) T().swap(*buffer_);
  }
  ShrinkAfter(const ShrinkAfter&) = delete;
  ShrinkAfter& operator=(const ShrinkAfter&) = delete;

 private:
  T* buffer_;
  size_t max_;
};

constexpr size_t kKeepLines = 64 * 1024;     // parsed lines kept between requests
constexpr size_t kKeepBytes = 1024 * 1024;   // answer bytes kept between requests

}  // namespace

RealtimeServer::RealtimeServer(RealtimeOptions options) : options_(std::move(options)) {
  net::ServerOptions so;
  so.address = options_.address;
  so.port = options_.port;
  so.threads = 1;  // the ring belongs to one loop (the Redis model)
  so.max_body_bytes = options_.max_body_bytes;
  so.limits = options_.limits;
  server_ = std::make_unique<net::Server>(so);
}

RealtimeServer::~RealtimeServer() {
  exports_.clear();
  if (sync_timer_ != nullptr) event_free(sync_timer_);
  if (flushed_event_ != nullptr) event_free(flushed_event_);
  if (fsynced_event_ != nullptr) event_free(fsynced_event_);
  if (ring_ != nullptr) {
    Status s = ring_->Close();
    if (!s.ok()) std::fprintf(stderr, "clickatron-realtime: close: %s\n", s.message().c_str());
  }
}

Status RealtimeServer::Start() {
  // New at every start: what a sender compares to notice that the shard restarted (and
  // may have lost what it acked since its last sync).
  instance_ = RandomId64();
  if (Status s = CheckOptions(); !s.ok()) return s;
  Result<std::unique_ptr<Ring>> ring = Ring::Open(options_.data_dir, options_.slot, options_.max_pending_bytes);
  if (!ring.ok()) return ring.status();
  ring_ = std::move(ring).value();
  LoadSourceMarks();
  AddRoutes();
  clickatron::Status ls = server_->Listen();
  if (!ls.ok()) return Status::Error(ls.message());
  AddLoopEvents();
  std::fprintf(stderr, "clickatron-realtime: listening on %s:%u, data in %s, sync every %gs\n",
               options_.address.c_str(), static_cast<unsigned>(server_->port()),
               options_.data_dir.c_str(), options_.sync_interval_seconds);
  return Status::OK();
}

Status RealtimeServer::CheckOptions() const {
  if (Status s = net::CheckListenSecret(options_.address, options_.secret); !s.ok()) return s;
  if (options_.require_secret_for_reads && options_.secret.empty()) {
    return Status::Error("SECRET_REQUIRED: require-secret-for-reads is set but no secret-file names the cluster secret");
  }
  struct stat st;
  if (::stat(options_.data_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::Error("--data-dir " + options_.data_dir + " is not a directory");
  }
  if (!(options_.sync_interval_seconds > 0) || options_.sync_interval_seconds > 3600) {
    return Status::Error("--sync-interval must be between 0 and 3600 seconds");
  }
  if (options_.source_lease_ms < 0 || options_.source_lease_ms > 86'400'000) {
    return Status::Error("--source-lease-ms must be between 0 and 86400000");
  }
  return Status::OK();
}

// Each source's seq as the slots' marks left it (all of it synced), and the ring logged.
void RealtimeServer::LoadSourceMarks() {
  for (int i = 0; i < kRingSlots; ++i) {
    const Slot& s = ring_->slot(i);
    for (const auto& [source, seq] : s.marks()) {
      SourceSeq& ss = sources_[source];
      ss.acked = std::max(ss.acked, seq);
      ss.synced = ss.acked;
    }
    std::fprintf(stderr, "clickatron-realtime: slot %d: %s %s, %llu records\n", i,
                 s.day() == kNoDay ? "-" : FormatDay(s.day()).c_str(),
                 std::string(SlotStateName(s.state())).c_str(),
                 static_cast<unsigned long long>(s.records()));
  }
  if (ring_->closed_through() != kNoDay) {
    std::fprintf(stderr, "clickatron-realtime: closed through %s\n", FormatDay(ring_->closed_through()).c_str());
  }
}

// The routes that change state or read a whole day need the cluster secret; the reads
// too with require_secret_for_reads (net/secret.h). /ping stays open for health checks.
void RealtimeServer::AddRoutes() {
  const std::string_view read_secret = options_.require_secret_for_reads ? std::string_view(options_.secret) : "";
  auto bind = [this](void (RealtimeServer::*fn)(net::Request&), std::string_view secret) {
    return [this, fn, secret](net::Request& req) {
      if (net::AdmitSecret(req, secret)) (this->*fn)(req);
    };
  };
  const std::string_view secret = options_.secret;
  server_->Handle("/incr", bind(&RealtimeServer::OnIncr, secret));
  server_->Handle("/set", bind(&RealtimeServer::OnSet, secret));
  server_->Handle("/get", bind(&RealtimeServer::OnGet, read_secret), {.trailing_slash_alias = true});
  server_->Handle("/mget", bind(&RealtimeServer::OnMget, read_secret), {.trailing_slash_alias = true});
  server_->Handle("/fwmatch", bind(&RealtimeServer::OnFwmatch, read_secret), {.trailing_slash_alias = true});
  server_->Handle("/fwsum", bind(&RealtimeServer::OnFwsum, read_secret));
  server_->Handle("/export", bind(&RealtimeServer::OnExport, secret));
  server_->Handle("/close", bind(&RealtimeServer::OnClose, secret));
  server_->Handle("/release", bind(&RealtimeServer::OnRelease, secret));
  net::HandleStats(server_.get(), read_secret, [this](net::StatsWriter& w) { WriteStats(w); });  // /stats, /metrics
  server_->Handle("/ping", bind(&RealtimeServer::OnPing, ""));
  server_->OnStop([this] { SyncAll(); });
}

// On the first loop: the sync timer, and the ring's flushed and fsynced notifications.
void RealtimeServer::AddLoopEvents() {
  sync_timer_ = event_new(server_->base(0), -1, EV_PERSIST, &RealtimeServer::OnSyncTimer, this);
  double whole = std::floor(options_.sync_interval_seconds);
  timeval tv{static_cast<time_t>(whole),
             static_cast<suseconds_t>((options_.sync_interval_seconds - whole) * 1e6)};
  event_add(sync_timer_, &tv);
  if (ring_->flush_notify_fd() >= 0) {
    flushed_event_ = event_new(server_->base(0), ring_->flush_notify_fd(), EV_READ | EV_PERSIST,
                               &RealtimeServer::OnFlushed, this);
    event_add(flushed_event_, nullptr);
  }
  if (ring_->fsync_notify_fd() >= 0) {
    fsynced_event_ = event_new(server_->base(0), ring_->fsync_notify_fd(), EV_READ | EV_PERSIST,
                               &RealtimeServer::OnFsynced, this);
    event_add(fsynced_event_, nullptr);
  }
}

Status RealtimeServer::Run() {
  server_->Run();
  exports_.clear();
  Status s = ring_->Close();
  if (s.ok()) std::fprintf(stderr, "clickatron-realtime: stopped; data synced\n");
  return s;
}

void RealtimeServer::OnSyncTimer(int, short, void* arg) { static_cast<RealtimeServer*>(arg)->TryFlush(); }

void RealtimeServer::OnFlushed(int, short, void* arg) {
  auto* self = static_cast<RealtimeServer*>(arg);
  self->ring_->DrainFlushNotify();
  self->ring_->Poll();
  self->NoteDurable();
  if (self->flush_wanted_) self->TryFlush();
}

void RealtimeServer::OnFsynced(int, short, void* arg) {
  auto* self = static_cast<RealtimeServer*>(arg);
  self->ring_->DrainFsyncNotify();
  self->NoteDurable();
}

void RealtimeServer::NoteDurable() {
  const uint64_t durable = ring_->DurableGeneration();
  const uint64_t synced_round = ring_->fsync_synced_round();
  while (!snapshots_.empty()) {
    DurableSnapshot& snap = snapshots_.front();
    if (durable >= snap.generation && synced_round >= snap.fsync_round) {
      for (const auto& [source, acked] : snap.acked) {
        SourceSeq& ss = sources_[source];
        ss.synced = std::max(ss.synced, acked);
      }
    } else if (ring_->committed_generation() < snap.generation && !ring_->flushing()) {
      ++counters_.sync_errors;  // the flush failed; its writes ride with the next flush
    } else {
      return;  // still committing, or committed and waiting for its fsyncs
    }
    snapshots_.pop_front();
  }
}

// Group commit: everything acknowledged so far goes to the flusher at once; it is committed
// when the flusher is done (OnFlushed), about one flush time later, and durable when the
// FileSyncer has fsynced the files it touched (OnFsynced).
void RealtimeServer::TryFlush() {
  ring_->Poll();
  NoteDurable();
  if (ring_->flushing()) {
    flush_wanted_ = true;
    return;
  }
  flush_wanted_ = false;
  DurableSnapshot snap;
  snap.acked.reserve(sources_.size());
  for (const auto& [source, seq] : sources_) {
    if (seq.synced < seq.acked) snap.acked.emplace_back(source, seq.acked);
  }
  if (ring_->BeginFlush()) {
    snap.generation = ring_->started_generation();
  } else {
    // Nothing pending and nothing running: everything acknowledged is committed, and on the
    // device once the fsyncs requested so far are done.
    if (snap.acked.empty()) return;
    snap.generation = ring_->committed_generation();
    snap.fsync_round = ring_->fsync_requested_round();
  }
  // The newest snapshot covers every older one (acked only grows, and its flush or round
  // comes later), so while the device is slow the queue keeps its oldest and newest ends.
  if (snapshots_.size() >= kMaxDurableSnapshots) snapshots_.pop_back();
  snapshots_.push_back(std::move(snap));
  NoteDurable();
}

void RealtimeServer::SyncAll() {
  Status s = ring_->Sync();
  NoteDurable();
  if (!s.ok()) {
    ++counters_.sync_errors;
    std::fprintf(stderr, "clickatron-realtime: sync failed: %s\n", s.message().c_str());
    return;
  }
  for (auto& [source, seq] : sources_) seq.synced = seq.acked;
}

void RealtimeServer::ReplyError(net::Request& req, int code, std::string_view status_txt,
                                std::string_view message) {
  if (code == 400) ++counters_.bad_requests;
  req.ReplyJsonError(code, status_txt, message);
}

void RealtimeServer::ReplyRefusal(net::Request& req, const WriteOutcome& o) {
  switch (o.refusal) {
    case Refusal::kNotReleased: ++counters_.refused_not_released; break;
    case Refusal::kExpired: ++counters_.refused_expired; break;
    case Refusal::kOverflow: ++counters_.refused_overflow; break;
    case Refusal::kStorage: ++counters_.storage_errors; break;
    case Refusal::kBehind: ++counters_.refused_behind; break;
    case Refusal::kClosed: ++counters_.refused_closed; break;
    default: break;
  }
  ReplyError(req, RefusalHttpCode(o.refusal), RefusalStatusText(o.refusal), o.message);
}

bool RealtimeServer::RequirePost(net::Request& req) {
  return net::RequireMethod(req, {net::Method::kPost});
}

bool RealtimeServer::CheckQuery(net::Request& req) {
  if (req.query().status().ok()) return true;
  ReplyError(req, 400, wire::kInvalidArgPrefix + Upper(req.query().bad_param()), req.query().status().message());
  return false;
}

bool RealtimeServer::DayParam(net::Request& req, bool required, int64_t* day) {
  std::optional<std::string_view> text = req.Param("day");
  if (!text) {
    if (required) {
      ReplyError(req, 400, "MISSING_ARG_DAY", "missing argument: day (YYYY-MM-DD)");
      return false;
    }
    *day = WallClockSeconds() / kSecondsPerDay;  // today, UTC
    return true;
  }
  Result<int64_t> d = ParseDay(*text);
  if (!d.ok()) {
    ReplyError(req, 400, "INVALID_ARG_DAY", d.status().message());
    return false;
  }
  *day = *d;
  return true;
}

void RealtimeServer::AddSourceMark(net::Request& req, std::string_view source, bool batch_read) {
  int64_t mark = -1;
  if (!source.empty() && batch_read) {
    int64_t seen[kRingSlots];
    size_t n = 0;
    for (const IncrLine& l : incr_lines_) {
      if (std::find(seen, seen + n, l.day) != seen + n) continue;
      if (n < kRingSlots) seen[n++] = l.day;  // a batch of more days is refused anyway
      mark = std::max(mark, ring_->SourceMark(l.day, source));
    }
  } else if (!source.empty()) {
    for (int i = 0; i < kRingSlots; ++i) mark = std::max(mark, ring_->Mark(i, source));
  }
  req.AddHeader(wire::kSourceMarkHeader, std::to_string(mark).c_str());
}

// A sender that names the data directory (ring, ring_id.h) it delivered to is refused by any
// other, nothing applied: a shard on a new directory lost what the old one held, and what the
// sender re-sends to it needs the replay procedure's rule (docs/operations.md#replaying-an-
// oplog-after-losing-a-realtime-host), not the ordinary re-send. The refusal's message
// (412 RING_CHANGED), or nullopt when the request may go on.
std::optional<std::string> RealtimeServer::RingRefusal(net::Request& req) {
  std::optional<std::string_view> expect = req.Param("ring");
  if (!expect || *expect == ring_->ring_id()) return std::nullopt;
  ++counters_.refused_ring;
  return "this shard's data directory is not the one this sender delivered to (ring " + ring_->ring_id() +
         ", not " + Clipped(*expect, kShown) + "): what that one held is gone; re-send it by the replay "
         "procedure (docs/operations.md#replaying-an-oplog-after-losing-a-realtime-host)";
}

bool RealtimeServer::FailIncr(net::Request& req, std::string_view source, bool batch_read, int code,
                              std::string_view status_txt, std::string_view message) {
  AddSourceMark(req, source, batch_read);
  ReplyError(req, code, status_txt, message);
  return false;
}

// source, seq and the sender header checked, then the ring and the instance the sender
// expects; false after answering.
[[gnu::always_inline]] inline bool RealtimeServer::ReadIncrArgs(net::Request& req, IncrArgs* args) {
  std::optional<std::string_view> source_param = req.Param("source");
  std::optional<std::string_view> seq_text = req.Param("seq");
  if (!source_param) return FailIncr(req, {}, false, 400, "MISSING_ARG_SOURCE", "missing argument: source");
  if (!ValidSource(*source_param)) {
    return FailIncr(req, {}, false, 400, "INVALID_ARG_SOURCE",
                    "source '" + Clipped(*source_param, kShown) + "' must be 1-64 characters of A-Z a-z 0-9 _ - . :");
  }
  std::string_view source = args->source = *source_param;
  if (!seq_text) return FailIncr(req, source, false, 400, "MISSING_ARG_SEQ", "missing argument: seq");
  if (!ParseSeq(*seq_text, &args->seq)) {
    return FailIncr(req, source, false, 400, "INVALID_ARG_SEQ",
                    "seq '" + Clipped(*seq_text, kShown) + "' is not a non-negative 64-bit integer");
  }
  const char* sender = args->sender = req.Header(wire::kSenderHeader);
  if (!ValidSenderId(sender)) {
    return FailIncr(req, source, false, 400, wire::kSenderMissing,
                    sender == nullptr ? std::string("header ") + wire::kSenderHeader + " is missing: every /incr names its sender"
                                      : std::string("header ") + wire::kSenderHeader + " '" + Clipped(sender, kShown) +
                                            "' is not 16 lowercase hex digits");
  }
  if (std::optional<std::string> why = RingRefusal(req)) {
    return FailIncr(req, source, false, 412, wire::kRingChanged, *why);
  }
  // A sender that names the instance it last talked to is refused by any other: this
  // process may have lost batches that one acknowledged after its last sync, and applying
  // a newer seq first would make their re-sent copies look like duplicates.
  std::optional<std::string_view> expect = req.Param("instance");
  if (expect && *expect != instance_) {
    ++counters_.refused_instance;
    return FailIncr(req, source, false, 412, wire::kInstanceChanged,
                    "this shard restarted (instance " + instance_ + ", not " + Clipped(*expect, kShown) +
                        "): re-send what the old instance acknowledged since its last sync");
  }
  return true;
}

// One writer per source: another sender is refused (409 SOURCE_IN_USE, false) while the
// last one's lease runs; after it, the new sender takes the source over.
[[gnu::always_inline]] inline bool RealtimeServer::TakeSourceLease(net::Request& req, const IncrArgs& args) {
  const uint64_t now = MonotonicMicros();
  std::string_view source = args.source;
  auto lease = leases_.find(source);
  if (lease != leases_.end() && lease->second.sender != args.sender) {
    const uint64_t age_ms = (now - lease->second.at_micros) / 1000;
    if (age_ms < static_cast<uint64_t>(options_.source_lease_ms)) {
      ++counters_.refused_source_in_use;
      return FailIncr(req, source, true, 409, wire::kSourceInUse,
                      "source " + std::string(source) + " is in use by sender " + lease->second.sender +
                          " (last write " + std::to_string(age_ms) + " ms ago, lease " +
                          std::to_string(options_.source_lease_ms) + " ms): two senders use one source (node-id)?");
    }
    std::fprintf(stderr, "clickatron-realtime: source %s: sender %s takes over from %s (silent for %llu ms)\n",
                 std::string(source).c_str(), args.sender, lease->second.sender.c_str(),
                 static_cast<unsigned long long>(age_ms));
  }
  if (lease == leases_.end()) lease = leases_.emplace(std::string(source), SourceLease{}).first;
  lease->second.sender = args.sender;
  lease->second.at_micros = now;
  return true;
}

// POST /incr: the request checked (IncrArgs), the batch parsed, the source's lease taken,
// the batch applied to the ring and answered. Every answer tells the source's mark.
void RealtimeServer::OnIncr(net::Request& req) {
  req.AddHeader(wire::kInstanceHeader, instance_.c_str());
  req.AddHeader(wire::kRingHeader, ring_->ring_id().c_str());
  if (req.method() != net::Method::kPost || !req.query().status().ok()) {
    AddSourceMark(req, std::string_view(), false);  // no source read yet: -1
    if (RequirePost(req)) CheckQuery(req);
    return;
  }
  IncrArgs args;
  if (!ReadIncrArgs(req, &args)) return;
  ShrinkAfter keep_lines(&incr_lines_, kKeepLines);
  Status parsed = ParseIncrBatch(req.body(), &incr_lines_);
  if (!parsed.ok()) {
    FailIncr(req, args.source, false, 400, wire::kInvalidLine, parsed.message());
    return;
  }
  if (!TakeSourceLease(req, args)) return;

  ++counters_.incr_batches;
  counters_.incr_lines += incr_lines_.size();
  WriteOutcome o = ring_->Incr(&incr_lines_, args.source, args.seq);
  AddSourceMark(req, args.source, true);
  if (!o.ok()) return ReplyRefusal(req, o);
  counters_.incr_applied += o.applied;
  counters_.incr_duplicate += o.duplicate;
  if (o.duplicate > 0 && o.applied == 0) ++counters_.incr_duplicate_batches;
  auto it = sources_.find(args.source);
  if (it == sources_.end()) it = sources_.emplace(std::string(args.source), SourceSeq{}).first;
  it->second.acked = std::max(it->second.acked, args.seq);
  req.AddHeader(wire::kSyncedSeqHeader, std::to_string(it->second.synced).c_str());

  out_.clear();
  net::JsonWriter w(&out_);
  w.BeginObject();
  w.Field("applied", o.applied);
  w.Field("duplicate", o.duplicate);
  w.Field("seq", args.seq);
  w.EndObject();
  req.ReplyJson(200, "OK", out_);
}

void RealtimeServer::OnSet(net::Request& req) {
  req.AddHeader(wire::kInstanceHeader, instance_.c_str());
  req.AddHeader(wire::kRingHeader, ring_->ring_id().c_str());
  if (!RequirePost(req) || !CheckQuery(req)) return;
  if (std::optional<std::string> why = RingRefusal(req)) return ReplyError(req, 412, wire::kRingChanged, *why);
  int64_t day;
  if (!DayParam(req, false, &day)) return;
  ShrinkAfter keep_lines(&lookup_lines_, kKeepLines);
  Status parsed = ParseLookupBatch(req.body(), &lookup_lines_);
  if (!parsed.ok()) return ReplyError(req, 400, wire::kInvalidLine, parsed.message());
  WriteOutcome o = ring_->SetLookups(day, lookup_lines_);
  if (!o.ok()) return ReplyRefusal(req, o);
  counters_.set_lines += o.applied;
  out_.clear();
  net::JsonWriter w(&out_);
  w.BeginObject();
  w.Field("set", o.applied);
  w.Field("day", FormatDay(day));
  w.EndObject();
  req.ReplyJson(200, "OK", out_);
}

void RealtimeServer::OnGet(net::Request& req) {
  if (!CheckQuery(req)) return;
  std::optional<std::string_view> key = req.Param("key");
  if (!key) return ReplyError(req, 400, wire::kMissingArgKey, "missing argument: key");
  ++counters_.gets;
  out_.clear();
  if (!ring_->Get(*key, &out_)) return req.Reply(404, {});
  ++counters_.get_hits;
  out_.push_back('\n');
  req.Reply(200, out_);
}

void RealtimeServer::OnMget(net::Request& req) {
  if (!CheckQuery(req)) return;
  uint64_t keys = 0;
  for (const net::QueryParam& p : req.params()) keys += p.name.starts_with('k') ? 1 : 0;
  if (keys > options_.max_mget_keys) {
    // Bounds the answer one request can make the loop build.
    ++counters_.too_many_keys;
    return ReplyError(req, 400, wire::kTooManyKeys, std::to_string(keys) + " keys; at most " +
                                                     std::to_string(options_.max_mget_keys) + " per /mget");
  }
  ShrinkAfter keep_out(&out_, kKeepBytes);
  out_.clear();
  for (const net::QueryParam& p : req.params()) {
    if (!p.name.starts_with('k')) continue;  // sortdb: every parameter starting with k
    const size_t mark = out_.size();
    out_.append(p.value).push_back(',');
    if (ring_->Get(p.value, &out_)) {
      out_.push_back('\n');
      ++counters_.mget_hits;
    } else {
      out_.resize(mark);
    }
  }
  if (keys == 0) return ReplyError(req, 400, wire::kMissingArgKey, "missing argument: key");
  counters_.mget_keys += keys;
  req.Reply(200, out_);
}

// The `limit` of a /fwmatch or /fwsum: --fwmatch-limit by default, larger ones cut to it;
// false (and the 400 sent) when it is not a positive integer.
bool RealtimeServer::ParseLimit(net::Request& req, uint64_t* limit) {
  *limit = options_.fwmatch_limit;
  if (std::optional<std::string_view> text = req.Param("limit")) {
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
    if (text->empty() || ec != std::errc() || end != text->data() + text->size() || n == 0) {
      ReplyError(req, 400, wire::kInvalidArgLimit, "limit '" + Clipped(*text, kShown) + "' is not a positive integer");
      return false;
    }
    *limit = std::min(*limit, n);  // larger limits are capped at --fwmatch-limit
  }
  return true;
}

void RealtimeServer::OnFwmatch(net::Request& req) {
  if (!CheckQuery(req)) return;
  std::optional<std::string_view> prefix = req.Param("key");
  if (!prefix) return ReplyError(req, 400, wire::kMissingArgKey, "missing argument: key");
  if (prefix->empty()) {
    return ReplyError(req, 400, wire::kInvalidArgKey, "key (the prefix) is empty; use /export to dump a day");
  }
  uint64_t limit;
  if (!ParseLimit(req, &limit)) return;
  const std::string_view after = req.Param("after").value_or(std::string_view());
  out_.clear();
  bool more = false;
  counters_.fwmatch_lines += ring_->Fwmatch(*prefix, after, limit, &out_, &more);
  // The limit cut the answer: the client asks again with after=<the last key it got>.
  if (more) req.AddHeader(wire::kFwmatchMoreHeader, "1");
  req.Reply(200, out_);
  if (out_.capacity() > (1u << 20)) std::string().swap(out_);  // don't pin a rare huge answer
}

void RealtimeServer::OnFwsum(net::Request& req) {
  if (!CheckQuery(req)) return;
  std::optional<std::string_view> prefix = req.Param("key");
  if (!prefix) return ReplyError(req, 400, wire::kMissingArgKey, "missing argument: key");
  // `{sub}.{ns}|{key}.`: a '.' before the '|', and the '.' that ends the key.
  const size_t bar = prefix->find('|'), dot = prefix->find('.');
  if (bar == std::string_view::npos || dot > bar || prefix->back() != '.' || prefix->size() == bar + 2) {
    return ReplyError(req, 400, wire::kInvalidArgKey,
                      "key '" + Clipped(*prefix, kShown) + "' is not a subtotal prefix {sub}.{ns}|{key}.");
  }
  std::string_view hours[2];
  const char* names[2] = {"from", "to"};
  for (int i = 0; i < 2; ++i) {
    std::optional<std::string_view> token = req.Param(names[i]);
    if (!token) {
      return ReplyError(req, 400, std::string(wire::kMissingArgPrefix) + (i ? "TO" : "FROM"),
                        std::string("missing argument: ") + names[i]);
    }
    if (Result<int64_t> t = DecodeYmdh(*token); !t.ok()) {
      return ReplyError(req, 400, std::string(wire::kInvalidArgPrefix) + (i ? "TO" : "FROM"),
                        std::string(names[i]) + ": " + t.status().message());
    }
    hours[i] = *token;
  }
  if (hours[0] > hours[1]) {
    return ReplyError(req, 400, "INVALID_ARG_RANGE", "from '" + std::string(hours[0]) + "' is after to '" +
                                                          std::string(hours[1]) + "'");
  }
  uint64_t limit;
  if (!ParseLimit(req, &limit)) return;
  const std::string_view after = req.Param("after").value_or(std::string_view());
  out_.clear();
  bool more = false;
  std::string last, overflow;
  counters_.fwsum_records += ring_->Fwsum(*prefix, hours[0], hours[1], after, limit, &out_, &more, &last, &overflow);
  if (!overflow.empty()) {  // unreachable by the per-increment bound (docs/realtime.md#overflow-checked-at-acceptance)
    return ReplyError(req, 500, wire::kSumOverflow, "the sum of subkey '" + Clipped(overflow, kShown) + "' leaves 128 bits");
  }
  // The limit cut the walk: the client asks again with after=<X-Fwsum-After> and adds up.
  if (more) {
    req.AddHeader(wire::kFwmatchMoreHeader, "1");
    req.AddHeader(wire::kFwsumAfterHeader, last.c_str());  // keys are printable ASCII (keyformat)
  }
  counters_.fwsums++;
  req.Reply(200, out_);
  if (out_.capacity() > (1u << 20)) std::string().swap(out_);
}

void RealtimeServer::OnExport(net::Request& req) {
  if (!CheckQuery(req)) return;
  int64_t day;
  if (!DayParam(req, true, &day)) return;
  req.AddHeader(wire::kRingHeader, ring_->ring_id().c_str());
  if (ring_->SlotHolding(day) == nullptr) {
    const Slot& slot = ring_->slot(SlotOfDay(day));
    // The slot is empty or holds an older day that is released, or the day is closed: no
    // record of `day` was ever applied here and none ever will be (the first write would
    // have opened the slot; a closed day is never opened). The day is empty, and saying so
    // lets the nightly job archive a day this shard got no traffic for. An older *open*
    // day is different: writes for `day` may still come. A newer day: `day` is gone.
    const bool never_written = slot.state() == SlotState::kEmpty || slot.day() < day;
    const bool final = slot.state() == SlotState::kEmpty || slot.state() == SlotState::kReleased ||
                       (ring_->closed_through() != kNoDay && day <= ring_->closed_through());
    if (!never_written || !final) {
      return ReplyError(req, 404, wire::kDayNotHeld, "no slot holds " + FormatDay(day));
    }
    ++counters_.exports;
    out_ = FormatFooter(Footer{0, XXH64(nullptr, 0, kFooterHashSeed)});
    return req.Reply(200, out_);
  }
  ++counters_.exports;
  auto stream = std::make_unique<ExportStream>(
      ring_.get(), day, req.Defer(), [this](ExportStream* done) {
        counters_.export_records += done->records();
        auto it = std::find_if(exports_.begin(), exports_.end(),
                               [done](const auto& p) { return p.get() == done; });
        if (it != exports_.end()) exports_.erase(it);  // destroys done
      });
  ExportStream* s = stream.get();
  exports_.push_back(std::move(stream));
  s->Start();  // may finish (and free s) at once
}

void RealtimeServer::OnClose(net::Request& req) {
  if (!RequirePost(req) || !CheckQuery(req)) return;
  int64_t day;
  if (!DayParam(req, true, &day)) return;
  int closed_now = 0;
  WriteOutcome o = ring_->CloseDay(day, &closed_now);
  if (!o.ok()) return ReplyRefusal(req, o);
  ++counters_.closes;
  std::fprintf(stderr, "clickatron-realtime: closed through %s (%d slot(s) closed now)\n",
               FormatDay(ring_->closed_through()).c_str(), closed_now);
  out_.clear();
  net::JsonWriter w(&out_);
  w.BeginObject();
  w.Field("day", FormatDay(day));
  w.Field("closed_through", FormatDay(ring_->closed_through()));
  w.Field("slots_closed", closed_now);
  w.EndObject();
  req.ReplyJson(200, "OK", out_);
}

void RealtimeServer::OnRelease(net::Request& req) {
  if (!RequirePost(req) || !CheckQuery(req)) return;
  int64_t day;
  if (!DayParam(req, true, &day)) return;
  WriteOutcome o = ring_->Release(day);
  if (o.refusal == Refusal::kInvalid) return ReplyError(req, 404, wire::kDayNotHeld, o.message);
  if (!o.ok()) return ReplyRefusal(req, o);
  ++counters_.releases;
  out_.clear();
  net::JsonWriter w(&out_);
  w.BeginObject();
  w.Field("day", FormatDay(day));
  w.Field("state", "released");
  w.EndObject();
  req.ReplyJson(200, "OK", out_);
}

void RealtimeServer::WriteStats(net::StatsWriter& w) {
  w.BeginObject();
  WriteSlotStats(w);
  w.Key("closed_through");  // the watermark W: every day <= W is closed (docs/formats.md)
  if (ring_->closed_through() == kNoDay) {
    w.Null();
  } else {
    w.Day(FormatDay(ring_->closed_through()), "clickatron_realtime_closed_through_timestamp_seconds",
          "The newest closed day (every day up to it is closed), 00:00 UTC.");
  }
  w.Info("instance", instance_, "clickatron_realtime_instance_info", "This process's instance id.");
  w.Info("ring", ring_->ring_id(), "clickatron_realtime_ring_info", "The data directory's ring id.");
  w.BeginObject("sources");
  for (const auto& [source, seq] : sources_) {
    auto label = w.Label("source", source);
    w.Key(source);
    w.BeginObject();
    w.Gauge("seq", seq.acked, "clickatron_realtime_source_seq", "Highest seq acknowledged, per source.");
    w.Gauge("synced_seq", seq.synced, "clickatron_realtime_source_synced_seq",
            "Highest seq whose writes are on the device, per source.");
    if (auto lease = leases_.find(source); lease != leases_.end()) w.Field("sender", lease->second.sender);
    w.EndObject();
  }
  w.EndObject();
  WriteCounterStats(w);
  w.BeginObject("limits");  // docs/operations.md#limits
  server_->WriteLimitFields(&w);
  w.Gauge("max_mget_keys", uint64_t(options_.max_mget_keys), "clickatron_realtime_max_mget_keys",
          "Keys one /mget may ask for (--max-mget-keys).");
  w.Gauge("fwmatch_limit", options_.fwmatch_limit, "clickatron_realtime_fwmatch_limit",
          "Lines one /fwmatch answers at most (--fwmatch-limit).");
  w.Counter("too_many_keys", counters_.too_many_keys, "clickatron_realtime_too_many_keys_total",
            "/mget refused 400 TOO_MANY_KEYS.");
  w.EndObject();
  w.Key("latency");
  server_->WriteLatencyJson(&w);
  w.EndObject();
}

void RealtimeServer::WriteSlotStats(net::StatsWriter& w) {
  w.BeginArray("slots");
  for (int i = 0; i < kRingSlots; ++i) {
    const uint64_t records = ring_->Records(i);  // first: waits for a flush of this slot
    const Slot& s = ring_->slot(i);
    auto label = w.Label("slot", std::to_string(i));
    w.BeginObject();
    w.Field("slot", i);
    w.Key("day");
    if (s.day() == kNoDay) {
      w.Null();
    } else {
      w.Day(FormatDay(s.day()), "clickatron_realtime_slot_day_timestamp_seconds", "The slot's day, 00:00 UTC.");
    }
    w.State("state", SlotStateName(s.state()),
            {SlotStateName(SlotState::kEmpty), SlotStateName(SlotState::kOpen), SlotStateName(SlotState::kClosed),
             SlotStateName(SlotState::kReleased)},
            "clickatron_realtime_slot_state", "1 for the slot's state (docs/realtime.md#day-lifecycle).");
    w.Gauge("records", records, "clickatron_realtime_slot_records", "Records of the slot.");
    w.Gauge("file_bytes", s.file_bytes(), "clickatron_realtime_slot_file_bytes", "Bytes of the slot's database file.");
    w.BeginObject("sources");
    for (const auto& [source, seq] : ring_->marks(i)) {
      w.Key(source);
      w.Int(seq);
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
}

void RealtimeServer::WriteCounterStats(net::StatsWriter& w) {
  const Counters& c = counters_;
  const RingStats& rs = ring_->stats();
  const FileSyncerStats fs = ring_->fsync_stats();
  w.BeginObject("counters");
  // Each a counter clickatron_realtime_<name>_total (docs/operations.md#metric-names).
  const std::pair<const char*, uint64_t> counts[] = {
      {"incr_batches", c.incr_batches}, {"incr_lines", c.incr_lines},
      {"incr_applied", c.incr_applied}, {"incr_duplicate", c.incr_duplicate},
      {"incr_duplicate_batches", c.incr_duplicate_batches}, {"set_lines", c.set_lines},
      {"closes", c.closes}, {"releases", c.releases}, {"exports", c.exports}, {"export_records", c.export_records},
      {"gets", c.gets}, {"get_hits", c.get_hits}, {"mget_keys", c.mget_keys},
      {"mget_hits", c.mget_hits}, {"fwmatch_lines", c.fwmatch_lines},
      {"fwsums", c.fwsums}, {"fwsum_records", c.fwsum_records},
      {"bad_requests", c.bad_requests}, {"refused_not_released", c.refused_not_released},
      {"refused_expired", c.refused_expired}, {"refused_overflow", c.refused_overflow},
      {"refused_instance", c.refused_instance}, {"refused_ring", c.refused_ring}, {"refused_behind", c.refused_behind},
      {"refused_closed", c.refused_closed}, {"refused_source_in_use", c.refused_source_in_use},
      {"storage_errors", c.storage_errors + rs.storage_errors}, {"sync_errors", c.sync_errors},
      {"syncs", rs.syncs}};
  for (const auto& [name, value] : counts) {
    w.Counter(name, value, "clickatron_realtime_" + std::string(name) + "_total",
              "The /stats counter " + std::string(name) + " (docs/api.md#realtime-stats).");
  }
  w.Gauge("sync_micros_max", rs.sync_micros_max, "clickatron_realtime_sync_max_seconds", "Longest commit.", 1e6);
  w.Gauge("sync_micros_avg", rs.syncs == 0 ? 0 : rs.sync_micros_total / rs.syncs, "clickatron_realtime_sync_avg_seconds",
          "Mean commit.", 1e6);
  w.Counter("flush_errors", rs.flush_errors, "clickatron_realtime_flush_errors_total", "Flushes that failed.");
  w.Gauge("durable_lag_micros_max", rs.durable_lag_micros_max, "clickatron_realtime_durable_lag_max_seconds",
          "Longest time from an acknowledged write to its fsync.", 1e6);
  w.Counter("loop_waits", rs.loop_waits, "clickatron_realtime_loop_waits_total", "Times the loop waited for the flusher.");
  w.Gauge("loop_wait_micros_max", rs.loop_wait_micros_max, "clickatron_realtime_loop_wait_max_seconds",
          "Longest wait of the loop for the flusher.", 1e6);
  w.Counter("loop_wait_micros_total", rs.loop_wait_micros_total, "clickatron_realtime_loop_wait_seconds_total",
            "Time the loop waited for the flusher.", 1e6);
  w.Gauge("pending_bytes", ring_->pending_bytes(), "clickatron_realtime_pending_bytes",
          "Acknowledged writes not yet in Tokyo Cabinet (503 FLUSH_BEHIND past --max-pending-mb).");
  w.Counter("slot_resets", rs.resets, "clickatron_realtime_slot_resets_total", "Released slots taken by a new day.");
  w.Counter("fsyncs", fs.fsyncs, "clickatron_realtime_fsyncs_total", "fsyncs of the slot files.");
  w.Counter("fsync_errors", fs.errors, "clickatron_realtime_fsync_errors_total",
            "fsyncs that failed (synced_seq stops advancing until a restart).");
  w.Gauge("fsync_micros_max", fs.micros_max, "clickatron_realtime_fsync_max_seconds", "Longest fsync.", 1e6);
  w.Gauge("fsync_micros_avg", fs.fsyncs == 0 ? 0 : fs.micros_total / fs.fsyncs, "clickatron_realtime_fsync_avg_seconds",
          "Mean fsync.", 1e6);
  w.EndObject();
}

// The instance lets a sender with rounds in doubt notice a restart without sending
// (api/sender.h: the probe).
void RealtimeServer::OnPing(net::Request& req) {
  req.AddHeader(wire::kInstanceHeader, instance_.c_str());
  req.Reply(200, "OK\n");
}

}  // namespace clickatron::realtime
