// Unit tests of the archive core: verification of a file, lookups, prefix scans, the
// manifest, and the swap. The server itself is tested end to end in tests/test_archive.py.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <future>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/test_dir.h"
#include "archive/date_header.h"
#include "archive/db_file.h"
#include "archive/key_params.h"
#include "archive/live_db.h"
#include "archive/manifest.h"
#include "archive/mapped_read.h"
#include "archive/reloader.h"
#include "keyformat/hex64.h"

namespace clickatron::archive {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<const DbFile> MustOpen(const std::string& path, char sep = ',') {
  auto db = DbFile::Open(path, DbFileOptions{.separator = sep});
  EXPECT_TRUE(db.ok()) << db.status().message();
  return db.ok() ? db.value() : nullptr;
}

std::string OpenError(const std::string& path, char sep = ',') {
  auto db = DbFile::Open(path, DbFileOptions{.separator = sep});
  return db.ok() ? "(opened)" : db.status().message();
}

std::string Get(const DbFile& db, std::string_view key) {
  Line line;
  return db.Find(key, &line) ? std::string(line.value_nl) : "(miss)";
}

std::string FwMatch(const DbFile& db, std::string_view prefix, size_t limit = 1000) {
  std::string out;
  db.ForEachPrefixed(prefix, limit, [&](const Line& l) { out += l.whole; });
  return out;
}

TEST(DbFile, GoldenSortdbData) {
  auto db = MustOpen(std::string(CLICKATRON_GOLDEN_DIR) + "/sortdb/data.csv");
  ASSERT_TRUE(db);
  EXPECT_EQ(db->records(), 14u);
  EXPECT_EQ(Get(*db, "u|jehiah.c3hh"), "13\n");
  EXPECT_EQ(Get(*db, "c.u|jehiah.c3hh"), "DE:1 None:5 US:7\n");
  EXPECT_EQ(Get(*db, "c.u|jehiah.c3h5"), "US:2\n");   // first line
  EXPECT_EQ(Get(*db, "u|jehiah.c3i0"), "7\n");        // last line
  EXPECT_EQ(Get(*db, "u|jehiah.c3h"), "(miss)");      // a prefix of a key is not the key
  EXPECT_EQ(Get(*db, "u|jehiah.c3hh0"), "(miss)");
  EXPECT_EQ(Get(*db, "a"), "(miss)");
  EXPECT_EQ(Get(*db, "zzz"), "(miss)");
  EXPECT_EQ(Get(*db, ""), "(miss)");
  EXPECT_EQ(FwMatch(*db, "u|jehiah."), "u|jehiah.c3hh,13\nu|jehiah.c3i0,7\n");
  EXPECT_EQ(FwMatch(*db, "u|jehiah.", 1), "u|jehiah.c3hh,13\n");
  EXPECT_EQ(FwMatch(*db, "nothing"), "");
  EXPECT_FALSE(db->has_manifest());
}

// /fwmatch pages: after=KEY starts strictly after KEY (a KEY before the prefix starts at the
// prefix), and *more says a further prefixed line was left out by the limit.
TEST(DbFile, FwmatchAfterAndMore) {
  auto db = MustOpen(std::string(CLICKATRON_GOLDEN_DIR) + "/sortdb/data.csv");
  ASSERT_TRUE(db);
  auto page = [&](std::string_view prefix, std::string_view after, size_t limit, bool* more) {
    std::string out;
    db->ForEachPrefixed(prefix, limit, [&](const Line& l) { out += l.whole; }, after, more);
    return out;
  };
  bool more = true;
  EXPECT_EQ(page("u|jehiah.", "", 1, &more), "u|jehiah.c3hh,13\n");
  EXPECT_TRUE(more);
  EXPECT_EQ(page("u|jehiah.", "u|jehiah.c3hh", 1, &more), "u|jehiah.c3i0,7\n");
  EXPECT_FALSE(more);
  EXPECT_EQ(page("u|jehiah.", "u|jehiah.c3i0", 5, &more), "");
  EXPECT_FALSE(more);
  EXPECT_EQ(page("u|jehiah.", "a", 5, &more), "u|jehiah.c3hh,13\nu|jehiah.c3i0,7\n");  // before the prefix
  EXPECT_FALSE(more);
  EXPECT_EQ(page("u|jehiah.", "u|jehiah.c3hh0", 5, &more), "u|jehiah.c3i0,7\n");  // not itself a key
  EXPECT_EQ(page("c.u|jehiah.", "c.u|jehiah.c3hh", 1, &more), "c.u|jehiah.c3hi,CA:1 None:6 US:5\n");
  EXPECT_FALSE(more);
  EXPECT_EQ(page("c", "c.u|jehiah.c3hi", 5, &more), "");  // past the prefix
  EXPECT_EQ(page("u|jehiah.", "u|jehiah.c3hh", 2, &more), "u|jehiah.c3i0,7\n");
  EXPECT_FALSE(more);
  // the limit exactly reached with nothing more: not cut
  EXPECT_EQ(page("u|jehiah.", "", 2, &more), "u|jehiah.c3hh,13\nu|jehiah.c3i0,7\n");
  EXPECT_FALSE(more);
}

TEST(DbFile, KeyOrderGolden) {
  // Every key of key-order.txt, in that order, makes a valid file; each is found.
  std::ifstream in(std::string(CLICKATRON_GOLDEN_DIR) + "/sortdb/key-order.txt");
  std::string line, content;
  std::vector<std::string> keys;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    keys.push_back(line);
    content += line + "," + std::to_string(keys.size()) + "\n";
  }
  ASSERT_GE(keys.size(), 5u);
  TestDir dir;
  auto db = MustOpen(dir.Write("order.csv", content));
  ASSERT_TRUE(db);
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(Get(*db, keys[i]), std::to_string(i + 1) + "\n") << keys[i];
  }
  // Swapping two neighbours (whole-line order: "ab+,2" sorts before "ab,1") is refused.
  std::string swapped = keys[1] + ",2\n" + keys[0] + ",1\n";
  EXPECT_NE(OpenError(dir.Write("swapped.csv", swapped)).find("line 2:"), std::string::npos);
}

