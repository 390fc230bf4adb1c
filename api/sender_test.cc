// The senders of a shard (one per ring slot) against a scripted realtime shard: late parts
// (409 DAY_CLOSED / DAY_EXPIRED) go to the late store, once; SOURCE_IN_USE waits; a source
// mark past the oplog head stops delivery; every /incr names the sender; a slot that waits
// (503 SLOT_NOT_RELEASED) does not hold back the others.
#include "api/sender.h"
#include "api/shard_delivery.h"

#include <event2/event.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/late_store.h"
#include "base/test_dir.h"
#include "keyformat/day_ring.h"
#include "keyformat/ymdh.h"
#include "net/http_client.h"
#include "net/json.h"
#include "net/stats_writer.h"
#include "net/request.h"
#include "net/test_server.h"
#include "oplog/oplog.h"
#include "wire/headers.h"

namespace clickatron {
namespace {

const int64_t kOld = *ParseDay("2026-11-20");  // the day the shard refuses
const int64_t kNew = kOld + 1;
constexpr char kSenderId[] = "0123456789abcdef";

// What the fake shard answers, and what it was sent. Handlers run on the server's thread.
struct Shard {
  std::mutex mu;
  std::string refusal = "DAY_CLOSED";  // for /set of kOld and /incr holding "u|old"
  bool refuse_set = true;
  bool incr_duplicate = false;         // answer an "u|old" /incr 200 with everything duplicate
  int source_in_use = 0;               // answer this many /incr 409 SOURCE_IN_USE first
  bool hold_new = false;               // answer an "u|new" /incr 503 SLOT_NOT_RELEASED
  int bad_request = 0;                 // answer this many /incr 400 COUNTER_OVERFLOW first
  std::string synced;                  // X-Realtime-Synced-Seq on other 200 /incr answers, "" none
  std::string source_mark;             // X-Realtime-Source-Mark on /incr answers, "" none
  std::vector<std::string> requests;   // "/set?<query>\nbody", "/incr\nbody"
  std::vector<std::string> senders;    // X-Clickatron-Sender of each /incr ("-" none)
  std::string instance = "00000000000000aa";  // X-Realtime-Instance of every answer
  int pings = 0;

