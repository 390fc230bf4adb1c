#include "archive/db_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "base/errno_status.h"
#include "base/unique_fd.h"
#include "keyformat/hex64.h"
#include "keyformat/key_order.h"
#include "wire/generation.h"

namespace clickatron::archive {

namespace {

// Archive errors put the path first ("/data/x.csv: open: No such file or directory").
Status PathError(const std::string& path, const char* what) {
  const int err = errno;
  return ErrnoStatus(err, path + ": " + what);
}

// Bytes of a key shown in an error message: long keys are cut so a log line stays readable.
constexpr size_t kShownKey = 80;

// A key for an error message, copied out of the mapping into a fixed buffer before any
// string is built: no mapped byte is read inside an allocation (mapped_read.h's rules).
// text() is Clipped(key, kShownKey).
struct ShownKey {
  char bytes[kShownKey];
  size_t size;
  bool cut;
  explicit ShownKey(std::string_view key)
      : size(key.size() < kShownKey ? key.size() : kShownKey), cut(key.size() > kShownKey) {
    std::memcpy(bytes, key.data(), size);
  }
  std::string text() const { return std::string(bytes, size) + (cut ? "..." : ""); }
};

// The file the descriptor really refers to (symlinks resolved at open time, so a
// `current` pointer swapped after our open() cannot make us read another generation's
// manifest).
std::string RealPathOf(int fd, const std::string& fallback) {
  char link[64];
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  char buf[PATH_MAX];
  ssize_t n = readlink(link, buf, sizeof(buf) - 1);
  if (n <= 0) return fallback;
  return std::string(buf, static_cast<size_t>(n));
}

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The first 8 bytes of key as a big-endian integer, zero-padded. If KeyPrefix(a) <
// KeyPrefix(b) then a < b in key order (a difference in a real byte decides as memcmp does;
// padding is 0, so a key that ends first is smaller); equal prefixes decide nothing.
inline uint64_t KeyPrefix(std::string_view key) {
  unsigned char bytes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::memcpy(bytes, key.data(), key.size() < 8 ? key.size() : 8);
  uint64_t v = 0;
  for (unsigned char b : bytes) v = (v << 8) | b;
  return v;
}

DamageSource SourceOf(const MappedFault& f) {
  return f.kind == MappedFault::Kind::kSigbus ? DamageSource::kSigbus : DamageSource::kBadBytes;
}

}  // namespace

Result<std::shared_ptr<const DbFile>> DbFile::Open(const std::string& path,
                                                   const DbFileOptions& options) {
  std::shared_ptr<DbFile> db(new DbFile());
  db->path_ = path;
  db->separator_ = options.separator;

  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return PathError(path, "open");
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return PathError(path, "fstat");
  if (!S_ISREG(st.st_mode)) return Status::Error(path + ": not a regular file");
  // Kept open for the DbFile's life: fstat and inotify of the mapped file, even once it is
  // renamed over (file_watcher.h).
  db->fd_ = fd.release();
  db->real_path_ = RealPathOf(db->fd(), path);
  db->size_ = static_cast<size_t>(st.st_size);
  db->verified_ = FileStamp::Of(st);
  if (db->size_ > 0) {
    int flags = MAP_SHARED | (options.populate ? MAP_POPULATE : 0);
    void* p = mmap(nullptr, db->size_, PROT_READ, flags, db->fd(), 0);
    if (p == MAP_FAILED) return PathError(path, "mmap");
    db->data_ = static_cast<const char*>(p);
    // The verification pass reads the file front to back: let the kernel read ahead.
    madvise(const_cast<char*>(db->data_), db->size_, MADV_SEQUENTIAL);
  }
  Status s;
  if (MappedFault f = db->Read([&] { s = db->Verify(); })) {
    return Status::Error(path + ": changed while being verified: " + db->DescribeDamage(SourceOf(f), f.offset));
  }
  if (!s.ok()) return s.Prefixed(path + ": ");

  if (Status m = db->CheckManifest(); !m.ok()) return m;
  // A write during the pass may have left verified-looking bytes: the mtime tells.
  if (std::string change = db->ChangeSinceVerified(); !change.empty()) {
    return Status::Error(path + ": changed while being verified: " + db->real_path_ + ": " + change);
  }

  if (db->size_ > 0) {
    // Served by binary search from now on: random access, readahead would only waste
    // page cache. With populate, ask for every page to stay resident.
    madvise(const_cast<char*>(db->data_), db->size_,
            options.populate ? MADV_WILLNEED : MADV_RANDOM);
  }
  return std::shared_ptr<const DbFile>(std::move(db));
}

// Reads the manifest beside the real file, if any; when it names the file, its size,
// record count and xxh64 must match.
Status DbFile::CheckManifest() {
  Result<std::optional<Manifest>> manifest = ReadManifest(DirOf(real_path_));
  if (!manifest.ok()) return manifest.status();
  has_manifest_ = manifest->has_value();
  if (has_manifest_) manifest_ = **manifest;
  if (has_manifest_ && !manifest_.generation.empty()) etag_ = wire::GenerationEtag(manifest_.generation);
  if (const ShardMeta* entry = manifest_.FindFile(BaseOf(real_path_))) {
    auto mismatch = [&](const char* what, const std::string& want, const std::string& got) {
      return Status::Error(path_ + ": " + what + " " + got + " does not match the manifest's " +
                           want + " (generation " + manifest_.generation + ")");
    };
    if (entry->bytes && *entry->bytes != size_) {
      return mismatch("size", std::to_string(*entry->bytes), std::to_string(size_));
    }
    if (entry->records && *entry->records != records_) {
      return mismatch("record count", std::to_string(*entry->records),
                      std::to_string(records_));
    }
    if (entry->xxh64) {
      uint64_t h = 0;
      if (MappedFault f = Read([&] { h = XXH64(data_, size_, 0); })) {
        return Status::Error(path_ + ": changed while being verified: " +
                             DescribeDamage(SourceOf(f), f.offset));
      }
      if (h != *entry->xxh64) return mismatch("xxh64", Hex64(*entry->xxh64), Hex64(h));
    }
  }
  return Status::OK();
}

DbFile::~DbFile() {
  if (data_ != nullptr) munmap(const_cast<char*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
}

std::string DbFile::ChangeSinceVerified() const {
  struct stat st;
  if (fstat(fd_, &st) != 0) return ErrnoStatus(errno, "fstat").message();
  const FileStamp now = FileStamp::Of(st);
  return now == verified_ ? std::string() : DescribeChange(verified_, now);  // the watcher's every check
}

std::string DbFile::DescribeDamage(DamageSource source, size_t offset) const {
  std::string change = ChangeSinceVerified();
  std::string what = real_path_ + ": ";
  switch (source) {
    case DamageSource::kSigbus:
      what += change.empty() ? "size and mtime unchanged" : change;
      return what + "; a read at offset " + std::to_string(offset) + " faulted (SIGBUS)";
    case DamageSource::kBadBytes:
      what += change.empty() ? "rewritten in place" : change;
      return what + "; the bytes at offset " + std::to_string(offset) + " are no longer a verified line";
    case DamageSource::kInotify:
      return what + (change.empty() ? "written in place" : change) + " (inotify: IN_MODIFY)";
    case DamageSource::kStat:
      return what + (change.empty() ? "changed in place" : change) + " (fstat)";
  }
  return what + change;
}

Status DbFile::Verify() {
  const char* p = data_;
  const char* end = data_ + size_;
  if (size_ > 0 && end[-1] != '\n') {
    // Count lines so the message names the truncated one.
    uint64_t lines = 1;
    for (const char* q = p; (q = static_cast<const char*>(std::memchr(q, '\n', end - q)));
         ++q) {
      ++lines;
    }
    return Status::Error("line " + std::to_string(lines) +
                         ": the file does not end with a newline (truncated last line)");
  }
  // Sample block: 4 KiB, doubled until the file has at most 65,536 blocks.
  size_t block = 4096;
  while (size_ / block > 65536) block *= 2;
  size_t next_sample = 0;
  sample_key_ends_.push_back(0);
  std::string_view prev_key;
  uint64_t line_no = 0;
  while (p < end) {
    ++line_no;
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
    const char* sep = static_cast<const char*>(std::memchr(p, separator_, nl - p));
    auto bad = [&](const std::string& what) {
      return Status::Error("line " + std::to_string(line_no) + ": " + what);
    };
    if (sep == nullptr) {
      std::string shown = separator_ == '\t' ? std::string("tab") : std::string(1, separator_);
      return bad("no separator '" + shown + "' in the line");
    }
    if (sep == p) return bad("empty key");
    std::string_view key(p, static_cast<size_t>(sep - p));
    if (line_no > 1 && CompareKeys(prev_key, key) >= 0) {
      const ShownKey shown(key), shown_prev(prev_key);
      return bad("key '" + shown.text() + "' is not after the key before it '" + shown_prev.text() +
                 "' (the file must be sorted by key, each key once)");
    }
    prev_key = key;
    const size_t offset = static_cast<size_t>(p - data_);
    if (offset >= next_sample) {
      sample_offsets_.push_back(offset);
      // Room first, then the copy of mapped bytes, which then cannot allocate (mapped_read.h).
      if (sample_keys_.capacity() - sample_keys_.size() < key.size()) {
        sample_keys_.reserve(2 * (sample_keys_.size() + key.size()));
      }
      sample_keys_.append(key);
      sample_key_ends_.push_back(sample_keys_.size());
      sample_prefixes_.push_back(KeyPrefix(key));
      next_sample = (offset / block + 1) * block;
    }
    p = nl + 1;
  }
  sample_offsets_.shrink_to_fit();
  sample_key_ends_.shrink_to_fit();
  sample_keys_.shrink_to_fit();
  sample_prefixes_.shrink_to_fit();
  records_ = line_no;
  return Status::OK();
}

std::string_view DbFile::KeyAt(size_t offset) const {
  const char* p = data_ + offset;
  const char* sep = static_cast<const char*>(std::memchr(p, separator_, size_ - offset));
  if (sep == nullptr) [[unlikely]] MappedBytesBroken(p);
  return std::string_view(p, static_cast<size_t>(sep - p));
}

DbFile::Range DbFile::BlockOf(std::string_view key) const {
  // first: the first sample whose key is >= key.
  const uint64_t prefix = KeyPrefix(key);
  size_t first = 0, count = sample_offsets_.size();
  while (count > 0) {
    size_t half = count / 2;
    const uint64_t sample = sample_prefixes_[first + half];
    if (sample < prefix ||
        (sample == prefix && CompareKeys(SampleKey(first + half), key) < 0)) {
      first += half + 1;
      count -= half + 1;
    } else {
      count = half;
    }
  }
  Range r;
  r.lo = first > 0 ? sample_offsets_[first - 1] : 0;
  r.hi = first < sample_offsets_.size() ? sample_offsets_[first] : size_;
  return r;
}

void DbFile::Prefetch(Range r) const {
  const size_t end = r.hi - r.lo > 4096 ? r.lo + 4096 : r.hi;
  for (size_t at = r.lo; at < end; at += 64) __builtin_prefetch(data_ + at);
}

size_t DbFile::LowerBoundIn(std::string_view key, Range r) const {
  // Invariant: every line starting before lo has a key < `key`; every line starting at or
  // after hi has a key >= `key`; lo and hi are line starts (or size_).
  size_t lo = r.lo, hi = r.hi;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    // The start of the line holding mid: just after the last '\n' in [lo, mid).
    size_t start = lo;
    if (mid > lo) {
      const void* nl = memrchr(data_ + lo, '\n', mid - lo);
      if (nl != nullptr) start = static_cast<size_t>(static_cast<const char*>(nl) - data_) + 1;
    }
    if (CompareKeys(KeyAt(start), key) < 0) {
      const char* nl = static_cast<const char*>(std::memchr(data_ + start, '\n', size_ - start));
      if (nl == nullptr) [[unlikely]] MappedBytesBroken(data_ + start);
      lo = static_cast<size_t>(nl - data_) + 1;  // start <= mid < hi: progress
    } else {
      hi = start;  // start <= mid < hi: progress
    }
  }
  return lo;
}

Line DbFile::LineAt(size_t offset, size_t* next) const {
  const char* p = data_ + offset;
  const char* nl = static_cast<const char*>(std::memchr(p, '\n', size_ - offset));
  if (nl == nullptr) [[unlikely]] MappedBytesBroken(p);
  const char* sep = static_cast<const char*>(std::memchr(p, separator_, nl - p));
  if (sep == nullptr) [[unlikely]] MappedBytesBroken(p);
  *next = static_cast<size_t>(nl - data_) + 1;
  Line line;
  line.key = std::string_view(p, static_cast<size_t>(sep - p));
  line.whole = std::string_view(p, static_cast<size_t>(nl + 1 - p));
  line.value_nl = std::string_view(sep + 1, static_cast<size_t>(nl - sep));
  return line;
}

bool DbFile::Find(std::string_view key, Line* line) const {
  size_t offset = LowerBound(key);
  if (offset >= size_) return false;
  size_t next;
  Line found = LineAt(offset, &next);
  if (found.key != key) return false;
  *line = found;
  return true;
}

}  // namespace clickatron::archive