TEST(DbFile, RefusesUnsortedWithLineNumber) {
  TestDir dir;
  std::string p = dir.Write("bad.csv", "a,1\nb,2\nd,3\nc,4\ne,5\n");
  EXPECT_EQ(OpenError(p), p + ": line 4: key 'c' is not after the key before it 'd' "
                              "(the file must be sorted by key, each key once)");
}

TEST(DbFile, RefusesDuplicateKey) {
  TestDir dir;
  std::string p = dir.Write("dup.csv", "a,1\nb,2\nb,3\n");
  EXPECT_NE(OpenError(p).find("line 3: key 'b' is not after"), std::string::npos);
}

TEST(DbFile, RefusesMissingFinalNewline) {
  TestDir dir;
  std::string p = dir.Write("trunc.csv", "a,1\nb,2\nc,3");
  EXPECT_EQ(OpenError(p),
            p + ": line 3: the file does not end with a newline (truncated last line)");
}

TEST(DbFile, RefusesLineWithoutSeparator) {
  TestDir dir;
  std::string p = dir.Write("nosep.csv", "a,1\nb\tno-comma\nc,3\n");
  EXPECT_EQ(OpenError(p), p + ": line 2: no separator ',' in the line");
  EXPECT_EQ(OpenError(dir.Write("empty-line.csv", "a,1\n\nc,3\n")),
            dir.path() + "/empty-line.csv: line 2: no separator ',' in the line");
  EXPECT_EQ(OpenError(dir.Write("empty-key.csv", "a,1\n,2\n")),
            dir.path() + "/empty-key.csv: line 2: empty key");
}