  void Setup(net::Server& server) {
    server.Handle("/ping", [this](net::Request& req) {
      std::lock_guard<std::mutex> lock(mu);
      pings++;
      req.AddHeader(wire::kInstanceHeader, instance.c_str());
      req.Reply(200, "OK\n");
    });
    server.Handle("/set", [this](net::Request& req) {
      std::lock_guard<std::mutex> lock(mu);
      requests.push_back(std::string(req.path()) + "?" + std::string(req.raw_query()) + "\n" + std::string(req.body()));
      req.AddHeader(wire::kInstanceHeader, instance.c_str());
      if (refuse_set && req.raw_query() == "day=" + FormatDay(kOld)) {
        req.ReplyJsonError(409, refusal, "day " + FormatDay(kOld) + " is closed");
        return;
      }
      req.ReplyJson(200, "OK", "{\"set\":1}");
    });
    server.Handle("/incr", [this](net::Request& req) {
      std::lock_guard<std::mutex> lock(mu);
      const std::string body(req.body());
      requests.push_back("/incr\n" + body);
      const char* sender = req.Header(wire::kSenderHeader);
      senders.push_back(sender ? sender : "-");
      req.AddHeader(wire::kInstanceHeader, instance.c_str());
      if (!source_mark.empty()) req.AddHeader(wire::kSourceMarkHeader, source_mark.c_str());
      if (source_in_use > 0) {
        source_in_use--;
        req.ReplyJsonError(409, "SOURCE_IN_USE", "source 'api-1' is written by another sender");
        return;
      }
      const size_t lines = size_t(std::count(body.begin(), body.end(), '\n'));
      if (bad_request > 0) {
        bad_request--;
        req.ReplyJsonError(400, "COUNTER_OVERFLOW", "line 1: counter 'u|new.c41m' would overflow int64 adding 7");
        return;
      }
      if (hold_new && body.find("u|new") != std::string::npos) {
        req.ReplyJsonError(503, "SLOT_NOT_RELEASED", "slot 2 holds day 2026-11-18, not released");
        return;
      }
      if (body.find("u|old") != std::string::npos) {
        if (incr_duplicate) {
          req.AddHeader(wire::kSyncedSeqHeader, "1");
          req.ReplyJson(200, "OK", "{\"applied\":0,\"duplicate\":" + std::to_string(lines) + ",\"seq\":1}");
          return;
        }
        req.ReplyJsonError(409, refusal, "day " + FormatDay(kOld) + " is closed");
        return;
      }
      if (!synced.empty()) req.AddHeader(wire::kSyncedSeqHeader, synced.c_str());
      req.ReplyJson(200, "OK", "{\"applied\":" + std::to_string(lines) + ",\"duplicate\":0,\"seq\":1}");
    });
  }
  size_t Count(std::string_view prefix) {
    std::lock_guard<std::mutex> lock(mu);
    return size_t(std::count_if(requests.begin(), requests.end(),
                                [&](const std::string& r) { return r.starts_with(prefix); }));
  }
};

class SenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = event_base_new();
    client_ = std::make_unique<net::HttpClient>(base_);
    oplog::Options o;
    o.sync = oplog::SyncPolicy::kNone;
    o.prepare_segments = false;
    Result<std::unique_ptr<oplog::Oplog>> log = oplog::Oplog::Open(dir_.path(), o);
    ASSERT_TRUE(log.ok()) << log.status().message();
    log_ = std::move(log).value();
    OpenLate();
  }
  void TearDown() override {
    sender_.reset();
    client_.reset();
    late_.reset();
    log_.reset();
    event_base_free(base_);
  }
  void OpenLate() {
    late_.reset();
    Result<std::unique_ptr<LateStore>> late = LateStore::Open(dir_.path());
    ASSERT_TRUE(late.ok()) << late.status().message();
    late_ = std::move(late).value();
  }
  void StartSender() {
    // Appended records become readable when the sync thread has written them; the API
    // kicks its senders after each sync, this test starts the sender after one.
    ASSERT_TRUE(log_->Sync().ok());
    SenderOptions options;
    options.sender_id = kSenderId;
    options.backoff_initial_ms = 1;
    options.backoff_max_ms = 5;
    options.min_round_interval_ms = 0;
    options.cursor_lag_ms = 3'600'000;  // rounds stay in doubt: a new sender re-sends them
    options.probe_initial_ms = probe_ms_;
    options.probe_max_ms = probe_ms_;
    sender_ = std::make_unique<ShardDelivery>(base_, client_.get(), log_.get(), &times_, late_.get(), 0,
                                              server_.address(), "api-1", options);
    Status s = sender_->Start(log_->last_seq());
    ASSERT_TRUE(s.ok()) << s.message();
  }
  // One oplog record: for shard 0, a lookup and two counters of kOld, a counter of kNew.
  void AppendRecord() {
    const std::string o = std::to_string(kOld), n = std::to_string(kNew);
    Result<uint64_t> seq = log_->Append("0 " + o + " _l|AAAAAAAAAAA=,http://a/\n0 " + o + " u|old.c41l,2\n0 " + o +
                                        " u|old.c41l,3\n0 " + o + " c.u|old.US.c41l,1\n0 " + n + " u|new.c41m,7\n");
    ASSERT_TRUE(seq.ok()) << seq.status().message();
  }
  bool RunUntil(const std::function<bool()>& done, int timeout_ms = 10000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    sender_->Kick();
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      event_base_loop(base_, EVLOOP_ONCE | EVLOOP_NONBLOCK);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
  }
  std::string Stats() {
    std::string out;
    net::StatsWriter w(&out, nullptr);
    sender_->WriteStatsJson(&w, log_->last_seq());
    return out;
  }

  TestDir dir_;
  int probe_ms_ = 100'000;  // no probe unless a test asks
  Shard shard_;
  net::TestServer server_{[this](net::Server& s) { shard_.Setup(s); }};
  event_base* base_ = nullptr;
  std::unique_ptr<net::HttpClient> client_;
  std::unique_ptr<oplog::Oplog> log_;
  std::unique_ptr<LateStore> late_;
  AppendTimes times_;
  std::unique_ptr<ShardDelivery> sender_;  // the three streams of shard 0
};

