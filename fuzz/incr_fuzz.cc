// The API's /incr parsing (api/incr_event.h, api/incr_payload.h): the input is used both as
// the query string of `GET /incr` and as the body of `POST /incr` (one event per line, split
// and decoded as ApiServer::EncodeRequest does), at a fixed `now` (2012-03-25 01:00 UTC, the
// day of the docs' examples, so seeds from docs and tests land in the ts window).
//
// Beyond "no crash", for every event that parses:
//   * ValidateEvent accepts it (AppendEventLines requires it) and its ts is in the window;
//   * its oplog payload (AppendEventLines) reads back with PayloadReader line for line, with
//     the event's day, shards below the shard count, deltas equal to its value;
//   * those records are exactly keyformat's EncodeEvent records for the event (the same
//     keys and values: the API's encoder and the reference encoder agree), and every count
//     key parses as a realtime key of the event's namespace and stored key;
//   * a refused event names a status_txt (MISSING_ARG_*, INVALID_ARG_*, UNKNOWN_ARG, ...).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/incr_event.h"
#include "api/incr_payload.h"
#include "fuzz/check.h"
#include "keyformat/event.h"
#include "keyformat/records.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"
#include "net/query.h"

using namespace clickatron;

namespace {

constexpr int64_t kNow = 1332637200 + 3600;
constexpr uint32_t kShards = 5;

void CheckEvent(const Event& event) {
  EventError why;
  FUZZ_CHECK(ValidateEvent(event, &why), "a parsed event is valid");
  const TsWindow window = TsWindowAt(kNow);
  FUZZ_CHECK(event.ts >= window.first && event.ts <= window.last, "ts is in the window");

  std::string payload, scratch;
  AppendEventLines(event, kShards, &payload, &scratch);
  std::vector<std::pair<std::string, std::string>> lines;
  PayloadReader reader(payload);
  PayloadLine line;
  const std::string stored = StoredKey(event.key);
  while (reader.Next(&line)) {
    FUZZ_CHECK(line.shard < kShards, "a line's shard is below the shard count");
    FUZZ_CHECK(line.day == event.ts / kSecondsPerDay, "a line's day is the event's");
    FUZZ_CHECK(line.lookup == line.key.starts_with(kLookupPrefix), "lookup lines are _l|");
    if (!line.lookup) {
      FUZZ_CHECK(line.delta == event.value, "a count line carries the value");
      Result<ParsedKey> key = ParseRealtimeKey(line.key);
      FUZZ_CHECK(key.ok() && key->ns == event.ns && key->key == stored,
                 "a count key parses to the event's namespace and key");
    }
    lines.emplace_back(std::string(line.key), std::string(line.value));
  }
  FUZZ_CHECK(reader.status().ok(), "the payload reads to its end");

  std::vector<RealtimeRecord> records;
  EncodeEvent(event, &records);
  std::vector<std::pair<std::string, std::string>> expected;
  for (const RealtimeRecord& r : records) expected.emplace_back(r.key, r.value);
  std::sort(lines.begin(), lines.end());
  std::sort(expected.begin(), expected.end());
  expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
  FUZZ_CHECK(lines == expected, "the payload holds EncodeEvent's records");
}

void CheckError(const IncrError& error) {
  FUZZ_CHECK(error.code >= 400 && error.code < 500, "a refused event is a client error");
  FUZZ_CHECK(!error.status_txt.empty() && !error.message.empty(), "a refusal is named");
}

void ParseLine(net::Query* query, std::string_view text, Event* event) {
  IncrError error;
  if (!query->Parse(text).ok()) {
    CheckError(QueryDecodeError(query->bad_param(), query->status().message()));
    return;
  }
  if (ParseIncrEvent(query->params(), kNow, event, &error)) {
    CheckEvent(*event);
  } else {
    CheckError(error);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  net::Query query;
  Event event;
  ParseLine(&query, input, &event);  // GET /incr?<input>

  std::string_view rest = input;     // POST /incr with <input> as the body
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // the server refuses the batch here
    ParseLine(&query, line, &event);
  }
  return 0;
}
