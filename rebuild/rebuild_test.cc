// Unit tests of the rebuild library's pieces: column merge, the external sort,
// segment files (checksums, truncation, order), metadata files, transactions.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>
#include <tuple>

#include "base/test_dir.h"
#include "keyformat/footer.h"
#include "keyformat/ymdh.h"
#include "rebuild/cluster_http.h"
#include "rebuild/column_merge.h"
#include "rebuild/file.h"
#include "rebuild/merged.h"
#include "rebuild/record_sorter.h"
#include "rebuild/segment_merge.h"
#include "rebuild/sorted_file.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) { return *ReadSmallFile(path); }

// Reads a whole segment only to verify it (footer, checksum, order); fills *summary.
Status VerifySegment(const std::string& path, FileSummary* summary) {
  SegmentReader reader;
  if (Status s = reader.Open(path); !s.ok()) return s;
  std::string_view key, value;
  FileSummary sum;
  while (reader.Next(&key, &value)) {
    sum.records++;
    sum.bytes += key.size() + value.size() + 2;
  }
  if (!reader.status().ok()) return reader.status();
  if (summary) *summary = sum;
  return Status::OK();
}

TEST(ColumnMerge, ConcatenatesInterleavesSumsAndDropsZeros) {
  std::string acc, scratch;
  ASSERT_TRUE(MergeColumnsInto(&acc, "c3p1:2 c3p4:1", &scratch).ok());
  EXPECT_EQ(acc, "c3p1:2 c3p4:1");
  ASSERT_TRUE(MergeColumnsInto(&acc, "c3p5:3", &scratch).ok());  // after: appended
  EXPECT_EQ(acc, "c3p1:2 c3p4:1 c3p5:3");
  ASSERT_TRUE(MergeColumnsInto(&acc, "c3a0:9", &scratch).ok());  // before: prepended
  EXPECT_EQ(acc, "c3a0:9 c3p1:2 c3p4:1 c3p5:3");
  ASSERT_TRUE(MergeColumnsInto(&acc, "c3p1:-2 c3p2:7 c3p5:1", &scratch).ok());
  EXPECT_EQ(acc, "c3a0:9 c3p2:7 c3p4:1 c3p5:4");
  EXPECT_EQ(CountColumns(acc), 4u);
  EXPECT_EQ(CountColumns(""), 0u);
  std::string big = "a:9223372036854775807 b:1";
  ASSERT_TRUE(MergeColumnsInto(&big, "a:1 b:-170141183460469231731687303715884105728", &scratch).ok());
  EXPECT_EQ(big, "a:9223372036854775808 b:-170141183460469231731687303715884105727");
  ASSERT_TRUE(MergeColumnsInto(&big, "a:-9223372036854775808", &scratch).ok());  // back inside int64
  EXPECT_EQ(big, "b:-170141183460469231731687303715884105727");
  std::string top = "a:170141183460469231731687303715884105727";
  Status s = MergeColumnsInto(&top, "a:1", &scratch);
  EXPECT_EQ(s.message(), "column 'a' sums past 128 bits");
  std::string x = "a:1 c:1";
  EXPECT_FALSE(MergeColumnsInto(&x, "b:zz", &scratch).ok());
  std::string all_zero = "US:2";
  ASSERT_TRUE(MergeColumnsInto(&all_zero, "US:-2", &scratch).ok());
  EXPECT_EQ(all_zero, "");
}

// Collects a sorter's output: "day/shard key,value".
class CollectSink : public LineSink {
 public:
  Status BeginGroup(Day day, uint32_t shard) override {
    group_ = (day == kLookupDay ? std::string("lookups") : FormatDay(day)) + "/" + std::to_string(shard);
    return Status::OK();
  }
  Status Lines(std::string_view block, uint64_t records, uint64_t columns) override {
    const size_t before = lines.size();
    for (size_t pos = 0; pos < block.size();) {
      const size_t nl = block.find('\n', pos);
      lines.push_back(group_ + " " + std::string(block.substr(pos, nl - pos)));
      pos = nl + 1;
    }
    EXPECT_EQ(lines.size() - before, records);
    this->columns += columns;
    return Status::OK();
  }
  Status EndGroup() override { return Status::OK(); }
  std::vector<std::string> lines;
  uint64_t columns = 0;

 private:
  std::string group_;
};

