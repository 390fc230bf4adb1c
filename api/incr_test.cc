// Tests of the write path's pure parts: /incr parameters, the oplog payload, the rounds
// file and the append-time index.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "api/delivery_rounds.h"
#include "api/incr_event.h"
#include "api/incr_payload.h"
#include "api/sender.h"
#include "base/test_dir.h"
#include "keyformat/event.h"
#include "keyformat/shard.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"
#include "net/query.h"

namespace clickatron {
namespace {

// 2012-03-25 01:30 UTC, the hour `c3p1` of docs/formats.md#hours-ymdh.
constexpr int64_t kTs = 1332639000;
constexpr int64_t kNow = kTs;

struct Parsed {
  bool ok;
  Event event;
  IncrError error;
};

// Parses a query string the way the server does. The Query must outlive the Event.
Parsed ParseQs(net::Query* q, std::string_view qs, int64_t now = kNow) {
  Parsed p;
  clickatron::Status s = q->Parse(qs);
  if (!s.ok()) {
    p.ok = false;
    p.error = QueryDecodeError(q->bad_param(), s.message());
    return p;
  }
  p.ok = ParseIncrEvent(q->params(), now, &p.event, &p.error);
  return p;
}

std::string ErrorOf(std::string_view qs, int64_t now = kNow) {
  net::Query q;
  Parsed p = ParseQs(&q, qs, now);
  return p.ok ? "OK" : p.error.status_txt;
}

TEST(IncrEvent, DefaultsAndFields) {
  net::Query q;
  Parsed p = ParseQs(&q, "ns=u&key=jehiah");
  ASSERT_TRUE(p.ok) << p.error.message;
  EXPECT_EQ(p.event.ns, "u");
  EXPECT_EQ(p.event.key, "jehiah");
  EXPECT_EQ(p.event.value, 1);
  EXPECT_EQ(p.event.ts, kNow);
  EXPECT_TRUE(p.event.subs.empty());

  p = ParseQs(&q, "ns=u&key=jehiah&value=-7&ts=1332637200&sub=country:US&sub=ref:http%3A%2F%2Fbit.ly%2Fx");
  ASSERT_TRUE(p.ok) << p.error.message;
  EXPECT_EQ(p.event.value, -7);
  EXPECT_EQ(p.event.ts, 1332637200);
  ASSERT_EQ(p.event.subs.size(), 2u);
  EXPECT_EQ(p.event.subs[0].subns, "country");
  EXPECT_EQ(p.event.subs[0].subkey, "US");
  // Split at the first ':' only: the subkey keeps its own.
  EXPECT_EQ(p.event.subs[1].subns, "ref");
  EXPECT_EQ(p.event.subs[1].subkey, "http://bit.ly/x");
}

TEST(IncrEvent, EveryErrorNamesItsParameter) {
  EXPECT_EQ(ErrorOf("key=a"), "MISSING_ARG_NS");
  EXPECT_EQ(ErrorOf("ns=&key=a"), "MISSING_ARG_NS");
  EXPECT_EQ(ErrorOf("ns=u"), "MISSING_ARG_KEY");
  EXPECT_EQ(ErrorOf("ns=u&key="), "MISSING_ARG_KEY");
  EXPECT_EQ(ErrorOf("ns=_l&key=a"), "INVALID_ARG_NS");
  EXPECT_EQ(ErrorOf("ns=a.b&key=a"), "INVALID_ARG_NS");
  EXPECT_EQ(ErrorOf("ns=abcdefghijklmnopq&key=a"), "INVALID_ARG_NS");  // 17 characters
  EXPECT_EQ(ErrorOf("ns=abcdefghijklmnop&key=a"), "OK");               // 16
  EXPECT_EQ(ErrorOf("ns=u&key=" + std::string(4097, 'x')), "INVALID_ARG_KEY");
  EXPECT_EQ(ErrorOf("ns=u&key=" + std::string(4096, 'x')), "OK");
  EXPECT_EQ(ErrorOf("ns=u&key=a&value=0"), "INVALID_ARG_VALUE");
  EXPECT_EQ(ErrorOf("ns=u&key=a&value=1.5"), "INVALID_ARG_VALUE");
  EXPECT_EQ(ErrorOf("ns=u&key=a&value=x"), "INVALID_ARG_VALUE");
  EXPECT_EQ(ErrorOf("ns=u&key=a&value="), "INVALID_ARG_VALUE");
  EXPECT_EQ(ErrorOf("ns=u&key=a&value=9223372036854775808"), "INVALID_ARG_VALUE");
  EXPECT_EQ(ErrorOf("ns=u&key=a&value=9223372036854775807"), "OK");
  EXPECT_EQ(ErrorOf("ns=u&key=a&value=-9223372036854775808"), "OK");
  EXPECT_EQ(ErrorOf("ns=u&key=a&ts=abc"), "INVALID_ARG_TS");
  EXPECT_EQ(ErrorOf("ns=u&key=a&ts=1e9"), "INVALID_ARG_TS");
  EXPECT_EQ(ErrorOf("ns=u&key=a&ts="), "INVALID_ARG_TS");
  EXPECT_EQ(ErrorOf("ns=u&key=a&sub=US"), "INVALID_ARG_SUB");
  EXPECT_EQ(ErrorOf("ns=u&key=a&sub=:US"), "INVALID_ARG_SUB");
  EXPECT_EQ(ErrorOf("ns=u&key=a&sub=c:"), "INVALID_ARG_SUB");
  EXPECT_EQ(ErrorOf("ns=u&key=a&sub=c:US&sub=c:FR"), "INVALID_ARG_SUB");
  EXPECT_EQ(ErrorOf("ns=u&key=a&sub=_x:US"), "INVALID_ARG_SUB");
  EXPECT_EQ(ErrorOf("ns=u&key=a&vaule=5"), "UNKNOWN_ARG");
  EXPECT_EQ(ErrorOf("ns=u&ns=v&key=a"), "INVALID_ARG_NS");
  EXPECT_EQ(ErrorOf("ns=u&key=a&key=b"), "INVALID_ARG_KEY");
  EXPECT_EQ(ErrorOf("ns=u&key=%zz"), "INVALID_ARG_KEY");
  EXPECT_EQ(ErrorOf("ns=u&key=a&x%zz=1"), "UNKNOWN_ARG");
}

TEST(IncrEvent, TsWindowIsTheRealtimeRing) {
  // now = 2012-03-25 01:30: yesterday 00:00 = 2012-03-24 00:00 (1332547200); tomorrow
  // 23:59:59 = 2012-03-26 23:59:59 (1332806399).
  const TsWindow w = TsWindowAt(kNow);
  EXPECT_EQ(w.first, 1332547200);
  EXPECT_EQ(w.last, 1332806399);
  EXPECT_EQ(ErrorOf("ns=u&key=a&ts=1332547200"), "OK");
  EXPECT_EQ(ErrorOf("ns=u&key=a&ts=1332547199"), "TS_TOO_OLD");
  EXPECT_EQ(ErrorOf("ns=u&key=a&ts=1332806399"), "OK");
  EXPECT_EQ(ErrorOf("ns=u&key=a&ts=1332806400"), "TS_IN_FUTURE");
  EXPECT_EQ(ErrorOf("ns=u&key=a&ts=-5"), "TS_TOO_OLD");
  EXPECT_EQ(ErrorOf("ns=u&key=a&ts=99999999999999"), "TS_IN_FUTURE");
  net::Query q;
  Parsed p = ParseQs(&q, "ns=u&key=a&ts=1332547199");
  EXPECT_NE(p.error.message.find("2012-03-24"), std::string::npos) << p.error.message;
}

// Decodes a payload into "shard day key,value" strings.
std::vector<std::string> Lines(const std::string& payload) {
  std::vector<std::string> out;
  PayloadReader r(payload);
  PayloadLine line;
  while (r.Next(&line)) {
    out.push_back(std::to_string(line.shard) + " " + std::to_string(line.day) + " " +
                  std::string(line.key) + "," + std::string(line.value));
    if (!line.lookup) {
      EXPECT_EQ(std::to_string(line.delta), line.value);
    }
  }
  EXPECT_TRUE(r.status().ok()) << r.status().message();
  return out;
}

TEST(IncrPayload, SameRecordsAsKeyformatEncodeEvent) {
  const std::string url = "http://www.facebook.com/";
  Event e;
  e.ns = "u";
  e.key = "jehiah";
  e.ts = kTs;
  e.value = 3;
  e.subs = {{"country", "US"}, {"ref", url}, {"ref2", url}};
  ASSERT_TRUE(ValidateEvent(e, nullptr));
  std::string payload, scratch;
  AppendEventLines(e, 2, &payload, &scratch);

  std::vector<RealtimeRecord> records;
  EncodeEvent(e, &records);
  std::map<std::string, std::string> want;
  for (const RealtimeRecord& r : records) {
    const std::string shard_key = r.type == RecordType::kLookup ? r.key : "u|jehiah";
    want[r.key] = std::to_string(ShardOf(shard_key, 2)) + " " + std::to_string(kTs / 86400) + " " +
                  r.key + "," + r.value;
  }
  std::map<std::string, std::string> got;
  for (const std::string& line : Lines(payload)) {
    const size_t sp = line.find(' ', line.find(' ') + 1);
    const std::string key = line.substr(sp + 1, line.find(',', sp) - sp - 1);
    EXPECT_TRUE(got.emplace(key, line).second) << "duplicate line " << line;
  }
  EXPECT_EQ(got, want);
  // The hash of docs/formats.md#keys-and-hashes, and its lookup written once although two subtotals carry it.
  EXPECT_EQ(got.count("_l|h0aMB8AuNw4="), 1u);
  EXPECT_EQ(got["_l|h0aMB8AuNw4="].substr(got["_l|h0aMB8AuNw4="].find(',') + 1), url);
}

TEST(IncrPayload, HashedKeyRoutesByItsHash) {
  Event e;
  e.ns = "u";
  e.key = "a key, with\nnewline%";
  e.ts = kTs;
  std::string payload, scratch;
  AppendEventLines(e, 7, &payload, &scratch);
  const std::string hash = KeyHash(e.key);
  const std::vector<std::string> lines = Lines(payload);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], std::to_string(ShardOf("u|" + hash, 7)) + " 15424 u|" + hash + ".c3p1,1");
  EXPECT_EQ(lines[1], std::to_string(ShardOf("_l|" + hash, 7)) + " 15424 _l|" + hash +
                          ",a key, with%0Anewline%25");
}

