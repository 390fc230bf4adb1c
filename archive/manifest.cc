#include "archive/manifest.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "keyformat/ymdh.h"

namespace clickatron::archive {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool ParseUint(std::string_view s, int base, uint64_t* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return ec == std::errc() && end == s.data() + s.size();
}

Status LineError(size_t line_no, const std::string& what) {
  return Status::Error("line " + std::to_string(line_no) + ": " + what);
}

ManifestShard* ShardEntry(Manifest* m, int index) {
  for (auto& s : m->shard_entries) {
    if (s.index == index) return &s;
  }
  m->shard_entries.push_back(ManifestShard{});
  m->shard_entries.back().index = index;
  return &m->shard_entries.back();
}

// Applies one "shard.K.field = value" line; unknown fields are ignored.
Status ApplyShardLine(Manifest* m, size_t line_no, std::string_view key,
                      std::string_view value) {
  std::string_view rest = key.substr(6);  // after "shard."
  size_t dot = rest.find('.');
  uint64_t index;
  if (dot == std::string_view::npos || !ParseUint(rest.substr(0, dot), 10, &index) ||
      index > 1'000'000) {
    return LineError(line_no, "'" + std::string(key) + "' is not shard.K.<field>");
  }
  std::string_view field = rest.substr(dot + 1);
  ManifestShard* s = ShardEntry(m, static_cast<int>(index));
  const std::string bad_number = std::string(key) + " '" + std::string(value) + "' is not ";
  if (field == "file") {
    if (value.empty() || value.find('/') != std::string_view::npos) {
      return LineError(line_no, std::string(key) + " must be a plain file name");
    }
    s->file = std::string(value);
  } else if (field == "records") {
    if (!ParseUint(value, 10, &s->records)) return LineError(line_no, bad_number + "a count");
    s->has_records = true;
  } else if (field == "bytes") {
    if (!ParseUint(value, 10, &s->bytes)) return LineError(line_no, bad_number + "a count");
    s->has_bytes = true;
  } else if (field == "xxh64") {
    if (value.size() != 16 || !ParseUint(value, 16, &s->xxh64)) {
      return LineError(line_no, bad_number + "16 hex digits");
    }
    s->has_xxh64 = true;
  }
  return Status::OK();
}

}  // namespace

const ManifestShard* Manifest::FindFile(std::string_view file_name) const {
  for (const auto& s : shard_entries) {
    if (s.file == file_name) return &s;
  }
  return nullptr;
}

Result<Manifest> ParseManifest(std::string_view text) {
  Manifest m;
  m.present = true;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    line = Trim(line);
    if (line.empty() || line.front() == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      return LineError(line_no, "'" + std::string(line) + "' is not 'key = value'");
    }
    std::string_view key = Trim(line.substr(0, eq));
    std::string_view value = Trim(line.substr(eq + 1));
    if (key == "generation") {
      if (value.empty()) return LineError(line_no, "generation is empty");
      m.generation = std::string(value);
    } else if (key == "last_day") {
      if (value.size() != 10 || !ParseDay(value).ok()) {
        return LineError(line_no, "last_day '" + std::string(value) +
                                      "' is not a valid YYYY-MM-DD day");
      }
      m.last_day = std::string(value);
    } else if (key == "shards") {
      uint64_t n;
      if (!ParseUint(value, 10, &n) || n == 0 || n > 1'000'000) {
        return LineError(line_no, "shards '" + std::string(value) + "' is not a positive count");
      }
      m.shards = static_cast<int>(n);
    } else if (key.starts_with("shard.")) {
      Status s = ApplyShardLine(&m, line_no, key, value);
      if (!s.ok()) return s;
    }
  }
  if (m.generation.empty()) return Status::Error("no 'generation' line");
  if (m.last_day.empty()) return Status::Error("no 'last_day' line");
  return m;
}

Result<Manifest> ReadManifest(const std::string& dir) {
  std::string path = dir.empty() ? std::string(kManifestName) : dir + "/" + kManifestName;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return Manifest{};
    return Status::Error(path + ": " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Error(path + ": read error");
  Result<Manifest> m = ParseManifest(text.str());
  if (!m.ok()) return m.status().Prefixed(path + ": ");
  return m;
}

}  // namespace clickatron::archive
