// Unit tests of the parallel rollup stage (parallel_rollups.h): where it cuts, and that its
// output is byte for byte that of one RollupWriter, key-months larger than a chunk and
// errors included.
#include <gtest/gtest.h>

#include <random>

#include "keyformat/columns.h"
#include "rebuild/memory_record_writer.h"
#include "rebuild/parallel_rollups.h"
#include "rebuild/rollup.h"

namespace clickatron::rebuild {
namespace {

using MemoryWriter = MemoryRecordWriter;

TEST(ParallelRollups, CutsOnlyBetweenKeyMonths) {
  // Between two keys, and between two months of one key.
  EXPECT_EQ(ParallelRollups::CutPoint("c.u|a.c41k,US:1\nc.u|b.c41k,US:1\n", 1000), 16u);
  EXPECT_EQ(ParallelRollups::CutPoint("c.u|a.c41k,US:1\nc.u|a.c51k,US:1\n", 1000), 16u);
  // Not within a key's month: the last allowed place further back.
  EXPECT_EQ(ParallelRollups::CutPoint("c.u|a.c41k,US:1\nc.u|b.c41k,US:1\nc.u|b.c42k,US:1\n", 1000), 16u);
  EXPECT_EQ(ParallelRollups::CutPoint("c.u|a.c41k,US:1\nc.u|a.c42k,US:1\n", 1000), 0u);
  // A rollup line of the input belongs to its key's month, like its hours.
  EXPECT_EQ(ParallelRollups::CutPoint("c.u|a.c41k,US:1\nc.u|b.c4,US:1\nc.u|b.c41,US:1\nc.u|b.c41k,US:1\n", 1000),
            16u);
  // Next to a total or a lookup, always.
  EXPECT_EQ(ParallelRollups::CutPoint("c.u|a.c41k,US:1\nu|a,c41k:1\n", 1000), 16u);
  EXPECT_EQ(ParallelRollups::CutPoint("_l|x,y\nc.u|a.c41k,US:1\nc.u|a.c41l,US:1\n", 1000), 7u);
  // Not further back than asked; nothing in one line or a torn one.
  EXPECT_EQ(ParallelRollups::CutPoint("c.u|a.c41k,US:1\nc.u|b.c41k,US:1\nc.u|b.c41l,US:1\n", 20), 0u);
  EXPECT_EQ(ParallelRollups::CutPoint("c.u|a.c41k,US:1\n", 1000), 0u);
  EXPECT_EQ(ParallelRollups::CutPoint("c.u|a.c41k,US:1\nc.u|b.c41k,US:1", 1000), 0u);
}

// A sorted merged stream of `keys` keys: lookups, then country and referrer subtotals over
// two months (rollup lines of an older merge among them), then totals. Key 3 has a month of
// several MiB (continued over chunks), every 50th one of about 100 KiB.
std::string Stream(std::mt19937_64& rng, int keys) {
  std::string out;
  for (int k = 10; k < 30; ++k) out += "_l|h" + std::to_string(k) + ",http://example.com/" + std::to_string(k) + "\n";
  for (const char* ns : {"c.u|k", "r.u|k"}) {
    for (int k = 0; k < keys; ++k) {
      char key[32];
      std::snprintf(key, sizeof key, "%s%05d.", ns, k);
      const int subkeys = k == 3 ? 20000 : k % 50 == 0 ? 400 : 1 + int(rng() % 6);
      for (char month : std::string("45")) {
        if (rng() % 5 == 0) out += std::string(key) + "c" + month + ",.1:7 US:1\n";  // replaced
        for (char day : std::string("12")) {
          for (char hour : std::string("05an")) {
            if (rng() % 4 == 0) continue;
            std::string value;
            for (int s = 0; s < subkeys; ++s) {
              if (subkeys > 1 && rng() % 3 == 0) continue;
              char name[16];
              std::snprintf(name, sizeof name, "s%04d", s);
              AppendColumn(&value, 0, name, int64_t(rng() % 9) - 2);
            }
            if (!value.empty()) out += std::string(key) + "c" + month + day + hour + "," + value + "\n";
          }
        }
      }
    }
  }
  for (int k = 0; k < keys; ++k) {
    char key[32];
    std::snprintf(key, sizeof key, "u|k%05d,c410:1 c411:2\n", k);
    out += key;
  }
  return out;
}

TEST(ParallelRollups, WritesWhatOneRollupWriterWrites) {
  std::mt19937_64 rng(11);
  const std::string in = Stream(rng, 3000);
  ASSERT_GT(in.size(), size_t(8) << 20);
  for (bool limited : {false, true}) {
    RollupLimits limits;
    if (limited) limits.max_held_bytes = 200 << 10;  // key 3's month streams, past the limit
    MemoryWriter one;
    RollupWriter serial(&one, limits);
    ASSERT_TRUE(serial.AddLines(in, 0, 0).ok());
    ASSERT_TRUE(serial.Finish().ok());
    for (unsigned workers : {1u, 2u, 3u}) {
      MemoryWriter many;
      ParallelRollups parallel(&many, workers, limits);
      // In pieces of any size, and some lines one by one through Add().
      for (size_t pos = 0; pos < in.size();) {
        size_t end = std::min(in.size(), pos + 1 + size_t(rng() % 300000));
        end = in.find('\n', end - 1) + 1;
        if (rng() % 4 == 0) {
          const std::string_view line(in.data() + pos, in.find('\n', pos) - pos);
          const size_t comma = line.find(',');
          ASSERT_TRUE(parallel.Add(line.substr(0, comma), line.substr(comma + 1), 0).ok());
          pos += line.size() + 1;
          continue;
        }
        ASSERT_TRUE(parallel.AddLines(std::string_view(in).substr(pos, end - pos), 0, 0).ok());
        pos = end;
      }
      ASSERT_TRUE(parallel.Finish().ok());
      ASSERT_EQ(many.bytes, one.bytes) << workers << " workers, limited " << limited;
      EXPECT_EQ(many.records, one.records);
      EXPECT_EQ(many.columns, one.columns);
      const RollupStats a = serial.stats(), b = parallel.stats();
      EXPECT_EQ(b.days, a.days);
      EXPECT_EQ(b.months, a.months);
      EXPECT_EQ(b.unfolded, a.unfolded);
      EXPECT_EQ(b.limited, a.limited);
      EXPECT_EQ(b.dropped, a.dropped);
      EXPECT_GT(a.days, 1000u);
      EXPECT_GT(a.dropped, 100u);
    }
  }
}

TEST(ParallelRollups, AMalformedLineIsTheErrorOfFinish) {
  std::mt19937_64 rng(5);
  std::string in = Stream(rng, 400);
  const size_t at = in.find("c.u|k00300.");
  ASSERT_NE(at, std::string::npos);
  in.insert(in.find(',', at) + 1, "US:x ");
  MemoryWriter out;
  ParallelRollups parallel(&out, 2);
  Status s;
  for (size_t pos = 0; s.ok() && pos < in.size();) {
    const size_t end = in.find('\n', std::min(in.size() - 1, pos + 65535)) + 1;
    s = parallel.AddLines(std::string_view(in).substr(pos, end - pos), 0, 0);
    pos = end;
  }
  const Status finished = parallel.Finish();
  EXPECT_FALSE(finished.ok());
  EXPECT_NE(finished.message().find("c.u|k00300."), std::string::npos) << finished.message();
  EXPECT_FALSE(parallel.AddLines("u|a,c410:1\n", 1, 1).ok());
}

}  // namespace
}  // namespace clickatron::rebuild
