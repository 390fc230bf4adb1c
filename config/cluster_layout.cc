#include "config/cluster_layout.h"

#include "config/cluster_secret.h"

namespace clickatron::config {

Status ParseClusterLayout(const std::vector<std::string>& realtime, const std::vector<std::string>& archive,
                          ClusterLayout* out, const std::vector<std::string>& api) {
  ClusterLayout layout;
  for (const std::string& text : realtime) {
    net::HostPort hp;
    if (Status s = net::ParseHostPort(text, &hp); !s.ok()) return s.Prefixed("realtime: ");
    layout.realtime.push_back(std::move(hp));
  }
  for (const std::string& text : archive) {
    std::vector<net::HostPort> replicas;
    if (Status s = net::ParseHostPortList(text, &replicas); !s.ok()) return s.Prefixed("archive: ");
    layout.archive.push_back(std::move(replicas));
  }
  for (const std::string& text : api) {
    net::HostPort hp;
    if (Status s = net::ParseHostPort(text, &hp); !s.ok()) return s.Prefixed("api: ");
    layout.api.push_back(std::move(hp));
  }
  *out = std::move(layout);
  return Status::OK();
}

void AddClusterLayoutOptions(OptionLoader* loader) {
  loader->Add()("realtime", po::value<std::vector<std::string>>(),
                "realtime shard host:port, repeated in shard order")(
      "archive", po::value<std::vector<std::string>>(),
      "archive shard host:port[,host:port...] (replicas), repeated in shard order")(
      "api", po::value<std::vector<std::string>>(), "API node host:port, repeated (rebuild: its late data)");
  AddSecretFileOption(loader);
}

Status ReadClusterLayout(const po::variables_map& vm, ClusterLayout* out) {
  auto lines = [&](const char* key) {
    return vm.count(key) ? vm[key].as<std::vector<std::string>>() : std::vector<std::string>();
  };
  std::string secret;
  if (Status s = ReadSecretFile(vm, &secret); !s.ok()) return s;
  if (Status s = ParseClusterLayout(lines("realtime"), lines("archive"), out, lines("api")); !s.ok()) return s;
  out->secret = std::move(secret);
  out->secret_file = vm.count("secret-file") ? vm["secret-file"].as<std::string>() : std::string();
  return Status::OK();
}

}  // namespace clickatron::config
