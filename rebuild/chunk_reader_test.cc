// ChunkReader: chunks hold whole lines, come in input order by index however many threads
// take them, add up to the input byte for byte, and the digest is the XXH64 of the input.
#include "rebuild/chunk_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace clickatron::rebuild {
namespace {

class TempFile {
 public:
  explicit TempFile(const std::string& bytes) {
    char tmpl[] = "/tmp/chunk_reader_test.XXXXXX";
    const int fd = ::mkstemp(tmpl);
    path_ = tmpl;
    ::close(fd);
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << bytes;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Reads all of bytes with `threads` threads; returns the chunks by index.
std::map<uint64_t, std::string> ReadAll(const std::string& bytes, size_t chunk_bytes, int threads,
                                        uint64_t* digest) {
  TempFile file(bytes);
  ChunkReader reader;
  EXPECT_TRUE(reader.Open(file.path(), chunk_bytes).ok());
  std::mutex mu;
  std::map<uint64_t, std::string> chunks;
  auto work = [&] {
    std::vector<char> buffer;
    std::string_view text;
    uint64_t index;
    while (reader.Next(&buffer, &text, &index)) {
      std::lock_guard<std::mutex> lock(mu);
      EXPECT_TRUE(chunks.emplace(index, std::string(text)).second);
    }
  };
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back(work);
  for (std::thread& w : workers) w.join();
  EXPECT_TRUE(reader.status().ok());
  EXPECT_EQ(reader.bytes_read(), bytes.size());
  *digest = reader.digest();
  return chunks;
}

TEST(ChunkReader, HandsOutWholeLinesInOrder) {
  std::string lines;
  for (int i = 0; i < 20000; ++i) lines += "u|user" + std::to_string(i * 7919 % 100003) + ".c3p0," + std::to_string(i) + "\n";
  const std::string long_line = std::string(5000, 'x') + "\n";  // longer than a chunk
  for (const std::string& bytes : {std::string(), std::string("\n"), std::string("a"), lines,
                                   lines + "last,1", long_line + lines + long_line + "tail"}) {
    for (int threads : {1, 3}) {
      uint64_t digest = 0;
      const std::map<uint64_t, std::string> chunks = ReadAll(bytes, 1000, threads, &digest);
      std::string joined;
      uint64_t expected_index = 0;
      for (const auto& [index, text] : chunks) {
        EXPECT_EQ(index, expected_index++);
        EXPECT_FALSE(text.empty());
        // Whole lines: every chunk but the input's last ends with '\n'.
        if (index + 1 < chunks.size()) {
          EXPECT_EQ(text.back(), '\n');
        }
        joined += text;
      }
      EXPECT_EQ(joined, bytes) << threads << " thread(s), " << bytes.size() << " bytes";
      EXPECT_EQ(digest, XXH64(bytes.data(), bytes.size(), 0));
    }
  }
}

TEST(ChunkReader, AMissingFileIsAnError) {
  ChunkReader reader;
  EXPECT_NE(reader.Open("/nonexistent/input.csv").message().find("open /nonexistent/input.csv"), std::string::npos);
}

}  // namespace
}  // namespace clickatron::rebuild
