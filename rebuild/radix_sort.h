// RadixSort: puts SortEntries (sort_entry.h) in key order, in place, on up to `threads`
// threads — the in-memory sort behind RecordSorter's runs.
//
// The order is almost always decided within the 24 inline key bytes, so this is an
// in-place MSD radix sort over them: one byte a level, each entry moved about once a
// level. A byte every entry of a range shares (an import's day and shard,
// `c.u|u` ...) is found with one scan and skipped without moving anything. Small ranges,
// and ranges whose inline bytes are all equal, finish with a comparison sort that asks
// `tail` about the bytes past the inline ones. With threads > 1 the top levels split the
// entries into buckets, which the threads then sort largest first.
#pragma once

#include "rebuild/sort_entry.h"

namespace clickatron::rebuild {

void RadixSort(SortEntry* begin, SortEntry* end, const TailOrder& tail, unsigned threads);

}  // namespace clickatron::rebuild
