// The option loader (command line, --config file, help, errors) and the cluster layout.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "config/cluster_layout.h"
#include "config/cluster_secret.h"
#include "config/config_keys.h"
#include "config/option_loader.h"
#include "config/server_limits.h"

namespace clickatron::config {
namespace {

// Writes a config file under the test temp dir and returns its path.
std::string WriteConfig(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "config_test_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

// Runs Load on a command line given as words (the program name is added).
Status LoadArgs(OptionLoader* loader, std::vector<std::string> words, po::variables_map* vm, bool* help) {
  words.insert(words.begin(), "prog");
  std::vector<const char*> argv;
  for (const std::string& w : words) argv.push_back(w.c_str());
  return loader->Load(int(argv.size()), argv.data(), vm, help);
}

struct Settings {
  int port = 0;
  std::string address;
};

// A loader of two options, bound to *s.
class TestLoader : public OptionLoader {
 public:
  explicit TestLoader(Settings* s, bool config_file = true)
      : OptionLoader("usage: prog [options]\n", "prog options", config_file) {
    Add()("port", po::value<int>(&s->port)->default_value(8000), "port")(
        "address", po::value<std::string>(&s->address)->default_value("127.0.0.1"), "address");
  }
};

TEST(OptionLoader, CommandLineOnly) {
  Settings s;
  TestLoader loader(&s);
  po::variables_map vm;
  bool help = true;
  ASSERT_TRUE(LoadArgs(&loader, {"--port", "7101"}, &vm, &help).ok());
  EXPECT_FALSE(help);
  EXPECT_EQ(s.port, 7101);
  EXPECT_EQ(s.address, "127.0.0.1");
  EXPECT_EQ(loader.config_path(), "");
}

TEST(OptionLoader, FileFillsInAndCommandLineWins) {
  const std::string path = WriteConfig("wins.conf", "# a comment\nport = 7201\naddress = 10.0.0.1\n");
  Settings s;
  TestLoader loader(&s);
  po::variables_map vm;
  bool help = false;
  ASSERT_TRUE(LoadArgs(&loader, {"--config", path, "--port", "7101"}, &vm, &help).ok());
  EXPECT_EQ(s.port, 7101);           // the command line wins
  EXPECT_EQ(s.address, "10.0.0.1");  // the file fills in what the command line left out
  EXPECT_EQ(loader.config_path(), path);
}

TEST(OptionLoader, FileKeysOfOtherProgramsAreIgnored) {
  const std::string path = WriteConfig("others.conf", "port = 7201\ndata-dir = var/rt\nnode-id = api-1\nwork = w\n");
  Settings s;
  TestLoader loader(&s);
  po::variables_map vm;
  bool help = false;
  Status st = LoadArgs(&loader, {"--config", path}, &vm, &help);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(s.port, 7201);
}

// A typo would start the program on a default (`nodeid = api-2` left node-id at api-1).
TEST(OptionLoader, AKeyNoProgramReadsIsRefusedNamingTheFileAndLine) {
  const std::string path =
      WriteConfig("typo.conf", "# cluster\nport = 7201\n\n  nodeid =  api-2\nwork = w\n");
  Settings s;
  TestLoader loader(&s);
  po::variables_map vm;
  bool help = false;
  Status st = LoadArgs(&loader, {"--config", path}, &vm, &help);
  EXPECT_EQ(st.message(),
            "--config " + path + ": line 4: unknown key 'nodeid' (no Clickatron program reads it)");
}

TEST(OptionLoader, MissingConfigFileNamesTheOption) {
  Settings s;
  TestLoader loader(&s);
  po::variables_map vm;
  bool help = false;
  Status st = LoadArgs(&loader, {"--config", "/nonexistent/cluster.conf"}, &vm, &help);
  EXPECT_EQ(st.message(), "--config: cannot open /nonexistent/cluster.conf");
}

TEST(OptionLoader, UnknownCommandLineOptionIsAnError) {
  Settings s;
  TestLoader loader(&s);
  po::variables_map vm;
  bool help = false;
  Status st = LoadArgs(&loader, {"--prot", "1"}, &vm, &help);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'--prot'"), std::string::npos) << st.message();
}

TEST(OptionLoader, BadValueNamesTheOption) {
  Settings s;
  TestLoader loader(&s);
  po::variables_map vm;
  bool help = false;
  Status st = LoadArgs(&loader, {"--port", "x"}, &vm, &help);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'--port'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("invalid"), std::string::npos) << st.message();

  const std::string path = WriteConfig("bad.conf", "port = seven\n");
  TestLoader again(&s);
  po::variables_map vm2;
  st = LoadArgs(&again, {"--config", path}, &vm2, &help);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("port"), std::string::npos) << st.message();
}

// Runs fn on a thread; a run longer than 10 s is a failure that ends the test program
// (the bug below was an endless loop, which would otherwise hang the suite).
template <typename Fn>
void WithinTenSeconds(const char* what, Fn fn) {
  auto done = std::async(std::launch::async, fn);
  if (done.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    std::fprintf(stderr, "FAILED: %s did not return within 10 s\n", what);
    std::_Exit(1);
  }
  done.get();
}

// Found by fuzz/config_fuzz.cc: Boost's error text substitutes placeholders such as %value%
// until none is left, so a bad value holding one (`port = %value%`) looped forever and the
// program hung at start instead of exiting 2 with a named error.
TEST(OptionLoader, ABadValueHoldingAPlaceholderIsNamedNotHung) {
  for (const char* value : {"%value%", "x%option%y", "%original_token%", "%canonical_option%"}) {
    WithinTenSeconds("Load with a bad config value", [value] {
      Settings s;
      TestLoader loader(&s);
      po::variables_map vm;
      bool help = false;
      const std::string path = WriteConfig("placeholder.conf", std::string("port = ") + value + "\n");
      Status st = LoadArgs(&loader, {"--config", path}, &vm, &help);
      ASSERT_FALSE(st.ok());
      EXPECT_NE(st.message().find("port"), std::string::npos) << st.message();
    });
    WithinTenSeconds("Load with a bad command-line value", [value] {
      Settings s;
      TestLoader loader(&s);
      po::variables_map vm;
      bool help = false;
      Status st = LoadArgs(&loader, {"--port", value}, &vm, &help);
      ASSERT_FALSE(st.ok());
      EXPECT_NE(st.message().find("'--port'"), std::string::npos) << st.message();
    });
  }
  WithinTenSeconds("Load with a bad config line", [] {
    Settings s;
    TestLoader loader(&s);
    po::variables_map vm;
    bool help = false;
    const std::string path = WriteConfig("syntax.conf", "%invalid_line%\n");
    EXPECT_FALSE(LoadArgs(&loader, {"--config", path}, &vm, &help).ok());
  });
  WithinTenSeconds("Load with an unknown option", [] {
    Settings s;
    TestLoader loader(&s);
    po::variables_map vm;
    bool help = false;
    EXPECT_FALSE(LoadArgs(&loader, {"--%original_token%"}, &vm, &help).ok());
  });
}

TEST(OptionLoader, HelpPrintsUsageAndSkipsTheFile) {
  Settings s;
  TestLoader loader(&s);
  po::variables_map vm;
  bool help = false;
  ::testing::internal::CaptureStdout();
  Status st = LoadArgs(&loader, {"--help", "--config", "/nonexistent/cluster.conf"}, &vm, &help);
  const std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(help);
  EXPECT_EQ(out.rfind("usage: prog [options]\nprog options:\n", 0), 0u) << out;
  EXPECT_NE(out.find("--port"), std::string::npos);
  EXPECT_NE(out.find("--config"), std::string::npos);

  TestLoader short_form(&s);
  po::variables_map vm2;
  help = false;
  ::testing::internal::CaptureStdout();
  EXPECT_TRUE(LoadArgs(&short_form, {"-h"}, &vm2, &help).ok());
  ::testing::internal::GetCapturedStdout();
  EXPECT_TRUE(help);
}

TEST(OptionLoader, PositionalArguments) {
  OptionLoader loader("usage: tool COMMAND DIR...\n", "options", /*config_file=*/false);
  loader.AddPositional("command", po::value<std::string>(), 1);
  loader.AddPositional("args", po::value<std::vector<std::string>>(), -1);
  po::variables_map vm;
  bool help = false;
  ASSERT_TRUE(LoadArgs(&loader, {"dump", "a", "b"}, &vm, &help).ok());
  EXPECT_EQ(vm["command"].as<std::string>(), "dump");
  EXPECT_EQ(vm["args"].as<std::vector<std::string>>(), (std::vector<std::string>{"a", "b"}));
}

TEST(OptionLoader, WithoutConfigFileTheConfigOptionIsUnknown) {
  Settings s;
  TestLoader loader(&s, /*config_file=*/false);
  po::variables_map vm;
  bool help = false;
  Status st = LoadArgs(&loader, {"--config", "x.conf"}, &vm, &help);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'--config'"), std::string::npos) << st.message();
}

TEST(OptionLoader, AnOptionMissingFromTheKeyUnionIsRefused) {
  OptionLoader loader("usage\n", "options");
  loader.Add()("brand-new", po::value<int>(), "an option nobody listed");
  po::variables_map vm;
  bool help = false;
  EXPECT_EQ(LoadArgs(&loader, {}, &vm, &help).message(),
            "option --brand-new is missing from config/config_keys.cc");
}

TEST(ConfigKeys, KnowsEveryProgramsKeys) {
  for (const char* key : {"realtime", "archive", "api", "oplog-dir", "data-dir", "db-file", "work", "through", "port"}) {
    EXPECT_TRUE(IsConfigKey(key)) << key;
  }
  EXPECT_FALSE(IsConfigKey("prot"));
  EXPECT_FALSE(IsConfigKey(""));
}

TEST(ClusterLayout, ParsesShardsAndReplicas) {
  ClusterLayout layout;
  Status st = ParseClusterLayout({"127.0.0.1:7101", " 127.0.0.1:7102 "},
                                 {"127.0.0.1:7201,127.0.0.1:7211", "archive-2.example:7202"}, &layout);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(layout.realtime.size(), 2u);
  EXPECT_EQ(layout.realtime[1], (net::HostPort{"127.0.0.1", 7102}));
  ASSERT_EQ(layout.archive.size(), 2u);
  EXPECT_EQ(layout.archive[0],
            (std::vector<net::HostPort>{{"127.0.0.1", 7201}, {"127.0.0.1", 7211}}));
  EXPECT_EQ(layout.archive[1], (std::vector<net::HostPort>{{"archive-2.example", 7202}}));
  EXPECT_TRUE(layout.api.empty());
  ASSERT_TRUE(ParseClusterLayout({}, {}, &layout, {"127.0.0.1:8000", "api-2.example:8000"}).ok());
  EXPECT_EQ(layout.api, (std::vector<net::HostPort>{{"127.0.0.1", 8000}, {"api-2.example", 8000}}));
  EXPECT_EQ(ParseClusterLayout({}, {}, &layout, {"127.0.0.1"}).message(), "api: '127.0.0.1' is not host:port");
}

TEST(ClusterLayout, ErrorsNameTheKeyAndAddress) {
  ClusterLayout layout;
  layout.realtime = {{"keep", 1}};
  EXPECT_EQ(ParseClusterLayout({"abc"}, {}, &layout).message(), "realtime: 'abc' is not host:port");
  EXPECT_EQ(ParseClusterLayout({"127.0.0.1:70000"}, {}, &layout).message(),
            "realtime: port '70000' in '127.0.0.1:70000' is out of range 1..65535");
  EXPECT_EQ(ParseClusterLayout({"127.0.0.1:0"}, {}, &layout).message(),
            "realtime: port '0' in '127.0.0.1:0' is out of range 1..65535");
  EXPECT_EQ(ParseClusterLayout({}, {"127.0.0.1:7201,"}, &layout).message(),
            "archive: empty address in list '127.0.0.1:7201,'");
  EXPECT_EQ(ParseClusterLayout({}, {"300.0.0.1:7201"}, &layout).message(),
            "archive: '300.0.0.1' in '300.0.0.1:7201' is not an IPv4 address or host name");
  // A failed parse leaves the layout as it was.
  EXPECT_EQ(layout.realtime, (std::vector<net::HostPort>{{"keep", 1}}));
}

TEST(ClusterLayout, ReadFromTheLoaderCommandLineReplacesTheFile) {
  const std::string path =
      WriteConfig("layout.conf", "realtime = 127.0.0.1:7101\nrealtime = 127.0.0.1:7102\narchive = 127.0.0.1:7201\n"
                                 "api = 127.0.0.1:8000\napi = 127.0.0.1:8001\n");
  OptionLoader loader("usage\n", "options");
  AddClusterLayoutOptions(&loader);
  po::variables_map vm;
  bool help = false;
  ASSERT_TRUE(LoadArgs(&loader, {"--config", path, "--realtime", "127.0.0.1:9101"}, &vm, &help).ok());
  ClusterLayout layout;
  ASSERT_TRUE(ReadClusterLayout(vm, &layout).ok());
  EXPECT_EQ(layout.realtime, (std::vector<net::HostPort>{{"127.0.0.1", 9101}}));
  EXPECT_EQ(layout.archive, (std::vector<std::vector<net::HostPort>>{{{"127.0.0.1", 7201}}}));
  EXPECT_EQ(layout.api, (std::vector<net::HostPort>{{"127.0.0.1", 8000}, {"127.0.0.1", 8001}}));

  OptionLoader none("usage\n", "options");
  AddClusterLayoutOptions(&none);
  po::variables_map vm2;
  ASSERT_TRUE(LoadArgs(&none, {}, &vm2, &help).ok());
  layout = {};
  ASSERT_TRUE(ReadClusterLayout(vm2, &layout).ok());
  EXPECT_TRUE(layout.realtime.empty() && layout.archive.empty());
}

// A secret file of the given text and mode, under the test temp dir.
std::string WriteSecret(const std::string& name, const std::string& text, mode_t mode = 0600) {
  const std::string path = WriteConfig(name, text);
  EXPECT_EQ(::chmod(path.c_str(), mode), 0);
  return path;
}

TEST(ClusterSecret, LoadsTheTrimmedToken) {
  std::string secret;
  ASSERT_TRUE(LoadSecretFile(WriteSecret("s1", "  0123456789abcdef-XYZ\n\n"), &secret).ok());
  EXPECT_EQ(secret, "0123456789abcdef-XYZ");
  ASSERT_TRUE(LoadSecretFile(WriteSecret("s2", "0123456789abcdef", 0400), &secret).ok());
  EXPECT_EQ(secret, "0123456789abcdef");
}

TEST(ClusterSecret, EveryProblemIsANamedErrorWithoutTheSecret) {
  auto error = [](const std::string& path) {
    std::string secret = "unchanged";
    Status s = LoadSecretFile(path, &secret);
    EXPECT_EQ(secret, "unchanged");
    return s.message();
  };
  const std::string missing = ::testing::TempDir() + "no-such-secret";
  EXPECT_EQ(error(missing), "SECRET_FILE_UNREADABLE: secret-file " + missing + ": No such file or directory");
  const std::string open = WriteSecret("s3", "0123456789abcdef-open\n", 0640);
  EXPECT_EQ(error(open), "SECRET_FILE_OPEN: secret-file " + open + ": mode 0640 lets the group or others use it (chmod 600 it)");
  EXPECT_EQ(error(WriteSecret("s4", "0123456789abcdef-open\n", 0604)).substr(0, 17), "SECRET_FILE_OPEN:");
  const std::string empty = WriteSecret("s5", " \n\t\n");
  EXPECT_EQ(error(empty), "SECRET_FILE_EMPTY: secret-file " + empty + ": holds no token");
  const std::string shorter = WriteSecret("s6", "short-secret\n");
  EXPECT_EQ(error(shorter), "SECRET_FILE_SHORT: secret-file " + shorter + ": the token has 12 characters, fewer than 16");
  const std::string spaced = WriteSecret("s7", "0123456789 abcdef\n");
  EXPECT_EQ(error(spaced), "SECRET_FILE_BAD_BYTE: secret-file " + spaced +
                               ": character 11 of the token is a space or not printable ASCII");
  EXPECT_EQ(error(WriteSecret("s8", std::string(1025, 'a'))).substr(0, 17), "SECRET_FILE_LONG:");
  EXPECT_EQ(error(::testing::TempDir()).substr(0, 23), "SECRET_FILE_UNREADABLE:");
  for (const char* name : {"s3", "s6", "s7"}) {
    EXPECT_EQ(error(::testing::TempDir() + "config_test_" + std::to_string(::getpid()) + "_" + name).find("0123456789"),
              std::string::npos);
  }
}

TEST(ClusterSecret, TheLayoutReadsTheSecretFile) {
  const std::string secret_path = WriteSecret("s9", "0123456789abcdef0123\n");
  const std::string path = WriteConfig("secret.conf", "realtime = 127.0.0.1:7101\nsecret-file = " + secret_path + "\n");
  OptionLoader loader("usage\n", "options");
  AddClusterLayoutOptions(&loader);
  po::variables_map vm;
  bool help = false;
  ASSERT_TRUE(LoadArgs(&loader, {"--config", path}, &vm, &help).ok());
  ClusterLayout layout;
  ASSERT_TRUE(ReadClusterLayout(vm, &layout).ok());
  EXPECT_EQ(layout.secret, "0123456789abcdef0123");

  OptionLoader bad("usage\n", "options");
  AddClusterLayoutOptions(&bad);
  po::variables_map vm2;
  ASSERT_TRUE(LoadArgs(&bad, {"--config", path, "--secret-file", ::testing::TempDir() + "nope"}, &vm2, &help).ok());
  EXPECT_EQ(ReadClusterLayout(vm2, &layout).message().substr(0, 23), "SECRET_FILE_UNREADABLE:");
}

TEST(ServerLimitFlags, DefaultsFlagsFileAndRanges) {
  const net::ServerLimits defaults{.max_inflight_body_bytes = 16u << 20};
  {
    OptionLoader loader("", "prog options");
    ServerLimitFlags flags(defaults);
    flags.AddTo(&loader);
    po::variables_map vm;
    bool help = false;
    const std::string file = WriteConfig("limits", "max-connections = 7\nidle-timeout-ms = 2500\n");
    ASSERT_TRUE(LoadArgs(&loader, {"--config", file, "--request-timeout-ms", "900"}, &vm, &help).ok());
    net::ServerLimits got = defaults;
    ASSERT_TRUE(flags.Apply(&got).ok());
    EXPECT_EQ(got.max_connections, 7u);
    EXPECT_EQ(got.request_timeout_ms, 900);
    EXPECT_EQ(got.idle_timeout_ms, 2500);
    EXPECT_EQ(got.max_inflight_body_bytes, size_t{16} << 20);  // the server's default kept
  }
  const std::pair<const char*, const char*> bad[] = {
      {"--max-connections", "0"}, {"--request-timeout-ms", "0"}, {"--idle-timeout-ms", "-5"},
      {"--max-inflight-body-mb", "0"}};
  for (const auto& [flag, value] : bad) {
    OptionLoader loader("", "prog options");
    ServerLimitFlags flags(defaults);
    flags.AddTo(&loader);
    po::variables_map vm;
    bool help = false;
    ASSERT_TRUE(LoadArgs(&loader, {flag, value}, &vm, &help).ok());
    net::ServerLimits got = defaults;
    Status s = flags.Apply(&got);
    ASSERT_FALSE(s.ok()) << flag;
    EXPECT_EQ(s.message().rfind(std::string(flag) + " must be between", 0), 0u) << s.message();
    EXPECT_EQ(got.max_connections, defaults.max_connections);  // nothing changed
  }
}

}  // namespace
}  // namespace clickatron::config
