// The cluster secret's server side: the constant-time compare, the 401/403 answers, the
// loopback rule; and the client side's default headers (ClientOptions::headers).
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "net/fetch.h"
#include "net/secret.h"
#include "net/test_server.h"
#include "wire/headers.h"

namespace clickatron::net {
namespace {

const std::string kSecret = "0123456789abcdef0123456789abcdef";

TEST(SecretEquals, OnlyTheExactSecretMatches) {
  EXPECT_TRUE(SecretEquals(kSecret, kSecret));
  EXPECT_FALSE(SecretEquals(kSecret, ""));
  EXPECT_FALSE(SecretEquals(kSecret, kSecret + "x"));
  EXPECT_FALSE(SecretEquals(kSecret, kSecret.substr(0, kSecret.size() - 1)));
  // A prefix repeated: a shorter given is read cyclically, so a repetition of a prefix
  // must not pass for the secret.
  EXPECT_FALSE(SecretEquals("abababababababab", "ab"));
  EXPECT_FALSE(SecretEquals("abababababababab", "abababababababababab"));
  for (size_t i = 0; i < kSecret.size(); i++) {  // one byte off anywhere, first to last
    std::string wrong = kSecret;
    wrong[i] = static_cast<char>(wrong[i] ^ 1);
    EXPECT_FALSE(SecretEquals(kSecret, wrong)) << "byte " << i;
  }
}

TEST(SecretEquals, TimeDoesNotDependOnWhereTheFirstDifferenceIs) {
  // Not a timing measurement (too noisy for a unit test): the compare must visit every byte
  // of the secret whatever given is, which a difference in the LAST byte shows, and must
  // not read past a given shorter than the secret (ASan would catch that).
  std::string last = kSecret;
  last.back() = '!';
  EXPECT_FALSE(SecretEquals(kSecret, last));
  EXPECT_FALSE(SecretEquals(kSecret, "0"));
  EXPECT_TRUE(SecretEquals("0000000000000000", "0000000000000000"));
  EXPECT_FALSE(SecretEquals("0000000000000000", "0"));  // cyclic read of "0" matches, the length does not
}

TEST(ListenSecret, LoopbackMayGoWithoutOtherAddressesMayNot) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackAddress("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackAddress("::1"));
  EXPECT_TRUE(IsLoopbackAddress("localhost"));
  EXPECT_FALSE(IsLoopbackAddress("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackAddress("10.0.0.7"));
  EXPECT_FALSE(IsLoopbackAddress("127.example.com"));
  EXPECT_FALSE(IsLoopbackAddress("::"));
  EXPECT_TRUE(CheckListenSecret("127.0.0.1", "").ok());
  EXPECT_TRUE(CheckListenSecret("0.0.0.0", kSecret).ok());
  EXPECT_EQ(CheckListenSecret("0.0.0.0", "").message(),
            "SECRET_REQUIRED: address 0.0.0.0 is not loopback, so a secret-file is required "
            "(docs/operations.md#threat-model)");
}

class AdmitSecretTest : public ::testing::Test {
 protected:
  std::atomic<int> handled{0};
  TestServer server{[this](Server& s) {
    s.Handle("/guarded", [this](Request& r) {
      if (!AdmitSecret(r, kSecret)) return;
      handled++;
      r.Reply(200, "done\n");
    });
    s.Handle("/open", [this](Request& r) {
      if (!AdmitSecret(r, "")) return;
      handled++;
      r.Reply(200, "done\n");
    });
  }};

  HttpResponse Call(const std::string& path, const char* secret, ClientOptions client = {}) {
    RequestOptions o;
    if (secret != nullptr) o.headers.emplace_back(wire::kSecretHeader, secret);
    HttpResponse r;
    Status s = Fetch(server.address(), path, o, &r, client);
    EXPECT_TRUE(s.ok()) << s.message();
    return r;
  }
};

TEST_F(AdmitSecretTest, MissingIs401WrongIs403RightRuns) {
  HttpResponse r = Call("/guarded", nullptr);
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body,
            "{\"status_code\": 401, \"status_txt\": \"SECRET_MISSING\", \"data\": null, \"message\": \"this "
            "endpoint needs the cluster secret in the X-Clickatron-Secret header\"}");
  r = Call("/guarded", "0123456789abcdef0123456789abcdeX");
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.body.find("\"SECRET_WRONG\""), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find(kSecret), std::string::npos) << "the secret must never be echoed";
  r = Call("/guarded", "");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(handled.load(), 0);
  r = Call("/guarded", kSecret.c_str());
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(handled.load(), 1);
  r = Call("/open", nullptr);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(handled.load(), 2);
  // Counted for /stats: one missing, two wrong (an empty header is a wrong secret).
  EXPECT_EQ(server.server().Stats().secret_missing, 1u);
  EXPECT_EQ(server.server().Stats().secret_wrong, 2u);
}

// What a Prometheus scrape sends (authorization: credentials_file): the secret as a bearer token.
TEST_F(AdmitSecretTest, ABearerTokenStandsForTheHeader) {
  ClientOptions bearer;
  bearer.headers.emplace_back("Authorization", "Bearer " + kSecret);
  EXPECT_EQ(Call("/guarded", nullptr, bearer).status, 200);
  ClientOptions lower;
  lower.headers.emplace_back("Authorization", "bearer " + kSecret);
  EXPECT_EQ(Call("/guarded", nullptr, lower).status, 200);
  EXPECT_EQ(handled.load(), 2);
  ClientOptions wrong;
  wrong.headers.emplace_back("Authorization", "Bearer 0123456789abcdef0123456789abcdeX");
  EXPECT_EQ(Call("/guarded", nullptr, wrong).status, 403);
  ClientOptions basic;  // another scheme is no secret at all
  basic.headers.emplace_back("Authorization", "Basic " + kSecret);
  EXPECT_EQ(Call("/guarded", nullptr, basic).status, 401);
  // The header, when both are sent, decides.
  EXPECT_EQ(Call("/guarded", "0123456789abcdef0123456789abcdeX", bearer).status, 403);
  EXPECT_EQ(handled.load(), 2);
}

TEST_F(AdmitSecretTest, ClientOptionsHeadersGoWithEveryRequest) {
  ClientOptions client;
  client.headers.emplace_back(wire::kSecretHeader, kSecret);
  EXPECT_EQ(Call("/guarded", nullptr, client).status, 200);
  EXPECT_EQ(Call("/guarded", nullptr, client).status, 200);
  EXPECT_EQ(handled.load(), 2);
}

}  // namespace
}  // namespace clickatron::net
