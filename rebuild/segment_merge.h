// K-way merge of sorted segment files into one sorted file: the heart of `merge` (all
// segments of an archive shard → DIR/merged/shard-K.csv) and of `compact` (the day
// segments of a month → one month segment).
//
// Records with the same key in several inputs become one: total and subtotal columns are
// merged by name (column_merge.h), lookups are deduplicated — one hash with two different
// originals is a collision, counted and reported through the callback, and the value of
// the earliest input (in the order given) is kept so the output does not depend on luck.
// Streaming: memory is a few read buffers per input and one line.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "rebuild/sorted_file.h"

namespace clickatron::rebuild {

struct MergeStats {
  uint64_t records_in = 0;
  uint64_t bytes_in = 0;
  uint64_t collisions = 0;
};

// Merges inputs (segment files, verified by footer as they are read) into *out.
// on_collision gets one human-readable line per collision; on_progress (may be empty) is
// called every few thousand records with the input bytes read so far. With threads > 1
// (and a handful of inputs) each input is read and checked ahead on a thread of its own.
// out is the file, or a RollupWriter in front of it (merge).
Status MergeSegments(const std::vector<std::string>& inputs, RecordWriter* out,
                     MergeStats* stats, const std::function<void(const std::string&)>& on_collision,
                     const std::function<void(uint64_t bytes_in)>& on_progress, unsigned threads = 1);

}  // namespace clickatron::rebuild