TEST(RecordSorter, TurnsRealtimeRecordsIntoSortedArchiveLines) {
  TestDir dir;
  RecordSorter sorter(SorterOptions{1, 64 << 20, dir.path(), kLookupDay, 0, 1});
  for (const char* line : {"u|b.c3p1,2", "u|a+.c3p0,1", "u|a.c3p5,4", "u|a.c3p0,3", "c.u|a.US.c3p0,2",
                           "c.u|a.JP.c3p0,1", "c.u|a.US.c3p0,1", "u|z.c3p0,5", "u|z.c3p0,-5",
                           "_l|h0aMB8AuNw4=,http://www.facebook.com/", "u|a.c3q0,1"}) {
    ASSERT_TRUE(sorter.Add(line).ok()) << line;
  }
  EXPECT_EQ(sorter.Days(), (std::vector<Day>{Day(*ParseDay("2012-03-25")), Day(*ParseDay("2012-03-26"))}));
  EXPECT_TRUE(sorter.has_lookups());
  CollectSink sink;
  ASSERT_TRUE(sorter.Finish(&sink, nullptr).ok());
  EXPECT_EQ(sink.lines, (std::vector<std::string>{
                            "2012-03-25/0 c.u|a.c3p0,JP:1 US:3",
                            "2012-03-25/0 u|a,c3p0:3 c3p5:4",  // before u|a+ (key order, not line order)
                            "2012-03-25/0 u|a+,c3p0:1",
                            "2012-03-25/0 u|b,c3p1:2",
                            "2012-03-26/0 u|a,c3q0:1",
                            "lookups/0 _l|h0aMB8AuNw4=,http://www.facebook.com/",
                        }));
  EXPECT_EQ(sink.columns, 7u);
}

TEST(RecordSorter, NamesTheProblemOfAMalformedLine) {
  TestDir dir;
  RecordSorter sorter(SorterOptions{1, 64 << 20, dir.path(), kLookupDay, Day(*ParseDay("2012-03-25")), 1});
  EXPECT_EQ(sorter.Add("u|a.c3p0").message(), "no ',' between key and value");
  EXPECT_EQ(sorter.Add("u|a.c3p0,1x").message(), "count '1x' of 'u|a.c3p0' is not a signed 128-bit integer");
  EXPECT_EQ(sorter.Add("u|a.c3p0,170141183460469231731687303715884105728").message(),
            "count '170141183460469231731687303715884105728' of 'u|a.c3p0' is not a signed 128-bit integer");
  EXPECT_NE(sorter.Add("u|a.c2u0,1").message().find("is not a date"), std::string::npos);
  EXPECT_EQ(sorter.Add("u|a.c3q0,1").message(), "record 'u|a.c3q0' is of day 2012-03-26, not 2012-03-25");
  EXPECT_EQ(sorter.Add("_l|h0aMB8AuNw4=,").message(), "lookup '_l|h0aMB8AuNw4=' has an empty original");
  EXPECT_FALSE(sorter.Add("_l|h0aMB8AuNw4=,50%").ok());
  EXPECT_EQ(sorter.stats().records_in, 0u);
}

// Realtime records of `users` users in three hours: totals, referrer subtotals (300 users,
// one hashed referrer) and, with countries, country subtotals (every tenth user hashed);
// then two different originals of one hash (a collision).
std::vector<std::string> SorterInput(int users, bool countries) {
  std::vector<std::string> input;
  for (int u = 0; u < users; ++u) {
    for (int h : {3, 0, 17}) {
      std::string t = std::string("c3p") + "0123456789abcdefghijklmn"[h];
      input.push_back("u|user" + std::to_string(u * 7919 % users) + "." + t + "," + std::to_string(u % 5 + 1));
      input.push_back("r.u|user" + std::to_string(u % 300) + ".HMCJVIkxxP4=." + t + ",1");
      if (countries) {
        input.push_back("c.u|" + std::string(u % 10 == 0 ? "HMCJVIkxxP4=" : "user" + std::to_string(u)) + ".US." + t +
                        ",-1");
      }
    }
  }
  input.push_back("_l|HMCJVIkxxP4=,http://twitter.com/");
  input.push_back("_l|HMCJVIkxxP4=,http://other.example/");
  return input;
}

