// The archive server's answers when its file is damaged under it, in process and without
// the FileWatcher (file_check_ms = 0), so the reads themselves are what sees the damage:
// a read past the end of a file truncated in place (SIGBUS) and a read of bytes rewritten
// out of shape answer 503 ARCHIVE_FILE_DAMAGED, the server goes on, /stats says so, a
// reload of the still-damaged file is refused and one of the restored file ends it. With
// the watcher, a rewrite that keeps the shape is seen too. The real binary under load:
// tests/test_archive_file_damage.py.
#include "archive/archive_server.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "base/test_dir.h"
#include "net/fetch.h"
#include "wire/json_answer.h"

namespace clickatron::archive {
namespace {

// 2,000 lines "kNNNNNN,value-NNNNNN\n", 21 bytes each: 42,000 bytes, 11 pages.
std::string NumberedLines(int n) {
  std::string content;
  char buf[32];
  for (int i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof(buf), "k%06d,value-%06d\n", i, i);
    content += buf;
  }
  return content;
}

// An ArchiveServer on 127.0.0.1 (a free port) running on its own thread for one test.
class RunningArchive {
 public:
  RunningArchive(const std::string& path, int file_check_ms) : server_(Options(path, file_check_ms)) {
    Status s = server_.Start();
    EXPECT_TRUE(s.ok()) << s.message();
    thread_ = std::thread([this] { server_.Run(); });
  }
  ~RunningArchive() {
    server_.Stop();
    thread_.join();
  }
  net::HttpResponse Call(const std::string& path, const char* method = "GET") {
    net::RequestOptions options;
    options.method = method;
    net::HttpResponse r;
    Status s = net::Fetch(net::HostPort{"127.0.0.1", server_.port()}, path, options, &r);
    EXPECT_TRUE(s.ok()) << path << ": " << s.message();
    return r;
  }
  std::string Stats() { return Call("/stats").body; }

