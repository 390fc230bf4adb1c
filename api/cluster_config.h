// ClusterConfig: what clickatron-api knows of the cluster (docs/operations.md#deploying-n-shards-on-n-hosts):
// the layout every reader of the cluster config shares (config/cluster_layout.h) and the
// API's own settings.
//
//   realtime = 127.0.0.1:7101              one line per realtime shard, in shard order
//   archive  = 127.0.0.1:7201,127.0.0.1:7211  one line per archive shard; replicas by comma
//   api      = 127.0.0.1:8000              one line per API node
//   oplog-dir = var/oplog   oplog-sync = batch   node-id = api-1   port = 8000
//   secret-file = /etc/clickatron/cluster.secret   stats-secret = false
//   display-name = c:country   country-codes = c   (the dashboard's names, /namespaces)
//
// Every option may come from the command line or from the file named by --config
// (config/option_loader.h); the command line wins. Options other processes use in the
// same file are ignored here.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "config/cluster_layout.h"
#include "net/http_server.h"
#include "wire/generation.h"

namespace clickatron {

struct ClusterConfig : config::ClusterLayout {  // realtime and archive shards
  std::string address = "127.0.0.1";
  uint16_t port = 8000;
  std::string oplog_dir = "var/oplog";
  std::string oplog_sync = "batch";                  // always | batch | none
  std::string node_id = "api-1";
  bool node_id_given = false;                        // set in the file or on the command line
  // The fan-out bound of one query (QueryOptions, docs/api-read.md#bounds).
  uint32_t query_max_backend_requests = 1024;
  uint32_t query_max_backend_mb = 64;
  // The archive answer cache (QueryOptions::archive_cache_bytes, docs/api-read.md#caches).
  uint32_t query_cache_mb = 64;
  // How long a generation a live archive answer named is taken as served without asking
  // (QueryOptions::archive_cache_confirm_ms): 0 to archive::kGenerationConfirmMs.
  uint32_t archive_lease_ms = wire::kGenerationConfirmMs;
  // MiB the idempotency index may hold (IdempotencyIndex, docs/api-write.md#safe-retries):
  // a UUID key is charged 228 bytes, so 64 MiB holds some 290,000 keys a day.
  uint32_t idempotency_mb = 64;
  // The dashboard's files (api/static_files.h): empty ui_dir is DefaultUiDir(): "ui" beside
  // the executable, else ../share/clickatron/ui.
  std::string ui_dir;
  std::string ui_chartjs = "/usr/share/javascript/chart.js/chart.min.js";
  // Per-client cost limits of the API's server (config/server_limits.h flags,
  // docs/operations.md#limits). Bodies here are at most 1 MiB.
  net::ServerLimits limits;
  // /stats needs the cluster secret too (the layout's secret; docs/operations.md#threat-model).
  bool stats_secret = false;
  std::string config_path;                           // the --config file, if any
  // What the dashboard shows for a namespace or subtotal namespace (`display-name = c:country`,
  // repeated; docs/formats.md#cluster-config), in the order given, and the subtotal
  // namespaces whose subkeys are ISO 3166-1 country codes (`country-codes = c`): both in
  // /namespaces answers.
  std::vector<std::pair<std::string, std::string>> display_names;
  std::vector<std::string> country_codes;
};

// Parses one `display-name` value `NS:NAME` (a namespace, then 1–64 bytes of printable text).
Status ParseDisplayName(const std::string& text, std::pair<std::string, std::string>* out);

// Parses argv (argv[0] is the program) and the --config file. On --help prints usage to
// stdout and sets *help_shown. Errors name the option and the problem.
Status ParseClusterConfig(int argc, const char* const* argv, ClusterConfig* out, bool* help_shown);

// Checks a config already filled in: at least one realtime shard, valid sync policy,
// node-id a namespace-like name (it becomes the oplog's source id), and node-id given
// explicitly when the config names two or more API nodes (`api =` lines): two APIs left
// with the default would write the realtime shards as one source
// (docs/formats.md#cluster-config), a secret when the address is not loopback
// (SECRET_REQUIRED, net/secret.h) or stats-secret is on. Errors about the file
// start "--config FILE: ".
Status ValidateClusterConfig(const ClusterConfig& config);

}  // namespace clickatron
