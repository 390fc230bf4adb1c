// Record text (keyformat/records.h, keyformat/columns.h) on arbitrary bytes: realtime and
// archive keys, `key,value` lines, counts, escaped lookup values, multi-column values.
//
// Beyond "no crash":
//   * a realtime or archive key that parses is rebuilt byte for byte from its parts by the
//     key builders, its parts are valid (namespaces, stored keys, YMDH) and its shard key
//     is the `{ns}|{key}` (or `_l|{hash}`) of the text;
//   * SplitLine: key + ',' + value is the line, the key nonempty and free of ',';
//   * ParseCount: the number prints back to text that parses to it;
//   * lookup values: unescaping then escaping gives the text back, escaping then
//     unescaping gives the bytes back;
//   * a column value that ValidateColumns accepts is read whole by ColumnReader and
//     rebuilt by AppendColumn to columns that read back the same;
//   * a day or month rollup value whose mask SplitRollupMask accepts (keyformat/rollup_hours.h):
//     every day's hours within 1 .. 2^24 - 1, a day rollup's of its own day only, the rest
//     a suffix of the text that starts with no mask column, and the mask written again by
//     AppendRollupMasks splits back to the same hours and rest.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/check.h"
#include "keyformat/columns.h"
#include "keyformat/records.h"
#include "keyformat/rollup_hours.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"

using namespace clickatron;

namespace {

void CheckKeyParts(std::string_view text, const ParsedKey& p, bool archive) {
  std::string rebuilt;
  switch (p.type) {
    case RecordType::kTotal:
      FUZZ_CHECK(ValidateNamespace(p.ns).ok() && IsStoredKey(p.key), "total parts are valid");
      if (archive) {
        AppendArchiveTotalKey(&rebuilt, p.ns, p.key);
      } else {
        FUZZ_CHECK(DecodeYmdh(p.ymdh).ok(), "a realtime total's hour is valid");
        AppendTotalKey(&rebuilt, p.ns, p.key, p.ymdh);
      }
      break;
    case RecordType::kSubtotal:
      FUZZ_CHECK(ValidateNamespace(p.ns).ok() && ValidateNamespace(p.subns).ok() &&
                     IsStoredKey(p.key) && DecodeYmdh(p.ymdh).ok(),
                 "subtotal parts are valid");
      if (archive) {
        AppendArchiveSubtotalKey(&rebuilt, p.subns, p.ns, p.key, p.ymdh);
      } else {
        FUZZ_CHECK(IsStoredKey(p.subkey), "a realtime subtotal's subkey is stored");
        AppendSubtotalKey(&rebuilt, p.subns, p.ns, p.key, p.subkey, p.ymdh);
      }
      break;
    case RecordType::kLookup:
      FUZZ_CHECK(IsKeyHash(p.hash), "a lookup key holds a hash");
      AppendLookupKey(&rebuilt, p.hash);
      break;
  }
  FUZZ_CHECK(rebuilt == text, "a parsed key is rebuilt from its parts");
  const std::string shard_key =
      p.type == RecordType::kLookup ? std::string(kLookupPrefix) + std::string(p.hash)
                                    : std::string(p.ns) + "|" + std::string(p.key);
  FUZZ_CHECK(p.shard_key == shard_key, "the shard key");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  if (Result<ParsedKey> p = ParseRealtimeKey(text); p.ok()) CheckKeyParts(text, *p, false);
  if (Result<ParsedKey> p = ParseArchiveKey(text); p.ok()) CheckKeyParts(text, *p, true);

  if (Result<Line> line = SplitLine(text); line.ok()) {
    FUZZ_CHECK(!line->key.empty() && line->key.find(',') == std::string_view::npos,
               "a line's key is nonempty, without ','");
    FUZZ_CHECK(std::string(line->key) + "," + std::string(line->value) == text,
               "key and value make the line");
  }

  if (Result<int64_t> n = ParseCount(text); n.ok()) {
    std::string printed;
    AppendCount(&printed, *n);
    Result<int64_t> again = ParseCount(printed);
    FUZZ_CHECK(again.ok() && *again == *n, "a count prints and parses back");
  }

  if (Result<std::string> original = UnescapeLookupValue(text); original.ok()) {
    std::string escaped;
    AppendEscapedLookupValue(&escaped, *original);
    FUZZ_CHECK(escaped == text, "an escaped value unescapes and escapes back to itself");
  }
  std::string escaped;
  AppendEscapedLookupValue(&escaped, text);
  Result<std::string> back = UnescapeLookupValue(escaped);
  FUZZ_CHECK(back.ok() && *back == text, "any bytes escape and unescape back");

  if (ValidateColumns(text).ok()) {
    ColumnReader reader(text);
    Column column;
    std::vector<Column> columns;
    std::string rebuilt;
    while (reader.Next(&column)) {
      columns.push_back(column);
      FUZZ_CHECK(column.count != 0, "valid columns have no zero count");
      AppendColumn(&rebuilt, 0, column.name, column.count);
    }
    FUZZ_CHECK(reader.status().ok(), "valid columns read to a clean end");
    FUZZ_CHECK(ValidateColumns(rebuilt).ok(), "rebuilt columns are valid");
    ColumnReader again(rebuilt);
    size_t i = 0;
    while (again.Next(&column)) {
      FUZZ_CHECK(i < columns.size() && column.name == columns[i].name &&
                     column.count == columns[i].count,
                 "rebuilt columns read back the same");
      ++i;
    }
    FUZZ_CHECK(i == columns.size(), "every column is rebuilt");
  }

  for (std::string_view token : {std::string_view("c4"), std::string_view("c41")}) {
    RollupHours hours;
    Result<std::string_view> rest = SplitRollupMask(token, text, &hours);
    if (!rest.ok()) continue;
    int days = 0;
    for (size_t d = 0; d < hours.size(); ++d) {
      FUZZ_CHECK(hours[d] <= kAllHoursOfDay && (d > 0 || hours[d] == 0), "a mask names hours of days 1 .. 31");
      days += hours[d] != 0;
    }
    FUZZ_CHECK(days >= 1 && (token.size() == 2 || (days == 1 && hours[1] != 0)), "a rollup has its days' masks");
    FUZZ_CHECK(text.ends_with(*rest) && (rest->empty() || (*rest)[0] != kRollupMaskMark), "the rest is the sums");
    std::string again;
    AppendRollupMasks(&again, 0, hours);
    if (!rest->empty()) again.append(" ").append(*rest);
    RollupHours hours_again;
    Result<std::string_view> rest_again = SplitRollupMask(token, again, &hours_again);
    FUZZ_CHECK(rest_again.ok() && hours_again == hours && *rest_again == *rest, "a mask writes back the same");
  }
  return 0;
}
