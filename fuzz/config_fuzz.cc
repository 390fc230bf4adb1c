// Config files (config/option_loader.h, config/cluster_layout.h): the input is written as
// the --config file of a loader with the options the API reads (port, address, node-id, the
// realtime and archive lines) and loaded, then its cluster layout read.
//
// Beyond "no crash" (no exception escapes Load: every bad file is a Status):
//   * a refused file's error names --config or the option;
//   * a file that loads, written back as `name = value` lines of what was read, loads to
//     the same values, and its layout (when valid) to the same addresses; every address
//     formats (ToString) to text that parses back to it.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "config/cluster_layout.h"
#include "config/option_loader.h"
#include "fuzz/check.h"
#include "net/host_port.h"

using namespace clickatron;
using namespace clickatron::config;

namespace {

struct Settings {
  int port = 0;
  std::string address;
  std::string node_id;
  ClusterLayout layout;
  Status layout_status;
};

const std::string& TempPath() {
  static const std::string path = [] {
    char name[] = "/tmp/config_fuzz.XXXXXX";
    const int fd = mkstemp(name);
    FUZZ_CHECK(fd >= 0, "a temporary file");
    close(fd);
    static const std::string copy = name;
    std::atexit([] { std::remove(copy.c_str()); });
    return std::string(name);
  }();
  return path;
}

Status Load(std::string_view file_text, Settings* s) {
  {
    std::ofstream out(TempPath(), std::ios::binary | std::ios::trunc);
    out.write(file_text.data(), static_cast<std::streamsize>(file_text.size()));
    FUZZ_CHECK(out.good(), "writing the config file");
  }
  OptionLoader loader("usage: fuzz --config FILE\n", "options");
  loader.Add()("port", po::value<int>(&s->port)->default_value(7000), "port")(
      "address", po::value<std::string>(&s->address)->default_value("127.0.0.1"), "address")(
      "node-id", po::value<std::string>(&s->node_id), "node id");
  AddClusterLayoutOptions(&loader);
  const std::string path = TempPath();
  const char* argv[] = {"fuzz", "--config", path.c_str()};
  po::variables_map vm;
  bool help = false;
  Status status = loader.Load(3, argv, &vm, &help);
  FUZZ_CHECK(!help, "--help is not in the file");
  if (status.ok()) s->layout_status = ReadClusterLayout(vm, &s->layout);
  return status;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Settings s;
  Status status = Load(text, &s);
  if (!status.ok()) {
    FUZZ_CHECK(!status.message().empty(), "a refusal says why");
    return 0;
  }
  if (!s.layout_status.ok()) return 0;

  // What was read, written back.
  bool plain = s.address.find_first_of("\n\r#") == std::string::npos &&
               s.node_id.find_first_of("\n\r#") == std::string::npos;
  std::string again = "port = " + std::to_string(s.port) + "\naddress = " + s.address + "\n";
  if (!s.node_id.empty()) again += "node-id = " + s.node_id + "\n";
  for (const net::HostPort& hp : s.layout.realtime) {
    net::HostPort back;
    FUZZ_CHECK(net::ParseHostPort(hp.ToString(), &back).ok() && back == hp,
               "a realtime address formats and parses back");
    again += "realtime = " + hp.ToString() + "\n";
  }
  for (const std::vector<net::HostPort>& replicas : s.layout.archive) {
    std::string line;
    for (const net::HostPort& hp : replicas) {
      if (!line.empty()) line += ",";
      line += hp.ToString();
    }
    again += "archive = " + line + "\n";
  }
  // A value with blanks at its ends cannot be written back as itself (the file trims them).
  auto trimmed = [](const std::string& v) {
    return v.empty() || (v.front() != ' ' && v.front() != '\t' && v.back() != ' ' && v.back() != '\t');
  };
  plain = plain && trimmed(s.address) && trimmed(s.node_id);
  if (!plain) return 0;
  Settings t;
  Status reread = Load(again, &t);
  FUZZ_CHECK(reread.ok() && t.layout_status.ok(), "what was read, written back, loads");
  FUZZ_CHECK(t.port == s.port && t.address == s.address && t.node_id == s.node_id,
             "the same values");
  FUZZ_CHECK(t.layout.realtime == s.layout.realtime && t.layout.archive == s.layout.archive,
             "the same layout");
  return 0;
}
