// A test fixture holding a Ring in a fresh directory, shared by the ring's and the
// flusher's tests. Test-only: included by *_test.cc, never by the server.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/test_dir.h"
#include "keyformat/ymdh.h"
#include "realtime/batch.h"
#include "realtime/ring.h"

namespace clickatron::realtime {

inline constexpr int64_t kDay = 15424;  // 2012-03-25, slot 15424 % 3 == 1

// "u|{name}.{ymdh}" for hour `hour` of `day`.
inline std::string Key(std::string_view name, int64_t day = kDay, int hour = 1) {
  return "u|" + std::string(name) + "." +
         std::string(EncodeYmdh(day * kSecondsPerDay + hour * kSecondsPerHour).value().view());
}

class RingFixture : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }
  // Closes the ring (if open) and opens it again on the same directory.
  void Reopen() {
    ring_.reset();
    Result<std::unique_ptr<Ring>> r = Ring::Open(dir_.path(), SlotOptions{});
    ASSERT_TRUE(r.ok()) << r.status().message();
    ring_ = std::move(r).value();
  }
  // Parses body as an /incr batch (it must parse) and applies it as `source`'s `seq`.
  WriteOutcome Incr(const std::string& body, std::string_view source, int64_t seq) {
    Status s = ParseIncrBatch(body, &lines_);
    EXPECT_TRUE(s.ok()) << s.message();
    return ring_->Incr(&lines_, source, seq);
  }
  // Closes the ring, adds `value` (any 128-bit value, as no /incr can) to key of `day`
  // straight in its slot's file, and opens the ring again.
  void Seed(const std::string& key, int64_t day, Int128 value) {
    ring_.reset();
    {
      Result<std::unique_ptr<Slot>> slot =
          Slot::Open(int(day % kRingSlots), dir_.path() + "/slot-" + std::to_string(day % kRingSlots) + ".tcb", SlotOptions{});
      ASSERT_TRUE(slot.ok()) << slot.status().message();
      if ((*slot)->day() != day) {
        ASSERT_TRUE((*slot)->Reset(day).ok());
      }
      MemTable t;
      bool created;
      *t.AddCounter(key, &created) += value;
      t.NoteDelta(value);
      ASSERT_TRUE((*slot)->Apply(t).ok());
    }
    Reopen();
  }
  // The stored value of key, or "<absent>".
  std::string Get(const std::string& key) {
    std::string v;
    return ring_->Get(key, &v) ? v : "<absent>";
  }

  TestDir dir_;
  std::unique_ptr<Ring> ring_;
  std::vector<IncrLine> lines_;
};

}  // namespace clickatron::realtime
