// The JSON readers of wire/ (json_answer.h, realtime_answers.h, archive_answers.h: the answers
// one Clickatron process reads from another)
// on arbitrary bodies, and on bodies net/json.h's writer made from arbitrary strings.
//
// Beyond "no crash" (rapidjson and the field checks on any bytes):
//   * an envelope written by JsonWriter reads back: status_code, and status_txt and
//     message exactly when they are valid UTF-8 (the writer replaces each byte of an invalid
//     sequence with U+FFFD, so the read-back text is then valid UTF-8 and not the input);
//   * a realtime /stats body written by JsonWriter gives its slots back, day null or text;
//   * an /incr answer written by JsonWriter gives its three integers back.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/check.h"
#include "net/json.h"
#include "wire/archive_answers.h"
#include "wire/json_answer.h"
#include "wire/realtime_answers.h"

using namespace clickatron::net;
using namespace clickatron::wire;

namespace {

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n;
    uint32_t cp;
    if (c < 0x80) { ++i; continue; }
    if (c >= 0xC2 && c <= 0xDF) { n = 1; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { n = 2; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 3; cp = c & 0x07; }
    else return false;
    if (n > s.size() - i - 1) return false;  // truncated
    for (size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

void CheckText(const std::string& read, const std::string& written) {
  FUZZ_CHECK(ValidUtf8(read), "a string read back is valid UTF-8");
  if (ValidUtf8(written)) {
    FUZZ_CHECK(read == written, "valid UTF-8 reads back exactly");
  } else {
    FUZZ_CHECK(read != written, "invalid UTF-8 is replaced, never passed on");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  (void)ReadJsonAnswer(body);
  (void)ReadIncrAnswer(body);
  (void)ReadArchiveStats(body);
  (void)ReadRealtimeSlots(body);

  FuzzedDataProvider in(data, size);
  const int code = in.ConsumeIntegral<int>();
  const std::string status_txt = in.ConsumeRandomLengthString(64);
  const std::string message = in.ConsumeRandomLengthString(256);
  std::string out;
  {
    JsonWriter w(&out);
    w.BeginObject();
    w.Field("status_code", code);
    w.Field("status_txt", std::string_view(status_txt));
    w.Key("data");
    w.Null();
    w.Field("message", std::string_view(message));
    w.EndObject();
  }
  clickatron::Result<JsonAnswer> answer = ReadJsonAnswer(out);
  FUZZ_CHECK(answer.ok(), "a written envelope reads");
  FUZZ_CHECK(answer->status_code == code, "status_code reads back");
  CheckText(answer->status_txt, status_txt);
  CheckText(answer->message, message);

  const uint64_t applied = in.ConsumeIntegral<uint64_t>();
  const uint64_t duplicate = in.ConsumeIntegral<uint64_t>();
  const int64_t seq = in.ConsumeIntegral<int64_t>();
  out.clear();
  {
    JsonWriter w(&out);
    w.BeginObject();
    w.Field("status_code", 200);
    w.Field("status_txt", "OK");
    w.Key("data");
    w.BeginObject();
    w.Field("seq", seq);
    w.Field("duplicate", duplicate);
    w.Field("applied", applied);
    w.EndObject();
    w.EndObject();
  }
  clickatron::Result<IncrAnswer> incr = ReadIncrAnswer(out);
  FUZZ_CHECK(incr.ok(), "a written /incr answer reads");
  FUZZ_CHECK(incr->applied == applied && incr->duplicate == duplicate && incr->seq == seq,
             "the /incr numbers read back");

  std::vector<std::pair<bool, std::string>> days;  // (null, text)
  std::vector<std::string> states;
  out.clear();
  {
    JsonWriter w(&out);
    w.BeginObject();
    w.Key("data");
    w.BeginObject();
    w.Key("slots");
    w.BeginArray();
    while (in.remaining_bytes() > 0 && states.size() < 16) {
      const bool null_day = in.ConsumeBool();
      days.emplace_back(null_day, null_day ? "" : in.ConsumeRandomLengthString(16));
      states.push_back(in.ConsumeRandomLengthString(16));
      w.BeginObject();
      w.Field("slot", static_cast<int64_t>(states.size() - 1));
      w.Key("day");
      if (null_day) {
        w.Null();
      } else {
        w.String(days.back().second);
      }
      w.Field("state", std::string_view(states.back()));
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    w.EndObject();
  }
  clickatron::Result<std::vector<RealtimeSlotFields>> slots = ReadRealtimeSlots(out);
  FUZZ_CHECK(slots.ok(), "a written /stats body reads");
  FUZZ_CHECK(slots->size() == states.size(), "every slot reads back");
  for (size_t i = 0; i < states.size(); ++i) {
    CheckText((*slots)[i].state, states[i]);
    if (days[i].first) {
      FUZZ_CHECK((*slots)[i].day.empty(), "a null day reads as empty");
    } else {
      CheckText((*slots)[i].day, days[i].second);
    }
  }
  return 0;
}
