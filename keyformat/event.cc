#include "keyformat/event.h"

#include <algorithm>

#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"

namespace clickatron {

bool ValidateEvent(const Event& event, EventError* error) {
  auto fail = [&](const char* param, std::string message) {
    if (error) *error = EventError{param, std::move(message)};
    return false;
  };
  if (Status s = ValidateNamespace(event.ns); !s.ok()) return fail("ns", s.message());
  if (Status s = ValidateUserKey(event.key); !s.ok()) return fail("key", s.message());
  if (event.value == 0) return fail("value", "value is 0; an increment must change the count");
  if (event.ts < kYmdhMinTs || event.ts > kYmdhMaxTs) return fail("ts", EncodeYmdh(event.ts).status().message());
  for (size_t i = 0; i < event.subs.size(); i++) {
    const SubtotalRef& sub = event.subs[i];
    if (Status s = ValidateNamespace(sub.subns, "subtotal namespace"); !s.ok()) return fail("sub", s.message());
    if (Status s = ValidateUserKey(sub.subkey, "subkey"); !s.ok()) return fail("sub", s.message());
    for (size_t j = 0; j < i; j++) {
      if (event.subs[j].subns == sub.subns) {
        return fail("sub", "subtotal namespace '" + std::string(sub.subns) +
                               "' is given twice; an event has one subkey per subtotal namespace");
      }
    }
  }
  return true;
}

std::string EventShardKey(const Event& event) {
  std::string out(event.ns);
  out.push_back('|');
  AppendStoredKey(event.key, &out);
  return out;
}

void EncodeEvent(const Event& event, std::vector<RealtimeRecord>* out) {
  const size_t first = out->size();
  const Ymdh ymdh = EncodeYmdh(event.ts).value();
  std::string key;
  const bool key_hashed = AppendStoredKey(event.key, &key);

  auto add_lookup = [&](std::string_view original, std::string_view hash) {
    RealtimeRecord r{RecordType::kLookup, {}, {}, 0};
    AppendLookupKey(&r.key, hash);
    AppendEscapedLookupValue(&r.value, original);
    for (size_t i = first; i < out->size(); i++) {
      if ((*out)[i].key == r.key) return;  // same value used twice in one event
    }
    out->push_back(std::move(r));
  };
  auto add_count = [&](RecordType type, std::string k) {
    RealtimeRecord r{type, std::move(k), {}, event.value};
    AppendCount(&r.value, event.value);
    out->push_back(std::move(r));
  };

  std::string total;
  AppendTotalKey(&total, event.ns, key, ymdh.view());
  add_count(RecordType::kTotal, std::move(total));
  if (key_hashed) add_lookup(event.key, key);

  std::string subkey;
  for (const SubtotalRef& sub : event.subs) {
    subkey.clear();
    const bool sub_hashed = AppendStoredKey(sub.subkey, &subkey);
    std::string k;
    AppendSubtotalKey(&k, sub.subns, event.ns, key, subkey, ymdh.view());
    add_count(RecordType::kSubtotal, std::move(k));
    if (sub_hashed) add_lookup(sub.subkey, subkey);
  }
  std::sort(out->begin() + long(first), out->end(),
            [](const RealtimeRecord& a, const RealtimeRecord& b) { return a.key < b.key; });
}

}  // namespace clickatron
