#include "rebuild/file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "base/errno_status.h"
#include "base/unique_fd.h"

namespace clickatron::rebuild {

namespace fs = std::filesystem;

namespace {
// O_DIRECT wants file offsets, sizes and memory aligned to the logical block size; a page
// covers every device here.
constexpr size_t kDirectAlign = 4096;

// bytes rounded up to whole blocks, at least one.
size_t WholeBlocks(size_t bytes) {
  return std::max((bytes + kDirectAlign - 1) / kDirectAlign * kDirectAlign, kDirectAlign);
}

// Fills buffers with aligned blocks of `bytes` each; false when memory runs out.
bool AllocateAligned(AlignedBuffer (&buffers)[2], size_t bytes) {
  for (AlignedBuffer& b : buffers) {
    b.reset(static_cast<char*>(std::aligned_alloc(kDirectAlign, bytes)));
    if (!b) return false;
  }
  return true;
}

// Turns O_DIRECT off on fd (the rest of the file goes through the page cache).
bool ClearDirect(int fd) { return ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_DIRECT) == 0; }
}  // namespace

void FreeAligned::operator()(char* p) const { std::free(p); }

FileWriter::~FileWriter() {
  if (writing_.joinable()) writing_.join();
  if (fd_ >= 0) ::close(fd_);
}

Status FileWriter::Open(const std::string& path, size_t buffer_size, bool direct) {
  path_ = path;
  const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
  fd_ = direct ? ::open(path.c_str(), flags | O_DIRECT, 0644) : -1;
  direct_ = fd_ >= 0;
  if (fd_ < 0) fd_ = ::open(path.c_str(), flags, 0644);
  if (fd_ < 0) return error_ = ErrnoStatus("create", path);
  capacity_ = WholeBlocks(buffer_size);
  if (!AllocateAligned(buffers_, capacity_)) return error_ = Status::Error("create " + path + ": no memory for a write buffer");
  return Status::OK();
}

Status FileWriter::WriteAll(const char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd_, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EINVAL && direct_) {  // accepted at open, refused at write: go buffered
        direct_ = false;
        if (!ClearDirect(fd_)) return ErrnoStatus("fcntl", path_);
        continue;
      }
      return ErrnoStatus("write", path_);
    }
    done += size_t(n);
  }
  return Status::OK();
}

Status FileWriter::WaitForWrite() {
  if (writing_.joinable()) writing_.join();
  if (!written_.ok()) error_ = written_;
  return error_;
}

// Hands the whole blocks of the buffer to the writing thread (a direct writer's partial
// last block starts the other buffer); when last, writes everything and waits.
Status FileWriter::FlushBuffer(bool last) {
  if (Status s = WaitForWrite(); !s.ok()) return s;
  char* buffer = buffers_[current_].get();
  size_t n = direct_ ? used_ / kDirectAlign * kDirectAlign : used_;
  if (!last) {
    char* other = buffers_[current_ ^ 1].get();
    std::memcpy(other, buffer + n, used_ - n);
    used_ -= n;
    current_ ^= 1;
    writing_ = std::thread([this, buffer, n] { written_ = WriteAll(buffer, n); });
    return Status::OK();
  }
  if (n > 0) {
    if (Status s = WriteAll(buffer, n); !s.ok()) return error_ = s;
  }
  if (n < used_) {
    // The tail is not a whole block: through the page cache.
    if (direct_) {
      direct_ = false;
      if (!ClearDirect(fd_)) return error_ = ErrnoStatus("fcntl", path_);
    }
    if (Status s = WriteAll(buffer + n, used_ - n); !s.ok()) return error_ = s;
  }
  used_ = 0;
  return Status::OK();
}

Status FileWriter::Append(std::string_view bytes) {
  if (!error_.ok()) return error_;
  if (bytes.empty()) return Status::OK();
  bytes_ += bytes.size();
  while (used_ + bytes.size() > capacity_) {
    const size_t piece = capacity_ - used_;
    std::memcpy(buffers_[current_].get() + used_, bytes.data(), piece);
    used_ += piece;
    bytes.remove_prefix(piece);
    if (Status s = FlushBuffer(false); !s.ok()) return s;
  }
  std::memcpy(buffers_[current_].get() + used_, bytes.data(), bytes.size());
  used_ += bytes.size();
  return Status::OK();
}

Status FileWriter::SyncAndClose() {
  if (!error_.ok()) return error_;
  if (Status s = FlushBuffer(true); !s.ok()) return s;
  if (::fdatasync(fd_) != 0) return error_ = ErrnoStatus("fsync", path_);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return error_ = ErrnoStatus("close", path_);
  return Status::OK();
}

Status FileWriter::Close() {
  if (!error_.ok()) return error_;
  if (Status s = FlushBuffer(true); !s.ok()) return s;
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return error_ = ErrnoStatus("close", path_);
  return Status::OK();
}

BlockReader::~BlockReader() {
  if (pending_.joinable()) pending_.join();
  if (fd_ >= 0) ::close(fd_);
}

Status BlockReader::Open(const std::string& path, size_t block_bytes) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
  direct_ = fd_ >= 0;
  if (fd_ < 0) fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return ErrnoStatus("open", path);
  if (!direct_) ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  block_bytes_ = WholeBlocks(block_bytes);
  if (!AllocateAligned(buffers_, block_bytes_)) return Status::Error("open " + path + ": no memory for read buffers");
  StartRead();
  return Status::OK();
}

