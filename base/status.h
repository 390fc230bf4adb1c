// Status and Result<T>: errors as values, as in LevelDB.
//
// A Status is either OK or carries the message a user will see ("time token 'zzzz' is not
// YMDH") and a code. Result<T> holds a T or a failed Status. Nothing in Clickatron throws
// across a module boundary; functions that can fail return one of these. Both are cheap to
// return when OK (no allocation).
//
// The code names the errors a caller tells apart (docs/wire.md#status-codes): a caller
// branches on code(), never on the message's text, which is for people and may change.
// Most errors are only reported, never told apart: Status::Error(message) gives them
// StatusCode::kError.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace clickatron {

enum class StatusCode : uint8_t {
  kOk = 0,
  kError,                // a failure no caller tells apart from others
  kArchiveUnavailable,   // an archive shard could not answer (the API answers 503 ARCHIVE_UNAVAILABLE)
  kRealtimeUnavailable,  // a realtime shard could not answer (503 REALTIME_UNAVAILABLE)
};

class Status {
 public:
  Status() = default;  // OK
  static Status OK() { return Status(); }
  static Status Error(std::string message) { return Status(StatusCode::kError, std::move(message)); }
  // REQUIRES: code != StatusCode::kOk.
  static Status Error(StatusCode code, std::string message) { return Status(code, std::move(message)); }

  bool ok() const { return code_ == StatusCode::kOk; }
  // kOk when ok(); what the error is, to branch on.
  StatusCode code() const { return code_; }
  // The error text; empty when ok().
  const std::string& message() const { return message_; }

  // A copy of this error, same code, with "context: " in front (e.g. "line 12: ").
  Status Prefixed(std::string_view context) const {
    if (ok()) return *this;
    std::string m(context);
    m += message_;
    return Status(code_, std::move(m));
  }

 private:
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}             // NOLINT: implicit by design
  Result(Status error) : v_(std::move(error)) {}        // NOLINT: REQUIRES: !error.ok()

  bool ok() const { return v_.index() == 0; }
  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const { return value(); }
  const T* operator->() const { return &value(); }
  // OK when ok(); otherwise the error.
  Status status() const { return ok() ? Status::OK() : std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace clickatron
