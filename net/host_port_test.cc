#include "net/host_port.h"

#include <gtest/gtest.h>

namespace clickatron::net {
namespace {

TEST(HostPort, ParsesIpv4AndNames) {
  HostPort hp;
  ASSERT_TRUE(ParseHostPort("127.0.0.1:7101", &hp).ok());
  EXPECT_EQ(hp.host, "127.0.0.1");
  EXPECT_EQ(hp.port, 7101);
  EXPECT_EQ(hp.ToString(), "127.0.0.1:7101");
  ASSERT_TRUE(ParseHostPort(" localhost:80 ", &hp).ok());
  EXPECT_EQ(hp.host, "localhost");
  EXPECT_EQ(hp.port, 80);
  ASSERT_TRUE(ParseHostPort("archive-1.example.com:65535", &hp).ok());
  EXPECT_EQ(hp.port, 65535);
}

TEST(HostPort, RejectsBadInputAndLeavesOutputAlone) {
  HostPort hp{"keep", 1};
  struct Case {
    const char* text;
    const char* error;
  } cases[] = {
      {"127.0.0.1", "'127.0.0.1' is not host:port"},
      {":80", "':80' is not host:port"},
      {"host:", "'host:' is not host:port"},
      {"127.0.0.1:0", "port '0' in '127.0.0.1:0' is out of range 1..65535"},
      {"127.0.0.1:65536", "port '65536' in '127.0.0.1:65536' is out of range 1..65535"},
      {"127.0.0.1:99999999999", "port '99999999999' in '127.0.0.1:99999999999' is not a number 1..65535"},
      {"127.0.0.1:8x", "port '8x' in '127.0.0.1:8x' is not a number 1..65535"},
      {"256.0.0.1:80", "'256.0.0.1' in '256.0.0.1:80' is not an IPv4 address or host name"},
      {"1.2.3:80", "'1.2.3' in '1.2.3:80' is not an IPv4 address or host name"},
      {"ho st:80", "'ho st' in 'ho st:80' is not an IPv4 address or host name"},
      {"[::1]:80", "'[::1]' in '[::1]:80' is not an IPv4 address or host name"},
  };
  for (const Case& c : cases) {
    Status s = ParseHostPort(c.text, &hp);
    EXPECT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.message(), c.error);
    EXPECT_EQ(hp.host, "keep");
    EXPECT_EQ(hp.port, 1);
  }
}

TEST(HostPort, Ipv4Literal) {
  EXPECT_TRUE(IsIpv4Literal("0.0.0.0"));
  EXPECT_TRUE(IsIpv4Literal("255.255.255.255"));
  EXPECT_FALSE(IsIpv4Literal("010.0.0.1"));
  EXPECT_FALSE(IsIpv4Literal("1.2.3.4.5"));
  EXPECT_FALSE(IsIpv4Literal("1.2.3."));
  EXPECT_FALSE(IsIpv4Literal(""));
}

TEST(HostPort, List) {
  std::vector<HostPort> list;
  ASSERT_TRUE(ParseHostPortList("127.0.0.1:7201,127.0.0.1:7211", &list).ok());
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1].ToString(), "127.0.0.1:7211");
  Status s = ParseHostPortList("127.0.0.1:7201,,127.0.0.1:7211", &list);
  EXPECT_EQ(s.message(), "empty address in list '127.0.0.1:7201,,127.0.0.1:7211'");
  EXPECT_EQ(list.size(), 2u);
  s = ParseHostPortList("127.0.0.1:7201,x", &list);
  EXPECT_EQ(s.message(), "'x' is not host:port");
}

}  // namespace
}  // namespace clickatron::net
