// TestServer: a net::Server on 127.0.0.1 (any free port) running on its own thread for the
// length of a test, with the routes `setup` adds; stopped and joined when destroyed. For
// tests of HTTP servers and of the clients that call them. Only *_test.cc include this.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <thread>

#include "net/host_port.h"
#include "net/http_server.h"

namespace clickatron::net {

class TestServer {
 public:
  explicit TestServer(std::function<void(Server&)> setup, ServerOptions options = {}) {
    options.handle_signals = false;
    server_ = std::make_unique<Server>(options);
    setup(*server_);
    Status s = server_->Listen();
    EXPECT_TRUE(s.ok()) << s.message();
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~TestServer() { Stop(); }
  void Stop() {
    if (thread_.joinable()) {
      server_->Stop();
      thread_.join();
    }
  }
  Server& server() { return *server_; }
  uint16_t port() const { return server_->port(); }
  HostPort address() const { return HostPort{"127.0.0.1", server_->port()}; }

 private:
  std::unique_ptr<Server> server_;
  std::thread thread_;
};

}  // namespace clickatron::net
