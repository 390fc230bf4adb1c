// ServerLoop: one event loop of a Server — its event_base, evhttp, per-route latency and
// the list of AsyncReplys still pending on it. Internal to net/ (http_server.cc and
// request.cc); components use Server.
#ifndef CLICKATRON_NET_SERVER_LOOP_H_
#define CLICKATRON_NET_SERVER_LOOP_H_

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "base/latency.h"
#include "base/status.h"
#include "net/query.h"

struct event;
struct event_base;
struct evhttp;
struct evhttp_request;

namespace clickatron::net {

class AsyncReply;
class Server;

class ServerLoop {
 public:
  ServerLoop(Server* server, int index);
  ~ServerLoop();
  ServerLoop(const ServerLoop&) = delete;
  ServerLoop& operator=(const ServerLoop&) = delete;

  // Creates the base and evhttp and starts accepting on listen_fd (taking ownership).
  Status Init(int listen_fd);
  // Runs the loop until RequestStop(), then closes every connection and frees evhttp.
  void Loop();
  // Any thread: makes Loop() return soon (an event the loop runs, so it also works
  // before the loop started).
  void RequestStop();

  Server* server() const { return server_; }
  int index() const { return index_; }
  event_base* base() const { return base_; }

  void Record(int route, uint64_t micros) { latency_[route]->Record(micros); }
  LatencySnapshot Snapshot(int route) const { return latency_[route]->Snapshot(); }

  void AddPending(AsyncReply* reply);
  void RemovePending(AsyncReply* reply);

  std::thread thread;

 private:
  static void OnRequest(evhttp_request* req, void* arg);
  static void OnStopEvent(int fd, short what, void* arg);
  void Dispatch(evhttp_request* req);
  void Shutdown();

  Server* server_;
  int index_;
  event_base* base_ = nullptr;
  evhttp* http_ = nullptr;
  event* stop_event_ = nullptr;
  Query query_;  // reused for every request on this loop: no allocation once warm
  std::vector<std::unique_ptr<LatencyHistogram>> latency_;  // one per route
  AsyncReply* pending_ = nullptr;
};

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_SERVER_LOOP_H_
