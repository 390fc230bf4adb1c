// ClusterLayout: which servers make up the cluster, as the API and clickatron-rebuild read
// it from the cluster config file (docs/operations.md#deploying-n-shards-on-n-hosts):
//
//   realtime = 127.0.0.1:7101                    one line per realtime shard, in shard order
//   archive  = 127.0.0.1:7201,127.0.0.1:7211     one line per archive shard; replicas by comma
//   api      = 127.0.0.1:8000                    one line per API node (its late data)
//   secret-file = /etc/clickatron/cluster.secret  the cluster secret (config/cluster_secret.h)
//
// Addresses are net::HostPort (net/host_port.h), checked once when the file is read.
// The lines may also be given as --realtime / --archive on the command line, which then
// replace the file's lines (the command line wins, as for every option).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "config/option_loader.h"
#include "net/host_port.h"

namespace clickatron::config {

struct ClusterLayout {
  std::vector<net::HostPort> realtime;              // index = realtime shard
  std::vector<std::vector<net::HostPort>> archive;  // index = archive shard; its replicas
  std::vector<net::HostPort> api;                   // every API node
  // The cluster secret (config/cluster_secret.h), sent as X-Clickatron-Secret to every
  // internal endpoint; "" when the config names no secret-file.
  std::string secret;
  std::string secret_file;  // the secret-file it was read from, "" with none (passed on to
                            // the rebuild's Slurm tasks)
};

// Parses the `realtime`, `archive` and `api` lines. Errors name the key and the address
// ("realtime: 'abc' is not host:port", "archive: empty address in list 'a:1,'"); on error
// *out is unchanged.
Status ParseClusterLayout(const std::vector<std::string>& realtime, const std::vector<std::string>& archive,
                          ClusterLayout* out, const std::vector<std::string>& api = {});

// Adds the realtime, archive, api and secret-file options to a loader.
void AddClusterLayoutOptions(OptionLoader* loader);

// The layout from what Load() read, the secret file loaded (its named errors:
// config/cluster_secret.h). REQUIRES: AddClusterLayoutOptions on that loader.
Status ReadClusterLayout(const po::variables_map& vm, ClusterLayout* out);

}  // namespace clickatron::config
