// The oplog payload of /incr (api/incr_payload.h PayloadReader), which the API's senders
// read back from the oplog, on arbitrary bytes.
//
// Beyond "no crash": every line the reader accepts is what its text says — the shard and
// day are the decimal numbers written (never wrapped into a smaller type), key and value
// the text around the first ',', a count line's delta the value's number — so formatting the
// accepted fields as AppendEventLines would gives text that reads back to the same fields;
// annotation lines ('!') are skipped, never read as records. A stamp ReadIdempotencyStamp
// accepts is written back by AppendIdempotencyLine as the same line.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/incr_payload.h"
#include "fuzz/check.h"
#include "keyformat/records.h"

using namespace clickatron;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view payload(reinterpret_cast<const char*>(data), size);
  PayloadReader reader(payload);
  PayloadLine line;
  std::string_view rest = payload;
  while (reader.Next(&line)) {
    while (rest.starts_with("!")) rest.remove_prefix(rest.find('\n') + 1);  // a whole annotation line
    const std::string_view text = rest.substr(0, rest.find('\n'));
    rest.remove_prefix(text.size() + 1);
    // The numbers as written.
    uint64_t shard = 0, day = 0;
    const size_t s1 = text.find(' ');
    const size_t s2 = text.find(' ', s1 + 1);
    FUZZ_CHECK(s1 != std::string_view::npos && s2 != std::string_view::npos, "two numbers");
    const auto r1 = std::from_chars(text.data(), text.data() + s1, shard);
    const auto r2 = std::from_chars(text.data() + s1 + 1, text.data() + s2, day);
    FUZZ_CHECK(r1.ec == std::errc() && r2.ec == std::errc(), "the numbers are decimal");
    FUZZ_CHECK(line.shard == shard, "the shard is the number written");
    FUZZ_CHECK(line.day >= 0 && static_cast<uint64_t>(line.day) == day, "the day is the number written");
    FUZZ_CHECK(std::string(line.key) + "," + std::string(line.value) == text.substr(s2 + 1),
               "key and value are the record");

    std::string again = std::to_string(line.shard) + " " + std::to_string(line.day) + " ";
    again.append(line.key).append(",").append(line.value).append("\n");
    PayloadReader reread(again);
    PayloadLine other;
    FUZZ_CHECK(reread.Next(&other), "a formatted line reads");
    FUZZ_CHECK(other.shard == line.shard && other.day == line.day && other.key == line.key &&
                   other.value == line.value && other.lookup == line.lookup &&
                   other.delta == line.delta,
               "a formatted line reads back the same");
  }

  IdempotencyStamp stamp;
  bool found = false;
  if (ReadIdempotencyStamp(payload, &stamp, &found).ok() && found) {
    std::string line;
    AppendIdempotencyLine(stamp, &line);
    FUZZ_CHECK(payload.ends_with(line) && (payload.size() == line.size() || payload[payload.size() - line.size() - 1] == '\n'),
               "a stamp read is the record's last line as AppendIdempotencyLine writes it");
  }
  return 0;
}
