#include "keyformat/manifest.h"

#include <gtest/gtest.h>

namespace clickatron {
namespace {

TEST(Manifest, Parses) {
  auto m = ParseManifest(
      "# written by rebuild\ngeneration = 20260321-1\nlast_day = 2026-03-20\nshards = 2\n"
      "shard.0.file = shard-0.csv\nshard.0.records = 3\nshard.0.bytes = 12\n"
      "shard.0.xxh64 = 00000000000000ff\nshard.1.file = shard-1.csv\nfuture = ignored\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->generation, "20260321-1");
  EXPECT_EQ(m->last_day, "2026-03-20");
  EXPECT_EQ(m->shards, 2u);
  const ShardMeta* s = m->FindFile("shard-0.csv");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->records, 3u);
  EXPECT_EQ(s->bytes, 12u);
  EXPECT_EQ(s->xxh64, 0xffu);
  const ShardMeta* s1 = m->FindFile("shard-1.csv");
  ASSERT_NE(s1, nullptr);
  EXPECT_FALSE(s1->records || s1->bytes || s1->xxh64);  // optional, each on its own
  EXPECT_EQ(m->FindFile("shard-9.csv"), nullptr);
}

TEST(Manifest, RequiresOnlyGenerationAndLastDay) {
  auto m = ParseManifest("generation = g\nlast_day = 2026-01-01\n");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->shards, 0u);
  EXPECT_TRUE(m->shard_files.empty());
}

TEST(Manifest, RollupsLine) {
  auto m = ParseManifest("generation = g\nlast_day = 2026-01-01\nrollups = 1\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE(m->rollups);
  auto back = ParseManifest(FormatManifest(*m));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->rollups);
  auto off = ParseManifest("generation = g\nlast_day = 2026-01-01\nrollups = 0\n");
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off->rollups);
  auto absent = ParseManifest("generation = g\nlast_day = 2026-01-01\n");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->rollups);
  EXPECT_EQ(ParseManifest("generation = g\nlast_day = 2026-01-01\nrollups = yes\n").status().message(),
            "line 3: rollups 'yes' is not 0 or 1");
}

// Found by fuzz/manifest_fuzz.cc: a shard field this reader does not know (a newer
// rebuild's) made an empty entry for its shard, which FormatManifest then dropped, so the
// parsed manifest did not survive its own format.
TEST(Manifest, AnUnknownShardFieldMakesNoEntry) {
  const std::string text =
      "generation = g\nlast_day = 2026-01-01\nshard.0.future = x\nshard.1.file = b.csv\n"
      "shard.1.future = y\n";
  auto m = ParseManifest(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->shard_files.size(), 1u);
  EXPECT_EQ(m->shard_files.count(0), 0u);
  EXPECT_EQ(m->shard_files.at(1).file, "b.csv");
  auto back = ParseManifest(FormatManifest(*m));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->shard_files.size(), m->shard_files.size());
}

TEST(Manifest, Errors) {
  EXPECT_EQ(ParseManifest("").status().message(), "no 'generation' line");
  EXPECT_EQ(ParseManifest("generation = 1\n").status().message(), "no 'last_day' line");
  EXPECT_EQ(ParseManifest("last_day = 2026-01-01\n").status().message(), "no 'generation' line");
  EXPECT_EQ(ParseManifest("generation = 1\nlast_day = 2026-13-01\n").status().message(),
            "line 2: last_day '2026-13-01' is not a valid YYYY-MM-DD day");
  EXPECT_EQ(ParseManifest("generation = 1\nlast_day = 2026-1-01\n").status().message(),
            "line 2: last_day '2026-1-01' is not a valid YYYY-MM-DD day");
  EXPECT_EQ(ParseManifest("generation = 1\nlast_day 2026-01-01\n").status().message(),
            "line 2: 'last_day 2026-01-01' is not 'key = value'");
  EXPECT_EQ(ParseManifest("generation = 1\nlast_day = 2026-01-01\nshard.0.xxh64 = 12\n")
                .status()
                .message(),
            "line 3: shard.0.xxh64 '12' is not 16 hex digits");
  EXPECT_EQ(ParseManifest("generation =\n").status().message(), "line 1: generation is empty");
  for (const char* shards : {"0", "-1", "x", "1000001", ""}) {
    EXPECT_EQ(ParseManifest("generation = 1\nlast_day = 2026-01-01\nshards = " + std::string(shards) + "\n")
                  .status()
                  .message(),
              "line 3: shards '" + std::string(shards) + "' is not a positive count");
  }
  EXPECT_EQ(ParseManifest("generation = 1\nshard.x.file = a\n").status().message(),
            "line 2: 'shard.x.file' is not shard.K.<field>");
  EXPECT_EQ(ParseManifest("generation = 1\nshard.0.file = ../a\n").status().message(),
            "line 2: shard.0.file must be a plain file name");
  EXPECT_EQ(ParseManifest("generation = 1\nshard.0.records = 1x\n").status().message(),
            "line 2: shard.0.records '1x' is not a count");
  EXPECT_EQ(ParseManifest("generation = 1\nshard.0.bytes = -5\n").status().message(),
            "line 2: shard.0.bytes '-5' is not a count");
}

