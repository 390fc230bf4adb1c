// DbFile: one sorted text file (docs/formats.md#key-order), mapped read-only and verified, answering
// exact-key and prefix lookups by binary search over the mapping.
//
// A file is a sequence of lines `key SEP value \n`, sorted by key bytewise with a key
// sorting before any longer key it prefixes (keyformat/key_order.h). Open() maps the whole
// file (MAP_SHARED, PROT_READ: several processes serving one file share its pages) and
// walks it once before anything is served, refusing it with the number of the first bad
// line when:
//   * the file does not end with '\n' (a truncated copy, or a last line sortdb would
//     answer with the bytes that follow the mapping);
//   * a line has no separator, or an empty key;
//   * a key is not strictly greater than the key before it (unsorted, or duplicated:
//     sortdb's binary search silently loses keys in such a file).
// Because every line is known to end in '\n' and to hold a separator, lookups never read
// outside the mapping and never need a NUL terminator (sortdb used strchr/strncmp on the
// mapping and read past the end of a file whose size is a multiple of the page size).
//
// Lookups allocate nothing and copy nothing: they return views into the mapping, valid
// for as long as the DbFile lives. The binary search runs over byte offsets and steps back
// to the start of the line it lands in. To spare it the ~20 cache and TLB misses of a
// search over the whole mapping, Open() also keeps a sparse sample: the key of the first
// line starting in each block of the file (4 KiB blocks, larger for files over 256 MiB, so
// at most 65,536 samples: about 1.5 MB for a 5-million-line, 234 MB file). A lookup
// searches the samples (a small, cache-resident array) and then the bytes of one block:
// 1.35x faster per exact lookup, 2.7x per prefix scan (docs/benchmarks.md). Everything
// else is the file's pages.
//
// A served file must be replaced by rename (`mv new data`, or publish's new generation
// directory), never rewritten in place: the mapping is shared with the file, so an
// in-place write changes the bytes under verified lookups, and truncating it makes reads
// past the new end fault (SIGBUS). A server survives both
// (docs/archive.md#a-file-changed-under-the-server): it reads the mapping only inside
// Read(fn) (mapped_read.h), which turns a fault into a result; the lookups check every
// '\n' and separator they rely on and call MappedBytesBroken() when one is gone, so bytes
// rewritten into any shape never make them read outside the mapping; and health() records
// the damage once it is seen. Open() reads the file under the same guard and refuses a
// file whose size or mtime changed while it was being verified. Lookups called outside
// Read() behave as before on a damaged file: the process dies (of SIGBUS, or abort() on
// broken bytes).
//
// Thread-safety: a DbFile is immutable after Open() but for its health(); any number of
// threads may look up concurrently. Share it with std::shared_ptr (see live_db.h); the
// mapping is unmapped and the file closed by the destructor, i.e. when the last user lets go.
#ifndef CLICKATRON_ARCHIVE_DB_FILE_H_
#define CLICKATRON_ARCHIVE_DB_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "archive/file_health.h"
#include "archive/manifest.h"
#include "archive/mapped_read.h"
#include "base/status.h"

namespace clickatron::archive {

struct DbFileOptions {
  char separator = ',';
  // Pre-fault the page tables at map time (MAP_POPULATE) and ask the kernel to keep the
  // pages (MADV_WILLNEED), so the first requests after a start or swap do not take
  // page faults. Without it pages are faulted in on first touch.
  bool populate = false;
};

// A line of the file: its key and its value (the value excludes the separator, and
// value_nl is the value with its trailing '\n', which is what /get answers).
struct Line {
  std::string_view key;
  std::string_view whole;     // key SEP value '\n'
  std::string_view value_nl;  // value '\n'
};

class DbFile {
 public:
  // Maps and verifies the file now at `path` (a symlink is followed; the manifest is read
  // from the directory of the resolved file, if one is there). Errors name the path and
  // the problem: "data.csv: line 3: key 'b' is not after the key before it 'c' (the file
  // must be sorted by key)".
  static Result<std::shared_ptr<const DbFile>> Open(const std::string& path,
                                                    const DbFileOptions& options);

  ~DbFile();
  DbFile(const DbFile&) = delete;
  DbFile& operator=(const DbFile&) = delete;

  // The line whose key equals `key`; false if there is none.
  bool Find(std::string_view key, Line* line) const;

  // Byte offset of the first line whose key is >= key (size() if none). Lines from there
  // on whose key starts with a prefix are the prefix's matches, in file order.
  size_t LowerBound(std::string_view key) const {
    Range r = BlockOf(key);
    return LowerBoundIn(key, r);
  }

  // Calls fn(i, line) for every keys[i] present, in order. Looks the keys up in batches:
  // first the sample block of each key of a batch, then a prefetch of those blocks, then the
  // searches — so the cache misses of different keys overlap instead of adding up (/mget).
  template <typename Fn>
  void FindEach(const std::string_view* keys, size_t n, Fn&& fn) const {
    constexpr size_t kBatch = 16;
    Range ranges[kBatch];
    for (size_t base = 0; base < n; base += kBatch) {
      const size_t m = n - base < kBatch ? n - base : kBatch;
      for (size_t i = 0; i < m; ++i) {
        ranges[i] = BlockOf(keys[base + i]);
        Prefetch(ranges[i]);
      }
      for (size_t i = 0; i < m; ++i) {
        size_t offset = LowerBoundIn(keys[base + i], ranges[i]);
        if (offset >= size_) continue;
        size_t next;
        Line line = LineAt(offset, &next);
        if (line.key == keys[base + i]) fn(base + i, line);
      }
    }
  }
  // The line starting at `offset` (a line start, < size()); *next is the next line start.
  // A line whose '\n' or separator is gone (rewritten in place): MappedBytesBroken.
  Line LineAt(size_t offset, size_t* next) const;

