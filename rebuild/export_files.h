// The export files of a day: DIR/export/<YYYY-MM-DD>/shard-N.csv, N = 0..R-1, each the
// body of one realtime shard's /export with its `#END` footer kept, so `segment` can
// check it again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "net/host_port.h"
#include "net/http_client.h"
#include "rebuild/progress.h"
#include "rebuild/record_sorter.h"
#include "rebuild/work_dir.h"

namespace clickatron::rebuild {

std::string ExportDir(const WorkDir& work, Day day);
std::string ExportPath(const WorkDir& work, Day day, uint32_t realtime_shard);
// DIR/export/<day>/shard-N.ring: the ring id (16 hex digits, realtime/ring_id.h) of the data
// directory the export was read from, written before the export file is put in place; none
// for an export fetched from a server that does not name its ring.
std::string ExportRingPath(const WorkDir& work, Day day, uint32_t realtime_shard);

// The part of realtime shard `shard` in day `day`'s export: its footer's digest and its ring
// (0 without a ring file). Errors name the file.
Result<DayPart> ExportPart(const WorkDir& work, Day day, uint32_t shard);

// The export files of day, one per realtime shard: `realtime_shards` of them when the
// config says how many (0: every shard-N.csv there, which must be 0..R-1 without gaps).
// A missing file is an error naming the shard.
Result<std::vector<std::string>> ExportFiles(const WorkDir& work, Day day, uint32_t realtime_shards);

// The footer line at the end of a footed file (read from its tail), without '\n'.
Result<std::string> ReadFooterLine(const std::string& path);

// The xxh64 of each file's #END footer (the export digests the manifest records,
// docs/formats.md#manifest), in the order of files.
Result<std::vector<uint64_t>> ExportDigests(const std::vector<std::string>& files);

// Adds every record of a footed file (an export, a page of late data) to sorter, checking
// it against its #END footer as it goes. Errors name the file as "<what> <path>": "export
// DIR/export/D/shard-0.csv has no #END footer (truncated?)", "... line 7: <the problem>".
Status SortFootedFile(const std::string& path, const std::string& what, RecordSorter* sorter, Progress* progress);

// A footed stream (a realtime /export, a page of an API's /late) fetched into a file.
struct FetchedFile {
  net::HttpResponse response;  // status and headers (the body went to the file)
  std::string error_body;      // its first 512 bytes, for messages about a non-200 answer
  uint64_t records = 0;        // key,value lines before the footer (a 200 answer)
};

// GET `url` from `from` into `tmp`, checking the #END footer (keyformat/footer.h) as the
// bytes arrive. A transport or write error, or a 200 whose footer is missing or wrong, is an
// error and removes tmp; any other status is returned with tmp removed; a whole 200 is
// returned with tmp synced and closed, for the caller to check the headers and then
// RenameDurable it into place (or remove it). The request has no overall timeout (a day can
// be GBs): the client's idle timeout applies.
Result<FetchedFile> FetchFootedFile(const net::HostPort& from, const std::string& url, const std::string& tmp,
                                    Progress* progress);

// "export-<hex>": XXH64 over the footers of the files, in shard order — identifies what
// a day segment was made from without reading the files.
Result<std::string> ExportSource(const std::vector<std::string>& files);

}  // namespace clickatron::rebuild
