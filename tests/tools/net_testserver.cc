// clickatron-net-testserver: a small server over net/ for tests/test_net.py — echo,
// deferred and streamed replies — so malformed requests can be thrown at the real wrapper
// over real sockets. Not part of the product.
#include <event2/event.h>

#include <atomic>
#include <cctype>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <unordered_map>

#include "net/http_server.h"
#include "net/json.h"
#include "net/stats_writer.h"

namespace net = clickatron::net;
namespace po = boost::program_options;

namespace {

// A reply that waits on a timer: models the API answering after the oplog syncs.
struct Delayed {
  std::unique_ptr<net::AsyncReply> reply;
  event* timer = nullptr;
  std::unordered_map<Delayed*, std::unique_ptr<Delayed>>* owner = nullptr;
  ~Delayed() {
    if (timer != nullptr) event_free(timer);
  }
};

// A chunked stream of `chunks` chunks of `size` bytes, each produced once the previous
// one has drained.
struct Stream {
  std::unique_ptr<net::AsyncReply> reply;
  long remaining = 0;
  std::string chunk;
  std::unordered_map<Stream*, std::unique_ptr<Stream>>* owner = nullptr;
  void Next() {
    if (remaining == 0) {
      reply->EndChunked();
      owner->erase(this);  // destroys this
      return;
    }
    --remaining;
    reply->SendChunk(chunk, [this] { Next(); });
  }
};

long ParamLong(net::Request& req, std::string_view name, long fallback) {
  auto v = req.Param(name);
  if (!v) return fallback;
  try {
    return std::stol(std::string(*v));
  } catch (...) {
    return fallback;
  }
}

}  // namespace