TEST(RecordSorter, SpillsRunsAndMergesThemToTheSameOutput) {
  TestDir dir;
  const std::vector<std::string> input = SorterInput(20000, /*countries=*/false);
  std::vector<std::string> outputs[2];
  for (int pass = 0; pass < 2; ++pass) {
    const std::string runs = dir.path() + "/" + std::to_string(pass);
    fs::create_directory(runs);
    RecordSorter sorter(SorterOptions{3, pass == 0 ? uint64_t(1) << 20 : uint64_t(256) << 20, runs, kLookupDay, 0,
                                      uint32_t(pass + 1)});
    for (const std::string& line : input) ASSERT_TRUE(sorter.Add(line).ok());
    CollectSink sink;
    std::vector<std::string> collisions;
    ASSERT_TRUE(sorter.Finish(&sink, [&](const std::string& c) { collisions.push_back(c); }).ok());
    EXPECT_EQ(pass == 0, sorter.stats().runs > 2) << sorter.stats().runs;
    ASSERT_EQ(collisions.size(), 1u);
    EXPECT_EQ(collisions[0],
              "hash collision: _l|HMCJVIkxxP4= is both 'http://other.example/' (kept) and 'http://twitter.com/'");
    EXPECT_EQ(sorter.stats().collisions, 1u);
    outputs[pass] = sink.lines;
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_EQ(outputs[0].size(), 20000u + 300 * 3 + 1);
}

// Keys that are prefixes of each other and share up to ~30 bytes, around the 24 inline
// bytes of an entry: runs are front coded from the entries' words and tails, and must
// give back exactly what sorting in memory gives.
TEST(RecordSorter, RunsKeepKeysThatShareBytesAcrossTheInlineOnes) {
  TestDir dir;
  std::mt19937_64 rng(11);
  std::vector<std::string> input;
  auto name = [&rng](size_t most, const char* letters) {
    std::string n(1 + rng() % most, 'a');
    for (char& c : n) c = letters[rng() % 3];
    return n;
  };
  for (int i = 0; i < 40000; ++i) {
    const std::string t = std::string("c3p") + "0123456789abcdefghijklmn"[rng() % 24];
    input.push_back("u|" + name(11, "ab+") + "." + t + "," + std::to_string(int(rng() % 7) - 3));
    input.push_back("c.u|" + name(11, "ab+") + "." + name(11, "abz") + "." + t + ",1");
  }
  std::vector<std::string> outputs[2];
  for (int pass = 0; pass < 2; ++pass) {
    const std::string runs = dir.path() + "/" + std::to_string(pass);
    fs::create_directory(runs);
    RecordSorter sorter(SorterOptions{1, pass == 0 ? uint64_t(1) << 20 : uint64_t(256) << 20, runs, kLookupDay, 0, 1});
    for (const std::string& line : input) ASSERT_TRUE(sorter.Add(line).ok()) << line;
    CollectSink sink;
    ASSERT_TRUE(sorter.Finish(&sink, nullptr).ok());
    EXPECT_EQ(pass == 0, sorter.stats().runs > 2) << sorter.stats().runs;
    outputs[pass] = sink.lines;
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_GT(outputs[0].size(), 10000u);
}

// Counts past int64 (docs/rebuild.md#counts): a wide count in the input, INT64_MIN (the
// entries' mark of a wide count), equal keys whose sum leaves int64 or lands on INT64_MIN,
// in one batch and across runs, through the merge's pipe or not: all exact.
TEST(RecordSorter, CountsPastInt64AreExactInMemoryAndThroughRuns) {
  TestDir dir;
  const std::vector<std::pair<std::string, std::vector<std::string>>> wide = {
      {"u|w1.c3p0", {"9223372036854775807", "9223372036854775807", "9223372036854775807"}},
      {"u|w2.c3p0", {"170141183460469231731687303715884105727", "-170141183460469231731687303715884105728", "1"}},
      {"u|w3.c3p0", {"-9223372036854775808"}},
      {"u|w4.c3p0", {"-4611686018427387904", "-4611686018427387904"}},
      {"u|w5.c3p0", {"18446744073709551616", "-18446744073709551615"}},
      {"c.u|w6.US.c3p0", {"9223372036854775807", "9223372036854775807", "-1"}},
  };
  std::vector<std::string> input;
  for (int i = 0; i < 90000; ++i) input.push_back("u|f" + std::to_string(i) + ".c3p0,1");
  for (size_t k = 0; k < wide.size(); ++k) {
    for (size_t j = 0; j < wide[k].second.size(); ++j) {  // spread over the runs
      input.insert(input.begin() + ptrdiff_t((j + 1) * 30000 + k * (j == 2 ? 0 : 1)), wide[k].first + "," + wide[k].second[j]);
    }
  }
  std::vector<std::string> outputs[2];
  for (int pass = 0; pass < 2; ++pass) {
    const std::string runs = dir.path() + "/" + std::to_string(pass);
    fs::create_directory(runs);
    RecordSorter sorter(SorterOptions{1, pass == 0 ? uint64_t(1) << 20 : uint64_t(256) << 20, runs, kLookupDay, 0,
                                      uint32_t(pass + 1)});
    for (const std::string& line : input) ASSERT_TRUE(sorter.Add(line).ok()) << line;
    CollectSink sink;
    ASSERT_TRUE(sorter.Finish(&sink, nullptr).ok());
    EXPECT_EQ(pass == 0, sorter.stats().runs > 2) << sorter.stats().runs;
    for (const std::string& line : sink.lines) {
      if (line.find("|w") != std::string::npos) outputs[pass].push_back(line);
    }
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_EQ(outputs[0], (std::vector<std::string>{
                            "2012-03-25/0 c.u|w6.c3p0,US:18446744073709551613",
                            "2012-03-25/0 u|w1,c3p0:27670116110564327421",
                            "2012-03-25/0 u|w3,c3p0:-9223372036854775808",
                            "2012-03-25/0 u|w4,c3p0:-9223372036854775808",
                            "2012-03-25/0 u|w5,c3p0:1",
                        }));
}

TEST(RecordSorter, ASumLeaving128BitsIsAnError) {
  TestDir dir;
  {
    RecordSorter sorter(SorterOptions{1, 64 << 20, dir.path(), kLookupDay, 0, 1});
    ASSERT_TRUE(sorter.Add("u|a.c3p0,170141183460469231731687303715884105727").ok());
    EXPECT_EQ(sorter.Add("u|a.c3p0,170141183460469231731687303715884105727").message(),
              "the counts of 'u|a' c3p0 leave 128 bits");  // two wide counts of one key
    ASSERT_TRUE(sorter.Add("u|a.c3p0,1").ok());               // a wide and an inline one
    CollectSink sink;
    EXPECT_EQ(sorter.Finish(&sink, nullptr).message(), "the counts of one record leave 128 bits");
  }
  {
    RecordSorter sorter(SorterOptions{1, 64 << 20, dir.path(), kLookupDay, 0, 1});
    ASSERT_TRUE(sorter.Add("u|a.c3p0,-170141183460469231731687303715884105728").ok());
    ASSERT_TRUE(sorter.Add("u|a.c3p0,-1").ok());
    CollectSink sink;
    EXPECT_EQ(sorter.Finish(&sink, nullptr).message(), "the counts of one record leave 128 bits");
  }
}

TEST(RecordSorter, FeedersOnSeveralThreadsSortLikeOne) {
  TestDir dir;
  const std::vector<std::string> input = SorterInput(50000, /*countries=*/true);
  std::vector<std::string> outputs[2];
  for (int pass = 0; pass < 2; ++pass) {
    const std::string runs = dir.path() + "/" + std::to_string(pass);
    fs::create_directory(runs);
    // Pass 1: two feeders of ~4.75 MiB each, so both spill several runs.
    const uint32_t threads = pass == 0 ? 1 : 2;
    RecordSorter sorter(SorterOptions{2, pass == 0 ? uint64_t(256) << 20 : uint64_t(10) << 20, runs, kLookupDay, 0,
                                      threads, threads});
    ASSERT_EQ(sorter.feeder_count(), threads);
    std::vector<std::thread> feeders;
    for (uint32_t f = 0; f < threads; ++f) {
      feeders.emplace_back([&, f] {
        for (size_t i = 0; i < input.size(); ++i) {
          if (i / 1000 % threads == f) {
            ASSERT_TRUE(sorter.feeder(f)->Add(input[i]).ok());
          }
        }
      });
    }
    for (std::thread& t : feeders) t.join();
    EXPECT_EQ(sorter.stats().records_in, input.size());
    CollectSink sink;
    std::vector<std::string> collisions;
    ASSERT_TRUE(sorter.Finish(&sink, [&](const std::string& c) { collisions.push_back(c); }).ok());
    EXPECT_EQ(pass == 0, sorter.stats().runs == 0) << sorter.stats().runs;
    EXPECT_EQ(collisions.size(), 1u);
    outputs[pass] = sink.lines;
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  // totals, referrer lines, country lines (the hashed users share one key), the lookup
  EXPECT_EQ(outputs[0].size(), 50000u + 300 * 3 + (45000 * 3 + 3) + 1);
}

TEST(OpenInput, RegularFilesStandardInputAndErrors) {
  TestDir dir;
  InputFile in;
  ASSERT_TRUE(OpenInput(dir.Write("f", "12345"), &in).ok());
  EXPECT_GE(in.fd, 0);
  EXPECT_TRUE(in.owned);
  EXPECT_TRUE(in.regular);
  EXPECT_EQ(in.size, 5u);
  ::close(in.fd);
  InputFile std_in;
  ASSERT_TRUE(OpenInput("-", &std_in).ok());
  EXPECT_EQ(std_in.fd, 0);
  EXPECT_FALSE(std_in.owned);
  EXPECT_FALSE(std_in.regular);
  InputFile missing;
  EXPECT_EQ(OpenInput(dir / "missing", &missing).message(),
            "open " + (dir / "missing") + ": No such file or directory");
}

TEST(ForEachBlock, PassesEveryByteInOrderInBlocksOfAtMostTheSize) {
  TestDir dir;
  std::string contents;
  for (int i = 0; i < 1000; ++i) contents += std::to_string(i) + ",";
  const std::string path = dir.Write("f", contents);
  std::string seen;
  size_t blocks = 0;
  ASSERT_TRUE(ForEachBlock(path, 100, [&](std::string_view block) {
    EXPECT_LE(block.size(), 100u);
    EXPECT_FALSE(block.empty());
    seen.append(block);
    ++blocks;
  }).ok());
  EXPECT_EQ(seen, contents);
  EXPECT_GE(blocks, contents.size() / 100);
  blocks = 0;
  ASSERT_TRUE(ForEachBlock(dir.Write("empty", ""), 100, [&](std::string_view) { ++blocks; }).ok());
  EXPECT_EQ(blocks, 0u);
}

TEST(ForEachBlock, NamesTheFailingCallAndPath) {
  TestDir dir;
  const auto ignore = [](std::string_view) {};
  EXPECT_EQ(ForEachBlock(dir / "missing", 100, ignore).message(),
            "open " + (dir / "missing") + ": No such file or directory");
  EXPECT_EQ(ForEachBlock(dir.path(), 100, ignore).message(),
            "read " + dir.path() + ": Is a directory");
}

TEST(FileWriter, DirectWritesKeepEveryByteAtEverySize) {
  TestDir dir;
  // Around the 4 KiB block and the (small) buffer, in small and in oversized pieces.
  for (size_t size : {size_t(0), size_t(1), size_t(4095), size_t(4096), size_t(4097), size_t(20000), size_t(40960)}) {
    for (size_t piece : {size_t(7), size_t(5000), size_t(50000)}) {
      std::string bytes(size, '\0');
      for (size_t i = 0; i < size; ++i) bytes[i] = char('a' + i * 7 % 26);
      const std::string path = dir.path() + "/f" + std::to_string(size) + "-" + std::to_string(piece);
      FileWriter w;
      ASSERT_TRUE(w.Open(path, 8192, /*direct=*/true).ok());
      for (size_t i = 0; i < size; i += piece) ASSERT_TRUE(w.Append(std::string_view(bytes).substr(i, piece)).ok());
      ASSERT_TRUE(w.SyncAndClose().ok());
      EXPECT_EQ(w.bytes(), size);
      EXPECT_EQ(ReadAll(path), bytes) << size << " in pieces of " << piece;
    }
  }
}

TEST(BlockReader, ReadsEveryByteInBlocks) {
  TestDir dir;
  for (size_t size : {size_t(0), size_t(1), size_t(4096), size_t(8192), size_t(10000), size_t(300000)}) {
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i) bytes[i] = char(i * 131 % 251);
    const std::string path = dir.path() + "/b" + std::to_string(size);
    std::ofstream(path, std::ios::binary) << bytes;
    BlockReader reader;
    ASSERT_TRUE(reader.Open(path, 8192).ok());
    std::string got;
    std::string_view block;
    do {
      ASSERT_TRUE(reader.Next(&block).ok());
      EXPECT_LE(block.size(), 8192u);
      got.append(block);
    } while (!block.empty());
    EXPECT_EQ(got, bytes) << size;
  }
  BlockReader missing;
  EXPECT_FALSE(missing.Open(dir.path() + "/none").ok());
}

TEST(SortedFiles, ASegmentIsReadBackAndItsDamageIsFound) {
  TestDir dir;
  const std::string path = dir.path() + "/s.seg";
  SortedFileWriter w;
  ASSERT_TRUE(w.Open(path, true).ok());
  ASSERT_TRUE(w.Add("ab", "c3p0:1", 1).ok());
  ASSERT_TRUE(w.Add("ab+", "c3p0:2", 1).ok());
  ASSERT_TRUE(w.Finish().ok());
  EXPECT_EQ(w.summary().records, 2u);
  EXPECT_EQ(w.summary().bytes, 21u);
  const std::string good = ReadAll(path);
  EXPECT_EQ(good.substr(0, 21), "ab,c3p0:1\nab+,c3p0:2\n");
  FileSummary sum;
  EXPECT_TRUE(VerifySegment(path, &sum).ok());
  EXPECT_EQ(sum.records, 2u);

  auto damaged = [&](const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    return VerifySegment(path, nullptr).message();
  };
  std::string flipped = good;
  flipped[5] = '9';
  EXPECT_NE(damaged(flipped).find("checksum mismatch"), std::string::npos);
  EXPECT_NE(damaged(good.substr(0, 21)).find("without its #END footer"), std::string::npos);
  EXPECT_NE(damaged(good.substr(0, good.size() - 1)).find("no final newline"), std::string::npos);
  EXPECT_NE(damaged(good + "x,1\n").find("data after the #END footer"), std::string::npos);
  const std::string swapped = "ab+,c3p0:2\nab,c3p0:1\n";
  EXPECT_NE(damaged(swapped + FormatFooter(Footer{2, XXH64(swapped.data(), swapped.size(), 0)}))
                .find("line 2: key 'ab' is out of order"),
            std::string::npos);
}

TEST(SegmentMerge, ReadingAheadMergesAndFailsLikeReadingInLine) {
  TestDir dir;
  // Two big inputs (several read-ahead blocks each) with keys of their own and shared
  // ones, and a small one; written as segments.
  std::vector<std::string> paths;
  for (int input = 0; input < 3; ++input) {
    const std::string path = dir.path() + "/in" + std::to_string(input) + ".seg";
    SortedFileWriter w;
    ASSERT_TRUE(w.Open(path, true).ok());
    const int n = input == 2 ? 50 : 60000;
    for (int i = 0; i < n; ++i) {
      char key[32];
      std::snprintf(key, sizeof key, "u|user%07d", input == 2 ? i * 1000 : i * 2 + (i % 3 == 0 ? 0 : input));
      const std::string value = std::string("c3p") + char('0' + input) + ":" + std::to_string(i + 1);
      ASSERT_TRUE(w.Add(key, value, 1).ok());
    }
    ASSERT_TRUE(w.Finish().ok());
    paths.push_back(path);
  }
  auto merge = [&](unsigned threads, const std::vector<std::string>& inputs, std::string* bytes) {
    const std::string out_path = dir.path() + "/out" + std::to_string(threads);
    SortedFileWriter out;
    EXPECT_TRUE(out.Open(out_path, false).ok());
    MergeStats stats;
    Status s = MergeSegments(inputs, &out, &stats, nullptr, nullptr, threads);
    if (s.ok()) s = out.Finish();
    if (s.ok()) *bytes = ReadAll(out_path);
    return s;
  };
  std::string one, two;
  ASSERT_TRUE(merge(1, paths, &one).ok());
  ASSERT_TRUE(merge(2, paths, &two).ok());
  EXPECT_EQ(one, two);
  EXPECT_GT(one.size(), size_t(2) << 20);
  EXPECT_NE(one.find("u|user0000000,c3p0:1 c3p1:1 c3p2:1\n"), std::string::npos);
  // A byte changed in the middle of an input: the checksum says so, either way.
  std::string damaged = ReadAll(paths[1]);
  damaged[damaged.size() / 2] = damaged[damaged.size() / 2] == '1' ? '2' : '1';
  std::ofstream(paths[1], std::ios::binary | std::ios::trunc) << damaged;
  const Status e1 = merge(1, paths, &one), e2 = merge(2, paths, &two);
  EXPECT_NE(e1.message().find("checksum mismatch"), std::string::npos) << e1.message();
  EXPECT_EQ(e1.message(), e2.message());
}

TEST(MetaFiles, MergedMetaRoundTripsAndRefusesDamage) {
  TestDir dir;
  MergedInfo info;
  info.inputs = "0123456789abcdef";
  info.shards = 2;
  info.last_day = "2012-04-01";
  info.collisions = 1;
  info.files = {FileSummary{3, 45, 0xff, 6}, FileSummary{0, 0, 0xef46db3751d8e999ull, 0}};
  ASSERT_TRUE(WriteMergedInfo(dir.path(), info).ok());
  EXPECT_EQ(ReadAll(dir.path() + "/meta"),
            "inputs = 0123456789abcdef\nshards = 2\nlast_day = 2012-04-01\ncollisions = 1\n"
            "shard.0.records = 3\nshard.0.bytes = 45\nshard.0.xxh64 = 00000000000000ff\nshard.0.columns = 6\n"
            "shard.1.records = 0\nshard.1.bytes = 0\nshard.1.xxh64 = ef46db3751d8e999\nshard.1.columns = 0\n");
  Result<MergedInfo> back = ReadMergedInfo(dir.path());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->inputs, info.inputs);
  EXPECT_EQ(back->shards, 2u);
  EXPECT_EQ(back->last_day, info.last_day);
  EXPECT_EQ(back->collisions, 1u);
  ASSERT_EQ(back->files.size(), 2u);
  EXPECT_EQ(back->files[0].bytes, 45u);
  EXPECT_EQ(back->files[1].xxh64, 0xef46db3751d8e999ull);
  // The counts are read like every other metadata count (keyformat/key_value.h ParseCount).
  const std::string good = ReadAll(dir.path() + "/meta");
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"shard.0.records = 3", "shard.0.records = 3x"}, {"shard.0.bytes = 45", "shard.0.bytes = -45"},
           {"shard.0.columns = 6\n", ""}, {"shards = 2", "shards = 0"}, {"collisions = 1", "collisions = +1"},
           {"shard.1.xxh64 = ef46db3751d8e999", "shard.1.xxh64 = EF46DB3751D8E999"}, {"inputs = 0123456789abcdef\n", ""}}) {
    std::string damaged = good;
    damaged.replace(damaged.find(from), from.size(), to);
    std::ofstream(dir.path() + "/meta", std::ios::trunc) << damaged;
    EXPECT_EQ(ReadMergedInfo(dir.path()).status().message(), dir.path() + "/meta is damaged") << to;
  }
  std::ofstream(dir.path() + "/meta", std::ios::trunc) << "inputs = x\nnonsense\n";
  EXPECT_EQ(ReadMergedInfo(dir.path()).status().message(), dir.path() + "/meta: line 2: 'nonsense' is not 'key = value'");
  // `rollups = 1`: the files' rollups carry their masks (absent in a meta of an older merge).
  EXPECT_FALSE(back->rollups);
  info.rollups = true;
  ASSERT_TRUE(WriteMergedInfo(dir.path(), info).ok());
  EXPECT_EQ(ReadAll(dir.path() + "/meta"), good + "rollups = 1\n");
  back = ReadMergedInfo(dir.path());
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->rollups);
  std::ofstream(dir.path() + "/meta", std::ios::trunc) << good + "rollups = 2\n";
  EXPECT_EQ(ReadMergedInfo(dir.path()).status().message(), dir.path() + "/meta is damaged");
}

