#include "net/fetch.h"

#include <event2/event.h>

#include <memory>

#include "net/loop_waker.h"

namespace clickatron::net {

namespace {

struct BaseDeleter {
  void operator()(event_base* base) const { event_base_free(base); }
};

Status RunOne(const HostPort& to, std::string_view path_and_query, RequestOptions options,
              HttpResponse* response, const ClientOptions& client_options) {
  InitLibeventThreads();
  std::unique_ptr<event_base, BaseDeleter> base(event_base_new());
  if (base == nullptr) return Status::Error("cannot create an event loop");
  bool done = false;
  {
    HttpClient client(base.get(), client_options);
    client.Request(to, path_and_query, std::move(options), [&](HttpResponse&& r) {
      *response = std::move(r);
      done = true;
      event_base_loopbreak(base.get());
    });
    while (!done) {
      if (event_base_dispatch(base.get()) < 0) {
        return Status::Error(to.ToString() + ": event loop failed");
      }
    }
  }
  // The client's pooled connection is gone with it; run the loop once more so evhttp's
  // deferred frees complete before the base goes.
  event_base_loop(base.get(), EVLOOP_NONBLOCK);
  if (!response->ok()) return Status::Error(response->error);
  return Status::OK();
}

}  // namespace

Status Fetch(const HostPort& to, std::string_view path_and_query, RequestOptions options,
             HttpResponse* response, ClientOptions client_options) {
  return RunOne(to, path_and_query, std::move(options), response, client_options);
}

Status Fetch(std::string_view host_port, std::string_view path_and_query,
             RequestOptions options, HttpResponse* response, ClientOptions client_options) {
  HostPort to;
  Status s = ParseHostPort(host_port, &to);
  if (!s.ok()) {
    response->status = 0;
    response->error = s.message();
    return s;
  }
  return RunOne(to, path_and_query, std::move(options), response, client_options);
}

Status FetchStream(const HostPort& to, std::string_view path_and_query,
                   RequestOptions options,
                   std::function<bool(std::string_view chunk)> on_chunk,
                   HttpResponse* response, ClientOptions client_options) {
  options.on_chunk = std::move(on_chunk);
  return RunOne(to, path_and_query, std::move(options), response, client_options);
}

}  // namespace clickatron::net
