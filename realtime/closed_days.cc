#include "realtime/closed_days.h"

#include <charconv>

#include "base/clip.h"
#include "base/durable_file.h"
#include "base/read_file.h"
#include "keyformat/key_value.h"
#include "keyformat/ymdh.h"

namespace clickatron::realtime {
namespace {

constexpr std::string_view kThroughKey = "closed_through";
constexpr std::string_view kMarkKey = "mark";
constexpr size_t kShown = 80;  // bytes of a bad value quoted in an error

// "DAY SOURCE SEQ": one blank between the fields; SEQ a non-negative decimal int64.
bool ParseMarkValue(std::string_view v, int64_t* day, std::string* source, int64_t* seq) {
  const size_t a = v.find(' ');
  if (a == std::string_view::npos) return false;
  const size_t b = v.find(' ', a + 1);
  if (b == std::string_view::npos || b == a + 1) return false;
  Result<int64_t> d = ParseDay(v.substr(0, a));
  if (!d.ok()) return false;
  const std::string_view s = v.substr(a + 1, b - a - 1);
  const std::string_view n = v.substr(b + 1);
  if (n.empty() || n[0] == '-' || n[0] == '+') return false;
  auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), *seq);
  if (ec != std::errc() || end != n.data() + n.size()) return false;
  *day = *d;
  source->assign(s);
  return true;
}

}  // namespace

int64_t ClosedDays::Mark(int64_t day, std::string_view source) const {
  auto d = marks.find(day);
  if (d == marks.end()) return -1;
  auto s = d->second.find(source);
  return s == d->second.end() ? -1 : s->second;
}

void ClosedDays::Merge(int64_t day, const SourceMarks& source_marks) {
  if (source_marks.empty()) return;
  SourceMarks& m = marks[day];
  for (const auto& [source, seq] : source_marks) {
    auto it = m.find(source);
    if (it == m.end()) {
      m.emplace(source, seq);
    } else if (seq > it->second) {
      it->second = seq;
    }
  }
}

void ClosedDays::Prune() {
  if (through == kNoDay) return;
  marks.erase(marks.begin(), marks.upper_bound(through - kClosedMarkDays));
}

std::string FormatClosedDays(const ClosedDays& days) {
  std::string out = "# clickatron-realtime closed days (docs/formats.md#realtime-closed-days)\n";
  if (days.through == kNoDay) return out;
  KeyValueText kv;
  kv.Add(std::string(kThroughKey), FormatDay(days.through));
  for (const auto& [day, marks] : days.marks) {
    for (const auto& [source, seq] : marks) {
      kv.Add(std::string(kMarkKey), FormatDay(day) + " " + source + " " + std::to_string(seq));
    }
  }
  return out + kv.Format();
}

Result<ClosedDays> ParseClosedDays(std::string_view text) {
  Result<KeyValueText> kv = KeyValueText::Parse(text);
  if (!kv.ok()) return kv.status();
  ClosedDays days;
  bool have_through = false;
  for (const KeyValueText::Entry& e : kv->entries()) {
    const std::string at = "line " + std::to_string(e.line) + ": ";
    if (e.key == kThroughKey) {
      if (have_through) return Status::Error(at + "closed_through given twice");
      Result<int64_t> d = ParseDay(e.value);
      if (!d.ok()) return Status::Error(at + "closed_through '" + Clipped(e.value, kShown) + "' is not a day (YYYY-MM-DD)");
      days.through = *d;
      have_through = true;
    } else if (e.key == kMarkKey) {
      int64_t day, seq;
      std::string source;
      if (!ParseMarkValue(e.value, &day, &source, &seq)) {
        return Status::Error(at + "mark '" + Clipped(e.value, kShown) + "' is not 'YYYY-MM-DD SOURCE SEQ'");
      }
      days.Merge(day, SourceMarks{{source, seq}});
    } else {
      return Status::Error(at + "unknown key '" + Clipped(e.key, kShown) + "'");
    }
  }
  if (!days.marks.empty() && !have_through) return Status::Error("marks without closed_through");
  if (!days.marks.empty() && days.marks.rbegin()->first > days.through) {
    return Status::Error("a mark of " + FormatDay(days.marks.rbegin()->first) + " is after closed_through " +
                         FormatDay(days.through));
  }
  return days;
}

Result<ClosedDays> LoadClosedDays(const std::string& path) {
  std::string text;
  bool exists = false;
  if (Status s = ReadFileIfExists(path, &text, &exists); !s.ok()) return s;
  if (!exists) return ClosedDays{};
  Result<ClosedDays> days = ParseClosedDays(text);
  if (!days.ok()) return days.status().Prefixed(path + ": ");
  return days;
}

Status SaveClosedDays(const std::string& path, const ClosedDays& days) {
  return WriteFileAtomic(path, FormatClosedDays(days));
}

}  // namespace clickatron::realtime