// Found by fuzz/incr_fuzz.cc: the check that writes a lookup once per event searched the
// event's lines for "_l|<hash>," anywhere, so a key whose original text holds that string
// (stored escaped in its own lookup line) made the subkey's lookup line look written: it
// was dropped, and the subkey's original was never stored.
TEST(IncrPayload, ALookupTextInsideAnotherValueDoesNotDropTheLookup) {
  const std::string subkey = "http://www.facebook.com/";
  const std::string key = "mentions _l|" + KeyHash(subkey) + ",x";  // hashed: over 11 bytes
  Event e;
  e.ns = "u";
  e.key = key;
  e.ts = kTs;
  e.subs = {{"ref", subkey}};
  ASSERT_TRUE(ValidateEvent(e, nullptr));
  std::string payload, scratch;
  AppendEventLines(e, 3, &payload, &scratch);
  std::vector<RealtimeRecord> records;
  EncodeEvent(e, &records);
  std::vector<std::string> want;
  for (const RealtimeRecord& r : records) want.push_back(r.key + "," + r.value);
  std::vector<std::string> got;
  for (const std::string& line : Lines(payload)) {
    got.push_back(line.substr(line.find(' ', line.find(' ') + 1) + 1));
  }
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
  EXPECT_NE(std::find(got.begin(), got.end(), "_l|" + KeyHash(subkey) + "," + subkey), got.end());
}

