// FileHealth and FileStamp (file_health.h): every row of the state table and every kind
// of change a message names.
#include "archive/file_health.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace clickatron::archive {
namespace {

TEST(DescribeChange, EachKindOfChange) {
  const FileStamp verified{.size = 400, .mtime_ns = 1000};
  struct Case {
    FileStamp now;
    const char* want;
  } cases[] = {
      {{400, 1000}, ""},
      {{400, 2000}, "rewritten in place (size 400 unchanged, mtime changed)"},
      {{120, 2000}, "truncated in place from 400 to 120 bytes"},
      {{0, 1000}, "truncated in place from 400 to 0 bytes"},  // size decides, whatever the mtime
      {{500, 2000}, "grew in place from 400 to 500 bytes"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(DescribeChange(verified, c.now), c.want) << c.now.size << " " << c.now.mtime_ns;
  }
}

TEST(FileStamp, FromStat) {
  struct stat st = {};
  st.st_size = 12345;
  st.st_mtim.tv_sec = 2;
  st.st_mtim.tv_nsec = 5;
  EXPECT_EQ(FileStamp::Of(st), (FileStamp{12345, 2000000005}));
  st.st_ctim.tv_sec = 99;  // a rename or chmod: not a change of the file
  EXPECT_EQ(FileStamp::Of(st), (FileStamp{12345, 2000000005}));
}

TEST(DamageSourceName, EverySource) {
  EXPECT_STREQ(DamageSourceName(DamageSource::kSigbus), "sigbus");
  EXPECT_STREQ(DamageSourceName(DamageSource::kBadBytes), "bad_bytes");
  EXPECT_STREQ(DamageSourceName(DamageSource::kInotify), "inotify");
  EXPECT_STREQ(DamageSourceName(DamageSource::kStat), "stat");
}

// whole → damaged by any source; damaged stays damaged with its first cause.
TEST(FileHealth, WholeThenDamagedOnceWithTheFirstCause) {
  for (DamageSource first : {DamageSource::kSigbus, DamageSource::kBadBytes, DamageSource::kInotify,
                             DamageSource::kStat}) {
    FileHealth h;
    EXPECT_FALSE(h.damaged());
    EXPECT_FALSE(h.damage().has_value());
    EXPECT_TRUE(h.MarkDamaged(first, "first"));
    EXPECT_TRUE(h.damaged());
    for (DamageSource again : {DamageSource::kSigbus, DamageSource::kBadBytes, DamageSource::kInotify,
                               DamageSource::kStat}) {
      EXPECT_FALSE(h.MarkDamaged(again, "again"));
    }
    ASSERT_TRUE(h.damage().has_value());
    EXPECT_EQ(h.damage()->source, first);
    EXPECT_EQ(h.damage()->what, "first");
    EXPECT_TRUE(h.damaged());
  }
}

// Loops and the watcher race to report: exactly one of them logs the episode.
TEST(FileHealth, OneCallerWinsARace) {
  FileHealth h;
  std::atomic<int> wins{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      if (h.MarkDamaged(t % 2 ? DamageSource::kSigbus : DamageSource::kInotify, std::to_string(t))) ++wins;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wins.load(), 1);
  EXPECT_TRUE(h.damaged());
}

}  // namespace
}  // namespace clickatron::archive
