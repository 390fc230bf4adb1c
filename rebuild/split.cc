// `split --input FILE --output DIR --chunks N`: a history in realtime format (import's
// input) → DIR/chunk-0.csv … chunk-(N-1).csv, every line of one day in the same chunk (day
// number mod N), lookup lines spread by their key's hash, a line that names no day in
// chunk 0 (import reports it there). The first task of a bulk load on Slurm
// (slurm_executor.h): each chunk is then imported by a task of its own, covering days no
// other chunk holds, so the parallel imports never claim the same day, and the merge of
// their segments is the merge of one import of the whole input.
//
// Chunks are written under temp names, renamed, and DIR/DONE (lines and bytes per chunk) is
// written last: with DONE there the split is complete and running it again is a no-op.
#include <xxhash.h>

#include <cstring>

#include "base/durable_file.h"
#include "keyformat/key_value.h"
#include "keyformat/ymdh.h"
#include "rebuild/commands.h"
#include "rebuild/file.h"
#include "rebuild/progress.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {
namespace {

constexpr size_t kReadBlock = 4 << 20;
constexpr size_t kChunkBuffer = 1 << 20;

// The chunk of one line (without its '\n').
uint32_t ChunkOfLine(std::string_view line, uint32_t chunks) {
  const size_t comma = line.find(',');
  const std::string_view key = line.substr(0, comma);
  if (key.starts_with("_l|")) return uint32_t(XXH64(key.data(), key.size(), 0) % chunks);
  const size_t dot = key.rfind('.');
  if (comma == std::string_view::npos || dot == std::string_view::npos) return 0;
  Result<int64_t> ts = DecodeYmdh(key.substr(dot + 1));
  if (!ts.ok() || *ts < 0) return 0;
  return uint32_t((*ts / 86400) % chunks);
}

std::string ChunkPath(const std::string& dir, uint32_t i) { return dir + "/chunk-" + std::to_string(i) + ".csv"; }

// Each chunk synced and renamed into place, then out/DONE with their line counts (which
// sum to *total).
Status FinishChunks(const std::string& out, std::vector<FileWriter>* writers, const std::vector<uint64_t>& lines,
                    uint64_t* total) {
  KeyValueText done;
  for (uint32_t i = 0; i < writers->size(); ++i) {
    if (Status s = (*writers)[i].SyncAndClose(); !s.ok()) return s;
    if (Status s = RenameDurable(ChunkPath(out, i) + ".tmp", ChunkPath(out, i)); !s.ok()) return s;
    done.Add("chunk." + std::to_string(i) + ".lines", std::to_string(lines[i]));
    *total += lines[i];
  }
  return WriteFileAtomic(out + "/DONE", done.Format());
}

}  // namespace

Status RunSplit(const Options& options, WorkDir* work) {
  (void)work;  // the chunks go to --output (inside the work directory when the executor runs it)
  const std::string& out = options.output;
  const uint32_t chunks = options.chunks;
  Progress progress("split", FileSize(options.input));
  if (Exists(out + "/DONE")) {
    progress.Summary(options.input + " is already split into " + out + ", nothing to do");
    return Status::OK();
  }
  if (Status s = MakeDirs(out); !s.ok()) return s;
  std::vector<FileWriter> writers(chunks);
  std::vector<uint64_t> lines(chunks, 0);
  for (uint32_t i = 0; i < chunks; ++i) {
    if (Status s = writers[i].Open(ChunkPath(out, i) + ".tmp", kChunkBuffer); !s.ok()) return s;
  }
  std::string carry;  // a line cut by the end of a block
  Status write_error;
  auto add = [&](std::string_view line) {
    if (line.empty()) return;
    const uint32_t i = ChunkOfLine(line, chunks);
    ++lines[i];
    if (Status s = writers[i].Append(line); !s.ok() && write_error.ok()) write_error = s;
    if (Status s = writers[i].Append("\n"); !s.ok() && write_error.ok()) write_error = s;
  };
  Status read = ForEachBlock(options.input, kReadBlock, [&](std::string_view block) {
    size_t pos = 0;
    if (!carry.empty()) {
      const char* nl = static_cast<const char*>(std::memchr(block.data(), '\n', block.size()));
      if (nl == nullptr) {
        carry.append(block);
        return;
      }
      carry.append(block.data(), size_t(nl - block.data()));
      add(carry);
      carry.clear();
      pos = size_t(nl - block.data()) + 1;
    }
    while (pos < block.size()) {
      const char* nl = static_cast<const char*>(std::memchr(block.data() + pos, '\n', block.size() - pos));
      if (nl == nullptr) {
        carry.assign(block.data() + pos, block.size() - pos);
        break;
      }
      add(block.substr(pos, size_t(nl - block.data()) - pos));
      pos = size_t(nl - block.data()) + 1;
    }
    progress.Add(0, block.size());
    progress.Tick();
  });
  if (!read.ok()) return read;
  add(carry);
  if (!write_error.ok()) return write_error;
  uint64_t total = 0;
  if (Status s = FinishChunks(out, &writers, lines, &total); !s.ok()) return s;
  progress.Add(total, 0);
  progress.Summary(std::to_string(total) + " lines → " + std::to_string(chunks) + " chunk(s) in " + out);
  return Status::OK();
}

}  // namespace clickatron::rebuild
