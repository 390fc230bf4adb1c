#include "config/cluster_secret.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/errno_status.h"
#include "base/read_file.h"
#include "base/unique_fd.h"

namespace clickatron::config {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

Status FileError(const char* name, const std::string& path, std::string_view detail) {
  return Status::Error(std::string(name) + ": secret-file " + path + ": " + std::string(detail));
}

}  // namespace

Status LoadSecretFile(const std::string& path, std::string* secret) {
  const std::string unreadable = "SECRET_FILE_UNREADABLE: secret-file " + path;
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, unreadable);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, unreadable);
  if (!S_ISREG(st.st_mode)) return FileError("SECRET_FILE_UNREADABLE", path, "not a regular file");
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    return FileError("SECRET_FILE_OPEN", path,
                     std::string("mode ") + mode + " lets the group or others use it (chmod 600 it)");
  }
  // Read at most one byte more than the longest secret with room for whitespace around it.
  std::string text;
  if (Status s = ReadToEnd(fd.get(), path, &text, 4 * kMaxSecretBytes + 1); !s.ok()) {
    return s.Prefixed("SECRET_FILE_UNREADABLE: ");
  }
  size_t begin = 0, end = text.size();
  while (begin < end && IsSpace(text[begin])) begin++;
  while (end > begin && IsSpace(text[end - 1])) end--;
  const std::string_view token(text.data() + begin, end - begin);
  if (token.empty()) return FileError("SECRET_FILE_EMPTY", path, "holds no token");
  if (token.size() > kMaxSecretBytes) {
    return FileError("SECRET_FILE_LONG", path, "the token is longer than " + std::to_string(kMaxSecretBytes) + " characters");
  }
  for (size_t i = 0; i < token.size(); i++) {
    const unsigned char c = static_cast<unsigned char>(token[i]);
    if (c <= 0x20 || c >= 0x7f) {
      return FileError("SECRET_FILE_BAD_BYTE", path,
                       "character " + std::to_string(i + 1) + " of the token is a space or not printable ASCII");
    }
  }
  if (token.size() < kMinSecretBytes) {
    return FileError("SECRET_FILE_SHORT", path,
                     "the token has " + std::to_string(token.size()) + " characters, fewer than " +
                         std::to_string(kMinSecretBytes));
  }
  secret->assign(token);
  return Status::OK();
}

void AddSecretFileOption(OptionLoader* loader) {
  loader->Add()("secret-file", po::value<std::string>(),
                "file holding the cluster secret, sent and required as X-Clickatron-Secret on internal "
                "endpoints (mode 0600; docs/operations.md#threat-model)");
}

Status ReadSecretFile(const po::variables_map& vm, std::string* secret) {
  if (!vm.count("secret-file")) {
    secret->clear();
    return Status::OK();
  }
  const std::string& path = vm["secret-file"].as<std::string>();
  if (path.empty()) return Status::Error("SECRET_FILE_UNREADABLE: secret-file is empty (name a file)");
  return LoadSecretFile(path, secret);
}

}  // namespace clickatron::config
