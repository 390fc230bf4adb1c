// The Idempotency-Key header's syntax and the request digest (api/idempotency_key.h).
#include "api/idempotency_key.h"

#include <gtest/gtest.h>

#include <string>

namespace clickatron {
namespace {

std::string KeyOf(std::string_view header) {
  Result<std::string_view> key = ParseIdempotencyKey(header);
  return key.ok() ? std::string(*key) : "ERROR " + key.status().message();
}

TEST(IdempotencyKey, BothFormsNameTheSameKey) {
  EXPECT_EQ(KeyOf("8e03978e-40d5-43e8-bc93-6894a57f9324"), "8e03978e-40d5-43e8-bc93-6894a57f9324");
  EXPECT_EQ(KeyOf("\"8e03978e-40d5-43e8-bc93-6894a57f9324\""), "8e03978e-40d5-43e8-bc93-6894a57f9324");
  EXPECT_EQ(KeyOf("a"), "a");
  EXPECT_EQ(KeyOf("!#$%&'()*+,-./:;<=>?@[]^_`{|}~"), "!#$%&'()*+,-./:;<=>?@[]^_`{|}~");
  EXPECT_EQ(KeyOf(std::string(255, 'k')), std::string(255, 'k'));
  EXPECT_EQ(KeyOf("\"" + std::string(255, 'k') + "\""), std::string(255, 'k'));
}

TEST(IdempotencyKey, BadKeysNameTheProblem) {
  EXPECT_EQ(KeyOf(""), "ERROR Idempotency-Key is empty; a key is 1-255 bytes of visible ASCII other than '\"' and '\\'");
  EXPECT_EQ(KeyOf("\"\"").substr(0, 32), "ERROR Idempotency-Key is empty; ");
  EXPECT_EQ(KeyOf(std::string(256, 'k')).substr(0, 45), "ERROR Idempotency-Key is 256 bytes long; a ke");
  EXPECT_EQ(KeyOf("ab cd").substr(0, 44), "ERROR Idempotency-Key byte 3 is 0x20; a key ");
  EXPECT_EQ(KeyOf("ab\"cd").substr(0, 44), "ERROR Idempotency-Key byte 3 is 0x22; a key ");
  EXPECT_EQ(KeyOf("\"ab").substr(0, 44), "ERROR Idempotency-Key byte 1 is 0x22; a key ");
  EXPECT_EQ(KeyOf("a\\b").substr(0, 44), "ERROR Idempotency-Key byte 2 is 0x5C; a key ");
  EXPECT_EQ(KeyOf("a\tb").substr(0, 44), "ERROR Idempotency-Key byte 2 is 0x09; a key ");
  EXPECT_EQ(KeyOf("caf\xC3\xA9").substr(0, 44), "ERROR Idempotency-Key byte 4 is 0xC3; a key ");
  EXPECT_EQ(KeyOf("\"a\"b\"").substr(0, 44), "ERROR Idempotency-Key byte 2 is 0x22; a key ");
}

// The same events as sent are one request whatever the form; any other byte is another.
TEST(IdempotencyKey, DigestIsOfTheEventLinesAsSent) {
  const RequestDigest get = DigestIncrRequest("", "ns=u&key=a");
  EXPECT_EQ(DigestIncrRequest("ns=u&key=a", ""), get);
  EXPECT_EQ(DigestIncrRequest("ns=u&key=a\n", ""), get);
  EXPECT_EQ(DigestIncrRequest("ns=u&key=a\r\n", ""), get);
  EXPECT_NE(DigestIncrRequest("", "key=a&ns=u"), get);
  EXPECT_NE(DigestIncrRequest("", "ns=u&key=b"), get);
  EXPECT_NE(DigestIncrRequest("", "ns=u&key=%61"), get);
  EXPECT_NE(DigestIncrRequest("", ""), get);

  const RequestDigest batch = DigestIncrRequest("ns=u&key=a\nns=u&key=b\n", "");
  EXPECT_EQ(DigestIncrRequest("ns=u&key=a\r\nns=u&key=b", ""), batch);
  EXPECT_EQ(DigestIncrRequest("ns=u&key=a\nns=u&key=b\r\n", ""), batch);
  EXPECT_NE(DigestIncrRequest("ns=u&key=b\nns=u&key=a\n", ""), batch);
  EXPECT_NE(DigestIncrRequest("ns=u&key=a\n", ""), batch);
  // Line boundaries count: the lines' text joined differently is another request.
  EXPECT_NE(DigestIncrRequest("ns=u&key=ab\n", ""), DigestIncrRequest("ns=u&key=a\nb\n", ""));
}

TEST(IdempotencyKey, DigestHexRoundTrips) {
  const RequestDigest d{0x0123456789abcdefULL, 0x00000000000000ffULL};
  std::string hex;
  AppendDigestHex(d, &hex);
  EXPECT_EQ(hex, "0123456789abcdef00000000000000ff");
  RequestDigest back;
  ASSERT_TRUE(ParseDigestHex(hex, &back));
  EXPECT_EQ(back, d);
  for (const char* bad : {"", "0123456789abcdef00000000000000f", "0123456789abcdef00000000000000fff",
                          "0123456789ABCDEF00000000000000ff", "0123456789abcdef00000000000000fg",
                          "-123456789abcdef00000000000000ff", "+123456789abcdef00000000000000ff"}) {
    EXPECT_FALSE(ParseDigestHex(bad, &back)) << bad;
  }
}

}  // namespace
}  // namespace clickatron
