#include "realtime/batch.h"

#include <string>

#include "keyformat/records.h"
#include "keyformat/ymdh.h"

namespace clickatron::realtime {
namespace {

// Calls fn(line, number) for every line of body; stops at the first error fn returns.
template <typename Fn>
Status ForEachLine(std::string_view body, Fn fn) {
  uint32_t number = 0;
  size_t pos = 0;
  while (pos < body.size()) {
    ++number;
    size_t end = body.find('\n', pos);
    if (end == std::string_view::npos) end = body.size();
    std::string_view line = body.substr(pos, end - pos);
    pos = end + 1;
    Status s = line.empty() ? Status::Error("empty line") : fn(line, number);
    if (!s.ok()) {
      // Built by appends: GCC 12's -O3 -Wrestrict misfires on "line " + to_string(n) + ": ".
      std::string context = "line ";
      context += std::to_string(number);
      context += ": ";
      return s.Prefixed(context);
    }
  }
  return Status::OK();
}

// "<before><key><after>", built by appends: GCC 12's -O3 -Wrestrict misfires on chains of
// std::string operator+.
Status KeyError(std::string_view before, std::string_view key, std::string_view after) {
  std::string m;
  m.append(before).append(key).append(after);
  return Status::Error(std::move(m));
}

// ForEachLine, with each line split at its separator and its key parsed as a realtime key:
// calls fn(split, key, number).
template <typename Fn>
Status ForEachKeyedLine(std::string_view body, Fn fn) {
  return ForEachLine(body, [&fn](std::string_view text, uint32_t number) {
    Result<Line> split = SplitLine(text);
    if (!split.ok()) return split.status();
    Result<ParsedKey> key = ParseRealtimeKey(split->key);
    if (!key.ok()) return key.status();
    return fn(*split, *key, number);
  });
}

}  // namespace

Status ParseIncrBatch(std::string_view body, std::vector<IncrLine>* lines) {
  lines->clear();
  return ForEachKeyedLine(body, [lines](const Line& split, const ParsedKey& key, uint32_t number) {
    if (key.type == RecordType::kLookup) {
      return KeyError("lookup record '", split.key, "' is not a counter (send lookups to /set)");
    }
    Result<int64_t> delta = ParseCount(split.value);
    if (!delta.ok()) return delta.status().Prefixed("delta: ");
    lines->push_back(IncrLine{split.key, *delta, DayOfYmdhUnchecked(key.ymdh), number});
    return Status::OK();
  });
}

Status ParseLookupBatch(std::string_view body, std::vector<LookupLine>* lines) {
  lines->clear();
  return ForEachKeyedLine(body, [lines](const Line& split, const ParsedKey& key, uint32_t number) {
    if (key.type != RecordType::kLookup) {
      return KeyError("'", split.key, "' is not a lookup key (_l|{hash}); counters go to /incr");
    }
    if (split.value.empty()) return Status::Error("lookup value is empty");
    Result<std::string> original = UnescapeLookupValue(split.value);
    if (!original.ok()) return original.status().Prefixed("lookup value: ");
    lines->push_back(LookupLine{split.key, split.value, number});
    return Status::OK();
  });
}

}  // namespace clickatron::realtime
