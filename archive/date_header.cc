#include "archive/date_header.h"

namespace clickatron::archive {

const char* DateHeader::Now() { return At(time(nullptr)); }

const char* DateHeader::At(time_t t) {
  if (t != formatted_) {
    struct tm tm;
    gmtime_r(&t, &tm);
    // strftime's %a/%b follow the locale; the header needs the English names.
    static const char kDays[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char kMonths[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    char* p = value_;
    auto two = [&p](int v) {
      *p++ = static_cast<char>('0' + v / 10);
      *p++ = static_cast<char>('0' + v % 10);
    };
    for (int i = 0; i < 3; ++i) *p++ = kDays[tm.tm_wday][i];
    *p++ = ',';
    *p++ = ' ';
    two(tm.tm_mday);
    *p++ = ' ';
    for (int i = 0; i < 3; ++i) *p++ = kMonths[tm.tm_mon][i];
    *p++ = ' ';
    int year = tm.tm_year + 1900;
    two(year / 100);
    two(year % 100);
    *p++ = ' ';
    two(tm.tm_hour);
    *p++ = ':';
    two(tm.tm_min);
    *p++ = ':';
    two(tm.tm_sec);
    for (const char* s = " GMT"; *s; ++s) *p++ = *s;
    *p = '\0';
    formatted_ = t;
  }
  return value_;
}

}  // namespace clickatron::archive
