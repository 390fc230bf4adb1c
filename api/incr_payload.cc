#include "api/incr_payload.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "base/clip.h"
#include "keyformat/records.h"
#include "keyformat/shard.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"

namespace clickatron {
namespace {

void AppendUint(std::string* out, uint64_t n) {
  char buf[24];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, n);
  (void)ec;
  out->append(buf, ptr);
}

void AppendPrefix(std::string* out, uint32_t shard, int64_t day) {
  AppendUint(out, shard);
  out->push_back(' ');
  AppendUint(out, uint64_t(day));
  out->push_back(' ');
}

// True when a line of payload from `from` on has the key and ',' of `needle`
// ("_l|<hash>,"). A match counts only right after its line's "<shard> <day> " prefix: an
// escaped lookup value may hold the same text (a key "see _l|<hash>,x" is a client's to
// choose), and taking it for the line would drop a lookup. Values hold no '\n' (escaped).
bool HasLookupLine(std::string_view payload, size_t from, std::string_view needle) {
  for (size_t at = payload.find(needle, from); at != std::string_view::npos;
       at = payload.find(needle, at + 1)) {
    const size_t nl = payload.rfind('\n', at);
    const size_t line = nl == std::string_view::npos || nl < from ? from : nl + 1;
    const size_t shard_end = payload.find(' ', line);
    const size_t day_end = shard_end == std::string_view::npos ? shard_end : payload.find(' ', shard_end + 1);
    if (day_end != std::string_view::npos && day_end + 1 == at) return true;
  }
  return false;
}

}  // namespace

void AppendEventLines(const Event& event, uint32_t shard_count, std::string* payload,
                      std::string* scratch) {
  const Ymdh ymdh = EncodeYmdh(event.ts).value();
  const int64_t day = event.ts / kSecondsPerDay;
  const size_t event_begin = payload->size();

  // scratch = "{ns}|{stored key}" then, from key_end on, one stored subkey at a time.
  std::string& s = *scratch;
  s.clear();
  s.append(event.ns);
  s.push_back('|');
  const size_t key_begin = s.size();
  const bool key_hashed = AppendStoredKey(event.key, &s);
  const size_t key_end = s.size();
  const uint32_t shard = ShardOf(std::string_view(s.data(), key_end), shard_count);
  auto stored_key = [&] { return std::string_view(s).substr(key_begin, key_end - key_begin); };

  // A lookup line per hashed value, once per event (a key and a subkey may be equal). The
  // lookup key is built on the stack: "_l|" + 12-byte hash, and "," for the search.
  auto lookup = [&](std::string_view original, std::string_view hash) {
    char needle[kLookupPrefix.size() + kHashSize + 1];
    std::copy(kLookupPrefix.begin(), kLookupPrefix.end(), needle);
    std::copy(hash.begin(), hash.end(), needle + kLookupPrefix.size());
    const std::string_view key(needle, kLookupPrefix.size() + kHashSize);
    needle[key.size()] = ',';
    if (HasLookupLine(*payload, event_begin, std::string_view(needle, sizeof needle))) return;
    AppendPrefix(payload, ShardOf(key, shard_count), day);
    payload->append(needle, sizeof needle);
    AppendEscapedLookupValue(payload, original);
    payload->push_back('\n');
  };

  AppendPrefix(payload, shard, day);
  AppendTotalKey(payload, event.ns, stored_key(), ymdh.view());
  payload->push_back(',');
  AppendCount(payload, event.value);
  payload->push_back('\n');
  if (key_hashed) lookup(event.key, stored_key());

  for (const SubtotalRef& sub : event.subs) {
    s.resize(key_end);
    const bool sub_hashed = AppendStoredKey(sub.subkey, &s);
    const std::string_view stored_sub = std::string_view(s).substr(key_end);
    AppendPrefix(payload, shard, day);
    AppendSubtotalKey(payload, sub.subns, event.ns, stored_key(), stored_sub, ymdh.view());
    payload->push_back(',');
    AppendCount(payload, event.value);
    payload->push_back('\n');
    if (sub_hashed) lookup(sub.subkey, stored_sub);
  }
}

bool PayloadReader::Next(PayloadLine* line) {
  if (rest_.empty()) return false;
  const size_t nl = rest_.find('\n');
  if (nl == std::string_view::npos) {
    status_ = Status::Error("oplog payload line without a newline");
    return false;
  }
  std::string_view text = rest_.substr(0, nl);
  rest_.remove_prefix(nl + 1);
  auto bad = [&](const char* why) {
    status_ = Status::Error(std::string("malformed oplog payload line (") + why + "): '" +
                            Clipped(text, 120) + "'");
    return false;
  };
  const char* p = text.data();
  const char* end = p + text.size();
  uint64_t shard = 0, day = 0;
  auto r1 = std::from_chars(p, end, shard);
  if (r1.ec != std::errc() || r1.ptr == end || *r1.ptr != ' ' || shard > UINT32_MAX) return bad("shard");
  auto r2 = std::from_chars(r1.ptr + 1, end, day);
  if (r2.ec != std::errc() || r2.ptr == end || *r2.ptr != ' ' || day > uint64_t(INT64_MAX)) {
    return bad("day");
  }
  std::string_view record(r2.ptr + 1, size_t(end - r2.ptr - 1));
  const size_t comma = record.find(',');
  if (comma == std::string_view::npos || comma == 0) return bad("no key");
  line->shard = uint32_t(shard);
  line->day = int64_t(day);
  line->key = record.substr(0, comma);
  line->value = record.substr(comma + 1);
  line->lookup = line->key.starts_with(kLookupPrefix);
  line->delta = 0;
  if (!line->lookup) {
    const char* vb = line->value.data();
    const char* ve = vb + line->value.size();
    auto r3 = std::from_chars(vb, ve, line->delta);
    if (r3.ec != std::errc() || r3.ptr != ve) return bad("delta");
  }
  return true;
}

}  // namespace clickatron