TEST(Manifest, FormatsWhatRebuildPublishes) {
  Manifest m;
  m.generation = "20120401-0123456789abcdef";
  m.last_day = "2012-04-01";
  m.shards = 2;
  m.shard_files[0] = ShardMeta{"shard-0.csv", 3, 12, 0xff, std::nullopt};
  m.shard_files[1] = ShardMeta{"shard-1.csv", 0, 0, 0xef46db3751d8e999ull, std::nullopt};
  const std::string text = FormatManifest(m);
  EXPECT_EQ(text,
            "generation = 20120401-0123456789abcdef\nlast_day = 2012-04-01\nshards = 2\n"
            "shard.0.file = shard-0.csv\nshard.0.records = 3\nshard.0.bytes = 12\nshard.0.xxh64 = 00000000000000ff\n"
            "shard.1.file = shard-1.csv\nshard.1.records = 0\nshard.1.bytes = 0\nshard.1.xxh64 = ef46db3751d8e999\n");
  Result<Manifest> back = ParseManifest(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->generation, m.generation);
  EXPECT_EQ(back->last_day, m.last_day);
  EXPECT_EQ(back->shards, 2u);
  ASSERT_EQ(back->shard_files.size(), 2u);
  EXPECT_EQ(back->shard_files.at(1).xxh64, 0xef46db3751d8e999ull);
  EXPECT_EQ(FormatManifest(*back), text);
}

TEST(Manifest, DayAndLateLinesRoundTripAndAreCheckedWhenPresent) {
  const std::string text =
      "generation = g\nlast_day = 2026-11-21\n"
      "day = 2026-11-20 00000000000000ff ef46db3751d8e999\nday = 2026-11-21 0000000000000001 0000000000000002\n"
      "late = 10.0.0.1:8000 42\nlate = 10.0.0.2:8000 0\n";
  Result<Manifest> m = ParseManifest(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->exports.days.size(), 2u);
  EXPECT_EQ(m->exports.days.at("2026-11-20"), (std::vector<uint64_t>{0xff, 0xef46db3751d8e999ull}));
  EXPECT_EQ(m->late, (std::map<std::string, uint64_t>{{"10.0.0.1:8000", 42}, {"10.0.0.2:8000", 0}}));
  // A day line (from before day_part lines) holds every shard's export, whatever its ring.
  EXPECT_TRUE(m->exports.Holds("2026-11-20", 1, 0x77, 2));
  EXPECT_FALSE(m->exports.Holds("2026-11-20", 1, 0x77, 3));  // a shard added since
  EXPECT_FALSE(m->exports.Holds("2026-11-19", 0, 0x77, 2));
  EXPECT_EQ(FormatManifest(*m), text);

  auto error = [](const std::string& line) {
    return ParseManifest("generation = g\nlast_day = 2026-11-21\n" + line + "\n").status().message();
  };
  EXPECT_EQ(error("day = 2026-11-20"), "line 3: day line '2026-11-20' is not 'YYYY-MM-DD <16 hex> ...'");
  EXPECT_EQ(error("day = 2026-11-32 00000000000000ff"),
            "line 3: day line '2026-11-32 00000000000000ff' is not 'YYYY-MM-DD <16 hex> ...'");
  EXPECT_EQ(error("day = 2026-11-20 ff"), "line 3: day line '2026-11-20 ff' is not 'YYYY-MM-DD <16 hex> ...'");
  EXPECT_EQ(error("day = 2026-11-20  00000000000000ff"),
            "line 3: day line '2026-11-20  00000000000000ff' is not 'YYYY-MM-DD <16 hex> ...'");
  EXPECT_EQ(error("day = 2026-11-20 00000000000000ff\nday = 2026-11-20 00000000000000fe"),
            "line 4: day 2026-11-20 appears twice");
  EXPECT_EQ(error("late = 10.0.0.1:8000"), "line 3: late line '10.0.0.1:8000' is not '<host:port> <id>'");
  EXPECT_EQ(error("late = 10.0.0.1:8000 -1"), "line 3: late line '10.0.0.1:8000 -1' is not '<host:port> <id>'");
  EXPECT_EQ(error("late = a:1 1\nlate = a:1 2"), "line 4: late a:1 appears twice");
}

