#include "base/varint.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/int128.h"

namespace clickatron {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s.push_back(char(b));
  return s;
}

std::string Put(uint64_t v) {
  std::string s;
  PutVarint64(&s, v);
  return s;
}

TEST(Varint, KnownBytes) {
  EXPECT_EQ(Put(0), Bytes({0x00}));
  EXPECT_EQ(Put(1), Bytes({0x01}));
  EXPECT_EQ(Put(127), Bytes({0x7f}));
  EXPECT_EQ(Put(128), Bytes({0x80, 0x01}));
  EXPECT_EQ(Put(300), Bytes({0xac, 0x02}));
  EXPECT_EQ(Put(16383), Bytes({0xff, 0x7f}));
  EXPECT_EQ(Put(16384), Bytes({0x80, 0x80, 0x01}));
  EXPECT_EQ(Put(UINT64_MAX), Bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

TEST(Varint, RoundTripsEveryLength) {
  std::vector<uint64_t> values = {0, UINT64_MAX};
  for (int bits = 1; bits < 64; ++bits) {
    values.push_back((uint64_t(1) << bits) - 1);
    values.push_back(uint64_t(1) << bits);
  }
  std::string all;
  for (uint64_t v : values) PutVarint64(&all, v);
  std::string_view in(all);
  for (uint64_t v : values) {
    uint64_t got = 0;
    ASSERT_TRUE(GetVarint64(&in, &got));
    EXPECT_EQ(got, v);
  }
  EXPECT_TRUE(in.empty());
}

TEST(Varint, EncodeAtPointerMatchesPutAndWidths) {
  char buf[kMaxVarint128Bytes];
  for (uint64_t v : {uint64_t(0), uint64_t(127), uint64_t(1) << 35, UINT64_MAX}) {
    EXPECT_EQ(std::string(buf, EncodeVarint(buf, v)), Put(v));
    // A 128-bit type writes a value below 2^64 with the same bytes.
    EXPECT_EQ(std::string(buf, EncodeVarint(buf, Uint128(v))), Put(v));
  }
  const Uint128 max = ~Uint128(0);
  const char* end = EncodeVarint(buf, max);
  ASSERT_EQ(size_t(end - buf), kMaxVarint128Bytes);
  Uint128 got = 0;
  EXPECT_EQ(DecodeVarint(buf, end, &got), kMaxVarint128Bytes);
  EXPECT_TRUE(got == max);
}

TEST(Varint, TruncatedAndOverlongAreRefused) {
  std::string_view empty;
  uint64_t v = 7;
  EXPECT_FALSE(GetVarint64(&empty, &v));
  const std::string cut = Bytes({0x80, 0x80});
  std::string_view in(cut);
  EXPECT_FALSE(GetVarint64(&in, &v));
  EXPECT_EQ(in.size(), 2u);  // nothing consumed
  EXPECT_EQ(v, 7u);          // nothing written
  // A tenth byte above 1 says bits past 2^64.
  const std::string past = Bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02});
  in = past;
  EXPECT_FALSE(GetVarint64(&in, &v));
  // ... which DecodeVarint leaves to its caller: it takes the ten bytes.
  EXPECT_EQ(DecodeVarint(past.data(), past.data() + past.size(), &v), 10u);
  // Eleven bytes never make a 64-bit varint.
  const std::string eleven = Bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00});
  in = eleven;
  EXPECT_FALSE(GetVarint64(&in, &v));
  EXPECT_EQ(DecodeVarint(eleven.data(), eleven.data() + eleven.size(), &v), 0u);
}

}  // namespace
}  // namespace clickatron
