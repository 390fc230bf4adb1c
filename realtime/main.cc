// clickatron-realtime: one shard of the realtime tier (docs/api.md#clickatron-realtime). Flags (config/option_loader.h),
// then the server.
//   clickatron-realtime --data-dir DIR --port P [--address A] [--sync-interval 1s]
//                       [--cache-mb N] [--fwmatch-limit N] [--max-body-mb N] [--max-pending-mb N]
//                       [--source-lease-ms N] [--max-mget-keys N] [--power-safe]
//                       [--secret-file F] [--require-secret-for-reads]
//                       [--config FILE] [server limits: config/server_limits.h]
#include <cstdio>
#include <string>

#include "config/cluster_secret.h"
#include "config/option_loader.h"
#include "config/server_limits.h"
#include "realtime/server.h"

namespace po = clickatron::config::po;
using clickatron::realtime::RealtimeOptions;
using clickatron::realtime::RealtimeServer;

namespace {

int Fail(const std::string& message, int code = 2) {
  std::fprintf(stderr, "clickatron-realtime: %s\n", message.c_str());
  return code;
}

// "1", "1s", "0.5", "250ms" → seconds; false when malformed.
bool ParseInterval(std::string text, double* seconds) {
  double scale = 1;
  if (text.size() > 2 && text.ends_with("ms")) {
    scale = 1e-3;
    text.resize(text.size() - 2);
  } else if (text.size() > 1 && text.ends_with("s")) {
    text.resize(text.size() - 1);
  }
  try {
    size_t used = 0;
    double v = std::stod(text, &used);
    if (used != text.size()) return false;
    *seconds = v * scale;
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace

// One table of flags, then their checks, then the server started (62 lines): split, the
// checks would sit away from the flags they check.
int main(int argc, char** argv) {
  RealtimeOptions o;
  std::string interval = "1s";
  int port = -1;
  int64_t cache_mb = 256, max_body_mb = 64, max_pending_mb = int64_t(clickatron::realtime::kDefaultMaxPendingBytes >> 20);
  clickatron::config::OptionLoader loader("", "clickatron-realtime: one realtime shard (Tokyo Cabinet day ring)");
  loader.Add()
      ("data-dir", po::value<std::string>(&o.data_dir), "directory of the three slot databases (required)")
      ("port", po::value<int>(&port), "TCP port (required; 0 = any free port)")
      ("address", po::value<std::string>(&o.address)->default_value("127.0.0.1"), "address to bind")
      ("sync-interval", po::value<std::string>(&interval)->default_value("1s"),
       "flush pending writes to Tokyo Cabinet (commit, then fsync) every this long (seconds; suffix s or ms allowed)")
      ("cache-mb", po::value<int64_t>(&cache_mb)->default_value(256),
       "Tokyo Cabinet page cache per slot, MiB")
      ("fwmatch-limit", po::value<uint64_t>(&o.fwmatch_limit)->default_value(10000),
       "most lines one /fwmatch answers (and its default limit)")
      ("max-body-mb", po::value<int64_t>(&max_body_mb)->default_value(64), "largest request body, MiB")
      ("max-pending-mb", po::value<int64_t>(&max_pending_mb)->default_value(max_pending_mb),
       "writes not yet flushed to Tokyo Cabinet beyond which /incr and /set get 503 FLUSH_BEHIND, MiB")
      ("source-lease-ms", po::value<int64_t>(&o.source_lease_ms)->default_value(10000),
       "another sender (X-Clickatron-Sender) may write as a source only after its last sender was silent this long, ms")
      ("max-mget-keys", po::value<size_t>(&o.max_mget_keys)->default_value(o.max_mget_keys),
       "most keys one /mget may ask for; more: 400 TOO_MANY_KEYS")
      ("power-safe", po::bool_switch(&o.slot.power_safe),
       "Tokyo Cabinet synchronous transactions: survive power loss mid-commit (much slower)")
      ("require-secret-for-reads", po::bool_switch(&o.require_secret_for_reads),
       "/get, /mget, /fwmatch and /stats need the cluster secret too (docs/operations.md#threat-model)");
  clickatron::config::AddSecretFileOption(&loader);
  clickatron::config::ServerLimitFlags limits(o.limits);
  limits.AddTo(&loader);
  po::variables_map vm;
  bool help = false;
  if (clickatron::Status s = loader.Load(argc, argv, &vm, &help); !s.ok()) return Fail(s.message());
  if (help) return 0;
  if (clickatron::Status s = clickatron::config::ReadSecretFile(vm, &o.secret); !s.ok()) return Fail(s.message());
  if (o.data_dir.empty()) return Fail("--data-dir is required");
  if (port < 0 || port > 65535) return Fail("--port is required (0-65535)");
  o.port = static_cast<uint16_t>(port);
  if (!ParseInterval(interval, &o.sync_interval_seconds)) {
    return Fail("--sync-interval '" + interval + "' is not a duration (1, 1s, 250ms)");
  }
  if (cache_mb < 1 || cache_mb > 1 << 20) return Fail("--cache-mb must be between 1 and 1048576");
  if (max_body_mb < 1 || max_body_mb > 4096) return Fail("--max-body-mb must be between 1 and 4096");
  if (o.fwmatch_limit < 1) return Fail("--fwmatch-limit must be at least 1");
  if (o.max_mget_keys < 1) return Fail("--max-mget-keys must be at least 1");
  if (clickatron::Status s = limits.Apply(&o.limits); !s.ok()) return Fail(s.message());
  o.max_body_bytes = static_cast<size_t>(max_body_mb) << 20;
  if (max_pending_mb < 1 || max_pending_mb > 1 << 20) return Fail("--max-pending-mb must be between 1 and 1048576");
  o.max_pending_bytes = static_cast<size_t>(max_pending_mb) << 20;
  // A leaf of 128 records of ~50-byte keys and 8-byte values is about 8 KiB in memory.
  const int64_t leaf_bytes = int64_t{o.slot.lmemb} * 64;
  o.slot.leaf_cache = static_cast<int32_t>(std::max<int64_t>(64, (cache_mb << 20) / leaf_bytes));
  o.slot.node_cache = std::max<int32_t>(512, o.slot.leaf_cache / 16);

  o.slot.background_fsync = true;  // the loop commits; a thread fsyncs (file_syncer.h)
  RealtimeServer server(o);
  clickatron::Status s = server.Start();
  if (!s.ok()) return Fail(s.message(), 1);
  s = server.Run();
  if (!s.ok()) return Fail(s.message(), 1);
  return 0;
}
