#include "api/sender.h"

#include <event2/event.h>

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "api/incr_payload.h"
#include "base/durable_file.h"
#include "keyformat/hex64.h"
#include "keyformat/day_ring.h"
#include "keyformat/records.h"
#include "keyformat/ymdh.h"
#include "net/http_client.h"
#include "net/json.h"
#include "net/stats_writer.h"
#include "net/query.h"
#include "oplog/oplog.h"
#include "oplog/reader.h"
#include "wire/headers.h"
#include "wire/json_answer.h"
#include "wire/realtime_answers.h"
#include "wire/refusals.h"

namespace clickatron {
namespace {

constexpr int kPersistIntervalMs = 200;    // how often the lagging saved cursor moves
constexpr size_t kReadBytes = 4u << 20;    // payload bytes per oplog Read

std::string Trimmed(std::string_view body) {
  std::string out(body.substr(0, 300));
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace

// ---- AppendTimes ----

void AppendTimes::Add(uint64_t seq, uint64_t micros) {
  if (!entries_.empty() && entries_.back().second / 1000 == micros / 1000) return;
  if (entries_.size() >= kMaxEntries) {
    // Keep entries 0, 2, 4, ... and the newest: any entry kept is still one at or before
    // the records it was found for, only an earlier one.
    size_t kept = 0;
    for (size_t i = 0; i < entries_.size(); i += 2) entries_[kept++] = entries_[i];
    if (entries_.size() % 2 == 0) entries_[kept++] = entries_.back();
    entries_.resize(kept);
  }
  entries_.emplace_back(seq, micros);
}

uint64_t AppendTimes::TimeAfter(uint64_t seq) const {
  // The latest entry at or before record seq+1: that record was appended no earlier.
  auto it = std::upper_bound(entries_.begin(), entries_.end(), seq + 1,
                             [](uint64_t s, const std::pair<uint64_t, uint64_t>& e) { return s < e.first; });
  if (it == entries_.begin()) return entries_.empty() ? 0 : entries_.front().second;
  return std::prev(it)->second;
}

void AppendTimes::TrimThrough(uint64_t seq) {
  while (entries_.size() > 1 && entries_[1].first <= seq + 1) entries_.pop_front();
}

// ---- Sender ----

std::string Sender::CursorName(uint32_t shard, int slot) {
  return "realtime-" + std::to_string(shard) + ".slot-" + std::to_string(slot);
}

Sender::Sender(event_base* base, net::HttpClient* client, oplog::Oplog* log,
               const AppendTimes* times, LateStore* late, uint32_t shard, int slot, net::HostPort to,
               std::string source, ShardSends* sends, SenderOptions options)
    : base_(base),
      client_(client),
      log_(log),
      times_(times),
      late_(late),
      shard_(shard),
      slot_(slot),
      to_(std::move(to)),
      source_(std::move(source)),
      cursor_name_(CursorName(shard, slot)),
      sends_(sends),
      options_(options) {
  retry_timer_ = evtimer_new(base_, &Sender::OnTimer, this);
  persist_timer_ = event_new(base_, -1, EV_PERSIST, &Sender::OnPersistTimer, this);
  pace_timer_ = evtimer_new(base_, &Sender::OnPaceTimer, this);
  probe_timer_ = evtimer_new(base_, &Sender::OnProbeTimer, this);
}

Sender::~Sender() {
  event_free(retry_timer_);
  event_free(persist_timer_);
  event_free(pace_timer_);
  event_free(probe_timer_);
}

std::string Sender::Where() const {
  return "realtime shard " + std::to_string(shard_) + " slot " + std::to_string(slot_) + " (" + to_.ToString() + ")";
}

Status Sender::Start(uint64_t last_seq) {
  reader_ = log_->NewReader();
  cursor_ = saved_cursor_ = std::max(log_->cursor(cursor_name_), options_.own_from_seq - 1);
  bool trusted = false;
  Status s = rounds_file_.Open(log_->dir(), cursor_name_, cursor_, &replay_, &trusted);
  if (!s.ok()) return s;
  Result<oplog::ReplaySkip> skip = oplog::LoadReplaySkip(log_->dir(), cursor_name_);
  if (!skip.ok()) return skip.status();
  skip_ = *skip;
  const std::string where = Where();
  if (skip_.active() && cursor_ < skip_.through_seq) {
    std::fprintf(stderr,
                 "clickatron-api: %s: replay: not re-sending lines of days <= %s "
                 "(the archive holds them) in records %llu..%llu\n",
                 where.c_str(), FormatDay(skip_.through_day).c_str(), (unsigned long long)cursor_ + 1,
                 (unsigned long long)skip_.through_seq);
  }
  if (!trusted && cursor_ < last_seq) {
    // The rounds file is missing or from before a reboot: what was sent past the cursor is
    // unknown, so every record up to the recovered end goes as a batch of its own.
    singles_until_ = last_seq;
    std::fprintf(stderr,
                 "clickatron-api: %s: rounds file not usable after a reboot; "
                 "re-sending records %llu..%llu one per batch\n",
                 where.c_str(), (unsigned long long)cursor_ + 1, (unsigned long long)last_seq);
  } else if (!replay_.empty()) {
    std::fprintf(stderr,
                 "clickatron-api: %s: resuming after seq %llu; re-sending %zu "
                 "round(s) with their boundaries\n",
                 where.c_str(), (unsigned long long)cursor_, replay_.size());
  }
  timeval tv{0, kPersistIntervalMs * 1000};
  event_add(persist_timer_, &tv);
  return Status::OK();
}

void Sender::Stop() {
  if (state_ == State::kStopped) return;
  state_ = State::kStopped;
  evtimer_del(retry_timer_);
  event_del(persist_timer_);
  evtimer_del(pace_timer_);
  evtimer_del(probe_timer_);
  AdvanceSavedCursor(/*force=*/true);
}

const char* Sender::state_name() const {
  switch (state_) {
    case State::kIdle: return "idle";
    case State::kSending: return "sending";
    case State::kBackoff: return "retrying";
    case State::kStopped: return "stopped";
  }
  return "stopped";
}

void Sender::Kick() {
  if (state_ != State::kIdle || pacing_ || probing_) return;
  const uint64_t now = MonotonicMicros();
  const uint64_t interval_us = uint64_t(options_.min_round_interval_ms) * 1000;
  if (interval_us > 0 && last_round_us_ != 0 && now - last_round_us_ < interval_us) {
    const uint64_t wait = interval_us - (now - last_round_us_);
    timeval tv{0, suseconds_t(wait)};
    pacing_ = true;
    evtimer_add(pace_timer_, &tv);
    return;
  }
  if (!BuildRound()) {
    if (state_ == State::kIdle) ProbeLater();
    return;
  }
  last_round_us_ = now;
  state_ = State::kSending;
  SendStep();
}

void Sender::ResetRound() {
  arena_.clear();
  entries_.clear();
  part_ = Part{};
  has_round_ = false;
}

bool Sender::BuildRound() {
  for (;;) {
    ResetRound();
    uint64_t end = cursor_;
    bool any_lines = false;
    Status s = CollectRecords(&end, &any_lines);
    if (!s.ok()) {
      ResetRound();
      Fail("reading the oplog: " + s.message(), /*rewind=*/false);
      return false;
    }
    if (end == cursor_) return false;  // caught up
    const bool replaying = !replay_.empty() && end == replay_.front();
    if (replaying) replay_.pop_front();
    if (!any_lines) {  // nothing for this slot in these records
      cursor_ = end;
      continue;
    }
    GroupEntries();
    if (!replaying) {
      // Recorded before the first send, so a restart re-cuts this round the same way.
      Status a = rounds_file_.Append(end);
      if (!a.ok()) {
        ResetRound();
        Fail(a.message(), /*rewind=*/false);
        return false;
      }
    }
    has_round_ = true;
    round_end_ = end;
    round_start_us_ = times_->TimeAfter(cursor_);
    rounds_.push_back(Round{end, 0, 0});
    return true;
  }
}

Status Sender::CollectRecords(uint64_t* end, bool* any_lines) {
  const uint64_t limit = replay_.empty() ? UINT64_MAX : replay_.front();
  const bool forced = limit != UINT64_MAX;
  const bool single = !forced && cursor_ < singles_until_;
  uint64_t after = cursor_;
  std::vector<oplog::Reader::Record> records;
  for (;;) {
    Status s = reader_->Read(after, single ? 1 : options_.read_records, kReadBytes, &records);
    if (!s.ok()) return s;
    if (records.empty()) return Status::OK();
    for (const oplog::Reader::Record& rec : records) {
      if (rec.seq > limit) return Status::OK();
      if (single && *end > cursor_) return Status::OK();
      const size_t arena_mark = arena_.size();
      const size_t entries_mark = entries_.size();
      const int64_t day_mark = part_.day;
      const bool same_day = AddRecord(rec.seq, rec.payload);
      const bool full = arena_.size() > options_.max_round_bytes;
      // A replayed round (forced) is cut where it was cut before, whatever it holds: a
      // round of the one-stream layout holds one day per slot, so never two here.
      if (!forced && *end > cursor_ && (!same_day || full)) {
        arena_.resize(arena_mark);  // this record starts the next round
        entries_.resize(entries_mark);
        part_.day = day_mark;
        return Status::OK();
      }
      if (entries_.size() > entries_mark) *any_lines = true;
      *end = rec.seq;
      if (rec.seq == limit || single) return Status::OK();
    }
    after = records.back().seq;
  }
}

bool Sender::AddRecord(uint64_t seq, std::string_view payload) {
  const size_t arena_mark = arena_.size();
  const size_t entries_mark = entries_.size();
  const int64_t day_mark = part_.day;
  bool same_day = true;
  PayloadReader reader(payload);
  PayloadLine line;
  while (reader.Next(&line)) {
    if (line.shard != shard_ || SlotOfDay(line.day) != slot_ || skip_.Drops(seq, line.day)) continue;
    if (part_.day == -1) part_.day = line.day;
    if (part_.day != line.day) same_day = false;
    Entry e;
    e.lookup = line.lookup;
    e.delta = line.delta;
    e.key_offset = uint32_t(arena_.size());
    e.key_size = uint32_t(line.key.size());
    arena_.append(line.key);
    e.value_offset = uint32_t(arena_.size());
    e.value_size = uint32_t(line.value.size());
    arena_.append(line.value);
    entries_.push_back(e);
  }
  if (!reader.status().ok()) {
    // Checksummed, so never damage: a record this build cannot read. Never silent.
    std::fprintf(stderr, "clickatron-api: %s: SKIPPING oplog record %llu: %s\n", Where().c_str(),
                 (unsigned long long)seq, reader.status().message().c_str());
    c_.skipped_records++;
    arena_.resize(arena_mark);
    entries_.resize(entries_mark);
    part_.day = day_mark;
    return true;
  }
  return same_day;
}

void Sender::GroupEntries() {
  auto key = [this](const Entry& e) { return std::string_view(arena_).substr(e.key_offset, e.key_size); };
  auto value = [this](const Entry& e) { return std::string_view(arena_).substr(e.value_offset, e.value_size); };
  std::sort(entries_.begin(), entries_.end(), [&](const Entry& a, const Entry& b) {
    if (a.lookup != b.lookup) return a.lookup;
    return key(a) < key(b);
  });
  for (size_t i = 0; i < entries_.size();) {
    const Entry& first = entries_[i];
    size_t j = i + 1;
    while (j < entries_.size() && entries_[j].lookup == first.lookup && key(entries_[j]) == key(first)) j++;
    if (first.lookup) {
      // The same lookup from several events: once (a hash names one original).
      part_.set_body.append(key(first));
      part_.set_body.push_back(',');
      part_.set_body.append(value(first));
      part_.set_body.push_back('\n');
    } else {
      int64_t sum = first.delta;
      for (size_t k = i + 1; k < j; k++) {
        int64_t next;
        if (__builtin_add_overflow(sum, entries_[k].delta, &next)) {
          // Would overflow the sum: send what we have as its own line and go on.
          part_.incr_body.append(key(first));
          part_.incr_body.push_back(',');
          AppendCount(&part_.incr_body, sum);
          part_.incr_body.push_back('\n');
          next = entries_[k].delta;
        }
        sum = next;
      }
      part_.incr_body.append(key(first));
      part_.incr_body.push_back(',');
      AppendCount(&part_.incr_body, sum);
      part_.incr_body.push_back('\n');
    }
    i = j;
  }
  part_.lines = entries_.size();
}

void Sender::SendStep() {
  Part& p = part_;
  if (!p.done && !p.set_done && !p.set_body.empty()) {
    path_ = "/set?day=" + FormatDay(p.day);
    if (!sends_->ring.empty()) path_ += "&ring=" + sends_->ring;
    client_->Post(to_, path_, p.set_body, options_.request_timeout_ms,
                  [this](net::HttpResponse&& r) { OnResponse(std::move(r), /*is_set=*/true); });
    return;
  }
  if (!p.done && !p.incr_body.empty()) {
    SendIncr();
    return;
  }
  if (!p.done && p.lookups_refused) {  // lookups only, and refused: late
    if (!StoreLate(/*with_counters=*/false, p.refusal)) return;
  } else if (!p.done) {
    c_.delivered += p.lines;  // lookups only
    p.done = true;
  }
  RoundDone();
}

void Sender::SendIncr() {
  path_ = "/incr?source=";
  net::PercentEncode(source_, &path_);
  path_ += "&seq=" + std::to_string(round_end_);
  if (!instance_.empty()) path_ += "&instance=" + instance_;
  if (!sends_->ring.empty()) path_ += "&ring=" + sends_->ring;
  net::RequestOptions request;
  request.method = "POST";
  request.body = part_.incr_body;
  request.headers.emplace_back(wire::kSenderHeader, options_.sender_id);
  request.timeout_ms = options_.request_timeout_ms;
  sends_->max_sent = std::max(sends_->max_sent, round_end_);
  client_->Request(to_, path_, std::move(request),
                   [this](net::HttpResponse&& r) { OnResponse(std::move(r), /*is_set=*/false); });
}

bool Sender::StoreLate(bool with_counters, const std::string& refusal) {
  Part& p = part_;
  LatePart late;
  late.shard = shard_;
  late.day = p.day;
  late.seq = round_end_;
  late.records = p.lines;
  // A late part keeps its lookups even when its /set went through: the day's slot may be
  // reused before the nightly exports it (DAY_EXPIRED), and a lookup stored twice is one.
  if (p.lookups_refused || with_counters) late.lookups = p.set_body;
  if (with_counters) {
    late.counters = p.incr_body;
  } else if (!p.incr_body.empty()) {
    // The counters were applied, the lookups refused: only those are late.
    late.records = uint64_t(std::count(p.set_body.begin(), p.set_body.end(), '\n'));
  }
  Result<uint64_t> id = late_->Append(late);
  if (!id.ok()) {
    Fail("late store: " + id.status().message() + " (day " + FormatDay(p.day) + " refused: " + refusal + ")",
         /*rewind=*/false);
    return false;
  }
  LogLate(late, *id, refusal);
  if (*id == 0) {
    c_.late_duplicate_parts++;
  } else {
    c_.late_parts++;
    c_.late_lines += late.records;
  }
  if (with_counters || p.incr_body.empty()) p.done = true;
  return true;
}

void Sender::LogLate(const LatePart& late, uint64_t id, const std::string& refusal) const {
  const std::string day = FormatDay(late.day);
  if (id == 0) {
    std::fprintf(stderr,
                 "clickatron-api: late: realtime shard %u (%s) refused day %s (%s) again: round seq %llu is "
                 "already in the late store, not stored twice\n",
                 shard_, to_.ToString().c_str(), day.c_str(), refusal.c_str(), (unsigned long long)round_end_);
    return;
  }
  std::fprintf(stderr,
               "clickatron-api: late: realtime shard %u (%s) refused day %s (%s): %llu record(s) of round "
               "seq %llu kept as late entry %llu (%zu lookup, %zu counter lines)\n",
               shard_, to_.ToString().c_str(), day.c_str(), refusal.c_str(), (unsigned long long)late.records,
               (unsigned long long)round_end_, (unsigned long long)id,
               size_t(std::count(late.lookups.begin(), late.lookups.end(), '\n')),
               size_t(std::count(late.counters.begin(), late.counters.end(), '\n')));
}

bool Sender::CheckSourceMark(const net::HttpResponse& r) {
  std::optional<std::string_view> text = r.Header(wire::kSourceMarkHeader);
  if (!text) return true;
  int64_t mark = -1;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), mark);
  const uint64_t head = log_->last_seq();
  if (ec == std::errc() && end == text->data() + text->size() && (mark < 0 || uint64_t(mark) <= head)) {
    if (source_conflict_) {
      std::fprintf(stderr, "clickatron-api: %s: source '%s' no longer conflicts, delivering\n", Where().c_str(),
                   source_.c_str());
      source_conflict_ = false;
    }
    return true;
  }
  c_.source_conflicts++;
  source_conflict_ = true;
  source_in_use_ = false;
  source_message_ = "SOURCE_CONFLICT: the shard holds seq " + std::string(*text) + " of source '" + source_ +
                    "' for day " + FormatDay(part_.day) + ", past this API's oplog head " + std::to_string(head) +
                    ": another API writes as this source (a copy of this oplog directory, or one from before "
                    "identities sharing its node-id), or this oplog was reset; delivery to this shard waits";
  if (options_.on_source_conflict) options_.on_source_conflict(source_message_);
  Fail(source_message_, /*rewind=*/false);
  return false;
}

bool Sender::CheckRing(const net::HttpResponse& r) {
  if (r.status == 412) {
    Result<wire::JsonAnswer> answer = wire::ReadJsonAnswer(r.body);
    if (answer.ok() && answer->status_txt == wire::kRingChanged) {
      if (!ring_changed_) {
        std::fprintf(stderr, "clickatron-api: %s: RING_CHANGED: %s; delivery to this shard waits\n", Where().c_str(),
                     answer->message.c_str());
      }
      ring_changed_ = true;
      ring_message_ = "RING_CHANGED: the shard's data directory is new (it lost what ring " + sends_->ring +
                      " held): run the replay procedure, docs/operations.md#replaying-an-oplog-after-losing-a-"
                      "realtime-host; delivery to this shard waits";
      Fail(ring_message_, /*rewind=*/false);
      return false;
    }
  }
  std::optional<std::string_view> ring = r.Header(wire::kRingHeader);
  if (ring_changed_ && r.status != 412) {
    std::fprintf(stderr, "clickatron-api: %s: the shard's ring is %s again, delivering\n", Where().c_str(),
                 sends_->ring.c_str());
    ring_changed_ = false;
  }
  if (ring && sends_->ring.empty() && ParseHex64(*ring).ok()) {
    // The first answer naming the shard's data directory: remembered for every stream of the
    // shard, and named in every request from now on (wire/headers.h).
    sends_->ring = *ring;
    for (const std::string& path : sends_->ring_paths) {
      if (Status s = WriteFileAtomic(path, sends_->ring + "\n"); !s.ok()) {
        std::fprintf(stderr, "clickatron-api: %s: %s\n", Where().c_str(), s.message().c_str());
      }
    }
  }
  return true;
}

bool Sender::CheckInstance(const net::HttpResponse& r) {
  std::optional<std::string_view> instance = r.Header(wire::kInstanceHeader);
  if (!instance) return true;
  if (instance_.empty()) {
    instance_ = *instance;
    return true;
  }
  if (*instance == instance_) return true;
  // The shard restarted, maybe silently between two requests (the client reconnects a
  // closed keep-alive connection by itself), and may have lost rounds it acknowledged
  // after its last sync. Its /incr refused this round (we named the old instance), so
  // nothing newer is applied before the rewound rounds are.
  const std::string was = instance_;
  instance_ = *instance;
  shard_synced_ = -1;  // what the new process has made durable is yet to be seen
  c_.restarts++;
  Fail("shard restarted (instance " + was + " -> " + instance_ + "); re-sending every round since the saved cursor",
       /*rewind=*/true);
  return false;
}

void Sender::OnResponse(net::HttpResponse&& r, bool is_set) {
  c_.requests++;
  if (state_ == State::kStopped) return;
  if (!r.ok()) {
    Fail(r.error, /*rewind=*/true);
    return;
  }
  if (!CheckRing(r)) return;
  if (!CheckInstance(r)) return;
  if (!is_set && !CheckSourceMark(r)) return;
  if (r.status == 200) {
    OnAccepted(r, is_set);
  } else {
    OnRefused(r, is_set);
  }
}

void Sender::OnAccepted(const net::HttpResponse& r, bool is_set) {
  Part& p = part_;
  backoff_ms_ = 0;
  source_in_use_ = false;
  if (waiting_release_) {
    std::fprintf(stderr, "clickatron-api: %s: slot released, delivering again\n", Where().c_str());
    waiting_release_ = false;
  }
  if (is_set) {
    p.set_done = true;
    SendStep();
    return;
  }
  if (std::optional<std::string_view> synced = r.Header(wire::kSyncedSeqHeader)) {
    int64_t seq = -1;
    std::from_chars(synced->data(), synced->data() + synced->size(), seq);
    shard_reports_synced_ = true;
    shard_synced_ = std::max(shard_synced_, seq);
  }
  // The batch was applied whatever the body says; one that does not read counts none.
  Result<wire::IncrAnswer> a = wire::ReadIncrAnswer(r.body);
  if (a.ok()) c_.duplicate += a->duplicate;
  // The /set was refused but the counters went in now: their lookups are late (kept in the
  // round, so a retry after a store error still stores them).
  if (p.lookups_refused && !(a.ok() && a->applied == 0)) p.lookups_late = true;
  if (p.lookups_late && !StoreLate(/*with_counters=*/false, p.refusal)) return;
  // A refused /set with counters all duplicates: the round went through before, with its
  // lookups (a /set is sent before its /incr).
  c_.delivered += p.lines;
  p.done = true;
  SendStep();
}

void Sender::OnRefused(const net::HttpResponse& r, bool is_set) {
  Part& p = part_;
  // A refusal is told by its name in the envelope (docs/api.md#clickatron-realtime, POST /incr).
  Result<wire::JsonAnswer> answer = wire::ReadJsonAnswer(r.body);
  const std::string refusal = answer.ok() ? answer->status_txt : std::string();
  if (r.status == 409 && (refusal == wire::kDayClosed || refusal == wire::kDayExpired)) {
    // Late data: the shard will not take this day any more. Kept for the nightly, which
    // merges it from /late (docs/api-write.md#late-data).
    const std::string what = "409 " + refusal;
    last_error_ = "day " + FormatDay(p.day) + " late (" + what + "): " + Trimmed(r.body);
    last_error_us_ = MonotonicMicros();
    if (is_set) {
      // Keep the lookups with the round; its /incr tells whether it was applied before.
      p.lookups_refused = true;
      p.refusal = what;
      p.set_done = true;
    } else if (!StoreLate(/*with_counters=*/true, what)) {
      return;
    }
    SendStep();
    return;
  }
  if (refusal == wire::kSourceInUse && !is_set) {
    c_.source_in_use_refusals++;
    source_in_use_ = true;
    source_message_ = Trimmed(r.body);
  }
  if (refusal == wire::kSlotNotReleased) NoteSlotNotReleased(r.body);
  Fail("HTTP " + std::to_string(r.status) + " from " + (is_set ? "/set: " : "/incr: ") + Trimmed(r.body),
       /*rewind=*/false);
}

void Sender::NoteSlotNotReleased(std::string_view body) {
  if (!waiting_release_) {
    std::fprintf(stderr,
                 "clickatron-api: %s: waiting for the nightly to release the slot of day %s "
                 "(the other slots' days are delivered meanwhile): %s\n",
                 Where().c_str(), FormatDay(part_.day).c_str(), Trimmed(body).c_str());
  }
  waiting_release_ = true;
  waiting_release_message_ = "day " + FormatDay(part_.day) + ": " + Trimmed(body);
}

void Sender::RoundDone() {
  const uint64_t now = MonotonicMicros();
  cursor_ = round_end_;
  if (!rounds_.empty() && rounds_.back().end == round_end_) {
    rounds_.back().acked_us = now;
    rounds_.back().ceiling = sends_->max_sent;
  }
  if (round_start_us_ != 0 && now > round_start_us_) lag_.Record(now - round_start_us_);
  c_.rounds++;
  probe_ms_ = 0;
  ResetRound();
  state_ = State::kIdle;
  AdvanceSavedCursor(/*force=*/false);
  Kick();
}

void Sender::ProbeLater() {
  if (probe_armed_ || rounds_.empty()) return;
  if (probe_ms_ == 0) probe_ms_ = options_.probe_initial_ms;
  timeval tv{probe_ms_ / 1000, (probe_ms_ % 1000) * 1000};
  probe_armed_ = true;
  evtimer_add(probe_timer_, &tv);
}

void Sender::OnProbeTimer(int, short, void* arg) {
  Sender* self = static_cast<Sender*>(arg);
  self->probe_armed_ = false;
  // Something to send meanwhile (its answer tells the instance), or nothing in doubt.
  if (self->state_ != State::kIdle || self->pacing_ || self->rounds_.empty()) return;
  self->probing_ = true;
  self->c_.probes++;
  net::RequestOptions request;
  request.method = "GET";
  request.timeout_ms = self->options_.request_timeout_ms;
  self->client_->Request(self->to_, "/ping", std::move(request),
                         [self](net::HttpResponse&& r) { self->OnProbeAnswer(std::move(r)); });
}

void Sender::OnProbeAnswer(net::HttpResponse&& r) {
  probing_ = false;
  c_.requests++;
  if (state_ == State::kStopped) return;
  // Down or restarted: it may have lost the rounds in doubt; they go again, as after a
  // failed round (a shard that is down is retried with backoff).
  if (!r.ok()) {
    Fail(r.error, /*rewind=*/true);
    return;
  }
  if (!CheckInstance(r)) return;
  probe_ms_ = std::min(probe_ms_ * 2, options_.probe_max_ms);
  Kick();  // records that arrived meanwhile, else the next probe
}

void Sender::Fail(const std::string& error, bool rewind) {
  c_.failures++;
  const uint64_t now = MonotonicMicros();
  // One log line per distinct error, or per 10 s while it persists.
  if (error != last_error_ || now - last_error_us_ > 10'000'000) {
    std::fprintf(stderr, "clickatron-api: %s: %s; retrying\n", Where().c_str(), error.c_str());
  }
  last_error_ = error;
  last_error_us_ = now;
  if (rewind) Rewind();
  state_ = State::kBackoff;
  ScheduleRetry();
}

void Sender::Rewind() {
  // The shard may have restarted and lost what it acknowledged since its last commit:
  // re-send every round past the saved cursor, cut exactly as before.
  std::deque<uint64_t> replay;
  bool resending = false;  // something acknowledged goes again (not just a retry)
  for (const Round& r : rounds_) {
    replay.push_back(r.end);
    if (r.acked_us != 0) resending = true;
  }
  for (uint64_t end : replay_) replay.push_back(end);
  replay_ = std::move(replay);
  rounds_.clear();
  if (resending) c_.rewinds++;
  cursor_ = saved_cursor_;
  ResetRound();
}

void Sender::ScheduleRetry() {
  backoff_ms_ = backoff_ms_ == 0 ? options_.backoff_initial_ms
                                 : std::min(backoff_ms_ * 2, options_.backoff_max_ms);
  timeval tv{backoff_ms_ / 1000, (backoff_ms_ % 1000) * 1000};
  evtimer_add(retry_timer_, &tv);
}

void Sender::OnTimer(int, short, void* arg) {
  Sender* self = static_cast<Sender*>(arg);
  if (self->state_ != State::kBackoff) return;
  if (!self->has_round_) {
    self->state_ = State::kIdle;
    self->Kick();
  } else {
    self->state_ = State::kSending;
    self->SendStep();
  }
}

void Sender::OnPaceTimer(int, short, void* arg) {
  Sender* self = static_cast<Sender*>(arg);
  self->pacing_ = false;
  self->Kick();
}

void Sender::OnPersistTimer(int, short, void* arg) {
  static_cast<Sender*>(arg)->AdvanceSavedCursor(/*force=*/false);
}

void Sender::AdvanceSavedCursor(bool force) {
  const uint64_t now = MonotonicMicros();
  const uint64_t lag_us = uint64_t(options_.cursor_lag_ms) * 1000;
  // A round is settled once the shard says a batch sent after its answer is durable (see
  // the header: its ceiling), or — from a shard that does not say — once it was
  // acknowledged longer ago than the shard's commit interval.
  auto settled = [&](const Round& r) {
    if (r.acked_us == 0) return false;
    if (force) return true;
    if (shard_reports_synced_) return shard_synced_ > int64_t(r.ceiling);
    return now - r.acked_us >= lag_us;
  };
  uint64_t target = saved_cursor_;
  while (!rounds_.empty() && settled(rounds_.front())) {
    target = rounds_.front().end;
    rounds_.pop_front();
  }
  // No round in doubt: everything delivered may be saved (records with no line for this
  // stream included).
  if (rounds_.empty() && replay_.empty() && !has_round_) target = std::max(target, cursor_);
  if (target <= saved_cursor_) return;
  Status s = log_->SetCursor(cursor_name_, target);
  if (!s.ok()) {
    std::fprintf(stderr, "clickatron-api: %s: saving cursor: %s\n", Where().c_str(), s.message().c_str());
    return;
  }
  saved_cursor_ = target;
  std::deque<uint64_t> live;
  for (const Round& r : rounds_) live.push_back(r.end);
  for (uint64_t end : replay_) live.push_back(end);
  Status c = rounds_file_.MaybeCompact(live);
  if (!c.ok()) std::fprintf(stderr, "clickatron-api: %s\n", c.message().c_str());
}

double Sender::BacklogSeconds(uint64_t last_seq) const {
  if (last_seq <= cursor_) return 0;
  const uint64_t now = MonotonicMicros();
  const uint64_t t = times_->TimeAfter(cursor_);
  return t != 0 && now > t ? double(now - t) / 1e6 : 0;
}

void Sender::WriteStatsJson(net::StatsWriter* w, uint64_t last_seq) const {
  auto label = w->Label("slot", std::to_string(slot_));
  w->BeginObject();
  w->Field("slot", int64_t(slot_));
  w->Field("cursor_name", cursor_name_);
  w->Field("state", state_name());
  w->Field("day", part_.day >= 0 && has_round_ ? FormatDay(part_.day) : std::string());
  w->Gauge("cursor", cursor_, "clickatron_api_realtime_slot_cursor", "The stream's cursor, per ring slot.");
  w->Field("saved_cursor", saved_cursor_);
  w->Gauge("backlog_records", last_seq > cursor_ ? last_seq - cursor_ : 0, "clickatron_api_realtime_slot_backlog_records",
           "Oplog records not yet delivered by the stream of a ring slot.");
  w->Gauge("backlog_seconds", BacklogSeconds(last_seq), "clickatron_api_realtime_slot_backlog_seconds",
           "Age of the oldest record not yet delivered by the stream of a ring slot.");
  w->Counter("delivered_records", c_.delivered, "clickatron_api_realtime_slot_delivered_records_total",
             "Records the stream of a ring slot delivered.");
  w->Field("rounds", c_.rounds);
  w->Field("rounds_in_doubt", rounds_.size());
  w->Field("replay_pending", replay_.size());
  w->Field("instance", instance_);
  w->Field("probes", c_.probes);
  w->Field("shard_synced_seq", shard_synced_);
  w->Flag("waiting_slot_release", waiting_release_, "clickatron_api_realtime_slot_waiting_slot_release",
          "1 while the stream of a ring slot waits for the nightly to release it (503 SLOT_NOT_RELEASED).");
  w->Field("ring_changed", ring_changed_);
  w->Field("last_error", last_error_);
  const LatencySnapshot lag = lag_.Snapshot();
  w->BeginObject("delivery_lag_ms");
  w->Field("rounds", lag.count());
  w->Field("p50", double(lag.Quantile(0.5)) / 1000);
  w->Field("p99", double(lag.Quantile(0.99)) / 1000);
  w->Field("max", double(lag.max_micros()) / 1000);
  w->EndObject();
  w->EndObject();
}

}  // namespace clickatron
