// The backup copies (backup_copy.h). ParallelGzipWriter: what it writes is one gzip member
// that zlib and `gzip -d` both read back byte for byte, whatever the input's size against the
// block size and however many threads deflate it. A zstd copy: one stream libzstd and
// `zstd -dc` read back byte for byte, every block of the input shown to the caller in order.
// For both, a failed write is an error naming the file, and the file is gone; an unknown
// codec is named.
#include "rebuild/backup_copy.h"
#include "rebuild/parallel_gzip.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include "base/test_dir.h"

namespace clickatron::rebuild {
namespace {

constexpr size_t kBlock = 64 << 10;  // the smallest block: many blocks from small inputs

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Inflates a whole gzip file with zlib; "" and a failure on anything but one clean member.
std::string Gunzip(const std::string& gz) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 16 + 15), Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = uInt(gz.size());
  std::string out;
  char buf[1 << 16];
  int rc;
  do {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  } while (rc == Z_OK);
  EXPECT_EQ(rc, Z_STREAM_END);
  EXPECT_EQ(z.avail_in, 0u) << "bytes after the gzip member";
  inflateEnd(&z);
  return out;
}

// Archive-like lines: compressible, with repeats that reach across block boundaries.
std::string Lines(size_t bytes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s;
  while (s.size() < bytes) {
    s += "c.u|u" + std::to_string(rng() % 5000) + ".c3p0\tUS\t" + std::to_string(rng() % 100000) + "\n";
  }
  s.resize(bytes);
  return s;
}

std::string Random(size_t bytes, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(bytes, '\0');
  for (char& c : s) c = char(rng());
  return s;
}

// Decompresses a whole zstd file with libzstd's streaming API; "" and a failure on
// anything but complete frames.
std::string Unzstd(const std::string& compressed) {
  ZSTD_DCtx* d = ZSTD_createDCtx();
  ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
  std::string out;
  char buf[1 << 16];
  size_t left = 1;
  while (in.pos < in.size) {
    ZSTD_outBuffer o{buf, sizeof buf, 0};
    left = ZSTD_decompressStream(d, &o, &in);
    if (ZSTD_isError(left)) {
      ADD_FAILURE() << ZSTD_getErrorName(left);
      ZSTD_freeDCtx(d);
      return "";
    }
    out.append(buf, o.pos);
  }
  ZSTD_freeDCtx(d);
  EXPECT_EQ(left, 0u) << "a frame is cut short";
  return out;
}

// Writes input in pieces of `piece` bytes on `threads` threads; checks it with zlib, gzip -t
// and gzip -dc.
void RoundTrip(const std::string& input, unsigned threads, size_t piece = 100'003) {
  TestDir dir;
  const std::string gz_path = dir / "x.gz";
  ParallelGzipWriter gz;
  ASSERT_TRUE(gz.Open(gz_path, {threads, kBlock, 6}).ok());
  for (size_t at = 0; at < input.size(); at += piece) {
    Status s = gz.Append(std::string_view(input).substr(at, piece));
    ASSERT_TRUE(s.ok()) << s.message();
  }
  Status s = gz.Finish();
  ASSERT_TRUE(s.ok()) << s.message();
  const std::string gz_bytes = ReadFile(gz_path);
  EXPECT_EQ(gz.bytes_in(), input.size());
  EXPECT_EQ(gz.bytes_out(), gz_bytes.size());
  EXPECT_TRUE(Gunzip(gz_bytes) == input) << "zlib, " << input.size() << " bytes, " << threads << " thread(s)";
  EXPECT_EQ(std::system(("gzip -t " + gz_path).c_str()), 0);
  ASSERT_EQ(std::system(("gzip -dc " + gz_path + " > " + (dir / "x")).c_str()), 0);
  EXPECT_TRUE(ReadFile(dir / "x") == input) << "gzip -d, " << input.size() << " bytes, " << threads << " thread(s)";
}

TEST(ParallelGzip, EmptyInputIsAValidEmptyMember) { RoundTrip("", 2); }

TEST(ParallelGzip, TinyInputs) {
  RoundTrip("x", 2);
  RoundTrip("hello\n", 1);
  RoundTrip(Lines(1000, 1), 3);
}

