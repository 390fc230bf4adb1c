#include "api/incr_event.h"

#include <charconv>

#include "base/clip.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"
#include "wire/refusals.h"

namespace clickatron {
namespace {

// A user value shown in a message: at most 64 bytes, so a 4 KB key does not flood it.
constexpr size_t kShown = 64;

bool Fail(IncrError* error, std::string status_txt, std::string message, int code = 400) {
  error->code = code;
  error->status_txt = std::move(status_txt);
  error->message = std::move(message);
  return false;
}

std::string Upper(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
  }
  return out;
}

// A decimal int64 with an optional '-', nothing else.
bool ParseInt64(std::string_view text, int64_t* out, bool* overflow) {
  *overflow = false;
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  if (ec == std::errc::result_out_of_range && ptr == end) {
    *overflow = true;
    return false;
  }
  return ec == std::errc() && ptr == end;
}

std::string DayText(int64_t ts) { return FormatDay(ts >= 0 ? ts / kSecondsPerDay : -1); }

// Which of an increment's parameters were given, and the text of value and ts.
struct IncrTexts {
  bool have_ns = false, have_key = false, have_value = false, have_ts = false;
  std::string_view value, ts;
};

// ns, key and sub into *event, value and ts into *texts; a parameter given twice, a sub
// without its ':' or an unknown parameter fails.
bool ReadIncrParams(const std::vector<net::QueryParam>& params, Event* event, IncrTexts* texts,
                    IncrError* error) {
  for (const net::QueryParam& p : params) {
    if (p.name == "ns") {
      if (texts->have_ns) return Fail(error, "INVALID_ARG_NS", "ns is given twice");
      texts->have_ns = true;
      event->ns = p.value;
    } else if (p.name == "key") {
      if (texts->have_key) return Fail(error, wire::kInvalidArgKey, "key is given twice");
      texts->have_key = true;
      event->key = p.value;
    } else if (p.name == "value") {
      if (texts->have_value) return Fail(error, "INVALID_ARG_VALUE", "value is given twice");
      texts->have_value = true;
      texts->value = p.value;
    } else if (p.name == "ts") {
      if (texts->have_ts) return Fail(error, wire::kInvalidArgTs, "ts is given twice");
      texts->have_ts = true;
      texts->ts = p.value;
    } else if (p.name == "sub") {
      const size_t colon = p.value.find(':');
      if (colon == std::string_view::npos) {
        return Fail(error, "INVALID_ARG_SUB",
                    "sub '" + Clipped(p.value, kShown) + "' is not <subtotal namespace>:<subkey>");
      }
      event->subs.push_back(SubtotalRef{p.value.substr(0, colon), p.value.substr(colon + 1)});
    } else {
      return Fail(error, wire::kUnknownArg,
                  "unknown parameter '" + Clipped(p.name, kShown) + "' (an increment takes ns, key, value, ts, sub)");
    }
  }
  return true;
}

// value (a non-zero int64) and ts (unix seconds) when given.
bool ParseValueAndTs(const IncrTexts& texts, Event* event, IncrError* error) {
  if (texts.have_value) {
    bool overflow;
    if (!ParseInt64(texts.value, &event->value, &overflow)) {
      return Fail(error, "INVALID_ARG_VALUE",
                  overflow ? "value '" + Clipped(texts.value, kShown) + "' does not fit in a signed 64-bit integer"
                           : "value '" + Clipped(texts.value, kShown) + "' is not an integer");
    }
    if (event->value == 0) {
      return Fail(error, "INVALID_ARG_VALUE", "value is 0; an increment must change the count");
    }
  }
  if (texts.have_ts) {
    bool overflow;
    if (!ParseInt64(texts.ts, &event->ts, &overflow)) {
      return Fail(error, wire::kInvalidArgTs, "ts '" + Clipped(texts.ts, kShown) + "' is not an integer (unix seconds)");
    }
  }
  return true;
}

// ts within the window the realtime ring holds at now (yesterday through tomorrow, UTC).
bool CheckTsWindow(int64_t ts, int64_t now, IncrError* error) {
  const TsWindow window = TsWindowAt(now);
  if (ts < window.first) {
    return Fail(error, "TS_TOO_OLD",
                "ts " + std::to_string(ts) + " is before yesterday 00:00 UTC (" +
                    DayText(window.first) + "); history goes through clickatron-rebuild import");
  }
  if (ts > window.last) {
    return Fail(error, "TS_IN_FUTURE",
                "ts " + std::to_string(ts) + " is after tomorrow 23:59:59 UTC (" +
                    DayText(window.last) + ")");
  }
  return true;
}

}  // namespace

TsWindow TsWindowAt(int64_t now) {
  const int64_t today = now / kSecondsPerDay;
  return TsWindow{(today - 1) * kSecondsPerDay, (today + 2) * kSecondsPerDay - 1};
}

IncrError QueryDecodeError(std::string_view bad_param, std::string_view message) {
  IncrError e;
  e.code = 400;
  if (bad_param == "ns" || bad_param == "key" || bad_param == "value" || bad_param == "ts" ||
      bad_param == "sub") {
    e.status_txt = wire::kInvalidArgPrefix + Upper(bad_param);
  } else {
    e.status_txt = wire::kUnknownArg;
  }
  e.message = std::string(message);
  return e;
}

bool ParseIncrEvent(const std::vector<net::QueryParam>& params, int64_t now, Event* event,
                    IncrError* error) {
  event->ns = {};
  event->key = {};
  event->value = 1;
  event->ts = now;
  event->subs.clear();
  IncrTexts texts;
  if (!ReadIncrParams(params, event, &texts, error)) return false;
  if (!texts.have_ns || event->ns.empty()) return Fail(error, "MISSING_ARG_NS", "ns is required");
  if (!texts.have_key || event->key.empty()) return Fail(error, wire::kMissingArgKey, "key is required");
  if (Status s = ValidateNamespace(event->ns, "ns"); !s.ok()) {
    return Fail(error, "INVALID_ARG_NS", s.message());
  }
  if (Status s = ValidateUserKey(event->key, "key"); !s.ok()) {
    return Fail(error, wire::kInvalidArgKey, s.message());
  }
  if (!ParseValueAndTs(texts, event, error) || !CheckTsWindow(event->ts, now, error)) return false;
  EventError event_error;
  if (!ValidateEvent(*event, &event_error)) {
    return Fail(error, wire::kInvalidArgPrefix + Upper(event_error.param), event_error.message);
  }
  return true;
}

}  // namespace clickatron