int main(int argc, char** argv) {
  net::ServerOptions options;
  int port = 0;
  int idle_seconds = 60;
  po::options_description desc("clickatron-net-testserver options");
  desc.add_options()
      ("help", "show this help")
      ("address", po::value<std::string>(&options.address)->default_value("127.0.0.1"), "bind address")
      ("port", po::value<int>(&port)->required(), "port")
      ("threads", po::value<int>(&options.threads)->default_value(1), "event loops")
      ("max-body", po::value<size_t>(&options.max_body_bytes)->default_value(1 << 20), "max body bytes")
      ("max-url", po::value<size_t>(&options.max_url_bytes)->default_value(8192), "max URL bytes")
      ("idle-timeout", po::value<int>(&idle_seconds)->default_value(60), "idle seconds")
      ("request-timeout-ms", po::value<int64_t>(&options.limits.request_timeout_ms)->default_value(30000),
       "whole-request deadline, ms")
      ("max-connections", po::value<size_t>(&options.limits.max_connections)->default_value(1024),
       "open connections")
      ("max-inflight-body", po::value<size_t>(&options.limits.max_inflight_body_bytes)->default_value(64 << 20),
       "bytes of requests being received, all connections");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    if (vm.count("help")) {
      std::cout << desc << "\n";
      return 0;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "clickatron-net-testserver: " << e.what() << "\n";
    return 2;
  }
  if (port < 0 || port > 65535) {
    std::cerr << "clickatron-net-testserver: --port must be 0..65535\n";
    return 2;
  }
  options.port = static_cast<uint16_t>(port);
  options.limits.idle_timeout_ms = int64_t{idle_seconds} * 1000;

  net::Server server(options);
  std::atomic<long> sighups{0};  // loop 0 writes, any loop reads
  std::unordered_map<Delayed*, std::unique_ptr<Delayed>> delayed;
  std::unordered_map<Stream*, std::unique_ptr<Stream>> streams;
  long closed_early = 0;  // /slow and /stream keep state per process: use them with --threads=1

  server.Handle("/ping", [](net::Request& req) { req.Reply(200, "OK"); });

  // Echo as JSON: method, path, every parameter in order, the body.
  server.Handle("/echo", [](net::Request& req) {
    if (!req.query().status().ok()) {
      std::string name(req.query().bad_param());
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      req.ReplyJsonError(400, "INVALID_ARG_" + name);
      return;
    }
    std::string data;
    net::JsonWriter w(&data);
    w.BeginObject();
    w.Key("method");
    w.Int(static_cast<int>(req.method()));
    w.Key("path");
    w.String(req.path());
    w.Key("params");
    w.BeginArray();
    for (const net::QueryParam& p : req.params()) {
      w.BeginArray();
      w.String(p.name);
      w.String(p.value);
      w.EndArray();
    }
    w.EndArray();
    w.Key("body");
    w.String(req.body());
    w.Key("loop");
    w.Int(req.loop_index());
    w.EndObject();
    req.ReplyJson(200, "OK", data);
  }, {.trailing_slash_alias = true});

  // sortdb-style: the value of key, plain text; bad encoding is a 400 naming it.
  server.Handle("/get", [](net::Request& req) {
    if (!req.query().status().ok()) {
      req.Reply(400, req.query().status().message() + "\n");
      return;
    }
    auto key = req.Param("key");
    if (!key) {
      req.Reply(400, "MISSING_ARG_KEY\n");
      return;
    }
    req.AddHeader("X-Archive-Last-Day", "2012-03-25");
    static const char kValue[] = "value-of-";
    req.ReplyReference(200, kValue, sizeof(kValue) - 1, [](const void*, size_t, void*) {}, nullptr);
  }, {.trailing_slash_alias = true});

  // Answers after ms milliseconds, from a timer: a deferred (asynchronous) reply.
  server.Handle("/slow", [&](net::Request& req) {
    long ms = ParamLong(req, "ms", 100);
    auto d = std::make_unique<Delayed>();
    Delayed* raw = d.get();
    raw->owner = &delayed;
    raw->reply = req.Defer();
    raw->reply->SetOnClose([raw, &delayed, &closed_early] {
      ++closed_early;
      delayed.erase(raw);
    });
    raw->timer = event_new(req.base(), -1, 0, [](int, short, void* arg) {
      auto* self = static_cast<Delayed*>(arg);
      self->reply->Reply(200, "slow done\n");
      self->owner->erase(self);
    }, raw);
    timeval tv{ms / 1000, (ms % 1000) * 1000};
    event_add(raw->timer, &tv);
    delayed.emplace(raw, std::move(d));
  });

  server.Handle("/stream", [&](net::Request& req) {
    auto s = std::make_unique<Stream>();
    Stream* raw = s.get();
    raw->owner = &streams;
    raw->remaining = ParamLong(req, "chunks", 10);
    raw->chunk.assign(static_cast<size_t>(ParamLong(req, "size", 1000)), 'x');
    raw->chunk.back() = '\n';
    raw->reply = req.Defer();
    raw->reply->SetOnClose([raw, &streams, &closed_early] {
      ++closed_early;
      streams.erase(raw);
    });
    raw->reply->StartChunked(200);
    streams.emplace(raw, std::move(s));
    raw->Next();
  });

  server.Handle("/stats", [&](net::Request& req) {
    std::string data;
    net::StatsWriter w(&data, nullptr);
    w.BeginObject();
    w.Key("sighups");
    w.Int(sighups.load());
    w.Key("closed_early");
    w.Int(closed_early);
    w.Key("pending");
    w.Uint(delayed.size() + streams.size());
    w.Key("latency");
    server.WriteLatencyJson(&w);
    w.EndObject();
    req.ReplyJson(200, "OK", data);
  });

  server.OnSighup([&] { ++sighups; });

  clickatron::Status s = server.Listen();
  if (!s.ok()) {
    std::cerr << "clickatron-net-testserver: " << s.message() << "\n";
    return 1;
  }
  std::fprintf(stderr, "listening on %s:%u\n", options.address.c_str(), server.port());
  server.Run();
  // Run abandoned whatever was pending; free what the handlers still hold before the
  // server (and its event bases) go.
  delayed.clear();
  streams.clear();
  return 0;
}
