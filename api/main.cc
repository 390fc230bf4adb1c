// clickatron-api: the public HTTP API (docs/api.md#clickatron-api). Reads the cluster config, opens the
// oplog, serves until SIGTERM. The logic lives in api_server.cc.
#include <cstdio>

#include "api/api_server.h"
#include "api/cluster_config.h"

int main(int argc, char** argv) {
  clickatron::ClusterConfig config;
  bool help = false;
  clickatron::Status s = clickatron::ParseClusterConfig(argc, argv, &config, &help);
  if (help) return 0;
  if (!s.ok()) {
    std::fprintf(stderr, "clickatron-api: %s\n", s.message().c_str());
    return 2;
  }
  auto api = clickatron::ApiServer::Open(config);
  if (!api.ok()) {
    std::fprintf(stderr, "clickatron-api: %s\n", api.status().message().c_str());
    return 1;
  }
  std::fprintf(stderr, "clickatron-api: listening on %s:%u (%zu realtime shard(s), oplog-sync=%s)\n",
               config.address.c_str(), unsigned((*api)->port()), config.realtime.size(),
               config.oplog_sync.c_str());
  (*api)->Run();
  api = clickatron::Status::Error("stopped");  // destroys the server in order before exit
  std::fprintf(stderr, "clickatron-api: stopped\n");
  return 0;
}
