#include "api/cluster_config.h"

#include <boost/program_options.hpp>

#include <fstream>
#include <iostream>

#include "keyformat/stored_key.h"

namespace po = boost::program_options;

namespace clickatron {

Status ParseClusterConfig(int argc, const char* const* argv, ClusterConfig* out, bool* help_shown) {
  *help_shown = false;
  po::options_description options("clickatron-api options (also settable as `name = value` in --config)");
  options.add_options()
      ("help,h", "show this help")
      ("config", po::value<std::string>(), "cluster config file")
      ("address", po::value<std::string>()->default_value(out->address), "address to listen on")
      ("port", po::value<uint16_t>()->default_value(out->port), "port to listen on")
      ("realtime", po::value<std::vector<std::string>>()->composing(),
       "realtime shard host:port, repeated in shard order")
      ("archive", po::value<std::vector<std::string>>()->composing(),
       "archive shard host:port[,host:port...] (replicas), repeated in shard order")
      ("oplog-dir", po::value<std::string>()->default_value(out->oplog_dir), "oplog directory")
      ("oplog-sync", po::value<std::string>()->default_value(out->oplog_sync), "always | batch | none")
      ("node-id", po::value<std::string>()->default_value(out->node_id), "this API's source id");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    if (vm.count("help")) {
      std::cout << options << "\n";
      *help_shown = true;
      return Status::OK();
    }
    if (vm.count("config")) {
      out->config_path = vm["config"].as<std::string>();
      std::ifstream file(out->config_path);
      if (!file) return Status::Error("cannot read config file '" + out->config_path + "'");
      po::store(po::parse_config_file(file, options, /*allow_unregistered=*/true), vm);
    }
    po::notify(vm);
  } catch (const po::error& e) {
    return Status::Error(e.what());
  }
  out->address = vm["address"].as<std::string>();
  out->port = vm["port"].as<uint16_t>();
  out->oplog_dir = vm["oplog-dir"].as<std::string>();
  out->oplog_sync = vm["oplog-sync"].as<std::string>();
  out->node_id = vm["node-id"].as<std::string>();
  out->realtime.clear();
  out->archive.clear();
  if (vm.count("realtime")) {
    for (const std::string& text : vm["realtime"].as<std::vector<std::string>>()) {
      net::HostPort hp;
      clickatron::Status s = net::ParseHostPort(text, &hp);
      if (!s.ok()) return Status::Error("realtime: " + s.message());
      out->realtime.push_back(hp);
    }
  }
  if (vm.count("archive")) {
    for (const std::string& text : vm["archive"].as<std::vector<std::string>>()) {
      std::vector<net::HostPort> replicas;
      clickatron::Status s = net::ParseHostPortList(text, &replicas);
      if (!s.ok()) return Status::Error("archive: " + s.message());
      out->archive.push_back(std::move(replicas));
    }
  }
  return ValidateClusterConfig(*out);
}

Status ValidateClusterConfig(const ClusterConfig& config) {
  if (config.realtime.empty()) return Status::Error("no realtime shard configured (realtime = host:port)");
  if (config.oplog_sync != "always" && config.oplog_sync != "batch" && config.oplog_sync != "none") {
    return Status::Error("oplog-sync '" + config.oplog_sync + "' is not always, batch or none");
  }
  if (Status s = ValidateNamespace(config.node_id, "node-id"); !s.ok()) return s;
  if (config.oplog_dir.empty()) return Status::Error("oplog-dir is empty");
  return Status::OK();
}

}  // namespace clickatron
