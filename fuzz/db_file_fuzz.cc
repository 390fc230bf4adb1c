// Archive file verification and lookups (archive/db_file.h): the input is written as a
// data file and opened with DbFile::Open, alone and beside a manifest that describes it.
//
// Beyond "no crash":
//   * Open accepts exactly the files of the model: empty, or whole lines (ending in '\n'),
//     each with a ',' after a nonempty key, keys strictly increasing bytewise;
//   * an accepted file has records() lines; every line is found by Find, by FindEach and
//     first by LowerBound; a key not in the file is not found; ForEachPrefixed visits exactly
//     the lines whose key has the prefix, in file order;
//   * beside a manifest whose entry gives the file's true records, bytes and xxh64, the
//     file opens the same; with a record count one off, it is refused.
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "archive/db_file.h"
#include "fuzz/check.h"
#include "keyformat/hex64.h"

using namespace clickatron;
using clickatron::archive::DbFile;
using clickatron::archive::DbFileOptions;

namespace {

struct Dirs {
  std::string plain;    // data.csv alone
  std::string with_manifest;
};

const Dirs& TempDirs() {
  static const Dirs dirs = [] {
    auto make = [] {
      char name[] = "/tmp/db_file_fuzz.XXXXXX";
      FUZZ_CHECK(mkdtemp(name) != nullptr, "a temporary directory");
      return std::string(name);
    };
    Dirs d{make(), make()};
    // Removed when the fuzzer exits normally; a crash leaves them for inspection.
    static const Dirs copy = d;
    std::atexit([] {
      for (const std::string& dir : {copy.plain, copy.with_manifest}) {
        std::remove((dir + "/data.csv").c_str());
        std::remove((dir + "/manifest").c_str());
        rmdir(dir.c_str());
      }
    });
    return d;
  }();
  return dirs;
}

void Write(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  FUZZ_CHECK(out.good(), "writing a temporary file");
}

// The model of a valid file; fills keys and line starts.
bool ModelAccepts(std::string_view file, std::vector<std::string_view>* keys,
                  std::vector<size_t>* starts) {
  if (!file.empty() && file.back() != '\n') return false;
  size_t at = 0;
  while (at < file.size()) {
    const size_t nl = file.find('\n', at);
    const std::string_view line = file.substr(at, nl - at);
    const size_t comma = line.find(',');
    if (comma == std::string_view::npos || comma == 0) return false;
    const std::string_view key = line.substr(0, comma);
    if (!keys->empty() && !(keys->back() < key)) return false;
    keys->push_back(key);
    starts->push_back(at);
    at = nl + 1;
  }
  return true;
}

std::string ManifestFor(std::string_view file, uint64_t records) {
  return "generation = fuzz\nlast_day = 2012-03-25\nshards = 1\nshard.0.file = data.csv\n"
         "shard.0.records = " + std::to_string(records) + "\nshard.0.bytes = " +
         std::to_string(file.size()) + "\nshard.0.xxh64 = " +
         Hex64(XXH64(file.data(), file.size(), 0)) + "\n";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  const Dirs& dirs = TempDirs();
  std::vector<std::string_view> keys;
  std::vector<size_t> starts;
  const bool model = ModelAccepts(file, &keys, &starts);

  const std::string path = dirs.plain + "/data.csv";
  Write(path, file);
  Result<std::shared_ptr<const DbFile>> db = DbFile::Open(path, DbFileOptions{});
  FUZZ_CHECK(db.ok() == model, "Open accepts exactly the model's files");
  if (!model) return 0;
  const DbFile& f = **db;
  FUZZ_CHECK(f.records() == keys.size() && f.size() == size && !f.has_manifest(),
             "records and size");

  archive::Line line;
  for (size_t i = 0; i < keys.size(); ++i) {
    FUZZ_CHECK(f.Find(keys[i], &line), "every key is found");
    const size_t end = i + 1 < starts.size() ? starts[i + 1] : size;
    FUZZ_CHECK(line.whole == file.substr(starts[i], end - starts[i]), "Find gives the line");
    FUZZ_CHECK(line.key == keys[i] && line.value_nl == file.substr(starts[i] + keys[i].size() + 1,
                                                                     end - starts[i] - keys[i].size() - 1),
               "key and value");
    FUZZ_CHECK(f.LowerBound(keys[i]) == starts[i], "LowerBound of a key is its line");
    const std::string missing = std::string(keys[i]) + '\x01';
    const bool present = std::binary_search(keys.begin(), keys.end(), std::string_view(missing));
    FUZZ_CHECK(f.Find(missing, &line) == present, "a key not in the file is not found");
  }
  size_t found = 0;
  f.FindEach(keys.data(), keys.size(), [&](size_t i, const archive::Line& l) {
    FUZZ_CHECK(l.key == keys[i], "FindEach finds each key");
    ++found;
  });
  FUZZ_CHECK(found == keys.size(), "FindEach finds every key");

  // Prefix scans of a few keys' halves against a linear model.
  const size_t stride = keys.size() / 8 + 1;
  for (size_t i = 0; i < keys.size(); i += stride) {
    const std::string_view prefix = keys[i].substr(0, keys[i].size() / 2);
    std::vector<std::string_view> expected;
    for (std::string_view k : keys) {
      if (k.starts_with(prefix)) expected.push_back(k);
    }
    std::vector<std::string_view> got;
    f.ForEachPrefixed(prefix, keys.size() + 1,
                      [&](const archive::Line& l) { got.push_back(l.key); });
    FUZZ_CHECK(got == expected, "ForEachPrefixed visits the prefix's lines in order");
  }

  // Beside a manifest: its true entry opens; a wrong record count is refused.
  const std::string mpath = dirs.with_manifest + "/data.csv";
  Write(mpath, file);
  Write(dirs.with_manifest + "/manifest", ManifestFor(file, keys.size()));
  Result<std::shared_ptr<const DbFile>> checked = DbFile::Open(mpath, DbFileOptions{});
  FUZZ_CHECK(checked.ok() && (*checked)->has_manifest(), "a file matching its manifest opens");
  Write(dirs.with_manifest + "/manifest", ManifestFor(file, keys.size() + 1));
  FUZZ_CHECK(!DbFile::Open(mpath, DbFileOptions{}).ok(), "a file not matching its manifest is refused");
  return 0;
}