TEST(Manifest, AnOlderManifestHasNoDayOrLateLines) {
  Result<Manifest> m = ParseManifest("generation = g\nlast_day = 2026-11-21\n");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->exports.days.empty());
  EXPECT_TRUE(m->exports.parts.empty());
  EXPECT_TRUE(m->late.empty());
  EXPECT_FALSE(m->exports.Holds("2026-11-21", 0, 0, 1));
}

TEST(Manifest, DayPartsSayWhichShardAndRingEachExportCameFrom) {
  const std::string text =
      "generation = g\nlast_day = 2026-11-21\n"
      "day = 2026-11-20 00000000000000ff ef46db3751d8e999\n"
      "day_part = 2026-11-20 0 00000000000000ff 00000000000000a0\n"
      "day_part = 2026-11-20 1 ef46db3751d8e999 00000000000000a1\n"
      "day_part = 2026-11-21 1 0000000000000007 00000000000000b1\n"
      "day_part = 2026-11-21 1 0000000000000009 00000000000000c1\n"
      "day_part = 2026-11-22 0 0000000000000003 0000000000000000\n";
  Result<Manifest> m = ParseManifest(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->exports.parts.size(), 5u);
  EXPECT_EQ(FormatManifest(*m), text);
  const MergedExports& e = m->exports;
  EXPECT_TRUE(e.Holds("2026-11-20", 0, 0xa0, 2));
  // The same shard on a new data directory (a replaced host): its day is not the one merged,
  // even though the day line holds every shard's.
  EXPECT_FALSE(e.Holds("2026-11-20", 0, 0xa9, 2));
  EXPECT_TRUE(e.Holds("2026-11-21", 1, 0xb1, 2));
  EXPECT_TRUE(e.Holds("2026-11-21", 1, 0xc1, 2));  // the replacement's part, merged too
  EXPECT_FALSE(e.Holds("2026-11-21", 0, 0xb1, 2));
  EXPECT_TRUE(e.Holds("2026-11-22", 0, 0xdd, 2));  // ring 0: fetched before ring ids
  EXPECT_EQ(e.LastPartDay(), "2026-11-22");

  auto error = [](const std::string& line) {
    return ParseManifest("generation = g\nlast_day = 2026-11-21\n" + line + "\n").status().message();
  };
  const std::string shape = "' is not 'YYYY-MM-DD <shard> <16 hex> <16 hex>'";
  EXPECT_EQ(error("day_part = 2026-11-20 0 00000000000000ff"),
            "line 3: day_part line '2026-11-20 0 00000000000000ff" + shape);
  EXPECT_EQ(error("day_part = 2026-11-20 x 00000000000000ff 0000000000000000"),
            "line 3: day_part line '2026-11-20 x 00000000000000ff 0000000000000000" + shape);
  EXPECT_EQ(error("day_part = 2026-11-20 4294967296 00000000000000ff 0000000000000000"),
            "line 3: day_part line '2026-11-20 4294967296 00000000000000ff 0000000000000000" + shape);
}

}  // namespace
}  // namespace clickatron
