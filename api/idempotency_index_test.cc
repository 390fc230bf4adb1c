// The idempotency index (api/idempotency_index.h): insert, match, settle, expiry, capacity
// and restore.
#include "api/idempotency_index.h"

#include <gtest/gtest.h>

#include <string>

namespace clickatron {
namespace {

using State = IdempotencyIndex::State;
constexpr int64_t kT0 = 1764000000;
constexpr int64_t kDay = kIdempotencyWindowSeconds;
constexpr size_t kRoomy = 1 << 20;

// key: viewed until the entry is inserted (Insert copies it).
IdempotencyIndex::Entry Make(std::string_view key, int64_t at, uint64_t seq, State state = State::kStored,
                             uint64_t events = 1) {
  return IdempotencyIndex::Entry{key, RequestDigest{seq, ~seq}, at, events, seq, state};
}

TEST(IdempotencyIndex, FindsWhatWasInserted) {
  IdempotencyIndex index(kRoomy);
  EXPECT_EQ(index.Find("a"), nullptr);
  IdempotencyIndex::Entry* a = index.Insert(Make("a", kT0, 7, State::kInFlight, 40));
  ASSERT_EQ(index.Find("a"), a);
  EXPECT_EQ(a->key, "a");
  EXPECT_EQ(a->digest, (RequestDigest{7, ~uint64_t{7}}));
  EXPECT_EQ(a->events, 40u);
  EXPECT_EQ(a->seq, 7u);
  EXPECT_EQ(a->state, State::kInFlight);
  index.Stored(a);
  EXPECT_EQ(index.Find("a")->state, State::kStored);
  EXPECT_EQ(index.Find("A"), nullptr);  // keys are bytes: case counts
  std::string caller = "b-key";
  index.Insert(Make(caller, kT0, 8));
  caller = "other";  // the index holds its own copy
  ASSERT_NE(index.Find("b-key"), nullptr);
  EXPECT_EQ(index.Find("b-key")->key, "b-key");
  EXPECT_EQ(index.Find("other"), nullptr);
  index.Forget(index.Find("b-key"));
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(index.bytes(), 1 + IdempotencyIndex::kEntryOverhead);
}

TEST(IdempotencyIndex, ForgetDropsAnInFlightEntry) {
  IdempotencyIndex index(kRoomy);
  IdempotencyIndex::Entry* a = index.Insert(Make("a", kT0, 1, State::kInFlight));
  index.Insert(Make("b", kT0, 2, State::kInFlight));
  index.Forget(a);
  EXPECT_EQ(index.Find("a"), nullptr);
  ASSERT_NE(index.Find("b"), nullptr);
  EXPECT_EQ(index.size(), 1u);
  EXPECT_EQ(index.bytes(), 1 + IdempotencyIndex::kEntryOverhead);
  // The key is new again: a retry of a request whose record was not stored is evaluated afresh.
  index.Insert(Make("a", kT0 + 5, 3));
  EXPECT_EQ(index.Find("a")->seq, 3u);
}

TEST(IdempotencyIndex, ExpiresStoredEntriesAtTheWindowOldestFirst) {
  IdempotencyIndex index(kRoomy);
  index.Insert(Make("a", kT0, 1));
  index.Insert(Make("b", kT0 + 10, 2));
  index.Insert(Make("c", kT0 + 20, 3));
  EXPECT_EQ(index.Expire(kT0 + kDay - 1), 0u);  // 24 h less a second: still held
  EXPECT_NE(index.Find("a"), nullptr);
  EXPECT_EQ(index.Expire(kT0 + kDay), 1u);       // exactly 24 h: gone
  EXPECT_EQ(index.Find("a"), nullptr);
  EXPECT_NE(index.Find("b"), nullptr);
  EXPECT_EQ(index.Expire(kT0 + kDay + 20), 2u);
  EXPECT_EQ(index.size(), 0u);
  EXPECT_EQ(index.bytes(), 0u);
  EXPECT_EQ(index.expired(), 3u);
}

TEST(IdempotencyIndex, AnInFlightEntryIsNeverExpired) {
  IdempotencyIndex index(kRoomy);
  IdempotencyIndex::Entry* a = index.Insert(Make("a", kT0, 1, State::kInFlight));
  index.Insert(Make("b", kT0, 2));
  EXPECT_EQ(index.Expire(kT0 + 2 * kDay), 0u);  // stops at the in-flight one
  EXPECT_EQ(index.size(), 2u);
  index.Stored(a);
  EXPECT_EQ(index.Expire(kT0 + 2 * kDay), 2u);
}

// A clock stepped back keeps an entry longer, never shorter: expiry goes in insertion order.
TEST(IdempotencyIndex, AClockSteppedBackKeepsEntriesLonger) {
  IdempotencyIndex index(kRoomy);
  index.Insert(Make("late", kT0 + 100, 1));
  index.Insert(Make("early", kT0, 2));  // accepted after the clock went back 100 s
  EXPECT_EQ(index.Expire(kT0 + kDay), 0u);
  EXPECT_NE(index.Find("early"), nullptr);
  EXPECT_EQ(index.Expire(kT0 + kDay + 100), 2u);
}

TEST(IdempotencyIndex, CapacityRefusesNewKeysAndFreesOnExpiry) {
  const size_t per = 10 + IdempotencyIndex::kEntryOverhead;  // a 10-byte key
  IdempotencyIndex index(3 * per);
  for (int i = 0; i < 3; i++) {
    const std::string key = "key-" + std::to_string(100000 + i);
    ASSERT_TRUE(index.HasRoom(key)) << i;
    index.Insert(Make(key, kT0 + i, uint64_t(i + 1)));
  }
  EXPECT_EQ(index.bytes(), 3 * per);
  EXPECT_FALSE(index.HasRoom("key-100003"));
  EXPECT_FALSE(index.HasRoom("k"));  // any new key: 1 + overhead does not fit either
  // Nothing inside the window is forgotten to make room.
  for (int i = 0; i < 3; i++) EXPECT_NE(index.Find("key-" + std::to_string(100000 + i)), nullptr);
  index.Expire(kT0 + kDay);
  EXPECT_TRUE(index.HasRoom("key-100003"));
  EXPECT_FALSE(index.HasRoom(std::string(10 + per + 1, 'k')));
}

TEST(IdempotencyIndex, RestoreReplacesAnEarlierEntryAndIgnoresTheBound) {
  IdempotencyIndex index(1);  // smaller than any entry
  EXPECT_FALSE(index.HasRoom("a"));
  index.Restore(Make("a", kT0, 1, State::kStored, 5));
  index.Restore(Make("b", kT0 + 1, 2));
  index.Restore(Make("a", kT0 + 2, 3, State::kStored, 9));
  EXPECT_EQ(index.size(), 2u);
  EXPECT_EQ(index.Find("a")->seq, 3u);
  EXPECT_EQ(index.Find("a")->events, 9u);
  EXPECT_EQ(index.bytes(), 2 * (1 + IdempotencyIndex::kEntryOverhead));
  // The replaced entry expires at its own (later) time: it moved to the back.
  EXPECT_EQ(index.Expire(kT0 + 1 + kDay), 1u);
  EXPECT_EQ(index.Find("b"), nullptr);
  EXPECT_NE(index.Find("a"), nullptr);
}

}  // namespace
}  // namespace clickatron
