// Checks every row of tests/golden/keyformat.tsv and the key order of
// tests/golden/sortdb/key-order.txt, read at test time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "keyformat/key_order.h"
#include "keyformat/records.h"
#include "keyformat/shard.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"

namespace clickatron {
namespace {

std::string GoldenDir() {
  const char* env = std::getenv("CLICKATRON_GOLDEN_DIR");
  return env && *env ? env : CLICKATRON_GOLDEN_DIR;
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    lines.push_back(line);
  }
  return lines;
}

// "\xHH" escapes of the stored rows → bytes.
std::string Unhex(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x') {
      out.push_back(char(std::stoi(s.substr(i + 2, 2), nullptr, 16)));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

TEST(Golden, EveryKeyformatRow) {
  const auto rows = ReadLines(GoldenDir() + "/keyformat.tsv");
  ASSERT_GT(rows.size(), 40u);
  int checked = 0;
  for (const std::string& row : rows) {
    std::istringstream fields(row);
    std::string kind, input, expected;
    ASSERT_TRUE(std::getline(fields, kind, '\t') && std::getline(fields, input, '\t') &&
                std::getline(fields, expected, '\t'))
        << "malformed golden row: " << row;
    SCOPED_TRACE(row);
    if (kind == "ymdh") {
      Result<Ymdh> token = EncodeYmdh(std::stoll(input));
      if (expected == "ERROR") {
        ASSERT_FALSE(token.ok());
        EXPECT_NE(token.status().message().find("2031-12-31"), std::string::npos) << token.status().message();
      } else {
        ASSERT_TRUE(token.ok()) << token.status().message();
        EXPECT_EQ(token->view(), expected);
      }
    } else if (kind == "unymdh") {
      Result<int64_t> ts = DecodeYmdh(input);
      if (expected == "ERROR") {
        ASSERT_FALSE(ts.ok());
        EXPECT_NE(ts.status().message().find(input), std::string::npos) << ts.status().message();
      } else {
        ASSERT_TRUE(ts.ok()) << ts.status().message();
        EXPECT_EQ(*ts, std::stoll(expected));
      }
    } else if (kind == "stored") {
      const std::string value = Unhex(input);
      EXPECT_EQ(StoredKey(value), expected);
      EXPECT_EQ(IsLiteralKey(value), value == expected);
      if (value != expected) {
        EXPECT_EQ(KeyHash(value), expected);
      }
    } else if (kind == "crc32") {
      EXPECT_EQ(Crc32(input), std::stoul(expected));
    } else if (kind.rfind("shard", 0) == 0) {
      const uint32_t shards = uint32_t(std::stoul(kind.substr(5)));
      EXPECT_EQ(ShardOf(input, shards), std::stoul(expected));
    } else {
      FAIL() << "unknown golden row kind '" << kind << "'";
    }
    checked++;
  }
  EXPECT_EQ(checked, int(rows.size()));
}

TEST(Golden, KeyOrderMatchesComparator) {
  const auto keys = ReadLines(GoldenDir() + "/sortdb/key-order.txt");
  ASSERT_GE(keys.size(), 5u);
  // Shuffle lines `key,1`, sort with our comparator, expect the golden order.
  std::vector<std::string> lines;
  for (const auto& k : keys) lines.push_back(k + ",1");
  std::mt19937 rng(7);
  for (int round = 0; round < 50; round++) {
    std::shuffle(lines.begin(), lines.end(), rng);
    std::sort(lines.begin(), lines.end(), [](const std::string& a, const std::string& b) {
      return LineKeyLess{}(a, b);
    });
    for (size_t i = 0; i < keys.size(); i++) ASSERT_EQ(KeyOfLine(lines[i]), keys[i]);
  }
}

TEST(Golden, SortdbDataIsSortedByKey) {
  const auto lines = ReadLines(GoldenDir() + "/sortdb/data.csv");
  for (size_t i = 1; i < lines.size(); i++) {
    EXPECT_LT(CompareKeys(KeyOfLine(lines[i - 1]), KeyOfLine(lines[i])), 0) << lines[i];
  }
}

TEST(Golden, SeedHistoryKeysParse) {
  for (const std::string& line : ReadLines(GoldenDir() + "/seed-example/history.csv")) {
    Result<Line> l = SplitLine(line);
    ASSERT_TRUE(l.ok()) << line;
    EXPECT_TRUE(ParseRealtimeKey(l->key).ok()) << ParseRealtimeKey(l->key).status().message();
  }
  for (const std::string& line : ReadLines(GoldenDir() + "/seed-example/archive.csv")) {
    Result<Line> l = SplitLine(line);
    ASSERT_TRUE(l.ok()) << line;
    EXPECT_TRUE(ParseArchiveKey(l->key).ok()) << ParseArchiveKey(l->key).status().message();
  }
}

}  // namespace
}  // namespace clickatron