TEST(DbFile, MissingFileNamesPath) {
  EXPECT_EQ(OpenError("/nonexistent/x.csv"),
            "/nonexistent/x.csv: open: No such file or directory");
}

TEST(DbFile, TabSeparator) {
  TestDir dir;
  auto db = MustOpen(dir.Write("tab.tsv", "a,b\tone\nc\ttwo\tthree\n"), '\t');
  ASSERT_TRUE(db);
  EXPECT_EQ(Get(*db, "a,b"), "one\n");
  EXPECT_EQ(Get(*db, "c"), "two\tthree\n");
}

TEST(DbFile, EmptyFileServesNothing) {
  TestDir dir;
  auto db = MustOpen(dir.Write("empty.csv", ""));
  ASSERT_TRUE(db);
  EXPECT_EQ(db->records(), 0u);
  EXPECT_EQ(Get(*db, "a"), "(miss)");
  EXPECT_EQ(FwMatch(*db, "a"), "");
}

TEST(DbFile, PageMultipleSizeNeverReadsPastTheEnd) {
  // A file of exactly one page whose last key is the greatest: sortdb's strchr ran past
  // the mapping here. ASan would flag any read past the end of our mapping's bytes only
  // for heap, so also check the answers are exact at the edge.
  TestDir dir;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::string content;
  int i = 0;
  char buf[32];
  while (true) {
    std::snprintf(buf, sizeof(buf), "k%06d,", i++);
    std::string line = std::string(buf) + "v\n";
    if (content.size() + line.size() + 16 > page) break;
    content += line;
  }
  std::string last = "zz,";
  last += std::string(page - content.size() - last.size() - 1, 'x') + "\n";
  content += last;
  ASSERT_EQ(content.size(), page);
  auto db = MustOpen(dir.Write("page.csv", content));
  ASSERT_TRUE(db);
  EXPECT_EQ(Get(*db, "zz"), last.substr(3));
  EXPECT_EQ(Get(*db, "zzz"), "(miss)");
  EXPECT_EQ(FwMatch(*db, "zz"), last);
  EXPECT_EQ(Get(*db, "k000000"), "v\n");
}

// A file of `n` lines "kNNNNNN,value-NNNNNN\n" (21 bytes each): several 4 KiB sample blocks.
std::string NumberedLines(int n) {
  std::string content;
  char buf[32];
  for (int i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof(buf), "k%06d,value-%06d\n", i, i);
    content += buf;
  }
  return content;
}

// Every lookup reads the mapping only inside Read(), which turns a read past the end of a
// file truncated in place into a result (docs/archive.md#a-file-changed-under-the-server).
TEST(DbFile, LookupsOnATruncatedFileAreAFaultNotADeath) {
  ASSERT_TRUE(InstallMappedReadHandler().ok());
  TestDir dir;
  const std::string path = dir.Write("data.csv", NumberedLines(1000));  // 21,000 bytes
  auto db = MustOpen(path);
  ASSERT_TRUE(db);
  EXPECT_EQ(db->ChangeSinceVerified(), "");
  ASSERT_EQ(truncate(path.c_str(), 4096 + 100), 0);  // the first two pages stay file bytes
  EXPECT_EQ(db->ChangeSinceVerified(), "truncated in place from 21000 to 4196 bytes");
  std::string got;
  EXPECT_FALSE(db->Read([&] { got = Get(*db, "k000010"); }));  // page 0: whole
  EXPECT_EQ(got, "value-000010\n");
  const auto fault_of = [&](auto&& read) {
    MappedFault f = db->Read(read);
    EXPECT_EQ(f.kind, MappedFault::Kind::kSigbus);
    EXPECT_GE(f.offset, 8192u);  // pages from 2 on are past the new end
    EXPECT_LT(f.offset, 21000u);
    return f;
  };
  MappedFault f = fault_of([&] { Get(*db, "k000900"); });
  fault_of([&] { FwMatch(*db, "k0009"); });
  fault_of([&] {
    const std::string_view keys[] = {"k000001", "k000999"};
    db->FindEach(keys, 2, [](size_t, const Line&) {});
  });
  EXPECT_EQ(db->DescribeDamage(DamageSource::kSigbus, f.offset),
            db->real_path() + ": truncated in place from 21000 to 4196 bytes; a read at offset " +
                std::to_string(f.offset) + " faulted (SIGBUS)");
}