TEST(MetaFiles, SegmentMetaRoundTripsAndRefusesDamage) {
  TestDir dir;
  SegmentInfo info;
  info.dir = dir.path();
  info.name = "2012-03-25.1";
  info.span = "2012-03-25";
  info.shards = 1;
  info.covers = {{"2012-03-25", "export-0123456789abcdef"}};
  info.files = {FileSummary{2, 21, 0xabc, 2}};
  const std::string text = FormatSegmentMeta(info);
  EXPECT_EQ(text, "span = 2012-03-25\nshards = 1\ncovers = 2012-03-25 export-0123456789abcdef\n"
                  "shard.0.records = 2\nshard.0.bytes = 21\nshard.0.xxh64 = 0000000000000abc\nshard.0.columns = 2\n");
  std::ofstream(dir.path() + "/meta") << text;
  Result<SegmentInfo> back = ReadSegmentInfo(dir.path(), info.name);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(FormatSegmentMeta(*back), text);
  const std::string what = "segment " + dir.path() + ": ";
  for (const auto& [from, to, error] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"shards = 1", "shards = 1x", "bad 'shards'"},
           {"shards = 1", "shards = 65536", "bad 'shards'"},
           {"shard.0.records = 2", "shard.0.records = 2.0", "bad metadata for shard 0"},
           {"shard.0.xxh64 = 0000000000000abc", "shard.0.xxh64 = abc", "bad metadata for shard 0"},
           {"shard.0.columns = 2\n", "", "bad metadata for shard 0"},
           {"covers = 2012-03-25 export-0123456789abcdef", "covers = 2012-03-25",
            "bad 'covers' line '2012-03-25'"}}) {
    std::string damaged = text;
    damaged.replace(damaged.find(from), from.size(), to);
    std::ofstream(dir.path() + "/meta", std::ios::trunc) << damaged;
    EXPECT_EQ(ReadSegmentInfo(dir.path(), info.name).status().message(), what + error) << to;
  }
}