TEST(ParallelGzip, InputsAtTheBlockBoundaries) {
  for (size_t n : {kBlock - 1, kBlock, kBlock + 1, 2 * kBlock, 2 * kBlock + 1}) RoundTrip(Lines(n, 2), 2, kBlock);
}

TEST(ParallelGzip, ManyBlocksOnOneToFourThreads) {
  const std::string input = Lines(37 * kBlock + 12'345, 3);  // more blocks than are ever in flight
  for (unsigned threads : {1u, 2u, 4u}) RoundTrip(input, threads);
}

TEST(ParallelGzip, RandomBytes) { RoundTrip(Random(5 * kBlock + 777, 4), 2, 4096); }

// Each block is primed with the 32 KiB before it: a repeat of the previous block's end
// costs next to nothing, as in one deflate stream.
TEST(ParallelGzip, BlocksSeeTheInputBeforeThem) {
  TestDir dir;
  const std::string piece = Random(kBlock / 4, 5);
  std::string input;
  for (int i = 0; i < 8; ++i) input += piece;  // two blocks, the second all repeats
  ParallelGzipWriter gz;
  ASSERT_TRUE(gz.Open(dir / "x.gz", {2, kBlock, 6}).ok());
  ASSERT_TRUE(gz.Append(input).ok());
  ASSERT_TRUE(gz.Finish().ok());
  EXPECT_LT(gz.bytes_out(), piece.size() + piece.size() / 4);  // unprimed: twice the piece
  EXPECT_TRUE(Gunzip(ReadFile(dir / "x.gz")) == input);
}

TEST(ParallelGzipFile, CompressesAFileAndShowsEveryByteRead) {
  TestDir dir;
  const std::string input = Lines(3 * kBlock + 99, 6);
  const std::string from = dir.Write("in", input);
  std::string seen;
  Status s = GzipFileParallel(from, dir / "in.gz", {2, kBlock, 1}, [&](std::string_view b) { seen.append(b); });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(seen == input);
  EXPECT_TRUE(Gunzip(ReadFile(dir / "in.gz")) == input);
}

TEST(ParallelGzipFile, AMissingInputIsAnErrorAndWritesNothing) {
  TestDir dir;
  Status s = GzipFileParallel(dir / "nope", dir / "nope.gz", {}, nullptr);
  EXPECT_EQ(s.message(), "open " + (dir / "nope") + ": No such file or directory");
  EXPECT_FALSE(std::filesystem::exists(dir / "nope.gz"));
}

TEST(ParallelGzip, AFileThatCannotBeCreatedIsAnError) {
  TestDir dir;
  ParallelGzipWriter gz;
  EXPECT_EQ(gz.Open(dir / "no/such/dir.gz").message(),
            "create " + (dir / "no/such/dir.gz") + ": No such file or directory");
}

// The file size limit makes write(2) fail as a full disk does: the error names the file,
// and the partial file is removed.
// What write does runs with files limited to 1 MiB (RLIMIT_FSIZE, SIGXFSZ ignored).
Status WithFilesOfAtMostOneMiB(const std::function<Status()>& write) {
  ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit old;
  EXPECT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  struct rlimit small = old;
  small.rlim_cur = 1 << 20;
  EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  Status s = write();
  ::setrlimit(RLIMIT_FSIZE, &old);
  return s;
}

TEST(ParallelGzip, AFailedWriteIsAnErrorAndRemovesThePartialFile) {
  TestDir dir;
  const std::string path = dir / "big.gz";
  const std::string input = Random(8 << 20, 7);  // incompressible: more than the 4 MiB write buffer
  Status s = WithFilesOfAtMostOneMiB([&] {
    ParallelGzipWriter gz;
    Status w = gz.Open(path, {2, kBlock, 6});
    if (w.ok()) w = gz.Append(input);
    if (w.ok()) w = gz.Finish();
    return w;
  });
  EXPECT_EQ(s.message(), "write " + path + ": File too large");
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(ParallelGzip, AWriterDroppedBeforeFinishRemovesItsFile) {
  TestDir dir;
  {
    ParallelGzipWriter gz;
    ASSERT_TRUE(gz.Open(dir / "x.gz", {2, kBlock, 6}).ok());
    ASSERT_TRUE(gz.Append(Lines(5 * kBlock, 8)).ok());
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "x.gz"));
}

TEST(ParallelGzip, ALevelOutsideOneToNineIsRefused) {
  TestDir dir;
  ParallelGzipWriter gz;
  EXPECT_EQ(gz.Open(dir / "x.gz", {2, kBlock, 0}).message(), "gzip level must be 1..9");
  EXPECT_FALSE(std::filesystem::exists(dir / "x.gz"));
}

void ZstdRoundTrip(const std::string& input, unsigned threads) {
  TestDir dir;
  dir.Write("in.csv", input);
  std::string seen;
  Status s = ZstdFileParallel(dir / "in.csv", dir / "in.csv.zst", threads, [&](std::string_view b) { seen += b; });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(seen, input);
  const std::string zst = ReadFile(dir / "in.csv.zst");
  EXPECT_EQ(Unzstd(zst), input);
  EXPECT_EQ(zst.substr(0, 4), std::string("\x28\xb5\x2f\xfd", 4));
  // The tool ops/restore-archive uses, with its checksum check.
  EXPECT_EQ(std::system(("zstd -q -t " + (dir / "in.csv.zst")).c_str()), 0);
}

TEST(ZstdBackupCopy, EmptyInputIsAValidEmptyFrame) { ZstdRoundTrip("", 2); }

TEST(ZstdBackupCopy, SmallAndMultiBlockInputsOnOneToFourThreads) {
  ZstdRoundTrip("u|k,c413:2\n", 1);
  for (unsigned threads : {1u, 2u, 4u}) ZstdRoundTrip(Lines((9 << 20) + 12345, threads), threads);
}

TEST(ZstdBackupCopy, IncompressibleBytes) { ZstdRoundTrip(Random((5 << 20) + 777, 3), 2); }

TEST(ZstdBackupCopy, AMissingInputIsAnErrorAndWritesNothing) {
  TestDir dir;
  Status s = ZstdFileParallel(dir / "absent.csv", dir / "absent.csv.zst", 2, {});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir / "absent.csv"), std::string::npos) << s.message();
  EXPECT_FALSE(std::filesystem::exists(dir / "absent.csv.zst"));
}