// Bytes rewritten into any shape (here: no '\n' and no separator left) never make a lookup
// read outside the mapping: it stops at the first missing one, inside Read().
TEST(DbFile, LookupsOnBytesRewrittenInPlaceStopAtTheBrokenLine) {
  TestDir dir;
  const std::string content = NumberedLines(1000);
  const std::string path = dir.Write("data.csv", content);
  auto db = MustOpen(path);
  ASSERT_TRUE(db);
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const std::string junk(content.size(), 'x');
  ASSERT_EQ(pwrite(fd, junk.data(), junk.size(), 0), static_cast<ssize_t>(junk.size()));
  ::close(fd);
  for (std::string_view key : {"k000000", "k000500", "k000999", "zzz", "a"}) {
    std::string got = "(not read)";
    MappedFault f = db->Read([&] { got = Get(*db, key); });
    EXPECT_EQ(f.kind, MappedFault::Kind::kBadBytes) << key << " answered " << got;
    EXPECT_LT(f.offset, content.size());
  }
  MappedFault f = db->Read([&] { FwMatch(*db, "k0005"); });
  EXPECT_EQ(f.kind, MappedFault::Kind::kBadBytes);
  EXPECT_EQ(db->DescribeDamage(DamageSource::kBadBytes, 48),
            db->real_path() + ": rewritten in place (size 21000 unchanged, mtime changed); the bytes at offset 48 "
                              "are no longer a verified line");
}

// A rewrite that keeps every line's shape is not seen by the lookups (they answer the new
// bytes): the FileWatcher's inotify and fstat see it (file_watcher_test.cc).
TEST(DbFile, ARewriteThatKeepsTheShapeIsSeenOnlyAsAChange) {
  TestDir dir;
  const std::string path = dir.Write("data.csv", "a,1\nb,2\n");
  auto db = MustOpen(path);
  ASSERT_TRUE(db);
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_EQ(pwrite(fd, "9", 1, 6), 1);
  ::close(fd);
  std::string got;
  EXPECT_FALSE(db->Read([&] { got = Get(*db, "b"); }));
  EXPECT_EQ(got, "9\n");
  EXPECT_EQ(db->ChangeSinceVerified(), "rewritten in place (size 8 unchanged, mtime changed)");
}

TEST(DbFile, EveryKeyOfALargerFileIsFound) {
  // Keys that prefix each other, lines of very different lengths, hash-like characters.
  TestDir dir;
  std::vector<std::string> keys;
  for (int i = 0; i < 2000; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "k%05d", i * 7);
    keys.push_back(buf);
    keys.push_back(std::string(buf) + "+");
    keys.push_back(std::string(buf) + "/=");
  }
  std::sort(keys.begin(), keys.end());
  std::string content;
  for (size_t i = 0; i < keys.size(); ++i) {
    content += keys[i] + "," + std::string(i % 97, 'v') + "\n";
  }
  auto db = MustOpen(dir.Write("big.csv", content));
  ASSERT_TRUE(db);
  EXPECT_EQ(db->records(), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(Get(*db, keys[i]), std::string(i % 97, 'v') + "\n") << keys[i];
  }
  for (int i = 0; i < 2000; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "k%05d", i * 7 + 1);
    ASSERT_EQ(Get(*db, buf), "(miss)");
  }
  EXPECT_EQ(FwMatch(*db, "k00007"), "k00007,vvv\nk00007+,vvvv\nk00007/=,vvvvv\n");

  // FindEach: several batches, hits and misses interleaved, answers in request order.
  std::vector<std::string> asked;
  std::string want;
  for (size_t i = 0; i < 50; ++i) {
    const std::string& k = keys[(i * 977) % keys.size()];
    asked.push_back(k);
    want += std::to_string(asked.size() - 1) + ":" + k + "\n";
    asked.push_back(k + "0");  // absent
  }
  std::vector<std::string_view> views(asked.begin(), asked.end());
  std::string got;
  db->FindEach(views.data(), views.size(), [&](size_t i, const Line& l) {
    got += std::to_string(i) + ":" + std::string(l.key) + "\n";
    EXPECT_EQ(l.key, views[i]);
  });
  EXPECT_EQ(got, want);
}

