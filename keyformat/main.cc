// clickatron-key: the command-line face of the keyformat library (docs/api.md#clickatron-key, 6).
//   clickatron-key ymdh TS | unymdh TOKEN | hash VALUE | stored VALUE
//   clickatron-key shard --shards N SHARDKEY
//   clickatron-key encode --ns NS --key KEY --ts TS [--value N] [--sub SUBNS:SUBKEY]...
// Bad input: one line on stderr naming the problem, exit status 2.
#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "config/option_loader.h"  // ProgramOptionsErrorText only: inline, nothing to link
#include "keyformat/event.h"
#include "keyformat/records.h"
#include "keyformat/shard.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"

namespace po = boost::program_options;
using namespace clickatron;

namespace {

constexpr char kUsage[] =
    "usage: clickatron-key ymdh TS | unymdh TOKEN | hash VALUE | stored VALUE\n"
    "       clickatron-key shard --shards N SHARDKEY\n"
    "       clickatron-key encode --ns NS --key KEY --ts TS [--value N] [--sub SUBNS:SUBKEY]...\n";

int Fail(const std::string& message) {
  std::fprintf(stderr, "clickatron-key: %s\n", message.c_str());
  return 2;
}

Result<int64_t> ParseTs(const std::string& text) {
  Result<int64_t> ts = ParseCount(text);
  if (!ts.ok()) return Status::Error("timestamp '" + text + "' is not an integer number of unix seconds");
  return ts;
}

int OneArgument(const std::string& command, const std::vector<std::string>& args) {
  if (args.size() != 1) return Fail(command + " takes exactly one argument (see --help)");
  const std::string& arg = args[0];
  if (command == "ymdh") {
    Result<int64_t> ts = ParseTs(arg);
    if (!ts.ok()) return Fail(ts.status().message());
    Result<Ymdh> token = EncodeYmdh(*ts);
    if (!token.ok()) return Fail(token.status().message());
    std::cout << token->view() << "\n";
  } else if (command == "unymdh") {
    Result<int64_t> ts = DecodeYmdh(arg);
    if (!ts.ok()) return Fail(ts.status().message());
    std::cout << *ts << "\n";
  } else if (command == "hash") {
    if (arg.empty()) return Fail("value is empty");
    std::cout << KeyHash(arg) << "\n";
  } else {  // stored
    if (Status s = ValidateUserKey(arg, "value"); !s.ok()) return Fail(s.message());
    std::cout << StoredKey(arg) << "\n";
  }
  return 0;
}

int Shard(const std::vector<std::string>& args) {
  po::options_description options("shard");
  options.add_options()("shards", po::value<uint32_t>()->required(), "shard count")(
      "shard-key", po::value<std::string>()->required(), "shard key, e.g. u|jehiah");
  po::positional_options_description positional;
  positional.add("shard-key", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
  po::notify(vm);
  const uint32_t shards = vm["shards"].as<uint32_t>();
  if (shards == 0) return Fail("--shards must be at least 1");
  std::cout << ShardOf(vm["shard-key"].as<std::string>(), shards) << "\n";
  return 0;
}

int Encode(const std::vector<std::string>& args) {
  po::options_description options("encode");
  options.add_options()("ns", po::value<std::string>()->required(), "namespace")(
      "key", po::value<std::string>()->required(), "key")(
      "ts", po::value<std::string>()->required(), "unix seconds")(
      "value", po::value<std::string>()->default_value("1"), "increment")(
      "sub", po::value<std::vector<std::string>>()->composing(), "SUBNS:SUBKEY (repeatable)");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  po::notify(vm);

  const std::string ns = vm["ns"].as<std::string>();
  const std::string key = vm["key"].as<std::string>();
  Event event;
  event.ns = ns;
  event.key = key;
  Result<int64_t> ts = ParseTs(vm["ts"].as<std::string>());
  if (!ts.ok()) return Fail(ts.status().message());
  event.ts = *ts;
  Result<int64_t> value = ParseCount(vm["value"].as<std::string>());
  if (!value.ok()) return Fail("value: " + value.status().message());
  event.value = *value;
  std::vector<std::string> subs;
  if (vm.count("sub")) subs = vm["sub"].as<std::vector<std::string>>();
  for (const std::string& sub : subs) {
    const size_t colon = sub.find(':');
    if (colon == std::string::npos) return Fail("sub '" + sub + "' is not SUBNS:SUBKEY");
    event.subs.push_back({std::string_view(sub).substr(0, colon), std::string_view(sub).substr(colon + 1)});
  }
  EventError error;
  if (!ValidateEvent(event, &error)) return Fail(error.param + ": " + error.message);
  std::vector<RealtimeRecord> records;
  EncodeEvent(event, &records);
  std::string out;
  for (const RealtimeRecord& r : records) {
    out += r.key;
    out += ',';
    out += r.value;
    out += '\n';
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (command == "ymdh" || command == "unymdh" || command == "hash" || command == "stored") {
      return OneArgument(command, args);
    }
    if (command == "shard") return Shard(args);
    if (command == "encode") return Encode(args);
  } catch (po::error& e) {
    return Fail(config::ProgramOptionsErrorText(e));
  }
  return Fail("unknown command '" + command + "' (see --help)");
}
