#include "api/key_listing.h"

#include "api/query_plan.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"

namespace clickatron {

std::string ListingPath(std::string_view prefix, size_t limit, std::string_view after) {
  std::string path = after.empty() ? FwmatchPath(prefix) : FwmatchPagePath(prefix, after);
  path += "&limit=";
  path += std::to_string(limit);
  return path;
}

bool ListablePrefix(std::string_view prefix) {
  if (prefix.size() > kMaxLiteralKeySize) return false;
  for (char c : prefix) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x21 || u > 0x7E || c == ':' || c == ',' || c == '.' || c == '|') return false;
  }
  return true;
}

std::string_view ArchiveListedKey(std::string_view record_key, std::string_view ns) {
  if (record_key.size() <= ns.size() + 1 || !record_key.starts_with(ns) || record_key[ns.size()] != '|') return {};
  std::string_view key = record_key.substr(ns.size() + 1);
  return key.find_first_of(".|") == std::string_view::npos ? key : std::string_view();
}

std::string_view RealtimeListedKey(std::string_view record_key, std::string_view ns) {
  if (record_key.size() < kYmdhSize + 1) return {};
  std::string_view head = record_key.substr(0, record_key.size() - kYmdhSize);
  if (head.back() != '.') return {};
  head.remove_suffix(1);
  return ArchiveListedKey(head, ns);
}

std::string AfterRealtimeKey(std::string_view ns, std::string_view stored_key) {
  std::string after(ns);
  after += '|';
  after += stored_key;
  after += ".\x7f";
  return after;
}

std::string_view FirstPart(std::string_view record_key, char* separator) {
  const size_t at = record_key.find_first_of(".|");
  if (at == std::string_view::npos || at == 0) {
    *separator = '\0';
    return {};
  }
  *separator = record_key[at];
  return record_key.substr(0, at);
}

std::string AfterPart(std::string_view part, char separator) {
  std::string after(part);
  after += separator;
  after += '\x7f';
  return after;
}

int64_t HourOfRecordKey(std::string_view record_key) {
  if (record_key.size() < kYmdhSize + 1 || record_key[record_key.size() - kYmdhSize - 1] != '.') return -1;
  Result<int64_t> hour = DecodeYmdh(record_key.substr(record_key.size() - kYmdhSize));
  return hour.ok() ? hour.value() : -1;
}

bool IsRollupKey(std::string_view record_key) {
  char separator = '\0';
  FirstPart(record_key, &separator);
  if (separator != '.') return false;
  const size_t dot = record_key.rfind('.');
  const size_t time = record_key.size() - dot - 1;
  return time == 2 || time == 3;
}

}  // namespace clickatron
