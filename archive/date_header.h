// DateHeader: the HTTP `Date` value (RFC 1123, GMT), formatted once per second.
//
// evhttp formats a Date header for every reply through snprintf unless one is already
// set; with a status line and three headers also printf-formatted, header formatting is
// the largest user-space cost of a keep-alive /get (about 3,400 of 36,000 instructions
// for the date alone, measured with callgrind; docs/benchmarks.md). Each event loop keeps
// one DateHeader and hands evhttp a ready value. Not thread-safe: one per loop.
#ifndef CLICKATRON_ARCHIVE_DATE_HEADER_H_
#define CLICKATRON_ARCHIVE_DATE_HEADER_H_

#include <ctime>

namespace clickatron::archive {

class DateHeader {
 public:
  // "Sun, 22 Nov 2026 06:40:00 GMT" for the current second.
  const char* Now();
  // The value for unix time `t` (exposed for tests).
  const char* At(time_t t);

 private:
  time_t formatted_ = -1;
  char value_[40] = {};
};

}  // namespace clickatron::archive

#endif  // CLICKATRON_ARCHIVE_DATE_HEADER_H_