 private:
  static ArchiveOptions Options(const std::string& path, int file_check_ms) {
    ArchiveOptions o;
    o.db_file = path;
    o.port = 0;
    o.file_check_ms = file_check_ms;
    return o;
  }
  ArchiveServer server_;
  std::thread thread_;
};

std::string StatusTxt(const net::HttpResponse& r) {
  Result<wire::JsonAnswer> a = wire::ReadJsonAnswer(r.body);
  return a.ok() ? a->status_txt : "(not an envelope: " + r.body + ")";
}

std::string Message(const net::HttpResponse& r) {
  Result<wire::JsonAnswer> a = wire::ReadJsonAnswer(r.body);
  return a.ok() ? a->message : r.body;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void Overwrite(const std::string& path, const std::string& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

TEST(ArchiveServer, ATruncatedFileAnswers503UntilARestoredFileIsReloaded) {
  TestDir dir;
  const std::string content = NumberedLines(2000);
  const std::string path = dir.Write("data.csv", content);
  RunningArchive archive(path, /*file_check_ms=*/0);
  EXPECT_EQ(archive.Call("/get?key=k001999").body, "value-001999\n");
  EXPECT_TRUE(Contains(archive.Stats(), "\"file_damaged\":false,\"damage\":null,\"damaged_reads\":0,\"damage_episodes\":0"));

  ASSERT_EQ(truncate(path.c_str(), 10000), 0);  // mid-line: line 477 loses its end
  net::HttpResponse r = archive.Call("/get?key=k001999");  // page 9: past the new end
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(StatusTxt(r), "ARCHIVE_FILE_DAMAGED");
  EXPECT_TRUE(Contains(Message(r), path + ": truncated in place from 42000 to 10000 bytes; a read at offset "))
      << Message(r);
  EXPECT_TRUE(Contains(Message(r), " faulted (SIGBUS); restore the file or publish a new generation, then reload"))
      << Message(r);
  // From now on every read is a 503, also of lines the truncation left: the file is not the
  // one verified. Bad requests stay 400s.
  for (const char* read : {"/get?key=k000001", "/get?key=nope", "/mget?key=k000001&key=k001999",
                           "/fwmatch?key=k0000", "/fwmatch?key=k0019"}) {
    r = archive.Call(read);
    EXPECT_EQ(r.status, 503) << read;
    EXPECT_EQ(StatusTxt(r), "ARCHIVE_FILE_DAMAGED") << read;
  }
  EXPECT_EQ(archive.Call("/get?key=").status, 400);
  const std::string stats = archive.Stats();
  EXPECT_TRUE(Contains(stats, "\"file_damaged\":true,\"damage\":{\"since\":\"")) << stats;
  EXPECT_TRUE(Contains(stats, "\"seen_by\":\"sigbus\",\"message\":\"" + path + ": truncated in place from 42000 to 10000 bytes"))
      << stats;
  EXPECT_TRUE(Contains(stats, "\"damaged_reads\":6,\"damage_episodes\":1")) << stats;
  EXPECT_EQ(archive.Call("/ping").body, "OK\n");

  // Still truncated: the reload is refused and says the served file stays damaged.
  r = archive.Call("/reload", "POST");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "reload refused, the served file stays damaged (ARCHIVE_FILE_DAMAGED): " + path +
                        ": line 477: the file does not end with a newline (truncated last line)\n");
  EXPECT_EQ(archive.Call("/get?key=k000001").status, 503);

  // Restored (in place, as cp does): the reload verifies it and every answer is back.
  Overwrite(path, content);
  r = archive.Call("/reload", "POST");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "db reloaded\n");
  for (int i = 0; i < 2000; i += 37) {
    char key[16];
    std::snprintf(key, sizeof(key), "k%06d", i);
    EXPECT_EQ(archive.Call(std::string("/get?key=") + key).body, std::string("value-") + (key + 1) + "\n");
  }
  EXPECT_EQ(archive.Call("/mget?key=k000001&key=k001999").body, "k000001,value-000001\nk001999,value-001999\n");
  EXPECT_EQ(archive.Call("/fwmatch?key=k00199").body.size(), 10u * 21);
  EXPECT_TRUE(Contains(archive.Stats(), "\"file_damaged\":false,\"damage\":null,\"damaged_reads\":7,\"damage_episodes\":1"));
}

// Bytes rewritten out of shape (no '\n', no separator left): the lookup stops at them.
TEST(ArchiveServer, BytesRewrittenOutOfShapeAnswer503) {
  TestDir dir;
  const std::string content = NumberedLines(2000);
  const std::string path = dir.Write("data.csv", content);
  RunningArchive archive(path, /*file_check_ms=*/0);
  Overwrite(path, std::string(content.size(), 'x'));
  net::HttpResponse r = archive.Call("/fwmatch?key=k0010");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(StatusTxt(r), "ARCHIVE_FILE_DAMAGED");
  EXPECT_TRUE(Contains(Message(r), path + ": rewritten in place (size 42000 unchanged, mtime changed); the bytes at offset "))
      << Message(r);
  EXPECT_TRUE(Contains(archive.Stats(), "\"seen_by\":\"bad_bytes\""));
  EXPECT_EQ(archive.Call("/get?key=k000001").status, 503);
}

// With the watcher, a rewrite that keeps every line's shape (which no read could tell) is
// seen by inotify; until it is, reads answer the bytes as they are.
TEST(ArchiveServer, TheWatcherSeesARewriteThatKeepsTheShape) {
  TestDir dir;
  const std::string content = NumberedLines(2000);
  const std::string path = dir.Write("data.csv", content);
  RunningArchive archive(path, /*file_check_ms=*/250);
  std::string changed = content;
  changed[8] = 'V';  // "k000000,Value-000000"
  Overwrite(path, changed);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::string stats;
  while (!Contains(stats = archive.Stats(), "\"file_damaged\":true") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(Contains(stats, "\"seen_by\":\"inotify\",\"message\":\"" + path +
                                  ": rewritten in place (size 42000 unchanged, mtime changed) (inotify: IN_MODIFY)\""))
      << stats;
  net::HttpResponse r = archive.Call("/get?key=k000000");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(StatusTxt(r), "ARCHIVE_FILE_DAMAGED");
}

}  // namespace
}  // namespace clickatron::archive