// A whole block at offset (less only at the end of the file); -1 with errno on error.
ssize_t BlockReader::ReadAt(char* buffer, uint64_t offset) {
  size_t done = 0;
  while (done < block_bytes_) {
    const ssize_t n = ::pread(fd_, buffer + done, block_bytes_ - done, off_t(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EINVAL && direct_) {  // accepted at open, refused at read: go buffered
        direct_ = false;
        if (ClearDirect(fd_)) continue;
      }
      return -1;
    }
    if (n == 0) break;
    done += size_t(n);
    if (direct_ && done % kDirectAlign != 0) break;  // a short direct read: the end
  }
  return ssize_t(done);
}

void BlockReader::StartRead() {
  char* buffer = buffers_[next_].get();
  const uint64_t offset = offset_;
  pending_ = std::thread([this, buffer, offset] {
    pending_bytes_ = ReadAt(buffer, offset);
    pending_errno_ = errno;
  });
}

Status BlockReader::Next(std::string_view* block) {
  *block = std::string_view();
  if (eof_) return Status::OK();
  pending_.join();
  if (pending_bytes_ < 0) {
    errno = pending_errno_;
    eof_ = true;
    return ErrnoStatus("read", path_);
  }
  const char* data = buffers_[next_].get();
  *block = std::string_view(data, size_t(pending_bytes_));
  offset_ += uint64_t(pending_bytes_);
  if (size_t(pending_bytes_) < block_bytes_) {
    eof_ = true;
  } else {
    next_ ^= 1;
    StartRead();
  }
  return Status::OK();
}

LineReader::~LineReader() {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
}

Status LineReader::Open(const std::string& path, size_t buffer_size) {
  path_ = path == "-" ? "standard input" : path;
  InputFile in;
  if (Status s = OpenInput(path, &in); !s.ok()) return status_ = s;
  fd_ = in.fd;
  owns_fd_ = in.owned;
  file_size_ = in.size;
  if (in.regular) {
    blocks_ = std::make_unique<BlockReader>();
    if (Status s = blocks_->Open(path, buffer_size); !s.ok()) return status_ = s;
  }
  buffer_.resize(buffer_size);
  return Status::OK();
}

bool LineReader::Refill() {
  if (eof_) return false;
  // Keep the partial line, move it to the front, read behind it.
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (blocks_) {
    std::string_view block;
    if (status_ = blocks_->Next(&block); !status_.ok()) return false;
    if (block.empty()) {
      eof_ = true;
      return false;
    }
    if (buffer_.size() < end_ + block.size()) buffer_.resize(end_ + block.size());
    std::memcpy(buffer_.data() + end_, block.data(), block.size());
    end_ += block.size();
    bytes_read_ += block.size();
    return true;
  }
  if (end_ == buffer_.size()) buffer_.resize(buffer_.size() * 2);  // a line longer than the buffer
  size_t n = 0;
  if (status_ = ReadSome(fd_, buffer_.data() + end_, buffer_.size() - end_, path_, &n); !status_.ok()) {
    return false;
  }
  if (n == 0) {
    eof_ = true;
    return false;
  }
  end_ += n;
  bytes_read_ += uint64_t(n);
  return true;
}

bool LineReader::Next(std::string_view* line) {
  if (!status_.ok() || fd_ < 0) return false;
  size_t scan_from = begin_;
  for (;;) {
    const char* nl = static_cast<const char*>(
        std::memchr(buffer_.data() + scan_from, '\n', end_ - scan_from));
    if (nl != nullptr) {
      const size_t pos = size_t(nl - buffer_.data());
      *line = std::string_view(buffer_.data() + begin_, pos - begin_);
      begin_ = pos + 1;
      ++line_number_;
      return true;
    }
    const size_t partial = end_ - begin_;
    if (!Refill()) {
      if (!status_.ok()) return false;
      if (begin_ < end_) {  // last line without '\n'
        *line = std::string_view(buffer_.data() + begin_, end_ - begin_);
        begin_ = end_;
        final_newline_ = false;
        ++line_number_;
        return true;
      }
      return false;
    }
    scan_from = begin_ + partial;
  }
}

Status OpenInput(const std::string& path, InputFile* in) {
  if (path == "-") {
    in->fd = 0;
    return Status::OK();
  }
  in->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in->fd < 0) return ErrnoStatus("open", path);
  in->owned = true;
  struct stat st;
  if (::fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode)) {
    in->regular = true;
    in->size = uint64_t(st.st_size);
  }
  return Status::OK();
}

Result<std::string> ReadSmallFile(const std::string& path) {
  std::string out;
  Status s = ForEachBlock(path, 65536, [&out](std::string_view block) { out.append(block); });
  if (!s.ok()) return s;
  return out;
}

Status ForEachBlock(const std::string& path, size_t block_size,
                    const std::function<void(std::string_view)>& fn) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus("open", path);
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<char> buf(block_size);
  for (;;) {
    size_t n = 0;
    if (Status s = ReadSome(fd.get(), buf.data(), buf.size(), path, &n); !s.ok()) return s;
    if (n == 0) break;
    fn(std::string_view(buf.data(), n));
  }
  return Status::OK();
}

Status ReadSome(int fd, char* buffer, size_t size, const std::string& path, size_t* n) {
  for (;;) {
    const ssize_t got = ::read(fd, buffer, size);
    if (got >= 0) {
      *n = size_t(got);
      return Status::OK();
    }
    if (errno != EINTR) return ErrnoStatus("read", path);
  }
}

Status MakeDirs(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::Error("create directory " + dir + ": " + ec.message());
  return Status::OK();
}

Status RemoveAll(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) return Status::Error("remove " + path + ": " + ec.message());
  return Status::OK();
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

uint64_t FileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

Result<std::vector<std::string>> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return names;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) return Status::Error("list " + dir + ": " + ec.message());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace clickatron::rebuild
