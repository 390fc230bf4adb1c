#include "rebuild/backup_copy.h"

#include <unistd.h>
#include <zstd.h>

#include <memory>
#include <thread>

#include "rebuild/file.h"
#include "rebuild/parallel_gzip.h"

namespace clickatron::rebuild {
namespace {

// zlib level of a gzip copy: level 1 costs a quarter of the CPU of gzip's default 6 for
// 15-19 % more bytes (docs/benchmarks.md#publish-and-its-backup).
constexpr int kGzipLevel = 1;
constexpr int kZstdLevel = 1;

struct CctxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

Status ZstdError(const std::string& to, size_t code) {
  return Status::Error("zstd " + to + ": " + ZSTD_getErrorName(code));
}

}  // namespace

Result<BackupCodec> ParseBackupCodec(std::string_view name) {
  if (name == "zstd") return BackupCodec::kZstd;
  if (name == "gzip") return BackupCodec::kGzip;
  return Status::Error("backup-codec '" + std::string(name) + "' is not zstd or gzip");
}

std::string_view BackupCodecName(BackupCodec codec) { return codec == BackupCodec::kZstd ? "zstd" : "gzip"; }

std::string_view BackupSuffix(BackupCodec codec) { return codec == BackupCodec::kZstd ? ".zst" : ".gz"; }

Status ZstdFileParallel(const std::string& from, const std::string& to, unsigned threads,
                        const std::function<void(std::string_view)>& on_read) {
  BlockReader in;
  if (Status s = in.Open(from); !s.ok()) return s;
  std::unique_ptr<ZSTD_CCtx, CctxDeleter> cctx(ZSTD_createCCtx());
  if (!cctx) return Status::Error("zstd " + to + ": out of memory");
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (auto [param, value] : {std::pair{ZSTD_c_compressionLevel, kZstdLevel}, std::pair{ZSTD_c_checksumFlag, 1},
                              std::pair{ZSTD_c_nbWorkers, int(threads)}}) {
    if (size_t rc = ZSTD_CCtx_setParameter(cctx.get(), param, value); ZSTD_isError(rc)) return ZstdError(to, rc);
  }
  FileWriter out;
  if (Status s = out.Open(to, 4 << 20, /*direct=*/true); !s.ok()) return s;
  auto fail = [&](Status s) {
    ::unlink(to.c_str());
    return s;
  };
  const size_t out_capacity = ZSTD_CStreamOutSize();
  std::unique_ptr<char[]> buffer = std::make_unique<char[]>(out_capacity);
  // Feeds input (empty at the end) until zstd has taken it all (and, at the end, flushed
  // every worker's frame part): each output piece goes to the file as it comes.
  auto compress = [&](std::string_view input, ZSTD_EndDirective mode) -> Status {
    ZSTD_inBuffer zin{input.data(), input.size(), 0};
    for (;;) {
      ZSTD_outBuffer zout{buffer.get(), out_capacity, 0};
      const size_t left = ZSTD_compressStream2(cctx.get(), &zout, &zin, mode);
      if (ZSTD_isError(left)) return ZstdError(to, left);
      if (Status s = out.Append(std::string_view(buffer.get(), zout.pos)); !s.ok()) return s;
      const bool done = mode == ZSTD_e_end ? left == 0 : zin.pos == zin.size;
      if (done) return Status::OK();
    }
  };
  for (;;) {
    std::string_view block;
    if (Status s = in.Next(&block); !s.ok()) return fail(s);
    if (block.empty()) break;
    if (on_read) on_read(block);
    if (Status s = compress(block, ZSTD_e_continue); !s.ok()) return fail(s);
  }
  if (Status s = compress({}, ZSTD_e_end); !s.ok()) return fail(s);
  if (Status s = out.SyncAndClose(); !s.ok()) return fail(s);
  return Status::OK();
}

Status WriteBackupCopy(const std::string& from, const std::string& to, const BackupCopyOptions& options,
                       const std::function<void(std::string_view)>& on_read) {
  if (options.codec == BackupCodec::kZstd) return ZstdFileParallel(from, to, options.threads, on_read);
  ParallelGzipOptions gzip;
  gzip.threads = options.threads;
  gzip.level = kGzipLevel;
  return GzipFileParallel(from, to, gzip, on_read);
}

}  // namespace clickatron::rebuild
