#include "rebuild/export_files.h"

#include <fcntl.h>
#include <unistd.h>

#include "base/errno_status.h"
#include "base/read_file.h"
#include "base/unique_fd.h"
#include "keyformat/footer.h"
#include "keyformat/hex64.h"
#include "keyformat/ymdh.h"
#include "net/fetch.h"
#include "rebuild/cluster_http.h"
#include "rebuild/file.h"

namespace clickatron::rebuild {

std::string ExportDir(const WorkDir& work, Day day) { return work.Path("export/" + FormatDay(day)); }

std::string ExportPath(const WorkDir& work, Day day, uint32_t realtime_shard) {
  return ExportDir(work, day) + "/shard-" + std::to_string(realtime_shard) + ".csv";
}

std::string ExportRingPath(const WorkDir& work, Day day, uint32_t realtime_shard) {
  return ExportDir(work, day) + "/shard-" + std::to_string(realtime_shard) + ".ring";
}

Result<DayPart> ExportPart(const WorkDir& work, Day day, uint32_t shard) {
  const std::string path = ExportPath(work, day, shard);
  Result<std::string> line = ReadFooterLine(path);
  if (!line.ok()) return line.status();
  Result<Footer> footer = ParseFooter(*line);
  if (!footer.ok()) return Status::Error(path + ": " + footer.status().message());
  DayPart part{FormatDay(day), shard, 0, footer->xxh64};
  std::string ring;
  bool exists;
  const std::string ring_path = ExportRingPath(work, day, shard);
  if (Status s = ReadFileIfExists(ring_path, &ring, &exists); !s.ok()) return s;
  if (exists) {
    if (!ring.empty() && ring.back() == '\n') ring.pop_back();
    Result<uint64_t> id = ParseHex64(ring);
    if (!id.ok()) return Status::Error(ring_path + ": " + id.status().message());
    part.ring = *id;
  }
  return part;
}

Result<std::vector<std::string>> ExportFiles(const WorkDir& work, Day day, uint32_t realtime_shards) {
  uint32_t count = realtime_shards;
  if (count == 0) {
    Result<std::vector<std::string>> names = ListDir(ExportDir(work, day));
    if (!names.ok()) return names.status();
    for (const std::string& name : *names) {
      if (name.starts_with("shard-") && name.ends_with(".csv")) ++count;
    }
    if (count == 0) {
      return Status::Error("no export of " + FormatDay(day) + " in " + ExportDir(work, day) + ": run export first");
    }
  }
  std::vector<std::string> files;
  for (uint32_t n = 0; n < count; ++n) {
    const std::string path = ExportPath(work, day, n);
    if (!Exists(path)) {
      return Status::Error("the export of " + FormatDay(day) + " from realtime shard " + std::to_string(n) +
                           " is missing (" + path + "): run export first");
    }
    files.push_back(path);
  }
  return files;
}

Result<std::string> ReadFooterLine(const std::string& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus("open", path);
  const uint64_t size = FileSize(path);
  char buf[256];
  const uint64_t want = std::min<uint64_t>(size, sizeof buf);
  if (::pread(fd.get(), buf, want, off_t(size - want)) != ssize_t(want)) return ErrnoStatus("read", path);
  std::string_view tail(buf, want);
  if (!tail.ends_with('\n')) return Status::Error(path + " does not end with a newline (truncated?)");
  tail.remove_suffix(1);
  const size_t nl = tail.rfind('\n');
  std::string_view last = nl == std::string_view::npos ? tail : tail.substr(nl + 1);
  if (nl == std::string_view::npos && want < size) return Status::Error(path + " does not end with a #END footer");
  if (!last.starts_with(kFooterPrefix)) return Status::Error(path + " does not end with a #END footer (truncated?)");
  if (Result<Footer> f = ParseFooter(last); !f.ok()) return Status::Error(path + ": " + f.status().message());
  return std::string(last);
}

Status SortFootedFile(const std::string& path, const std::string& what, RecordSorter* sorter, Progress* progress) {
  const std::string name = what + " " + path;
  LineReader reader;
  if (Status s = reader.Open(path); !s.ok()) return s;
  FooterCheck check;
  std::string_view line;
  bool footer = false;
  uint64_t since_tick = 0, last_bytes = 0;
  while (reader.Next(&line)) {
    if (IsFooter(line)) {
      footer = true;
      if (Status s = check.Verify(line); !s.ok()) return Status::Error(name + " is corrupt: " + s.message());
      if (reader.Next(&line)) return Status::Error(name + " has data after its #END footer");
      break;
    }
    if (!reader.has_final_newline()) break;
    check.AddLineWithNewline(line);
    if (Status s = sorter->Add(line); !s.ok()) {
      return s.Prefixed(name + " line " + std::to_string(reader.line_number()) + ": ");
    }
    if (++since_tick == 65536) {
      progress->Add(since_tick, reader.bytes_read() - last_bytes);
      last_bytes = reader.bytes_read();
      since_tick = 0;
      progress->Tick();
    }
  }
  if (!reader.status().ok()) return reader.status();
  if (!footer) return Status::Error(name + " has no #END footer (truncated?)");
  progress->Add(since_tick, reader.bytes_read() - last_bytes);
  return Status::OK();
}

Result<std::vector<uint64_t>> ExportDigests(const std::vector<std::string>& files) {
  std::vector<uint64_t> out;
  for (const std::string& path : files) {
    Result<std::string> line = ReadFooterLine(path);
    if (!line.ok()) return line.status();
    Result<Footer> footer = ParseFooter(*line);
    if (!footer.ok()) return Status::Error(path + ": " + footer.status().message());
    out.push_back(footer->xxh64);
  }
  return out;
}

Result<std::string> ExportSource(const std::vector<std::string>& files) {
  XXH64_state_t st;
  XXH64_reset(&st, 0);
  for (const std::string& path : files) {
    Result<std::string> footer = ReadFooterLine(path);
    if (!footer.ok()) return footer.status();
    XXH64_update(&st, footer->data(), footer->size() + 1);  // with its NUL as separator
  }
  return "export-" + Hex64(XXH64_digest(&st));
}

Result<FetchedFile> FetchFootedFile(const net::HostPort& from, const std::string& url, const std::string& tmp,
                                    Progress* progress) {
  FileWriter out;
  if (Status s = out.Open(tmp); !s.ok()) return s;
  FootedStreamCheck check;
  Status write_error;
  FetchedFile fetched;
  net::RequestOptions request = ClusterRequest();
  request.timeout_ms = 0;
  Status transport = net::FetchStream(
      from, url, request,
      [&](std::string_view chunk) {
        if (fetched.error_body.size() < 512) fetched.error_body.append(chunk.substr(0, 512));
        check.Add(chunk);
        progress->Add(0, chunk.size());
        progress->Tick();
        write_error = out.Append(chunk);
        return write_error.ok();
      },
      &fetched.response);
  auto fail = [&](const Status& s) -> Status {
    ::unlink(tmp.c_str());
    return s;
  };
  if (!write_error.ok()) return fail(write_error);
  if (!transport.ok()) return fail(transport);
  if (fetched.response.status != 200) {
    ::unlink(tmp.c_str());
    return fetched;
  }
  if (Status s = check.Finish(); !s.ok()) return fail(s);
  if (Status s = out.SyncAndClose(); !s.ok()) return fail(s);
  fetched.records = check.records();
  return fetched;
}

}  // namespace clickatron::rebuild
