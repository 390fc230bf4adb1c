// ServerLoop: one event loop of a Server — its event_base, evhttp, per-route latency and
// the list of AsyncReplys still pending on it. Internal to net/ (http_server.cc and
// request.cc); components use Server.
#ifndef CLICKATRON_NET_SERVER_LOOP_H_
#define CLICKATRON_NET_SERVER_LOOP_H_

#include <cstdint>
#include <memory>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/latency.h"
#include "base/status.h"
#include "net/query.h"

struct bufferevent;
struct event;
struct event_base;
struct evbuffer;
struct evbuffer_cb_entry;
struct evbuffer_cb_info;
struct evconnlistener;
struct evhttp;
struct evhttp_connection;
struct evhttp_request;
struct timeval;

namespace clickatron::net {

class AsyncReply;
class Server;
class ServerLoop;

// One accepted connection, as the limits see it (docs/net.md#limits). Created when evhttp
// asks for the connection's bufferevent (evhttp_set_bevcb); adopted once evhttp has made
// its evhttp_connection (in an event run right after the accept, before any byte is read):
// from then on evhttp's close callback of the connection is ours, and destroys this.
struct Connection {
  enum class Cut { kNone, kOverCap, kBudget };
  ServerLoop* loop = nullptr;
  bufferevent* bev = nullptr;
  evhttp_connection* evcon = nullptr;      // set when adopted
  evbuffer_cb_entry* input_cb = nullptr;   // counts the bytes read (OnInput)
  event* timer = nullptr;                  // adoption, the request deadline, a deferred cut
  AsyncReply* async = nullptr;             // a deferred reply waiting on this connection
  size_t received = 0;                     // bytes of the request being received
  size_t charged = 0;                      // of which counted in the in-flight budget
  Cut cut = Cut::kNone;
  bool adopted = false;
  bool deadline_armed = false;
  bool discarding = false;  // past every size limit: evhttp drops the rest (413)
  Connection* prev = nullptr;  // the loop's list of connections
  Connection* next = nullptr;
};

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

  // The connection a request came on (null if unknown, e.g. after a cut).
  Connection* ConnectionOf(evhttp_request* req) const;

  std::thread thread;

 private:
  static void OnRequest(evhttp_request* req, void* arg);
  static void OnStopEvent(int fd, short what, void* arg);
  static bufferevent* OnNewConnection(event_base* base, void* arg);
  static void OnConnectionTimer(int fd, short what, void* arg);
  static void OnInput(evbuffer* buffer, const evbuffer_cb_info* info, void* arg);
  static void OnConnectionClosed(evhttp_connection* evcon, void* arg);
  static void OnAcceptError(evconnlistener* listener, void* arg);
  static void OnAcceptResume(int fd, short what, void* arg);
  void Dispatch(evhttp_request* req);
  // The steps of Dispatch, in order; the first two return false once they have answered.
  bool EndReceiving(Connection* conn, Request& r);
  bool ReadTarget(evhttp_request* req, Request& r);
  void RunRoute(Request& r);
  void Shutdown();
  void Adopt(Connection* conn);
  // Answers `status` on the raw socket (best effort) and closes the connection.
  void Cut(Connection* conn, const char* status, const char* name);
  void Release(Connection* conn);  // gives back its share of the in-flight budget
  void Destroy(Connection* conn);

  Server* server_;
  int index_;
  event_base* base_ = nullptr;
  evhttp* http_ = nullptr;
  event* stop_event_ = nullptr;
  evconnlistener* listener_ = nullptr;  // evhttp's
  event* accept_resume_ = nullptr;
  const timeval* request_timeout_ = nullptr;  // a common timeout of base_ (O(1) add/del)
  Connection* connections_ = nullptr;
  std::unordered_map<evhttp_connection*, Connection*> by_evcon_;  // adopted ones
  int64_t last_accept_log_us_ = -1;
  Query query_;  // reused for every request on this loop: no allocation once warm
  std::vector<std::unique_ptr<LatencyHistogram>> latency_;  // one per route
  AsyncReply* pending_ = nullptr;
};

}  // namespace clickatron::net

#endif  // CLICKATRON_NET_SERVER_LOOP_H_
