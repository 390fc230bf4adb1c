// ParseOptions and the command table: what each command needs, the cluster layout from
// --config, and the error texts a user sees.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "base/test_dir.h"
#include "keyformat/ymdh.h"
#include "rebuild/commands.h"
#include "rebuild/options.h"

namespace clickatron::rebuild {
namespace {

// ParseOptions on these words (the program name is added).
Status Parse(std::vector<std::string> words, Options* out, bool* help) {
  words.insert(words.begin(), "clickatron-rebuild");
  std::vector<const char*> argv;
  for (const std::string& w : words) argv.push_back(w.c_str());
  return ParseOptions(int(argv.size()), argv.data(), out, help);
}

std::string Error(std::vector<std::string> words) {
  Options o;
  bool help = false;
  return Parse(std::move(words), &o, &help).message();
}

TEST(Commands, EachNameOnceAndFoundByName) {
  std::set<std::string> names;
  for (const Command& c : Commands()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_EQ(FindCommand(c.name), &c);
  }
  EXPECT_EQ(names, (std::set<std::string>{"import", "merge", "publish", "activate", "export", "segment", "late", "nightly",
                                          "compact", "release", "split"}));
  EXPECT_EQ(FindCommand("frobnicate"), nullptr);
}

TEST(ParseOptions, HelpListsEveryCommand) {
  for (std::vector<std::string> words : {std::vector<std::string>{"--help"}, std::vector<std::string>{}}) {
    Options o;
    bool help = false;
    ::testing::internal::CaptureStdout();
    Status s = Parse(words, &o, &help);
    const std::string out = ::testing::internal::GetCapturedStdout();
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_TRUE(help);
    EXPECT_EQ(out.rfind("usage: clickatron-rebuild COMMAND --work DIR [options]\n  import  --input FILE|-", 0), 0u)
        << out;
    for (const Command& c : Commands()) {
      EXPECT_NE(out.find("\n  " + std::string(c.name) + " "), std::string::npos) << c.name;
    }
  }
}

TEST(ParseOptions, NamesWhatACommandLineLacks) {
  EXPECT_EQ(Error({"frobnicate", "--work", "w"}), "unknown command 'frobnicate' (see --help)");
  EXPECT_EQ(Error({"import", "--input", "x"}), "--work is required");
  EXPECT_EQ(Error({"import", "--work", "w"}), "import needs --input FILE|-");
  EXPECT_EQ(Error({"export", "--work", "w"}), "export needs --day YYYY-MM-DD");
  EXPECT_EQ(Error({"export", "--work", "w", "--day", "2012-03-01"}), "export needs --config FILE");
  EXPECT_EQ(Error({"compact", "--work", "w"}), "compact needs --before YYYY-MM-DD");
  EXPECT_EQ(Error({"nightly", "--work", "w"}), "nightly needs --config FILE");  // no --day: catch-up
  EXPECT_EQ(Error({"release", "--work", "w", "--through", "2012-03-01"}), "release needs --config FILE");
  EXPECT_EQ(Error({"segment", "--work", "w", "--day", "2012-02-30"}).rfind("--day: ", 0), 0u);
  EXPECT_EQ(Error({"merge", "--work", "w", "--memory", "lots"}).rfind("--memory: memory size 'lots'", 0), 0u);
  EXPECT_EQ(Error({"merge", "--work", "w", "--memory", "1000"}), "--memory: at least 1M is needed");
  EXPECT_EQ(Error({"merge", "--work", "w", "--jobs", "0"}), "--jobs must be 1..64");
  EXPECT_EQ(Error({"merge", "--work", "w", "--archive-shards", "0"}), "--archive-shards must be 1..65535");
  EXPECT_EQ(Error({"merge", "--work", "w", "--realtime", "nohost"}), "realtime: 'nohost' is not host:port");
}

TEST(ParseOptions, TheClusterLayoutComesFromTheConfig) {
  TestDir dir;
  const std::string config = dir.path() + "/cluster.conf";
  std::ofstream(config) << "realtime = 127.0.0.1:7101\nrealtime = 127.0.0.1:7102\n"
                           "archive = 127.0.0.1:7201,127.0.0.1:7211\narchive = 127.0.0.1:7202\n"
                           "api = 127.0.0.1:8000\noplog-dir = var/oplog\njobs = 4\n";
  Options o;
  bool help = false;
  Status s = Parse({"release", "--work", "w", "--config", config, "--through", "2012-03-26", "--jobs", "2"}, &o, &help);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_FALSE(help);
  EXPECT_EQ(o.command, "release");
  EXPECT_EQ(o.config, config);
  EXPECT_EQ(o.realtime, (std::vector<net::HostPort>{{"127.0.0.1", 7101}, {"127.0.0.1", 7102}}));
  ASSERT_EQ(o.archive.size(), 2u);
  EXPECT_EQ(o.archive[0], (std::vector<net::HostPort>{{"127.0.0.1", 7201}, {"127.0.0.1", 7211}}));
  EXPECT_EQ(o.api, (std::vector<net::HostPort>{{"127.0.0.1", 8000}}));
  EXPECT_EQ(o.archive_shards, 2u);  // the config's archive lines
  EXPECT_EQ(o.jobs, 2u);            // the command line wins over the file's 4
  EXPECT_TRUE(o.jobs_given);
  EXPECT_EQ(o.through, Day(*ParseDay("2012-03-26")));

  EXPECT_EQ(Error({"merge", "--work", "w", "--config", config, "--archive-shards", "3"}),
            "--archive-shards 3 disagrees with the 2 archive shards of the config");
  std::ofstream(config) << "archive = 127.0.0.1:7201\n";
  EXPECT_EQ(Error({"export", "--work", "w", "--config", config, "--day", "2012-03-01"}),
            "export needs realtime shards (realtime = host:port lines in --config)");
  Options plain;
  ASSERT_TRUE(Parse({"merge", "--work", "w"}, &plain, &help).ok());
  EXPECT_EQ(plain.archive_shards, 1u);  // neither given
  EXPECT_EQ(plain.jobs, 1u);
  EXPECT_FALSE(plain.jobs_given);  // publish's gzip then uses every core
}

TEST(ParseOptions, ExecutorAndTaskFlagsAreChecked) {
  EXPECT_EQ(Error({"import", "--work", "w", "--input", "-", "--executor", "slurm", "--chunks", "2"}),
            "import --executor slurm needs --input FILE on the shared directory, not standard input");
  EXPECT_EQ(Error({"import", "--work", "w", "--input", "-", "--executor", "slurm"}),
            "import --executor slurm needs --input FILE on the shared directory, not standard input");
  EXPECT_EQ(Error({"compact", "--work", "w", "--before", "2013-01-01", "--executor", "slurm"}),
            "--executor slurm is for nightly and import (compact runs where it is started)");
  EXPECT_EQ(Error({"split", "--work", "w", "--input", "x", "--output", "o", "--chunks", "0"}),
            "--chunks must be 1..4096");
  EXPECT_EQ(Error({"split", "--work", "w", "--input", "x"}), "split needs --output DIR");
  EXPECT_EQ(Error({"merge", "--work", "w", "--executor", "pbs"}), "--executor must be local or slurm, not 'pbs'");
  EXPECT_EQ(Error({"merge", "--work", "w", "--shard", "1"}), "--shard 1 is not an archive shard (0..0)");
  EXPECT_EQ(Error({"merge", "--work", "w", "--archive-shards", "3", "--shard=-2"}),
            "--shard -2 is not an archive shard (0..2)");
  EXPECT_EQ(Error({"compact", "--work", "w", "--before", "2013-01-01", "--shard", "0"}),
            "--shard is for export and segment (a realtime shard, with --config) and merge (an archive shard)");
  EXPECT_EQ(Error({"merge", "--work", "w", "--task", "a/b"}), "--task 'a/b': letters, digits, '-' and '_' only");
  EXPECT_EQ(Error({"merge", "--work", "w", "--slurm-retries", "101"}), "--slurm-retries must be 0..100");
  Options o;
  bool help = false;
  ASSERT_TRUE(Parse({"merge", "--work", "w", "--archive-shards", "3", "--shard", "2", "--task", "merge-0-2"}, &o, &help)
                  .ok());
  EXPECT_EQ(o.shard, 2);
  EXPECT_EQ(o.task, "merge-0-2");
  EXPECT_EQ(o.executor, "local");
  EXPECT_EQ(o.slurm_retries, 2u);
  EXPECT_EQ(o.slurm_requeue_exit, 42u);
}

}  // namespace
}  // namespace clickatron::rebuild