class LatePartTest : public SenderTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(LatePartTest, ARefusedDayGoesToTheLateStoreAndDeliveryGoesOn) {
  shard_.refusal = GetParam();
  AppendRecord();
  StartSender();
  ASSERT_TRUE(RunUntil([&] { return sender_->cursor() == 1 && sender_->idle(); }));
  // The refused /set's lookups and the refused /incr's counters, summed as sent.
  std::vector<LatePart> parts;
  bool more = false;
  ASSERT_TRUE(late_->ReadAfter(0, 1 << 20, [&](const LateEntry& e) {
                      EXPECT_EQ(e.id, 1u);
                      EXPECT_EQ(e.part.shard, 0u);
                      EXPECT_EQ(e.part.day, kOld);
                      EXPECT_EQ(e.part.seq, 1u);
                      EXPECT_EQ(e.part.records, 4u);
                      EXPECT_EQ(e.part.lookups, "_l|AAAAAAAAAAA=,http://a/\n");
                      EXPECT_EQ(e.part.counters, "c.u|old.US.c41l,1\nu|old.c41l,5\n");
                      parts.push_back(e.part);
                      return Status::OK();
                    }, &more).ok());
  EXPECT_EQ(parts.size(), 1u);
  EXPECT_EQ(late_->Mark(0, kOld), 1u);
  // The other day went on to the shard.
  EXPECT_EQ(shard_.Count("/incr\nu|new.c41m,7\n"), 1u);
  EXPECT_EQ(sender_->late_records(), 4u);
  EXPECT_EQ(sender_->delivered_records(), 1u);
  const std::string stats = Stats();
  EXPECT_NE(stats.find("\"late_records\":4,\"late_parts\":1,\"late_duplicate_parts\":0"), std::string::npos) << stats;
  EXPECT_EQ(stats.find("expired"), std::string::npos) << stats;
  // Every /incr named this sender.
  std::lock_guard<std::mutex> lock(shard_.mu);
  ASSERT_EQ(shard_.senders.size(), 2u);
  for (const std::string& s : shard_.senders) EXPECT_EQ(s, kSenderId);
}

INSTANTIATE_TEST_SUITE_P(Refusals, LatePartTest, ::testing::Values("DAY_CLOSED", "DAY_EXPIRED"));

TEST_F(SenderTest, ARoundSentAgainIsStoredOnce) {
  AppendRecord();
  StartSender();
  ASSERT_TRUE(RunUntil([&] { return sender_->cursor() == 1 && sender_->idle(); }));
  EXPECT_EQ(late_->Stats().entries, 1u);
  // An API that crashed: the round is still in doubt (the shard never said it synced it),
  // so the next process sends it again, and the shard refuses it again.
  sender_.reset();
  OpenLate();
  StartSender();
  ASSERT_TRUE(RunUntil([&] { return shard_.Count("/incr\nc.u|old") == 2 && sender_->idle(); }));
  EXPECT_EQ(sender_->cursor(), 1u);
  EXPECT_EQ(late_->Stats().entries, 1u);
  EXPECT_EQ(late_->Stats().duplicate_parts, 1u);
  EXPECT_EQ(sender_->late_records(), 0u);
  EXPECT_NE(Stats().find("\"late_parts\":0,\"late_duplicate_parts\":1"), std::string::npos) << Stats();
}

TEST_F(SenderTest, ALatePartKeepsItsLookupsEvenWhenTheSetWentThrough) {
  // The day closed between the /set and the /incr (or its slot may be reused before the
  // nightly exports it): the part's lookups go with its counters.
  shard_.refuse_set = false;
  AppendRecord();
  StartSender();
  ASSERT_TRUE(RunUntil([&] { return sender_->cursor() == 1 && sender_->idle(); }));
  bool more = false;
  size_t n = 0;
  ASSERT_TRUE(late_->ReadAfter(0, 1 << 20, [&](const LateEntry& e) {
                      EXPECT_EQ(e.part.lookups, "_l|AAAAAAAAAAA=,http://a/\n");
                      EXPECT_EQ(e.part.counters, "c.u|old.US.c41l,1\nu|old.c41l,5\n");
                      n++;
                      return Status::OK();
                    }, &more).ok());
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(shard_.Count("/set?day=" + FormatDay(kOld)), 1u);
}

TEST_F(SenderTest, RefusedLookupsOfAPartAppliedBeforeAreNotLate) {
  // The /set is refused but the /incr says every line is a duplicate: the part went
  // through before, lookups first.
  shard_.incr_duplicate = true;
  AppendRecord();
  StartSender();
  ASSERT_TRUE(RunUntil([&] { return sender_->cursor() == 1 && sender_->idle(); }));
  EXPECT_EQ(late_->Stats().entries, 0u);
  EXPECT_EQ(shard_.Count("/set?day=" + FormatDay(kOld)), 1u);
  EXPECT_EQ(sender_->late_records(), 0u);
  EXPECT_EQ(sender_->delivered_records(), 5u);
}

