// clickatron-archive: serves one sorted file, sortdb-compatible (docs/api.md#clickatron-archive).
//   clickatron-archive --db-file FILE [--port P] [--address A] [--threads N]
//                      [--field-separator C] [--fwmatch-limit N] [--max-mget-keys N] [--max-answer-mb N]
//                      [--populate] [--secret-file F] [--require-secret-for-reads]
//                      [--config F] [server limits: config/server_limits.h]
// Every flag may also be given as `name = value` in the file named by --config (options
// this program does not know are ignored there, so a cluster config can be shared).
// A bad flag or a file that fails verification: one line on stderr, exit status 2 / 1.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "archive/archive_server.h"
#include "config/cluster_secret.h"
#include "config/option_loader.h"
#include "config/server_limits.h"

namespace po = clickatron::config::po;
using clickatron::archive::ArchiveOptions;
using clickatron::archive::ArchiveServer;

namespace {

int Fail(const std::string& message, int code) {
  std::fprintf(stderr, "clickatron-archive: %s\n", message.c_str());
  return code;
}

// --field-separator takes one literal character (a tab included); "\t" and "tab" are
// accepted as spellings of the tab, since a literal tab is awkward in a config file.
bool ParseSeparator(const std::string& text, char* out) {
  if (text.size() == 1) {
    *out = text[0];
  } else if (text == "\\t" || text == "tab") {
    *out = '\t';
  } else {
    return false;
  }
  return *out != '\n' && *out != '\0';
}

}  // namespace

// One table of flags, then their checks, then the server started (62 lines): split, the
// checks would sit away from the flags they check.
int main(int argc, char** argv) {
  ArchiveOptions o;
  std::string separator = ",";
  int port = 8080;
  size_t max_answer_mb = o.max_answer_bytes >> 20;
  clickatron::config::OptionLoader loader(
      "clickatron-archive: serves a sorted key,value file over HTTP (sortdb-compatible)\n", "options");
  loader.Add()
      ("db-file", po::value<std::string>(&o.db_file), "the sorted file to serve (required)")
      ("field-separator", po::value<std::string>(&separator)->default_value(","),
       "the character between key and value (one literal character; \\t or tab for a tab)")
      ("address", po::value<std::string>(&o.address)->default_value("127.0.0.1"),
       "address to listen on")
      ("port", po::value<int>(&port)->default_value(8080), "port to listen on")
      ("threads", po::value<int>(&o.threads)->default_value(1),
       "event loops sharing the port (SO_REUSEPORT) and the mapping")
      ("fwmatch-limit", po::value<size_t>(&o.fwmatch_limit)->default_value(10000),
       "most lines one /fwmatch answers (and its default limit)")
      ("max-mget-keys", po::value<size_t>(&o.max_mget_keys)->default_value(o.max_mget_keys),
       "most keys one /mget may ask for; more: 400 TOO_MANY_KEYS")
      ("max-answer-mb", po::value<size_t>(&max_answer_mb)->default_value(max_answer_mb),
       "largest /mget or /fwmatch answer, MiB; larger: 400 ANSWER_TOO_LARGE")
      ("populate", po::bool_switch(&o.populate),
       "pre-fault the mapping (MAP_POPULATE, MADV_WILLNEED) at start and on every reload")
      ("log-requests", po::bool_switch(&o.log_requests), "one stderr line per request")
      ("require-secret-for-reads", po::bool_switch(&o.require_secret_for_reads),
       "/get, /mget, /fwmatch and /stats need the cluster secret too (docs/operations.md#threat-model)");
  clickatron::config::AddSecretFileOption(&loader);
  clickatron::config::ServerLimitFlags limits(o.limits);
  limits.AddTo(&loader);
  po::variables_map vm;
  bool help = false;
  if (clickatron::Status s = loader.Load(argc, argv, &vm, &help); !s.ok()) {
    return Fail(s.message() + " (see --help)", 2);
  }
  if (help) return 0;
  if (clickatron::Status s = clickatron::config::ReadSecretFile(vm, &o.secret); !s.ok()) return Fail(s.message(), 2);
  if (o.db_file.empty()) return Fail("--db-file is required (see --help)", 2);
  if (!ParseSeparator(separator, &o.separator)) {
    return Fail("--field-separator must be a single character, got '" + separator + "'", 2);
  }
  if (port < 0 || port > 65535) return Fail("--port must be 0..65535", 2);
  o.port = static_cast<uint16_t>(port);
  if (o.threads < 1 || o.threads > 256) return Fail("--threads must be 1..256", 2);
  if (o.fwmatch_limit < 1) return Fail("--fwmatch-limit must be at least 1", 2);
  if (o.max_mget_keys < 1) return Fail("--max-mget-keys must be at least 1", 2);
  if (max_answer_mb < 1 || max_answer_mb > 65536) return Fail("--max-answer-mb must be between 1 and 65536", 2);
  o.max_answer_bytes = max_answer_mb << 20;
  if (clickatron::Status s = limits.Apply(&o.limits); !s.ok()) return Fail(s.message(), 2);

  // libevent's epoll changelist merges the delete/add/modify calls evhttp makes on a
  // connection within one loop pass into one epoll_ctl: 9 syscalls per keep-alive request
  // become 7, about 12% less CPU per /get (docs/benchmarks.md). It is libevent's own
  // switch, read when an event_base is created; an operator's setting wins.
  setenv("EVENT_EPOLL_USE_CHANGELIST", "1", /*overwrite=*/0);
  ArchiveServer server(o);
  clickatron::Status s = server.Start();
  if (!s.ok()) return Fail(s.message(), 1);
  server.Run();
  std::fprintf(stderr, "clickatron-archive: stopped\n");
  return 0;
}
