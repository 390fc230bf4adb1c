// Rebuilding the idempotency index from a real oplog (api/idempotency_restore.h): the stamps
// within the window come back as stored entries after the log is reopened; those past it,
// records without a stamp and a malformed stamp do not; and retention cannot take a record
// while its key is within the window.
#include "api/idempotency_restore.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

#include "api/incr_payload.h"
#include "base/test_dir.h"
#include "oplog/oplog.h"

namespace clickatron {
namespace {

constexpr int64_t kHour0 = 1764000000 - 1764000000 % 3600;
constexpr int64_t kDay = kIdempotencyWindowSeconds;

std::string Keyed(std::string_view key, int64_t at, uint64_t events, uint64_t digest) {
  std::string payload = "0 20416 u|a.pbog," + std::to_string(events) + "\n";
  AppendIdempotencyLine(IdempotencyStamp{at, events, RequestDigest{digest, digest}, key}, &payload);
  return payload;
}

class IdempotencyRestoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<oplog::Oplog> Open() {
    oplog::Options o;
    o.clock = [this] { return now_.load(); };
    Result<std::unique_ptr<oplog::Oplog>> log = oplog::Oplog::Open(dir_.path(), o);
    EXPECT_TRUE(log.ok()) << log.status().message();
    return log.ok() ? std::move(log).value() : nullptr;
  }
  void Append(oplog::Oplog* log, const std::string& payload) { ASSERT_TRUE(log->Append(payload).ok()); }

  TestDir dir_;
  std::atomic<int64_t> now_{kHour0};
};

TEST_F(IdempotencyRestoreTest, StampsWithinTheWindowComeBackAfterAReopen) {
  {
    auto log = Open();
    ASSERT_TRUE(log);
    Append(log.get(), Keyed("old", kHour0, 1, 1));  // past the window at the restore
    Append(log.get(), "0 20416 u|a.pbog,1\n");       // no key
    ASSERT_TRUE(log->Sync().ok());
    now_ = kHour0 + 3600;                            // the next segment
    Append(log.get(), Keyed("a", kHour0 + 3600, 40, 2));
    Append(log.get(), Keyed("b", kHour0 + 3601, 1, 3));
    Append(log.get(), "0 20416 u|a.pbog,1\n!idempotency 1 1 nothex b\n");  // malformed
    Append(log.get(), Keyed("b", kHour0 + 3602, 2, 4));  // the same key again: the later wins
    ASSERT_TRUE(log->Sync().ok());
  }
  auto log = Open();
  ASSERT_TRUE(log);
  IdempotencyIndex index(1 << 20);
  Result<IdempotencyRestore> r = RestoreIdempotencyIndex(log.get(), kHour0 + kDay + 1, &index);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->records, 6u);
  EXPECT_EQ(r->keys, 3u);
  EXPECT_EQ(r->expired, 1u);
  EXPECT_EQ(r->malformed, 1u);
  EXPECT_EQ(r->first_malformed, "record 5: malformed idempotency line (digest): '!idempotency 1 1 nothex b'");
  EXPECT_EQ(index.size(), 2u);
  EXPECT_EQ(index.Find("old"), nullptr);
  const IdempotencyIndex::Entry* a = index.Find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->state, IdempotencyIndex::State::kStored);
  EXPECT_EQ(a->seq, 3u);
  EXPECT_EQ(a->events, 40u);
  EXPECT_EQ(a->accepted_at, kHour0 + 3600);
  EXPECT_EQ(a->digest, (RequestDigest{2, 2}));
  ASSERT_NE(index.Find("b"), nullptr);
  EXPECT_EQ(index.Find("b")->seq, 6u);
  EXPECT_EQ(index.Find("b")->events, 2u);
  // They expire at their own time.
  EXPECT_EQ(index.Expire(kHour0 + 3600 + kDay), 1u);
  EXPECT_EQ(index.Find("a"), nullptr);
}

// A record delivered (every cursor past it) stays in the oplog for its 72 h retention, so its
// key is restored for the whole 24 h window: delivery never shortens it.
TEST_F(IdempotencyRestoreTest, RetentionKeepsADeliveredRecordPastTheWindow) {
  auto log = Open();
  ASSERT_TRUE(log);
  Append(log.get(), Keyed("k", kHour0, 1, 1));
  ASSERT_TRUE(log->Sync().ok());
  now_ = kHour0 + 3600;
  Append(log.get(), "0 20416 u|a.pbog,1\n");  // a newer segment: the first may go
  ASSERT_TRUE(log->Sync().ok());
  ASSERT_TRUE(log->SetCursor("realtime-0", log->last_seq()).ok());
  ASSERT_TRUE(log->SaveCursors().ok());
  EXPECT_EQ(*log->RemoveExpiredSegments(kHour0 + kDay), 0u);
  IdempotencyIndex index(1 << 20);
  ASSERT_TRUE(RestoreIdempotencyIndex(log.get(), kHour0 + kDay - 1, &index).ok());
  EXPECT_NE(index.Find("k"), nullptr);
  EXPECT_EQ(*log->RemoveExpiredSegments(kHour0 + 72 * 3600), 1u);  // the retention, long past it
}

}  // namespace
}  // namespace clickatron