TEST(DbFile, ManifestBesideFileIsReadAndChecked) {
  TestDir dir;
  std::string content = "a,1\nb,2\n";
  std::string p = dir.Write("shard-0.csv", content);
  dir.Write("manifest", "generation = g7\nlast_day = 2026-03-20\nshards = 1\n"
                        "shard.0.file = shard-0.csv\nshard.0.records = 2\nshard.0.bytes = 8\n"
                        "shard.0.xxh64 = " + Hex64(XXH64(content.data(), content.size(), 0)) + "\n"
                        // what the rebuild adds for itself, and a key of a newer rebuild
                        "day = 2026-03-20 0123456789abcdef 00000000000000ff\nlate = 10.0.0.1:8000 7\nfuture = x\n");
  auto db = MustOpen(p);
  ASSERT_TRUE(db);
  EXPECT_TRUE(db->has_manifest());
  EXPECT_EQ(db->manifest().generation, "g7");
  EXPECT_EQ(db->manifest().last_day, "2026-03-20");
  EXPECT_EQ(db->etag(), "\"g7\"");

  dir.Write("manifest", "generation = g8\nlast_day = 2026-03-21\n"
                        "shard.0.file = shard-0.csv\nshard.0.records = 3\n");
  EXPECT_EQ(OpenError(p), p + ": record count 2 does not match the manifest's 3 (generation g8)");
  dir.Write("manifest", "generation = g9\nlast_day = 2026-03-21\n"
                        "shard.0.file = shard-0.csv\nshard.0.xxh64 = 0123456789abcdef\n");
  EXPECT_NE(OpenError(p).find(": xxh64 "), std::string::npos);
  dir.Write("manifest", "generation = g9\n");
  EXPECT_EQ(OpenError(p), dir.path() + "/manifest: no 'last_day' line");
}

TEST(DbFile, SymlinkedPathReadsManifestOfTheTarget) {
  TestDir dir;
  fs::create_directories(dir.path() + "/gen/1");
  dir.Write("gen/1/shard-0.csv", "a,1\n");
  dir.Write("gen/1/manifest", "generation = 1\nlast_day = 2026-01-01\n");
  fs::create_directory_symlink("gen/1", dir.path() + "/current");
  auto db = MustOpen(dir.path() + "/current/shard-0.csv");
  ASSERT_TRUE(db);
  EXPECT_EQ(db->manifest().generation, "1");
  EXPECT_EQ(db->real_path(), fs::canonical(dir.path() + "/gen/1/shard-0.csv").string());
}

TEST(LiveDb, ReloadSwapsOnlyGoodFilesAndOldMappingOutlivesTheSwap) {
  TestDir dir;
  std::string p = dir.Write("data.csv", "a,old\n");
  LiveDb live(p, DbFileOptions{});
  ASSERT_TRUE(live.Open().ok());
  std::shared_ptr<const DbFile> held = live.Current();  // an in-flight request

  std::string next = dir.Write("next.csv", "a,new\nb,2\n");
  fs::rename(next, p);
  ASSERT_TRUE(live.Reload().ok());
  EXPECT_EQ(Get(*live.Current(), "a"), "new\n");
  EXPECT_EQ(Get(*held, "a"), "old\n");  // still mapped for its holder

  dir.Write("bad.csv", "b,1\na,2\n");
  fs::rename(dir.path() + "/bad.csv", p);
  Status s = live.Reload();
  EXPECT_EQ(s.message(), p + ": line 2: key 'a' is not after the key before it 'b' "
                             "(the file must be sorted by key, each key once)");
  EXPECT_EQ(Get(*live.Current(), "a"), "new\n");
  EXPECT_EQ(live.reloads(), 1u);
  EXPECT_EQ(live.failed_reloads(), 1u);
}