  // Calls fn(line) for every line whose key starts with `prefix` and is greater than
  // `after` (empty: no bound), in file order, at most `limit` lines. Returns how many
  // lines it visited; *more (if given) says whether a further prefixed line was left out.
  template <typename Fn>
  size_t ForEachPrefixed(std::string_view prefix, size_t limit, Fn&& fn,
                         std::string_view after = {}, bool* more = nullptr) const {
    size_t n = 0;
    const bool from_after = !after.empty() && after > prefix;
    size_t offset = LowerBound(from_after ? after : prefix);
    if (more != nullptr) *more = false;
    while (offset < size_) {
      size_t next;
      Line line = LineAt(offset, &next);
      if (!line.key.starts_with(prefix)) break;
      if (from_after && line.key == after) {  // strictly after
        offset = next;
        continue;
      }
      if (n == limit) {
        if (more != nullptr) *more = true;
        break;
      }
      fn(line);
      ++n;
      offset = next;
    }
    return n;
  }

  // Runs fn() with faults on this file's mapping turned into the result (mapped_read.h):
  // every lookup a server makes goes through here. REQUIRES: fn follows mapped_read.h's rules.
  template <typename Fn>
  MappedFault Read(Fn&& fn) const {
    return GuardMappedRead(data_, size_, std::forward<Fn>(fn));
  }
  // Whether the file is still the one verified (file_health.h); the one mutable part.
  FileHealth& health() const { return health_; }
  // How the file differs now (fstat of the mapped file) from when it was verified, as
  // DescribeChange says; empty when its size and mtime are unchanged.
  std::string ChangeSinceVerified() const;
  // The message of a damage: the real path, what changed, and how it was seen ("...: truncated
  // in place from 400 to 120 bytes; a read at offset 200 faulted (SIGBUS)"). `offset` is
  // the fault's, for kSigbus and kBadBytes.
  std::string DescribeDamage(DamageSource source, size_t offset = 0) const;
  // The open descriptor of the mapped file (kept for fstat and inotify; closed with the DbFile).
  int fd() const { return fd_; }

  const std::string& path() const { return path_; }           // as given to Open()
  const std::string& real_path() const { return real_path_; } // the file actually mapped
  size_t size() const { return size_; }
  uint64_t records() const { return records_; }
  char separator() const { return separator_; }
  // The manifest beside the file (has_manifest() false when there is none).
  bool has_manifest() const { return has_manifest_; }
  const Manifest& manifest() const { return manifest_; }
  // The tag of the file's answers, `"<generation>"` (wire/generation.h); empty without a manifest.
  const std::string& etag() const { return etag_; }

 private:
  DbFile() = default;
  // Lines starting in [lo, hi) may hold a key; lines before lo are smaller, lines from hi
  // on are not smaller. Both are line starts (or size_).
  struct Range {
    size_t lo, hi;
  };
  // The sample block where `key` would be (a search of the in-memory sample only).
  Range BlockOf(std::string_view key) const;
  // The first line start in r whose key is >= key (r.hi if none).
  size_t LowerBoundIn(std::string_view key, Range r) const;
  // Asks the CPU to fetch the first 4 KiB of r (a block, unless the file is over 256 MiB).
  void Prefetch(Range r) const;

  Status Verify();
  Status CheckManifest();
  // The key of the line starting at offset (REQUIRES: a verified line start; bytes with no
  // separator left after it: MappedBytesBroken).
  std::string_view KeyAt(size_t offset) const;
  // The i-th sampled key.
  std::string_view SampleKey(size_t i) const {
    return std::string_view(sample_keys_.data() + sample_key_ends_[i],
                            sample_key_ends_[i + 1] - sample_key_ends_[i]);
  }

  std::string path_;
  std::string real_path_;
  int fd_ = -1;
  FileStamp verified_;  // fstat at open, before the mapping was read
  mutable FileHealth health_;
  const char* data_ = nullptr;
  size_t size_ = 0;
  uint64_t records_ = 0;
  char separator_ = ',';
  bool has_manifest_ = false;
  Manifest manifest_;  // empty when there is none
  std::string etag_;
  // The sparse sample: line start offsets, and their keys back to back in sample_keys_
  // (key i spans [sample_key_ends_[i], sample_key_ends_[i + 1]); one more end than keys).
  std::vector<uint64_t> sample_offsets_;
  std::vector<size_t> sample_key_ends_;
  std::string sample_keys_;
  // The first 8 bytes of each sampled key, big-endian and zero-padded (KeyPrefix), so most
  // steps of the sample search are one integer comparison.
  std::vector<uint64_t> sample_prefixes_;
};

}  // namespace clickatron::archive

#endif  // CLICKATRON_ARCHIVE_DB_FILE_H_