TEST(ZstdBackupCopy, AFailedWriteIsAnErrorAndRemovesThePartialFile) {
  TestDir dir;
  dir.Write("big.csv", Random(12 << 20, 7));  // incompressible: past the 4 MiB write buffer
  const std::string path = dir / "big.csv.zst";
  Status s = WithFilesOfAtMostOneMiB([&] { return ZstdFileParallel(dir / "big.csv", path, 2, {}); });
  EXPECT_EQ(s.message(), "write " + path + ": File too large");
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(BackupCopy, GzipOnRequestIsReadByZlib) {
  TestDir dir;
  const std::string input = Lines((3 << 20) + 5, 9);
  dir.Write("in.csv", input);
  ASSERT_TRUE(WriteBackupCopy(dir / "in.csv", dir / "in.csv.gz", {BackupCodec::kGzip, 2}, {}).ok());
  EXPECT_EQ(Gunzip(ReadFile(dir / "in.csv.gz")), input);
}

TEST(BackupCopy, CodecNamesAndSuffixes) {
  EXPECT_EQ(*ParseBackupCodec("zstd"), BackupCodec::kZstd);
  EXPECT_EQ(*ParseBackupCodec("gzip"), BackupCodec::kGzip);
  EXPECT_EQ(ParseBackupCodec("xz").status().message(), "backup-codec 'xz' is not zstd or gzip");
  EXPECT_EQ(ParseBackupCodec("").status().message(), "backup-codec '' is not zstd or gzip");
  EXPECT_EQ(BackupSuffix(BackupCodec::kZstd), ".zst");
  EXPECT_EQ(BackupSuffix(BackupCodec::kGzip), ".gz");
  EXPECT_EQ(BackupCodecName(BackupCodec::kZstd), "zstd");
  EXPECT_EQ(BackupCodecName(BackupCodec::kGzip), "gzip");
  EXPECT_EQ(BackupCopyOptions{}.codec, BackupCodec::kZstd);  // the default
}

}  // namespace
}  // namespace clickatron::rebuild