Status MakeSegment(const std::string& dir, const std::string& name, const std::string& day) {
  SegmentDirWriter w(dir, name, day, 1);
  if (Status s = w.Open(); !s.ok()) return s;
  w.Cover(day, "test");
  Result<SortedFileWriter*> f = w.Shard(0);
  if (!f.ok()) return f.status();
  if (Status s = (*f)->Add("u|a", "c3p0:1", 1); !s.ok()) return s;
  return w.Finish();
}

TEST(WorkDir, TransactionsApplyWholeOrNotAtAll) {
  TestDir dir;
  {
    WorkDir work(dir.path());
    ASSERT_TRUE(work.Open().ok());
    {
      Transaction txn(work);
      ASSERT_TRUE(txn.Begin().ok());
      ASSERT_TRUE(MakeSegment(txn.StagingPath("2012-03-25.1"), "2012-03-25.1", "2012-03-25").ok());
      txn.AddSegment("2012-03-25.1");
      ASSERT_TRUE(txn.Commit().ok());
    }
    {
      Transaction abandoned(work);  // never committed: deleted, changes nothing
      ASSERT_TRUE(abandoned.Begin().ok());
      ASSERT_TRUE(MakeSegment(abandoned.StagingPath("2012-03-26.2"), "2012-03-26.2", "2012-03-26").ok());
      abandoned.AddSegment("2012-03-26.2");
    }
    Result<std::vector<SegmentInfo>> segs = work.Segments();
    ASSERT_TRUE(segs.ok());
    ASSERT_EQ(segs->size(), 1u);
    EXPECT_EQ((*segs)[0].span, "2012-03-25");
    EXPECT_EQ((*segs)[0].covers.at("2012-03-25"), "test");
    EXPECT_EQ((*segs)[0].files[0].records, 1u);
    EXPECT_EQ(LastCoveredDay(*segs), "2012-03-25");
    EXPECT_FALSE(WorkDir(dir.path()).Open().ok());  // locked while `work` is open
  }
  // A commit that was interrupted after COMMIT was written is finished by the next Open;
  // one without COMMIT is deleted.
  fs::create_directories(dir.path() + "/txn/a");
  ASSERT_TRUE(MakeSegment(dir.path() + "/txn/a/2012-03-27.3", "2012-03-27.3", "2012-03-27").ok());
  std::ofstream(dir.path() + "/txn/a/COMMIT") << "remove 2012-03-25.1\nadd 2012-03-27.3\n";
  fs::create_directories(dir.path() + "/txn/b/2012-03-28.4");
  WorkDir work(dir.path());
  ASSERT_TRUE(work.Open().ok());
  Result<std::vector<SegmentInfo>> segs = work.Segments();
  ASSERT_TRUE(segs.ok());
  ASSERT_EQ(segs->size(), 1u);
  EXPECT_EQ((*segs)[0].name, "2012-03-27.3");
  EXPECT_TRUE(fs::is_empty(dir.path() + "/txn"));
  EXPECT_NE(CheckShardCount(*segs, 2).message().find("written for 1 archive shards, not 2"), std::string::npos);
}

