// The API's own options of the cluster config (cluster_config.h): the dashboard's display
// names and country-code subtotals.
#include "api/cluster_config.h"

#include <gtest/gtest.h>

namespace clickatron {
namespace {

Status Parse(std::vector<const char*> args, ClusterConfig* out) {
  args.insert(args.begin(), "clickatron-api");
  bool help = false;
  return ParseClusterConfig(static_cast<int>(args.size()), args.data(), out, &help);
}

TEST(ClusterConfigTest, DisplayNamesAndCountryCodes) {
  ClusterConfig c;
  ASSERT_TRUE(Parse({"--realtime", "127.0.0.1:1", "--display-name", "c:country", "--display-name",
                     "r:referrer: where from", "--country-codes", "c"},
                    &c)
                  .ok());
  EXPECT_EQ(c.display_names, (std::vector<std::pair<std::string, std::string>>{
                                 {"c", "country"}, {"r", "referrer: where from"}}));
  EXPECT_EQ(c.country_codes, std::vector<std::string>{"c"});
}

TEST(ClusterConfigTest, BadDisplayNamesAreNamed) {
  for (const char* bad : {"country", "_l:lookups", "a.b:x", ":x", "c:", "c:tab\there"}) {
    ClusterConfig c;
    Status s = Parse({"--realtime", "127.0.0.1:1", "--display-name", bad}, &c);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("display-name"), std::string::npos) << s.message();
  }
  ClusterConfig c;
  EXPECT_EQ(Parse({"--realtime", "127.0.0.1:1", "--display-name", "c:a", "--display-name", "c:b"}, &c).message(),
            "display-name: namespace 'c' is named twice");
  EXPECT_FALSE(Parse({"--realtime", "127.0.0.1:1", "--country-codes", "c|x"}, &c).ok());
  std::pair<std::string, std::string> name;
  ASSERT_TRUE(ParseDisplayName("u:user (people)", &name).ok());
  EXPECT_EQ(name, (std::pair<std::string, std::string>{"u", "user (people)"}));
  EXPECT_FALSE(ParseDisplayName("u:" + std::string(65, 'x'), &name).ok());
}

}  // namespace
}  // namespace clickatron
