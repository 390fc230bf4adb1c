#include "api/timezone.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <exception>

#include <date/tz.h>

#include "keyformat/ymdh.h"

namespace clickatron {

namespace {

constexpr int kMaxOffsetHours = 14;
// Longest IANA name in the database is ~32 bytes ("America/Argentina/ComodRivadavia").
constexpr size_t kMaxZoneNameSize = 64;

bool IsZoneNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         c == '/' || c == '_' || c == '-' || c == '+';
}

bool LooksNumeric(std::string_view text) {
  if (text.empty()) return false;
  size_t i = (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (i == text.size()) return false;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  return true;
}

}  // namespace

TimeZone TimeZone::FixedHours(int hours) {
  TimeZone tz;
  tz.fixed_seconds_ = hours * 3600;
  return tz;
}

Result<TimeZone> TimeZone::ParseHours(std::string_view text) {
  if (!LooksNumeric(text)) {
    return Status::Error("'" + std::string(text) + "' is not an integer hour offset");
  }
  std::string_view digits = text[0] == '+' ? text.substr(1) : text;
  int hours = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), hours);
  if (ec != std::errc() || end != digits.data() + digits.size() || hours < -kMaxOffsetHours ||
      hours > kMaxOffsetHours) {
    return Status::Error("offset '" + std::string(text) + "' is outside -14..14 hours");
  }
  return FixedHours(hours);
}

Result<TimeZone> TimeZone::Parse(std::string_view text) {
  if (LooksNumeric(text)) return ParseHours(text);
  bool plausible = !text.empty() && text.size() <= kMaxZoneNameSize && text[0] != '/';
  for (char c : text) plausible = plausible && IsZoneNameChar(c);
  if (!plausible || text.find("..") != std::string_view::npos) {
    return Status::Error("'" + std::string(text) +
                         "' is neither an hour offset (-14..14) nor an IANA time zone name");
  }
  try {
    TimeZone tz;
    tz.zone_ = date::locate_zone(text);
    return tz;
  } catch (const std::exception&) {
    // date/tz reports an unknown name by throwing; it stops here, as a value.
    return Status::Error("unknown time zone '" + std::string(text) + "'");
  }
}

Status TimeZone::Preload() {
  try {
    date::get_tzdb();
    date::locate_zone("UTC");
    return Status::OK();
  } catch (const std::exception& e) {
    return Status::Error(std::string("cannot read the OS time zone database: ") + e.what());
  }
}

std::string TimeZone::Name() const {
  if (zone_ != nullptr) return std::string(zone_->name());
  if (fixed_seconds_ == 0) return "UTC";
  return std::to_string(fixed_seconds_ / 3600);
}

int64_t TimeZone::OffsetAt(int64_t utc) const {
  if (zone_ == nullptr) return fixed_seconds_;
  date::sys_seconds t{std::chrono::seconds(utc)};
  return zone_->get_info(t).offset.count();
}

int64_t TimeZone::ToUtc(int64_t local) const {
  if (zone_ == nullptr) return local - fixed_seconds_;
  date::local_seconds t{std::chrono::seconds(local)};
  return zone_->to_sys(t, date::choose::earliest).time_since_epoch().count();
}

bool TimeZone::WholeHoursThroughout(int64_t from, int64_t to) const {
  constexpr int64_t kHour = 3600;
  if (zone_ == nullptr) return fixed_seconds_ % kHour == 0;
  for (int64_t t = from; t < to;) {
    const date::sys_info info = zone_->get_info(date::sys_seconds{std::chrono::seconds(t)});
    const int64_t begin = info.begin.time_since_epoch().count();
    if (info.offset.count() % kHour != 0 || (begin > from && begin % kHour != 0)) return false;
    const int64_t end = info.end.time_since_epoch().count();
    if (end <= t) return false;  // unreachable: the database's intervals move forward
    t = end;
  }
  return true;
}

const std::vector<std::string>& UsableZoneNames() {
  static const std::vector<std::string>* names = [] {
    auto* out = new std::vector<std::string>;
    try {
      for (const date::time_zone& zone : date::get_tzdb().zones) {
        // The OS database's own files (localtime, posixrules) and Factory (-00, "unknown
        // location") are not places a user picks.
        const std::string_view name = zone.name();
        if (name.empty() || (name[0] >= 'a' && name[0] <= 'z') || name == "Factory") continue;
        Result<TimeZone> tz = TimeZone::Parse(name);
        if (tz.ok() && !tz->is_fixed() && tz->WholeHoursThroughout(kYmdhMinTs, kYmdhMaxTs + 1)) {
          out->emplace_back(zone.name());
        }
      }
    } catch (const std::exception&) {
      out->clear();  // no database: no names (queries by name fail the same way)
    }
    std::sort(out->begin(), out->end());
    return out;
  }();
  return *names;
}

}  // namespace clickatron