TEST_F(SenderTest, LookupsAloneRefusedAreLate) {
  Result<uint64_t> seq = log_->Append("0 " + std::to_string(kOld) + " _l|AAAAAAAAAAA=,http://a/\n");
  ASSERT_TRUE(seq.ok());
  StartSender();
  ASSERT_TRUE(RunUntil([&] { return sender_->cursor() == 1 && sender_->idle(); }));
  EXPECT_EQ(late_->Stats().entries, 1u);
  EXPECT_EQ(late_->Stats().lines, 1u);
  EXPECT_EQ(shard_.Count("/incr"), 0u);
}

TEST_F(SenderTest, SourceInUseWaitsAndReports) {
  shard_.refuse_set = false;
  shard_.source_in_use = 3;
  ASSERT_TRUE(log_->Append("0 " + std::to_string(kNew) + " u|new.c41m,7\n").ok());
  StartSender();
  ASSERT_TRUE(RunUntil([&] { return shard_.Count("/incr") >= 2; }));
  EXPECT_NE(Stats().find("\"source_in_use\":true"), std::string::npos) << Stats();
  EXPECT_NE(Stats().find("is written by another sender"), std::string::npos) << Stats();
  EXPECT_EQ(sender_->cursor(), 0u);
  ASSERT_TRUE(RunUntil([&] { return sender_->cursor() == 1 && sender_->idle(); }));
  EXPECT_EQ(shard_.Count("/incr"), 4u);
  EXPECT_NE(Stats().find("\"source_in_use\":false,\"source_in_use_refusals\":3"), std::string::npos) << Stats();
}

TEST_F(SenderTest, ASourceMarkPastTheOplogHeadStopsDelivery) {
  // The shard holds seq 1000 of this source, but this oplog ends at 1: someone else writes
  // as api-1 (or this oplog was reset). Not delivered, however often it is retried.
  shard_.source_mark = "1000";
  ASSERT_TRUE(log_->Append("0 " + std::to_string(kNew) + " u|new.c41m,7\n").ok());
  StartSender();
  ASSERT_TRUE(RunUntil([&] { return shard_.Count("/incr") >= 3; }));
  EXPECT_EQ(sender_->cursor(), 0u);
  EXPECT_EQ(sender_->delivered_records(), 0u);
  const std::string stats = Stats();
  EXPECT_NE(stats.find("\"source_conflict\":true"), std::string::npos) << stats;
  EXPECT_NE(stats.find("SOURCE_CONFLICT: the shard holds seq 1000 of source 'api-1' for day 2026-11-21, past "
                       "this API's oplog head 1"),
            std::string::npos)
      << stats;
  {
    std::lock_guard<std::mutex> lock(shard_.mu);
    shard_.source_mark = "1";  // its own mark: fine
  }
  ASSERT_TRUE(RunUntil([&] { return sender_->cursor() == 1 && sender_->idle(); }));
  EXPECT_NE(Stats().find("\"source_conflict\":false"), std::string::npos) << Stats();
  EXPECT_EQ(sender_->delivered_records(), 1u);
}

TEST_F(SenderTest, ASlotWaitingForItsReleaseDoesNotHoldBackTheOthers) {
  // Tomorrow (kNew) waits for its slot; a later record of another slot's day goes through.
  shard_.refuse_set = false;
  shard_.hold_new = true;
  const int64_t other = kOld + 2;  // the third slot
  ASSERT_TRUE(log_->Append("0 " + std::to_string(kNew) + " u|new.c41m,7\n").ok());
  ASSERT_TRUE(log_->Append("0 " + std::to_string(other) + " u|today.c41n,4\n").ok());
  StartSender();
  ASSERT_TRUE(RunUntil([&] { return shard_.Count("/incr\nu|today.c41n,4\n") == 1 && shard_.Count("/incr\nu|new") >= 3; }));
  EXPECT_EQ(sender_->cursor(), 0u);  // the shard's backlog starts at the waiting stream
  EXPECT_EQ(sender_->stream(SlotOfDay(other)).cursor(), 2u);
  EXPECT_EQ(sender_->delivered_records(), 1u);
  const std::string stats = Stats();
  EXPECT_NE(stats.find("\"waiting_slot_release\":true,\"waiting_slot_release_message\":\"day 2026-11-21: "),
            std::string::npos) << stats;
  EXPECT_NE(stats.find("\"backlog_records\":2"), std::string::npos) << stats;
  {
    std::lock_guard<std::mutex> lock(shard_.mu);
    shard_.hold_new = false;  // the nightly released the slot
  }
  ASSERT_TRUE(RunUntil([&] { return sender_->cursor() == 2 && sender_->idle(); }));
  EXPECT_EQ(sender_->delivered_records(), 2u);
  EXPECT_NE(Stats().find("\"waiting_slot_release\":false"), std::string::npos) << Stats();
}

