// The backup copy of a published shard file (docs/formats.md#backups): which codec, its file
// name suffix, and the one function publish calls to write it.
//
//   codec   suffix   written by                         read back by
//   zstd    .zst     libzstd, level 1, its own worker   `zstd -dc` (ops/restore-archive,
//                    threads; content checksum on        ops/archive-to-history), libzstd
//   gzip    .gz      ParallelGzipWriter, zlib level 1    `gzip -dc`, zlib
//                    in parallel blocks (parallel_gzip.h)
//
// zstd is the default: on the 100M-record archive file it costs a third of the CPU of zlib
// level 1 for 19 % fewer bytes (docs/benchmarks.md#publish-and-its-backup); gzip stays for
// sites whose tools read only gzip. Both are one stream a standard tool unpacks whole.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace clickatron::rebuild {

enum class BackupCodec { kZstd, kGzip };

// "zstd" or "gzip"; anything else is an error naming the choices.
Result<BackupCodec> ParseBackupCodec(std::string_view name);
std::string_view BackupCodecName(BackupCodec codec);
// ".zst" or ".gz": BACKUP/<generation>/shard-K.csv<suffix>.
std::string_view BackupSuffix(BackupCodec codec);

struct BackupCopyOptions {
  BackupCodec codec = BackupCodec::kZstd;
  unsigned threads = 0;  // compressing threads; 0 = one per core
};

// The compressed copy of the file at from, in a new file at to (fsynced); on_read(block) is
// called with each block read, in order (publish hashes the file with the same read). On
// an error, to is removed.
Status WriteBackupCopy(const std::string& from, const std::string& to, const BackupCopyOptions& options,
                       const std::function<void(std::string_view)>& on_read);

// The zstd codec alone (the gzip one is GzipFileParallel): level 1, `threads` workers of
// libzstd, with the content checksum, so `zstd -t` checks a copy.
Status ZstdFileParallel(const std::string& from, const std::string& to, unsigned threads,
                        const std::function<void(std::string_view)>& on_read);

}  // namespace clickatron::rebuild
