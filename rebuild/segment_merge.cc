#include "rebuild/segment_merge.h"

#include <memory>
#include <queue>

#include "keyformat/key_order.h"
#include "keyformat/records.h"
#include "rebuild/column_merge.h"

namespace clickatron::rebuild {
namespace {

struct Input {
  SegmentReader reader;
  std::string_view key, value;
};

}  // namespace

Status MergeSegments(const std::vector<std::string>& inputs, SortedFileWriter* out,
                     MergeStats* stats, const std::function<void(const std::string&)>& on_collision,
                     const std::function<void(uint64_t bytes_in)>& on_progress) {
  std::vector<std::unique_ptr<Input>> in;
  for (const std::string& path : inputs) {
    auto input = std::make_unique<Input>();
    if (Status s = input->reader.Open(path); !s.ok()) return s;
    in.push_back(std::move(input));
  }
  // Min-heap by key; equal keys by input order, so the earliest input comes first.
  auto greater = [&in](size_t a, size_t b) {
    const int c = CompareKeys(in[a]->key, in[b]->key);
    return c != 0 ? c > 0 : a > b;
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(greater)> heap(greater);
  auto advance = [&](size_t i) -> Status {
    Input& x = *in[i];
    if (x.reader.Next(&x.key, &x.value)) {
      stats->records_in++;
      stats->bytes_in += x.key.size() + x.value.size() + 2;
      heap.push(i);
      return Status::OK();
    }
    return x.reader.status();
  };
  for (size_t i = 0; i < in.size(); ++i) {
    if (Status s = advance(i); !s.ok()) return s;
  }
  std::string key, value, scratch;
  uint64_t since_progress = 0;
  while (!heap.empty()) {
    const size_t first = heap.top();
    heap.pop();
    // The common case: a key found in one input only is copied as it is.
    if (heap.empty() || in[heap.top()]->key != in[first]->key) {
      Input& x = *in[first];
      const uint64_t columns = x.key.starts_with(kLookupPrefix) ? 0 : CountColumns(x.value);
      if (Status s = out->Add(x.key, x.value, columns); !s.ok()) return s;
      if (Status s = advance(first); !s.ok()) return s;
    } else {
      key.assign(in[first]->key);
      value.assign(in[first]->value);
      const bool lookup = key.starts_with(kLookupPrefix);
      if (Status s = advance(first); !s.ok()) return s;
      while (!heap.empty() && in[heap.top()]->key == key) {
        const size_t i = heap.top();
        heap.pop();
        Input& x = *in[i];
        if (lookup) {
          if (x.value != value) {
            stats->collisions++;
            if (on_collision) {
              on_collision("hash collision: " + key + " is both '" + value + "' (kept) and '" +
                           std::string(x.value) + "' (in " + x.reader.path() + ")");
            }
          }
        } else if (Status s = MergeColumnsInto(&value, x.value, &scratch); !s.ok()) {
          return s.Prefixed("key '" + key + "' in " + x.reader.path() + ": ");
        }
        if (Status s = advance(i); !s.ok()) return s;
      }
      if (!value.empty()) {
        const uint64_t columns = lookup ? 0 : CountColumns(value);
        if (Status s = out->Add(key, value, columns); !s.ok()) return s;
      }
    }
    if (on_progress && ++since_progress >= 65536) {
      since_progress = 0;
      uint64_t bytes = 0;
      for (const auto& x : in) bytes += x->reader.bytes_read();
      on_progress(bytes);
    }
  }
  return Status::OK();
}

}  // namespace clickatron::rebuild
