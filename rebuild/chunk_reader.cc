#include "rebuild/chunk_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/errno_status.h"
#include "rebuild/file.h"

namespace clickatron::rebuild {

ChunkReader::~ChunkReader() {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
}

Status ChunkReader::Open(const std::string& path, size_t chunk_bytes) {
  path_ = path == "-" ? "standard input" : path;
  chunk_bytes_ = std::max<size_t>(chunk_bytes, 1);
  XXH64_reset(&digest_state_, 0);
  InputFile in;
  if (Status s = OpenInput(path, &in); !s.ok()) return status_ = s;
  fd_ = in.fd;
  owns_fd_ = in.owned;
  file_size_ = in.size;
  if (in.regular) ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  return Status::OK();
}

// Reads until *buffer is full or the input ends; false on a read error.
bool ChunkReader::Fill(std::vector<char>* buffer, size_t* used) {
  while (*used < buffer->size() && !eof_) {
    size_t n = 0;
    status_ = ReadSome(fd_, buffer->data() + *used, buffer->size() - *used, path_, &n);
    if (!status_.ok()) return false;
    if (n == 0) {
      eof_ = true;
      break;
    }
    XXH64_update(&digest_state_, buffer->data() + *used, n);
    *used += n;
    bytes_read_ += uint64_t(n);
  }
  return true;
}

bool ChunkReader::Next(std::vector<char>* buffer, std::string_view* text, uint64_t* index) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!status_.ok() || fd_ < 0) return false;
  if (buffer->size() < chunk_bytes_ + carry_.size()) buffer->resize(chunk_bytes_ + carry_.size());
  size_t used = carry_.size();
  std::memcpy(buffer->data(), carry_.data(), carry_.size());
  carry_.clear();
  for (;;) {
    if (!Fill(buffer, &used)) return false;
    if (used == 0) return false;  // the end
    const void* nl = ::memrchr(buffer->data(), '\n', used);
    if (nl != nullptr) {
      const size_t end = size_t(static_cast<const char*>(nl) - buffer->data()) + 1;
      carry_.assign(buffer->data() + end, used - end);
      *text = std::string_view(buffer->data(), end);
      break;
    }
    if (eof_) {  // the last line, without '\n'
      *text = std::string_view(buffer->data(), used);
      break;
    }
    buffer->resize(buffer->size() * 2);  // a line longer than the buffer
  }
  *index = next_index_++;
  return true;
}

Status ChunkReader::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

uint64_t ChunkReader::digest() const {
  std::lock_guard<std::mutex> lock(mu_);
  return XXH64_digest(&digest_state_);
}

uint64_t ChunkReader::bytes_read() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_read_;
}

}  // namespace clickatron::rebuild
