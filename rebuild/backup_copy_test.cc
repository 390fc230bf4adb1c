// The backup copy (backup_copy.h): a zstd copy is one stream libzstd and `zstd -dc` read back
// byte for byte, with every block of the input shown to the caller in order, whatever the
// input's size against the read block; a gzip copy the same through zlib; a failed write is
// an error naming the file, and the file is gone; an unknown codec is named.
#include "rebuild/backup_copy.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "base/test_dir.h"

namespace clickatron::rebuild {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
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

std::string Lines(size_t bytes, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s;
  while (s.size() < bytes) s += "c.u|user" + std::to_string(rng() % 100000) + ".c41l,US:" + std::to_string(rng() % 9) + "\n";
  s.resize(bytes);
  return s;
}

std::string Random(size_t bytes, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(bytes, '\0');
  for (char& c : s) c = char(rng());
  return s;
}

void RoundTrip(const std::string& input, unsigned threads) {
  TestDir dir;
  WriteFile(dir / "in.csv", input);
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

TEST(ZstdBackupCopy, EmptyInputIsAValidEmptyFrame) { RoundTrip("", 2); }

TEST(ZstdBackupCopy, SmallAndMultiBlockInputsOnOneToFourThreads) {
  RoundTrip("u|k,c413:2\n", 1);
  for (unsigned threads : {1u, 2u, 4u}) RoundTrip(Lines((9 << 20) + 12345, threads), threads);
}

TEST(ZstdBackupCopy, IncompressibleBytes) { RoundTrip(Random((5 << 20) + 777, 3), 2); }

TEST(ZstdBackupCopy, AMissingInputIsAnErrorAndWritesNothing) {
  TestDir dir;
  Status s = ZstdFileParallel(dir / "absent.csv", dir / "absent.csv.zst", 2, {});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir / "absent.csv"), std::string::npos) << s.message();
  EXPECT_FALSE(std::filesystem::exists(dir / "absent.csv.zst"));
}

TEST(ZstdBackupCopy, AFailedWriteIsAnErrorAndRemovesThePartialFile) {
  TestDir dir;
  WriteFile(dir / "big.csv", Random(12 << 20, 7));  // incompressible: past the 4 MiB write buffer
  const std::string path = dir / "big.csv.zst";
  ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit old;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  struct rlimit small = old;
  small.rlim_cur = 1 << 20;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  Status s = ZstdFileParallel(dir / "big.csv", path, 2, {});
  ::setrlimit(RLIMIT_FSIZE, &old);
  EXPECT_EQ(s.message(), "write " + path + ": File too large");
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(BackupCopy, GzipOnRequestIsReadByZlib) {
  TestDir dir;
  const std::string input = Lines((3 << 20) + 5, 9);
  WriteFile(dir / "in.csv", input);
  ASSERT_TRUE(WriteBackupCopy(dir / "in.csv", dir / "in.csv.gz", {BackupCodec::kGzip, 2}, {}).ok());
  const std::string gz = ReadFile(dir / "in.csv.gz");
  z_stream z{};
  ASSERT_EQ(inflateInit2(&z, 16 + 15), Z_OK);
  std::string out(input.size() + 1, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = uInt(gz.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  inflateEnd(&z);
  EXPECT_EQ(out, input);
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