TEST(IncrPayload, ShardOfGoldenKey) {
  // crc32("u|jehiah") = 3573330444 (docs/formats.md#sharding): shard 3573330444 % 5 = 4.
  Event e;
  e.ns = "u";
  e.key = "jehiah";
  e.ts = kTs;
  std::string payload, scratch;
  AppendEventLines(e, 5, &payload, &scratch);
  EXPECT_EQ(Lines(payload), std::vector<std::string>{"4 15424 u|jehiah.c3p1,1"});
}

TEST(IncrPayload, MalformedLinesAreErrors) {
  for (const char* bad : {"x 1 k,1\n", "0 x k,1\n", "0 1 k1\n", "0 1 k,1", "0 1 k,abc\n", "0 1 ,1\n"}) {
    PayloadReader r(bad);
    PayloadLine line;
    EXPECT_FALSE(r.Next(&line)) << bad;
    EXPECT_FALSE(r.status().ok()) << bad;
  }
}

// Found by fuzz/incr_payload_fuzz.cc: a shard past uint32 was wrapped (4294967296 read as
// shard 0, a line for another shard), and a day past int64 became negative.
TEST(IncrPayload, NumbersOutOfRangeAreErrorsNotWrapped) {
  for (const char* bad : {"4294967296 20537 u|a.c3p1,1\n", "3133333333330 20537 u|a.c3p1,1\n",
                          "0 9223372036854775808 u|a.c3p1,1\n"}) {
    PayloadReader r(bad);
    PayloadLine line;
    EXPECT_FALSE(r.Next(&line)) << bad << " read as shard " << line.shard << " day " << line.day;
    EXPECT_FALSE(r.status().ok()) << bad;
  }
  PayloadReader r("4294967295 9223372036854775807 u|a.c3p1,1\n");
  PayloadLine line;
  ASSERT_TRUE(r.Next(&line)) << r.status().message();
  EXPECT_EQ(line.shard, 4294967295u);
  EXPECT_EQ(line.day, INT64_MAX);
}

