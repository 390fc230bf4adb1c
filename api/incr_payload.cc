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

constexpr char kAnnotationMark = '!';
constexpr std::string_view kIdempotencyTag = "!idempotency ";

// The next space-separated field of *rest (which must have a ' ' after it unless last).
std::string_view NextField(std::string_view* rest, bool last) {
  const size_t sp = last ? rest->size() : rest->find(' ');
  if (sp == std::string_view::npos) {
    std::string_view none;
    *rest = none;
    return none;
  }
  const std::string_view field = rest->substr(0, sp);
  rest->remove_prefix(std::min(sp + 1, rest->size()));
  return field;
}

// A non-negative decimal as AppendUint writes it: no sign, no leading zero.
template <typename T>
bool ParseDecimal(std::string_view text, T* out) {
  if (text.empty() || text.front() == '-' || (text.size() > 1 && text.front() == '0')) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end;
}

}  // namespace

void AppendIdempotencyLine(const IdempotencyStamp& stamp, std::string* payload) {
  payload->append(kIdempotencyTag);
  AppendUint(payload, uint64_t(stamp.accepted_at));
  payload->push_back(' ');
  AppendUint(payload, stamp.events);
  payload->push_back(' ');
  AppendDigestHex(stamp.digest, payload);
  payload->push_back(' ');
  payload->append(stamp.key);
  payload->push_back('\n');
}

Status ReadIdempotencyStamp(std::string_view payload, IdempotencyStamp* stamp, bool* found) {
  *found = false;
  if (payload.size() < 2 || payload.back() != '\n') return Status::OK();
  const size_t nl = payload.rfind('\n', payload.size() - 2);
  const size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
  const std::string_view text = payload.substr(begin, payload.size() - 1 - begin);
  if (!text.starts_with(kIdempotencyTag)) return Status::OK();
  auto bad = [&](const char* why) {
    return Status::Error(std::string("malformed idempotency line (") + why + "): '" + Clipped(text, 120) + "'");
  };
  std::string_view rest = text.substr(kIdempotencyTag.size());
  if (!ParseDecimal(NextField(&rest, false), &stamp->accepted_at)) return bad("accepted_at");
  if (!ParseDecimal(NextField(&rest, false), &stamp->events)) return bad("events");
  if (!ParseDigestHex(NextField(&rest, false), &stamp->digest)) return bad("digest");
  Result<std::string_view> key = ParseIdempotencyKey(NextField(&rest, true));
  if (!key.ok() || key->size() != text.size() - (key->data() - text.data())) return bad("key");
  stamp->key = *key;
  *found = true;
  return Status::OK();
}

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
  size_t nl = rest_.find('\n');
  while (!rest_.empty() && rest_.front() == kAnnotationMark && nl != std::string_view::npos) {
    rest_.remove_prefix(nl + 1);  // an annotation, not a realtime record
    nl = rest_.find('\n');
  }
  if (rest_.empty()) return false;
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
