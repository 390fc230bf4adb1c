#include "oplog/replay_skip.h"

#include <charconv>

#include "base/durable_file.h"
#include "base/read_file.h"
#include "keyformat/ymdh.h"

namespace clickatron::oplog {
namespace {

constexpr std::string_view kDayField = "skip_through_day=";
constexpr std::string_view kSeqField = " through_seq=";

}  // namespace

std::string ReplaySkipFileName(std::string_view cursor) {
  return "replay-skip-" + std::string(cursor);
}

Result<ReplaySkip> LoadReplaySkip(const std::string& dir, std::string_view cursor) {
  const std::string path = dir + "/" + ReplaySkipFileName(cursor);
  std::string text;
  bool exists = false;
  if (Status s = ReadFileIfExists(path, &text, &exists); !s.ok()) return s;
  if (!exists) return ReplaySkip{};
  auto bad = [&](const std::string& why) {
    return Status::Error(path + ": " + why + " (expected 'skip_through_day=YYYY-MM-DD through_seq=N')");
  };
  std::string_view line = text;
  if (!line.ends_with('\n') || line.find('\n') != line.size() - 1) return bad("not one line");
  line.remove_suffix(1);
  if (!line.starts_with(kDayField)) return bad("no skip_through_day");
  line.remove_prefix(kDayField.size());
  const size_t sep = line.find(kSeqField);
  if (sep == std::string_view::npos) return bad("no through_seq");
  Result<int64_t> day = ParseDay(line.substr(0, sep));
  if (!day.ok()) return bad(day.status().message());
  std::string_view digits = line.substr(sep + kSeqField.size());
  ReplaySkip skip;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), skip.through_seq);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
      skip.through_seq == 0) {
    return bad("through_seq '" + std::string(digits) + "' is not a seq >= 1");
  }
  skip.through_day = *day;
  return skip;
}

Status SaveReplaySkip(const std::string& dir, std::string_view cursor, const ReplaySkip& skip) {
  const std::string text = std::string(kDayField) + FormatDay(skip.through_day) +
                           std::string(kSeqField) + std::to_string(skip.through_seq) + "\n";
  return WriteFileAtomic(dir + "/" + ReplaySkipFileName(cursor), text);
}

}  // namespace clickatron::oplog
