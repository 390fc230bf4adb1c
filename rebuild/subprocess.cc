#include "rebuild/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "base/errno_status.h"
#include "base/unique_fd.h"

extern char** environ;

namespace clickatron::rebuild {

namespace {

// A pipe, both ends close-on-exec.
Status Pipe(UniqueFd* read_end, UniqueFd* write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoStatus(errno, "pipe");
  read_end->reset(fds[0]);
  write_end->reset(fds[1]);
  return Status::OK();
}

}  // namespace

Result<ProgramOutput> RunProgram(const std::vector<std::string>& argv) {
  if (argv.empty()) return Status::Error("internal: RunProgram with no program");
  UniqueFd out_read, out_write, err_read, err_write;
  if (Status s = Pipe(&out_read, &out_write); !s.ok()) return s;
  if (Status s = Pipe(&err_read, &err_write); !s.ok()) return s;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_write.get(), 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  // The child has its copies: the read ends see their end once it exits.
  out_write.reset();
  err_write.reset();
  if (spawned != 0) return ErrnoStatus(spawned, "cannot run " + argv[0]);
  ProgramOutput result;
  UniqueFd* ends[2] = {&out_read, &err_read};
  std::string* sinks[2] = {&result.out, &result.err};
  char buf[8192];
  while (out_read.valid() || err_read.valid()) {
    // A closed end is -1 in the poll set, which poll skips.
    struct pollfd fds[2] = {{out_read.get(), POLLIN, 0}, {err_read.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, size_t(n));
      } else if (n == 0 || errno != EINTR) {
        ends[i]->reset();
      }
    }
  }
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return result;
}

}  // namespace clickatron::rebuild
