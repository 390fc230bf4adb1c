#include "oplog/inspect.h"

#include "oplog/segment.h"

namespace clickatron::oplog {

LogCheck CheckLog(const std::string& dir,
                  const std::function<void(uint64_t seq, std::string_view payload)>& visit) {
  LogCheck check;
  Result<std::vector<SegmentFile>> files = ListSegments(dir);
  if (!files.ok()) {
    check.error = files.status();
    return check;
  }
  uint64_t last = 0;
  for (size_t i = 0; i < files->size(); ++i) {
    const SegmentFile& file = (*files)[i];
    Result<SegmentScan> scan =
        ScanSegment(file, last, [&](uint64_t seq, std::string_view payload, uint64_t) {
          if (visit) visit(seq, payload);
        });
    if (!scan.ok()) {
      check.error = scan.status();
      return check;
    }
    ++check.segments;
    check.records += scan->records;
    check.bytes += scan->valid_bytes;
    if (check.first_seq == 0) check.first_seq = scan->first_seq;
    if (scan->records > 0) check.last_seq = last = scan->last_seq;
    if (!scan->tail_problem.empty()) {
      const std::string what = file.path + " at offset " + std::to_string(scan->valid_bytes) +
                               ": " + scan->tail_problem + ", " +
                               std::to_string(scan->tail_bytes) + " bytes";
      if (i + 1 < files->size()) {
        check.error = Status::Error("oplog segment " + what +
                                    " (only the newest segment may end in a torn record)");
        return check;
      }
      check.torn_tail = what;
    }
    if (i + 1 < files->size() && (*files)[i + 1].name_seq <= last) {
      check.error = Status::Error("oplog segment " + file.path + " holds seq " +
                                  std::to_string(last) + ", which the next segment's name (seq " +
                                  std::to_string((*files)[i + 1].name_seq) + ") says it cannot");
      return check;
    }
  }
  return check;
}

std::string EscapePayload(std::string_view payload) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(payload.size());
  for (char ch : payload) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c >= 0x20 && c <= 0x7e) {
      out += ch;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace clickatron::oplog
