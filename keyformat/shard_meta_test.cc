#include "keyformat/shard_meta.h"

#include <gtest/gtest.h>

namespace clickatron {
namespace {

TEST(ShardMeta, KeysSplitAndRefuseOtherForms) {
  EXPECT_EQ(ShardKey(3, "xxh64"), "shard.3.xxh64");
  uint32_t k = 99;
  std::string_view field;
  ASSERT_TRUE(SplitShardKey("shard.12.records", &k, &field));
  EXPECT_EQ(k, 12u);
  EXPECT_EQ(field, "records");
  ASSERT_TRUE(SplitShardKey("shard.1000000.file", &k, &field));
  EXPECT_EQ(k, kMaxMetaShards);
  for (const char* bad : {"shard.", "shard.x.file", "shard.1", "shard..file", "shard.-1.file", "shard.+1.file",
                          "shard.1000001.file", "shard.99999999999999999999.file", "shards", "sharding.0.file"}) {
    EXPECT_FALSE(SplitShardKey(bad, &k, &field)) << bad;
  }
  EXPECT_TRUE(IsShardKey("shard.x"));
  EXPECT_FALSE(IsShardKey("shards"));
}

TEST(ShardMeta, SetsEachFieldAndIgnoresUnknownOnes) {
  ShardMeta m;
  ASSERT_TRUE(SetShardField("shard.0.file", "file", "shard-0.csv", &m).ok());
  ASSERT_TRUE(SetShardField("shard.0.records", "records", "3", &m).ok());
  ASSERT_TRUE(SetShardField("shard.0.bytes", "bytes", "12", &m).ok());
  ASSERT_TRUE(SetShardField("shard.0.xxh64", "xxh64", "00000000000000ff", &m).ok());
  ASSERT_TRUE(SetShardField("shard.0.columns", "columns", "18446744073709551615", &m).ok());
  ASSERT_TRUE(SetShardField("shard.0.future", "future", "anything", &m).ok());
  EXPECT_EQ(m.file, "shard-0.csv");
  EXPECT_EQ(m.records, 3u);
  EXPECT_EQ(m.bytes, 12u);
  EXPECT_EQ(m.xxh64, 0xffu);
  EXPECT_EQ(m.columns, UINT64_MAX);
}

TEST(ShardMeta, RefusesEachMalformedValue) {
  ShardMeta m;
  EXPECT_EQ(SetShardField("shard.0.xxh64", "xxh64", "12", &m).message(), "shard.0.xxh64 '12' is not 16 hex digits");
  EXPECT_FALSE(SetShardField("shard.0.xxh64", "xxh64", "00000000000000FF", &m).ok());
  EXPECT_FALSE(SetShardField("shard.0.xxh64", "xxh64", "", &m).ok());
  EXPECT_EQ(SetShardField("shard.0.records", "records", "x", &m).message(), "shard.0.records 'x' is not a count");
  for (const char* bad : {"", "-1", "+1", "1x", " 1", "18446744073709551616"}) {
    EXPECT_FALSE(SetShardField("shard.0.bytes", "bytes", bad, &m).ok()) << bad;
    EXPECT_FALSE(SetShardField("shard.0.columns", "columns", bad, &m).ok()) << bad;
    EXPECT_FALSE(SetShardField("shard.0.records", "records", bad, &m).ok()) << bad;
  }
  EXPECT_EQ(SetShardField("shard.0.file", "file", "a/b.csv", &m).message(), "shard.0.file must be a plain file name");
  EXPECT_FALSE(SetShardField("shard.0.file", "file", "", &m).ok());
  EXPECT_FALSE(m.records || m.bytes || m.xxh64 || m.columns);  // a refused value sets nothing
  EXPECT_EQ(m.file, "");
}

TEST(ShardMeta, WritesInTableOrderAndReadsBack) {
  KeyValueText kv;
  AddShardMeta(0, ShardMeta{"", 12, 345, 0x0123456789abcdefull, 40}, &kv);
  AddShardMeta(1, ShardMeta{"shard-1.csv", 0, 0, 0, std::nullopt}, &kv);
  EXPECT_EQ(kv.Format(),
            "shard.0.records = 12\nshard.0.bytes = 345\nshard.0.xxh64 = 0123456789abcdef\nshard.0.columns = 40\n"
            "shard.1.file = shard-1.csv\nshard.1.records = 0\nshard.1.bytes = 0\nshard.1.xxh64 = 0000000000000000\n");
  Result<KeyValueText> back = KeyValueText::Parse(kv.Format());
  ASSERT_TRUE(back.ok());
  Result<ShardMeta> s0 = ShardMetaOf(*back, 0);
  ASSERT_TRUE(s0.ok()) << s0.status().message();
  EXPECT_EQ(s0->file, "");
  EXPECT_EQ(s0->records, 12u);
  EXPECT_EQ(s0->bytes, 345u);
  EXPECT_EQ(s0->xxh64, 0x0123456789abcdefull);
  EXPECT_EQ(s0->columns, 40u);
  Result<ShardMeta> s1 = ShardMetaOf(*back, 1);
  ASSERT_TRUE(s1.ok());
  EXPECT_EQ(s1->file, "shard-1.csv");
  EXPECT_EQ(s1->records, 0u);
  EXPECT_FALSE(s1->columns.has_value());
  Result<ShardMeta> s2 = ShardMetaOf(*back, 2);  // no entries: every field absent
  ASSERT_TRUE(s2.ok());
  EXPECT_FALSE(s2->records || s2->bytes || s2->xxh64 || s2->columns);
}

TEST(ShardMeta, ReadingAShardChecksOnlyItsOwnEntries) {
  Result<KeyValueText> kv = KeyValueText::Parse("shard.0.records = 1\nshard.1.records = x\nshard.x.y = z\n");
  ASSERT_TRUE(kv.ok());
  EXPECT_TRUE(ShardMetaOf(*kv, 0).ok());
  EXPECT_EQ(ShardMetaOf(*kv, 1).status().message(), "shard.1.records 'x' is not a count");
}

}  // namespace
}  // namespace clickatron