// The idempotency stamp (docs/formats.md#oplog-record): the record's last line, written and
// read back, and skipped by every PayloadReader, so a sender never sends it.
TEST(IncrPayload, IdempotencyStampRoundTripsAndIsSkippedByReaders) {
  Event e;
  e.ns = "u";
  e.key = "jehiah";
  e.ts = kTs;
  std::string payload, scratch;
  AppendEventLines(e, 5, &payload, &scratch);
  const std::vector<std::string> lines = Lines(payload);
  const RequestDigest digest{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  AppendIdempotencyLine(IdempotencyStamp{1764000000, 7, digest, "batch-0042"}, &payload);
  EXPECT_EQ(payload, "4 15424 u|jehiah.c3p1,1\n"
                     "!idempotency 1764000000 7 0123456789abcdeffedcba9876543210 batch-0042\n");
  EXPECT_EQ(Lines(payload), lines);
  IdempotencyStamp stamp;
  bool found = false;
  ASSERT_TRUE(ReadIdempotencyStamp(payload, &stamp, &found).ok());
  ASSERT_TRUE(found);
  EXPECT_EQ(stamp.accepted_at, 1764000000);
  EXPECT_EQ(stamp.events, 7u);
  EXPECT_EQ(stamp.digest, digest);
  EXPECT_EQ(stamp.key, "batch-0042");
  // A record without a stamp (every unkeyed request), and annotation lines anywhere.
  ASSERT_TRUE(ReadIdempotencyStamp("4 15424 u|jehiah.c3p1,1\n", &stamp, &found).ok());
  EXPECT_FALSE(found);
  EXPECT_EQ(Lines("!a\n4 15424 u|a.c3p1,1\n!b\n!c\n0 15424 u|b.c3p1,2\n!d\n"),
            (std::vector<std::string>{"4 15424 u|a.c3p1,1", "0 15424 u|b.c3p1,2"}));
  EXPECT_TRUE(Lines("!only\n").empty());
  PayloadReader torn("4 15424 u|a.c3p1,1\n!no newline");
  PayloadLine line;
  EXPECT_TRUE(torn.Next(&line));
  EXPECT_FALSE(torn.Next(&line));
  EXPECT_FALSE(torn.status().ok());
}

TEST(IncrPayload, MalformedIdempotencyStampsAreErrors) {
  const std::string d = "0123456789abcdeffedcba9876543210";
  for (const std::string& bad : std::vector<std::string>{
           "!idempotency x 1 " + d + " k\n", "!idempotency -1 1 " + d + " k\n", "!idempotency 01 1 " + d + " k\n",
           "!idempotency 1 00 " + d + " k\n", "!idempotency +1 1 " + d + " k\n", "!idempotency 1 -1 " + d + " k\n",
           "!idempotency 1 1 " + d.substr(1) + " k\n", "!idempotency 1 1 " + d + "Z k\n",
           "!idempotency 1 1 0123456789ABCDEFfedcba9876543210 k\n", "!idempotency 1 1 " + d + "\n",
           "!idempotency 1 1 " + d + " \n", "!idempotency 1 1 " + d + " a b\n", "!idempotency 1 1 " + d + " \"k\"\n",
           "!idempotency 1 1 " + d + " " + std::string(256, 'k') + "\n", "!idempotency 1 1\n", "!idempotency \n"}) {
    IdempotencyStamp stamp;
    bool found = true;
    Status s = ReadIdempotencyStamp("0 1 u|a.c3p1,1\n" + bad, &stamp, &found);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_FALSE(found) << bad;
    EXPECT_NE(s.message().find("malformed idempotency line"), std::string::npos) << s.message();
  }
  IdempotencyStamp stamp;
  bool found = false;
  ASSERT_TRUE(ReadIdempotencyStamp("!idempotency 1 1 " + d + " " + std::string(255, 'k') + "\n", &stamp, &found).ok());
  EXPECT_TRUE(found);
  EXPECT_EQ(stamp.key.size(), 255u);
}

class DeliveryRoundsFile : public ::testing::Test {
 protected:
  TestDir tmp_;
  const std::string dir_ = tmp_.path();
};

TEST_F(DeliveryRoundsFile, RoundsFileKeepsEndsPastTheCursor) {
  std::deque<uint64_t> ends;
  bool trusted = true;
  {
    DeliveryRounds r;
    ASSERT_TRUE(r.Open(dir_, "realtime-0", 0, &ends, &trusted).ok());
    EXPECT_FALSE(trusted);  // no file yet
    EXPECT_TRUE(ends.empty());
    for (uint64_t e : {3, 7, 12, 20}) ASSERT_TRUE(r.Append(e).ok());
  }
  {
    DeliveryRounds r;
    ASSERT_TRUE(r.Open(dir_, "realtime-0", 7, &ends, &trusted).ok());
    EXPECT_TRUE(trusted);
    EXPECT_EQ(ends, (std::deque<uint64_t>{12, 20}));
    ASSERT_TRUE(r.Append(25).ok());
  }
  // A torn last line (the process died inside write) is not a round that was sent.
  {
    std::ofstream(dir_ + "/delivery-realtime-0.rounds", std::ios::app) << "31";
    DeliveryRounds r;
    ASSERT_TRUE(r.Open(dir_, "realtime-0", 0, &ends, &trusted).ok());
    EXPECT_EQ(ends, (std::deque<uint64_t>{12, 20, 25}));
  }
}

TEST_F(DeliveryRoundsFile, RoundsFileFromAnotherBootIsNotTrusted) {
  std::ofstream(dir_ + "/delivery-realtime-1.rounds") << "boot not-this-boot\n5\n9\n";
  std::deque<uint64_t> ends;
  bool trusted = true;
  DeliveryRounds r;
  ASSERT_TRUE(r.Open(dir_, "realtime-1", 0, &ends, &trusted).ok());
  EXPECT_FALSE(trusted);
  EXPECT_TRUE(ends.empty());
}

TEST(AppendTimes, OldestUndeliveredRecord) {
  AppendTimes t;
  EXPECT_EQ(t.TimeAfter(0), 0u);
  t.Add(1, 1000);
  t.Add(2, 1500);   // same millisecond: not indexed
  t.Add(3, 2000);
  t.Add(10, 5000);
  EXPECT_EQ(t.TimeAfter(0), 1000u);   // record 1
  EXPECT_EQ(t.TimeAfter(1), 1000u);   // record 2: appended at or after record 1
  EXPECT_EQ(t.TimeAfter(2), 2000u);   // record 3
  EXPECT_EQ(t.TimeAfter(5), 2000u);
  EXPECT_EQ(t.TimeAfter(9), 5000u);
  t.TrimThrough(8);
  EXPECT_EQ(t.TimeAfter(9), 5000u);
  EXPECT_EQ(t.TimeAfter(8), 2000u);
}

// A shard down for an hour at 2,000 records/s: nothing is trimmed, yet the index stays within
// kMaxEntries, and TimeAfter is still an upper bound of every record's age (never later than
// the record's own append time), exact for the newest.
TEST(AppendTimes, BoundedWhileNothingIsTrimmed) {
  AppendTimes t;
  const uint64_t kRecords = 2000ull * 3600;
  size_t most = 0;
  for (uint64_t seq = 1; seq <= kRecords; ++seq) {
    t.Add(seq, seq * 500);  // one record every 0.5 ms: one index entry per ms
    most = std::max(most, t.size());
  }
  EXPECT_LE(most, AppendTimes::kMaxEntries);
  EXPECT_GT(t.size(), AppendTimes::kMaxEntries / 2);
  EXPECT_EQ(t.TimeAfter(0), 500u);
  for (uint64_t seq = 0; seq < kRecords; seq += 9973) {
    EXPECT_LE(t.TimeAfter(seq), (seq + 1) * 500) << seq;
  }
  EXPECT_EQ(t.TimeAfter(kRecords - 1), kRecords * 500);  // the newest entry, exact
}

}  // namespace
}  // namespace clickatron