TEST(WorkDir, TasksShareTheDirectoryAndRecoverOnlyTheirOwnChanges) {
  TestDir dir;
  // Changes left by two killed tasks: each with and without COMMIT.
  fs::create_directories(dir.path() + "/txn/segment-2012-03-27.1");
  ASSERT_TRUE(MakeSegment(dir.path() + "/txn/segment-2012-03-27.1/2012-03-27.3", "2012-03-27.3", "2012-03-27").ok());
  std::ofstream(dir.path() + "/txn/segment-2012-03-27.1/COMMIT") << "add 2012-03-27.3\n";
  fs::create_directories(dir.path() + "/txn/segment-2012-03-2.2/x");  // a name that only starts alike
  fs::create_directories(dir.path() + "/txn/late-0.3/2012-03-28.4");
  {
    WorkDir a(dir.path()), b(dir.path()), again(dir.path()), local(dir.path());
    ASSERT_TRUE(a.OpenTask("segment-2012-03-27").ok());
    EXPECT_EQ(a.TxnPrefix(), "segment-2012-03-27.");
    // Its own committed change is finished, nobody else's is touched.
    Result<std::vector<SegmentInfo>> segs = a.Segments();
    ASSERT_TRUE(segs.ok());
    ASSERT_EQ(segs->size(), 1u);
    EXPECT_EQ((*segs)[0].name, "2012-03-27.3");
    EXPECT_TRUE(fs::exists(dir.path() + "/txn/late-0.3"));
    EXPECT_TRUE(fs::exists(dir.path() + "/txn/segment-2012-03-2.2"));
    // Another task runs beside it; the same task twice, or a local command, does not.
    ASSERT_TRUE(b.OpenTask("merge-0-1").ok());
    EXPECT_NE(again.OpenTask("segment-2012-03-27").message().find("task segment-2012-03-27 is already running"),
              std::string::npos);
    EXPECT_NE(local.Open().message().find("in use by another clickatron-rebuild"), std::string::npos);
    // A task's transaction is named after it.
    Transaction txn(a);
    ASSERT_TRUE(txn.Begin().ok());
    EXPECT_NE(txn.StagingPath("x").find("/txn/segment-2012-03-27."), std::string::npos);
  }
  {
    // A local command holding the directory keeps every task out.
    WorkDir local(dir.path()), task(dir.path());
    ASSERT_TRUE(local.Open().ok());
    EXPECT_NE(task.OpenTask("late-0").message().find("in use by a local clickatron-rebuild"), std::string::npos);
    // Shared (the Slurm driver while its graph runs): tasks may open it.
    ASSERT_TRUE(local.ShareLock().ok());
    EXPECT_TRUE(task.OpenTask("late-0").ok());
    EXPECT_FALSE(fs::exists(dir.path() + "/txn/late-0.3"));  // recovered by the local Open already
  }
}

TEST(MemorySize, ParsesSuffixes) {
  EXPECT_EQ(*ParseMemorySize("2G"), 2ull << 30);
  EXPECT_EQ(*ParseMemorySize("512m"), 512ull << 20);
  EXPECT_EQ(*ParseMemorySize("4096"), 4096ull);
  EXPECT_FALSE(ParseMemorySize("").ok());
  EXPECT_FALSE(ParseMemorySize("-1G").ok());
  EXPECT_FALSE(ParseMemorySize("2X").ok());
}

}  // namespace
}  // namespace clickatron::rebuild
