// The generation manifest (keyformat/manifest.h), which the archive reads beside every file
// it serves and clickatron-rebuild reads before a night, on arbitrary text.
//
// Beyond "no crash": a manifest that parses formats to text that parses to the same
// manifest (generation, last_day, shards, and every shard's file, records, bytes, xxh64,
// columns), and formatting that again gives the same bytes; FindFile finds each shard's
// file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "keyformat/manifest.h"

using namespace clickatron;

namespace {

bool SameShard(const ShardMeta& a, const ShardMeta& b) {
  return a.file == b.file && a.records == b.records && a.bytes == b.bytes && a.xxh64 == b.xxh64 &&
         a.columns == b.columns;
}

bool Same(const Manifest& a, const Manifest& b) {
  if (a.generation != b.generation || a.last_day != b.last_day || a.shards != b.shards ||
      a.shard_files.size() != b.shard_files.size()) {
    return false;
  }
  for (const auto& [k, meta] : a.shard_files) {
    auto it = b.shard_files.find(k);
    if (it == b.shard_files.end() || !SameShard(meta, it->second)) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<Manifest> m = ParseManifest(text);
  if (!m.ok()) {
    FUZZ_CHECK(!m.status().message().empty(), "a refusal says why");
    return 0;
  }
  const std::string formatted = FormatManifest(*m);
  Result<Manifest> again = ParseManifest(formatted);
  FUZZ_CHECK(again.ok(), "a formatted manifest parses");
  FUZZ_CHECK(Same(*m, *again), "a formatted manifest parses to the same manifest");
  FUZZ_CHECK(FormatManifest(*again) == formatted, "formatting is deterministic");
  for (const auto& [k, meta] : m->shard_files) {
    if (meta.file.empty()) continue;
    const ShardMeta* found = m->FindFile(meta.file);
    FUZZ_CHECK(found != nullptr && found->file == meta.file, "FindFile finds a shard's file");
  }
  return 0;
}
