#include "api/late_answer.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "base/int128.h"
#include "keyformat/footer.h"
#include "keyformat/key_order.h"
#include "keyformat/records.h"

namespace clickatron {
namespace {

struct LineRef {
  size_t offset;     // into the arena
  uint32_t key_size;
  uint32_t size;     // without '\n'
};

// Appends the lines of text (each ending in '\n') to the arena and refs.
void AddLines(std::string_view text, std::string* arena, std::vector<LineRef>* refs) {
  for (size_t at = 0; at < text.size();) {
    const size_t nl = text.find('\n', at);
    const std::string_view line = text.substr(at, nl - at);
    refs->push_back(LineRef{arena->size(), uint32_t(KeyOfLine(line).size()), uint32_t(line.size())});
    arena->append(line);
    at = nl + 1;
  }
}

}  // namespace

Status BuildLateAnswer(const LateStore& store, uint64_t after, size_t max_bytes, LateAnswer* out) {
  *out = LateAnswer();
  out->first = after + 1;
  out->last = after;
  std::string arena;
  std::vector<LineRef> refs;
  Status s = store.ReadAfter(
      after, max_bytes,
      [&](const LateEntry& e) {
        if (out->entries == 0) out->first = e.id;
        out->last = e.id;
        out->entries++;
        AddLines(e.part.lookups, &arena, &refs);
        AddLines(e.part.counters, &arena, &refs);
        return Status::OK();
      },
      &out->more);
  if (!s.ok()) return s;
  auto key = [&](const LineRef& r) { return std::string_view(arena).substr(r.offset, r.key_size); };
  // Stable: of equal lookups the oldest entry's comes first.
  std::stable_sort(refs.begin(), refs.end(),
                   [&](const LineRef& a, const LineRef& b) { return CompareKeys(key(a), key(b)) < 0; });
  std::string& body = out->body;
  body.reserve(arena.size() + refs.size() + 64);
  for (size_t i = 0; i < refs.size();) {
    const std::string_view k = key(refs[i]);
    size_t j = i + 1;
    while (j < refs.size() && key(refs[j]) == k) j++;
    if (k.starts_with(kLookupPrefix)) {
      body.append(arena, refs[i].offset, refs[i].size);
    } else {
      Int128 sum = 0;  // exact: the late entries of one key may add up past int64
      for (size_t n = i; n < j; n++) {
        const std::string_view line = std::string_view(arena).substr(refs[n].offset, refs[n].size);
        const std::string_view value = line.substr(std::min(line.size(), size_t{refs[n].key_size} + 1));
        Int128 delta = 0;
        if (!ParseInt128(value, &delta)) {
          return Status::Error("key '" + std::string(k) + "': late value '" + std::string(value) +
                               "' is not an integer");
        }
        if (!AddInt128(&sum, delta)) {
          return Status::Error("key '" + std::string(k) + "': the late entries add up past 128 bits");
        }
      }
      body.append(k);
      body.push_back(',');
      AppendInt128(&body, sum);
    }
    body.push_back('\n');
    out->records++;
    i = j;
  }
  FooterCheck check;
  check.AddBytes(body, out->records);
  body += FormatFooter(Footer{check.count(), check.digest()});
  return Status::OK();
}

}  // namespace clickatron