TEST(KeyParams, DecodesLikeSortdb) {
  KeyParams p;
  ASSERT_TRUE(p.Parse("key=u|jehiah.c3hh", KeyParams::Mode::kFirstKey));
  ASSERT_EQ(p.keys().size(), 1u);
  EXPECT_EQ(p.keys()[0], "u|jehiah.c3hh");
  // '+' is a literal plus (sortdb turned evhttp's spaces back into '+'); %2B too.
  ASSERT_TRUE(p.Parse("key=ab+&key=other", KeyParams::Mode::kFirstKey));
  ASSERT_EQ(p.keys().size(), 1u);
  EXPECT_EQ(p.keys()[0], "ab+");
  ASSERT_TRUE(p.Parse("key=h0aMB8AuNw4%3D&x=1", KeyParams::Mode::kFirstKey));
  EXPECT_EQ(p.keys()[0], "h0aMB8AuNw4=");
  ASSERT_TRUE(p.Parse("key=a%20b%2Bc", KeyParams::Mode::kFirstKey));
  EXPECT_EQ(p.keys()[0], "a b+c");
  ASSERT_TRUE(p.Parse("", KeyParams::Mode::kFirstKey));
  EXPECT_TRUE(p.keys().empty());
}

TEST(KeyParams, EveryParameterStartingWithK) {
  KeyParams p;
  ASSERT_TRUE(p.Parse("key=a&k=b&limit=3&keys=c&&x=d&k2=e", KeyParams::Mode::kEveryK));
  ASSERT_EQ(p.keys().size(), 4u);
  EXPECT_EQ(p.keys()[0], "a");
  EXPECT_EQ(p.keys()[1], "b");
  EXPECT_EQ(p.keys()[2], "c");
  EXPECT_EQ(p.keys()[3], "e");
  ASSERT_TRUE(p.limit().has_value());
  EXPECT_EQ(*p.limit(), "3");
}

TEST(KeyParams, Errors) {
  KeyParams p;
  EXPECT_FALSE(p.Parse("key=a%zz", KeyParams::Mode::kFirstKey));
  EXPECT_STREQ(p.error_name(), "INVALID_ARG_KEY");
  EXPECT_EQ(p.error(), "bad percent-encoding in key");
  EXPECT_FALSE(p.Parse("key=a%2", KeyParams::Mode::kFirstKey));
  EXPECT_FALSE(p.Parse("key=", KeyParams::Mode::kFirstKey));
  EXPECT_EQ(p.error(), "key is empty");
  EXPECT_FALSE(p.Parse("key=" + std::string(4097, 'a'), KeyParams::Mode::kFirstKey));
  EXPECT_EQ(p.error(), "key is longer than 4096 bytes");
  EXPECT_TRUE(p.Parse("key=" + std::string(4096, 'a'), KeyParams::Mode::kFirstKey));
  EXPECT_FALSE(p.Parse("key=a&after=%zz", KeyParams::Mode::kFirstKey));
  EXPECT_STREQ(p.error_name(), "INVALID_ARG_AFTER");
  ASSERT_TRUE(p.Parse("key=a&after=a%7Cb%7F", KeyParams::Mode::kFirstKey));
  EXPECT_EQ(p.after(), "a|b\x7f");
  ASSERT_TRUE(p.Parse("key=a", KeyParams::Mode::kFirstKey));
  EXPECT_EQ(p.after(), "");
}