TEST_F(SenderTest, ARoundIsSettledOnlyByASyncedSeqAboveEverySeqSentBeforeItsAnswer) {
  // The shard reports one synced seq per source, and the streams interleave their seqs: a
  // synced seq equal to a round's end may come from a flush before the round was applied.
  shard_.refuse_set = false;
  shard_.synced = "1";
  ASSERT_TRUE(log_->Append("0 " + std::to_string(kNew) + " u|new.c41m,7\n").ok());
  StartSender();
  ASSERT_TRUE(RunUntil([&] { return sender_->cursor() == 1 && sender_->idle(); }));
  EXPECT_NE(Stats().find("\"rounds_in_doubt\":1"), std::string::npos) << Stats();
  {
    std::lock_guard<std::mutex> lock(shard_.mu);
    shard_.synced = "2";
  }
  ASSERT_TRUE(log_->Append("0 " + std::to_string(kNew) + " u|new.c41m,1\n").ok());
  ASSERT_TRUE(log_->Sync().ok());
  ASSERT_TRUE(RunUntil([&] { return sender_->cursor() == 2 && sender_->idle(); }));
  // Round 1 is settled (2 > 1); round 2 is not (2 was sent before its answer).
  EXPECT_NE(Stats().find("\"rounds_in_doubt\":1"), std::string::npos) << Stats();
  EXPECT_EQ(log_->cursor(Sender::CursorName(0, SlotOfDay(kNew))), 1u);
}

TEST_F(SenderTest, AnIdleStreamWithRoundsInDoubtProbesAndResendsThemToANewInstance) {
  // The round is acknowledged and nothing follows it; the shard restarts (a new instance
  // answers /ping). Without the probe nothing would ever re-send the round it may have lost.
  shard_.refuse_set = false;
  probe_ms_ = 2;
  ASSERT_TRUE(log_->Append("0 " + std::to_string(kNew) + " u|new.c41m,7\n").ok());
  StartSender();
  ASSERT_TRUE(RunUntil([&] { return sender_->cursor() == 1 && sender_->idle(); }));
  // Same instance: probes go on, nothing is re-sent, the round stays in doubt.
  ASSERT_TRUE(RunUntil([&] {
    std::lock_guard<std::mutex> lock(shard_.mu);
    return shard_.pings >= 3;
  }));
  EXPECT_EQ(shard_.Count("/incr\nu|new.c41m,7\n"), 1u);
  EXPECT_NE(Stats().find("\"rounds_in_doubt\":1"), std::string::npos) << Stats();
  {
    std::lock_guard<std::mutex> lock(shard_.mu);
    shard_.instance = "00000000000000bb";
  }
  ASSERT_TRUE(RunUntil([&] { return shard_.Count("/incr\nu|new.c41m,7\n") == 2 && sender_->idle(); }));
  const std::string stats = Stats();
  EXPECT_NE(stats.find("\"shard_restarts\":1"), std::string::npos) << stats;
  EXPECT_NE(stats.find("\"rewinds\":1"), std::string::npos) << stats;
  EXPECT_NE(stats.find("\"instance\":\"00000000000000bb\""), std::string::npos) << stats;
  EXPECT_EQ(sender_->delivered_records(), 2u);  // once per send; the shard skips the duplicate
}

TEST_F(SenderTest, AnUnexpected400IsRetriedAndNothingIsDropped) {
  // An acknowledged increment is never dropped: whatever the shard answers, the round is
  // retried whole until it is taken (the shard's counters do not overflow: 128 bits).
  shard_.refuse_set = false;
  shard_.bad_request = 3;
  ASSERT_TRUE(log_->Append("0 " + std::to_string(kNew) + " u|new.c41m,7\n0 " + std::to_string(kNew) +
                           " u|two.c41m,2\n").ok());
  StartSender();
  ASSERT_TRUE(RunUntil([&] { return sender_->cursor() == 1 && sender_->idle(); }));
  EXPECT_EQ(shard_.Count("/incr\nu|new.c41m,7\nu|two.c41m,2\n"), 4u);
  EXPECT_EQ(sender_->delivered_records(), 2u);
  const std::string stats = Stats();
  EXPECT_NE(stats.find("COUNTER_OVERFLOW"), std::string::npos) << stats;  // last_error
  EXPECT_EQ(stats.find("overflow_records"), std::string::npos) << stats;
}

}  // namespace
}  // namespace clickatron
