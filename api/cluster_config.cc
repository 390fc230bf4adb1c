#include "api/cluster_config.h"

#include "config/option_loader.h"
#include "config/server_limits.h"
#include "keyformat/stored_key.h"
#include "net/secret.h"
#include "wire/generation.h"

namespace clickatron {

namespace po = boost::program_options;

Status ParseClusterConfig(int argc, const char* const* argv, ClusterConfig* out, bool* help_shown) {
  config::OptionLoader loader("", "clickatron-api options (also settable as `name = value` in --config)");
  loader.Add()
      ("address", po::value(&out->address)->default_value(out->address), "address to listen on")
      ("port", po::value(&out->port)->default_value(out->port), "port to listen on")
      ("oplog-dir", po::value(&out->oplog_dir)->default_value(out->oplog_dir), "oplog directory")
      ("oplog-sync", po::value(&out->oplog_sync)->default_value(out->oplog_sync), "always | batch | none")
      ("node-id", po::value(&out->node_id)->default_value(out->node_id), "this API's source id")
      ("query-max-backend-requests",
       po::value(&out->query_max_backend_requests)->default_value(out->query_max_backend_requests),
       "backend requests one /series or /breakdown may make; more answers 400 QUERY_TOO_LARGE")
      ("query-max-backend-mb", po::value(&out->query_max_backend_mb)->default_value(out->query_max_backend_mb),
       "MiB of backend answers one query may read; more answers 400 QUERY_TOO_LARGE")
      ("query-cache-mb", po::value(&out->query_cache_mb)->default_value(out->query_cache_mb),
       "MiB of archive answers the read path keeps until their generation is replaced (0: none)")
      ("archive-lease-ms", po::value(&out->archive_lease_ms)->default_value(out->archive_lease_ms),
       "ms after a live archive answer during which its generation is taken as served without asking "
       "(0: every query asks the archive)")
      ("idempotency-mb", po::value(&out->idempotency_mb)->default_value(out->idempotency_mb),
       "MiB of Idempotency-Keys /incr remembers for 24 h; when full a new key is answered 503 IDEMPOTENCY_INDEX_FULL")
      ("ui-dir", po::value(&out->ui_dir), "the dashboard's files (default: ui beside the executable, else ../share/clickatron/ui)")
      ("ui-chartjs", po::value(&out->ui_chartjs)->default_value(out->ui_chartjs),
       "Chart.js for the dashboard (Debian's libjs-chart.js)")
      ("stats-secret", po::bool_switch(&out->stats_secret),
       "/stats needs the cluster secret (X-Clickatron-Secret) as the internal endpoints do")
      ("display-name", po::value<std::vector<std::string>>(),
       "NS:NAME, repeated: the dashboard shows namespace or subtotal namespace NS as NAME")
      ("country-codes", po::value<std::vector<std::string>>(&out->country_codes),
       "a subtotal namespace whose subkeys are ISO 3166-1 country codes (the dashboard names them), repeated");
  config::AddClusterLayoutOptions(&loader);
  config::ServerLimitFlags limits(out->limits);
  limits.AddTo(&loader);
  po::variables_map vm;
  if (Status s = loader.Load(argc, argv, &vm, help_shown); !s.ok() || *help_shown) return s;
  if (Status s = limits.Apply(&out->limits); !s.ok()) return s;
  out->config_path = loader.config_path();
  out->node_id_given = vm.count("node-id") > 0 && !vm["node-id"].defaulted();
  if (Status s = config::ReadClusterLayout(vm, out); !s.ok()) return s;
  if (vm.count("display-name")) {
    for (const std::string& text : vm["display-name"].as<std::vector<std::string>>()) {
      std::pair<std::string, std::string> name;
      if (Status s = ParseDisplayName(text, &name); !s.ok()) return s;
      out->display_names.push_back(std::move(name));
    }
  }
  return ValidateClusterConfig(*out);
}

Status ParseDisplayName(const std::string& text, std::pair<std::string, std::string>* out) {
  const size_t colon = text.find(':');
  const std::string ns = text.substr(0, colon);
  if (colon == std::string::npos || !ValidateNamespace(ns).ok()) {
    return Status::Error("display-name '" + text + "' is not NS:NAME with NS a namespace (display-name = c:country)");
  }
  const std::string name = text.substr(colon + 1);
  bool printable = !name.empty() && name.size() <= 64;
  for (char c : name) printable = printable && static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
  if (!printable) {
    return Status::Error("display-name '" + text + "': the name after ':' must be 1 to 64 bytes of printable text");
  }
  *out = {ns, name};
  return Status::OK();
}

Status ValidateClusterConfig(const ClusterConfig& config) {
  if (config.realtime.empty()) return Status::Error("no realtime shard configured (realtime = host:port)");
  if (config.oplog_sync != "always" && config.oplog_sync != "batch" && config.oplog_sync != "none") {
    return Status::Error("oplog-sync '" + config.oplog_sync + "' is not always, batch or none");
  }
  if (Status s = ValidateNamespace(config.node_id, "node-id"); !s.ok()) return s;
  if (config.api.size() >= 2 && !config.node_id_given) {
    const std::string where = config.config_path.empty() ? "" : "--config " + config.config_path + ": ";
    return Status::Error(where + std::to_string(config.api.size()) +
                         " api lines (several API nodes) but no node-id: each API needs its own node-id "
                         "(--node-id NAME, or node-id = NAME in its file), or two APIs would write the "
                         "realtime shards as one source");
  }
  if (config.oplog_dir.empty()) return Status::Error("oplog-dir is empty");
  if (Status s = net::CheckListenSecret(config.address, config.secret); !s.ok()) return s;
  if (config.stats_secret && config.secret.empty()) {
    return Status::Error("SECRET_REQUIRED: stats-secret is set but no secret-file names the cluster secret");
  }
  if (config.query_max_backend_requests < 2) return Status::Error("query-max-backend-requests must be at least 2");
  if (config.query_max_backend_mb < 1 || config.query_max_backend_mb > 65536) {
    return Status::Error("query-max-backend-mb must be between 1 and 65536");
  }
  for (size_t i = 0; i < config.display_names.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (config.display_names[j].first == config.display_names[i].first) {
        return Status::Error("display-name: namespace '" + config.display_names[i].first + "' is named twice");
      }
    }
  }
  for (const std::string& ns : config.country_codes) {
    if (Status s = ValidateNamespace(ns, "country-codes"); !s.ok()) return s;
  }
  if (config.query_cache_mb > 65536) return Status::Error("query-cache-mb must be between 0 and 65536");
  if (config.idempotency_mb < 1 || config.idempotency_mb > 65536) {
    return Status::Error("idempotency-mb must be between 1 and 65536");
  }
  if (config.archive_lease_ms > static_cast<uint32_t>(wire::kGenerationConfirmMs)) {
    // Longer than the release waits out: a day could leave realtime while a query still
    // takes the generation before it as served (wire/generation.h).
    return Status::Error("archive-lease-ms must be between 0 and " + std::to_string(wire::kGenerationConfirmMs));
  }
  return Status::OK();
}

}  // namespace clickatron