TEST(Reloader, ServesRequestsOnItsThreadAndReportsRefusals) {
  TestDir dir;
  std::string p = dir.Write("data.csv", "a,1\n");
  LiveDb live(p, DbFileOptions{});
  ASSERT_TRUE(live.Open().ok());
  int logged = 0;
  Reloader reloader(&live, [&logged](const Status&) { ++logged; });
  reloader.Start();

  fs::rename(dir.Write("next.csv", "a,2\n"), p);
  std::promise<std::string> first;
  reloader.Request([&first](const Status& s) { first.set_value(s.ok() ? "ok" : s.message()); });
  EXPECT_EQ(first.get_future().get(), "ok");
  EXPECT_EQ(Get(*live.Current(), "a"), "2\n");

  // Files are replaced by rename (`mv new data`), never rewritten under a live mapping.
  fs::rename(dir.Write("bad.csv", "b,1\na,2\n"), p);
  std::promise<std::string> second;
  reloader.Request([&second](const Status& s) { second.set_value(s.message()); });
  EXPECT_EQ(second.get_future().get(),
            p + ": line 2: key 'a' is not after the key before it 'b' (the file must be "
                "sorted by key, each key once)");
  EXPECT_EQ(Get(*live.Current(), "a"), "2\n");
  reloader.Stop();
  EXPECT_EQ(logged, 2);
  // After Stop nothing is served; the queued callback is dropped with the Reloader.
  bool called = false;
  reloader.Request([&called](const Status&) { called = true; });
  reloader.Stop();
  EXPECT_FALSE(called);
}

TEST(DateHeader, Rfc1123InGmt) {
  DateHeader d;
  EXPECT_STREQ(d.At(0), "Thu, 01 Jan 1970 00:00:00 GMT");
  EXPECT_STREQ(d.At(1332637200), "Sun, 25 Mar 2012 01:00:00 GMT");
  EXPECT_STREQ(d.At(1795330799), "Sun, 22 Nov 2026 06:59:59 GMT");
}

TEST(DbFile, SampleSearchWithSharedPrefixesNulAndHighBytes) {
  // Keys that agree on their first 8 bytes (the sample's integer prefix), keys shorter than
  // 8 bytes, NUL and 0xff bytes: every key is found, every near miss is not.
  TestDir dir;
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%05d", i);
    keys.push_back(std::string("c.u|sameprefix.") + buf);  // long, shared 8-byte prefix
    keys.push_back(std::string("ab") + std::string(1, '\0') + buf);
    keys.push_back(std::string("ab\xff") + buf);
    if (i < 50) keys.push_back(std::string(buf).substr(3));  // 2-byte keys
  }
  keys.push_back("ab");
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::string content;
  for (size_t i = 0; i < keys.size(); ++i) content += keys[i] + "," + std::to_string(i) + "\n";
  auto db = MustOpen(dir.Write("prefixes.csv", content));
  ASSERT_TRUE(db);
  ASSERT_GT(db->size(), 40000u);  // many sample blocks
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(Get(*db, keys[i]), std::to_string(i) + "\n") << i;
    ASSERT_EQ(Get(*db, keys[i] + std::string(1, '\0')), "(miss)") << i;
    ASSERT_EQ(Get(*db, keys[i].substr(0, keys[i].size() - 1) + "~"), "(miss)") << i;
  }
  EXPECT_EQ(Get(*db, "a"), "(miss)");
  EXPECT_EQ(Get(*db, "ab"), std::to_string(std::find(keys.begin(), keys.end(), "ab") -
                                           keys.begin()) + "\n");
  size_t n = 0;
  db->ForEachPrefixed("c.u|sameprefix.01", 100000, [&n](const Line&) { ++n; });
  EXPECT_EQ(n, 1000u);
}

}  // namespace
}  // namespace clickatron::archive
