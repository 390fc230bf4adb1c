#include "rebuild/rollup.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <set>

#include "base/clip.h"
#include "keyformat/columns.h"
#include "keyformat/key_order.h"
#include "keyformat/records.h"
#include "keyformat/rollup_hours.h"
#include "keyformat/ymdh.h"
#include "rebuild/column_merge.h"
#include "rebuild/sort_entry.h"

namespace clickatron::rebuild {
namespace {

// A subtotal key `{subns}.{ns}|…`: its first '.' comes before its first '|' (a total
// `{ns}|{key}` and a lookup `_l|{hash}` start with a '|').
bool IsSubtotalKey(std::string_view key) {
  const size_t at = key.find_first_of(".|");
  return at != std::string_view::npos && key[at] == '.';
}

}  // namespace

Status RollupWriter::Add(std::string_view key, std::string_view value, uint64_t columns) {
  if (!IsSubtotalKey(key)) {
    if (holding_) {
      if (Status s = WriteHeld(); !s.ok()) return s;
    }
    return out_->Add(key, value, columns);
  }
  return Record(key, value, std::string_view());
}

Status RollupWriter::AddLines(std::string_view lines, uint64_t /*records*/, uint64_t /*columns*/) {
  // Totals and lookups go on in pieces as long as they lie back to back; subtotal lines one
  // by one through Record.
  size_t pass_begin = 0, pass_end = 0;
  uint64_t pass_records = 0, pass_columns = 0;
  auto pass = [&]() -> Status {
    if (pass_records == 0) return Status::OK();
    Status s = out_->AddLines(lines.substr(pass_begin, pass_end - pass_begin), pass_records, pass_columns);
    pass_records = pass_columns = 0;
    return s;
  };
  const char* const end = lines.data() + lines.size();
  const char* p = lines.data();
  while (p < end) {
    // One pass over the key: its end, and whether a '.' comes before the first '|'.
    const char* q = p;
    while (q < end && *q != '.' && *q != '|' && *q != ',' && *q != '\n') ++q;  // the namespace
    const char first = q < end ? *q : 0;
    // The line's end, then its ',' before it (none: the key is the whole line).
    const char* nl = q;
    if (first == '.' || first == '|' || first == ',') {
      nl = static_cast<const char*>(std::memchr(q, '\n', size_t(end - q)));
      if (nl == nullptr) nl = end;
      const char* comma = static_cast<const char*>(std::memchr(q, ',', size_t(nl - q)));
      q = comma != nullptr ? comma : nl;
    }
    const std::string_view key(p, size_t(q - p));
    const std::string_view value = q < nl ? std::string_view(q + 1, size_t(nl - q - 1)) : std::string_view();
    const size_t size = size_t(nl - p) + (nl < end);
    const std::string_view line(p, size);
    if (first != '.') {
      if (holding_) {
        if (Status s = WriteHeld(); !s.ok()) return s;
      }
      if (pass_records == 0) pass_begin = size_t(p - lines.data());
      pass_end = size_t(p - lines.data()) + size;
      ++pass_records;
      pass_columns += key.starts_with(kLookupPrefix) ? 0 : CountColumns(value);
    } else {
      if (Status s = pass(); !s.ok()) return s;
      if (Status s = Record(key, value, line); !s.ok()) return s;
    }
    p += size;
  }
  return pass();
}

// The first hour of a month of a key: held from here on.
inline void RollupWriter::HoldMonth(std::string_view group, std::string_view time) {
  holding_ = true;
  month_ok_ = true;
  streaming_ = false;
  group_.clear();  // then append: assign() called the out-of-line _M_replace once a month of a key (docs/benchmarks.md)
  group_.append(group);
  month_[0] = time[0];
  month_[1] = time[1];
}

// The line appended to held_ and its columns to cols_; false when they are malformed.
inline bool RollupWriter::HoldLine(std::string_view key, std::string_view value, std::string_view line) {
  const size_t value_at = held_.size() + key.size() + 1;
  if (line.empty()) {
    held_.append(key).append(1, ',').append(value).append(1, '\n');
  } else {
    held_.append(line);
  }
  return ParseColumns(value_at, value.size());
}

// The error of a malformed value, from a ColumnReader (which says what is wrong); the
// columns parsed before it dropped.
Status RollupWriter::ColumnsError(std::string_view key, std::string_view value, size_t cols_before) {
  cols_.resize(cols_before);
  ColumnReader reader(value);
  Column c;
  while (reader.Next(&c)) {
  }
  const Status why = reader.status().ok() ? Status::Error("malformed columns") : reader.status();
  return why.Prefixed("key '" + Clipped(key, 200) + "': ");
}

// The hour just held (its n columns) counted in its day.
inline void RollupWriter::AddHour(std::string_view time, uint64_t n) {
  Day& d = days_.back();
  int day_of_month = 0, hour = 0;
  if (!RollupDayAndHour(time, &day_of_month, &hour)) {
    d.ok = false;  // no rollup can name this hour (the merge checks tokens before)
  } else {
    d.mask |= uint32_t(1) << hour;
  }
  d.line_end = held_.size();
  d.hours++;
  d.hour_columns += n;
  d.col_end = cols_.size();
}

Status RollupWriter::Record(std::string_view key, std::string_view value, std::string_view line) {
  // An hour record ends in `.{ymdh}`; anything else is looked at more closely.
  const size_t dot = key.size() > kYmdhSize && key[key.size() - kYmdhSize - 1] == '.' ? key.size() - kYmdhSize - 1
                                                                                    : key.rfind('.');
  const std::string_view time = key.substr(dot + 1);
  const std::string_view group = key.substr(0, dot + 1);
  if (time.size() != kYmdhSize) {  // a rollup in an input: this merge writes its own
    stats_.dropped++;
    return Status::OK();
  }
  if (holding_ && (group != group_ || time[0] != month_[0] || time[1] != month_[1])) {
    if (Status s = WriteHeld(); !s.ok()) return s;
  }
  if (!holding_) HoldMonth(group, time);
  if (days_.empty() || days_.back().symbol != time[2]) {
    if (Status s = FinishDay(); !s.ok()) return s;
    streaming_ = false;
    days_.push_back(Day{time[2], held_.size(), held_.size(), 0, 0, cols_.size(), cols_.size()});
  }
  if (streaming_) {
    const uint64_t n = CountColumns(value);
    return line.empty() ? out_->Add(key, value, n) : out_->AddLines(line, 1, n);
  }
  const size_t cols_before = cols_.size();
  if (!HoldLine(key, value, line)) return ColumnsError(key, value, cols_before);
  AddHour(time, cols_.size() - cols_before);
  if (held_.size() <= limits_.max_held_bytes) return Status::OK();
  return PastHeldLimit();
}

// Past the limit: no month rollup; the days before this one are written now.
Status RollupWriter::PastHeldLimit() {
  if (month_ok_) {
    month_ok_ = false;
    stats_.limited++;
    for (size_t i = 0; i + 1 < days_.size(); ++i) {
      if (Status s = WriteDay(days_[i]); !s.ok()) return s;
    }
    // Keep this day alone, at the front.
    Day last = days_.back();
    held_.erase(0, last.line_begin);
    for (size_t i = last.col_begin; i < last.col_end; ++i) cols_[i].name -= uint32_t(last.line_begin);
    cols_.erase(cols_.begin(), cols_.begin() + ptrdiff_t(last.col_begin));
    last.line_end -= last.line_begin;
    last.line_begin = 0;
    last.col_end -= last.col_begin;
    last.col_begin = 0;
    days_.assign(1, last);
    if (held_.size() <= limits_.max_held_bytes) return Status::OK();
  }
  // This day alone is past the limit: its hours so far, and the rest of them as they come.
  Day& day = days_.back();
  day.ok = false;
  stats_.limited++;
  if (Status s = out_->AddLines(held_, day.hours, day.hour_columns); !s.ok()) return s;
  held_.clear();
  cols_.clear();
  day.line_begin = day.line_end = day.col_begin = day.col_end = 0;
  day.summed = true;
  streaming_ = true;
  return Status::OK();
}

// `name:count name:count …` of held_ bytes [at, at + size) appended to cols_; false when it
// is malformed (the caller finds out why with a ColumnReader). Loops rather than memchr and
// from_chars: names and counts are a few bytes long. A count past int64 goes in as 0 and
// makes the day (days_.back()) wide: it is summed by SumExactly. One function (61 lines):
// the merge's hottest loop keeps p in a register throughout; a helper taking p by pointer
// put it in memory (docs/benchmarks.md, "Fewer instructions a record").
bool RollupWriter::ParseColumns(size_t at, size_t size) {
  const char* p = held_.data() + at;
  const char* const end = p + size;
  if (p == end) return true;
  static_assert(std::endian::native == std::endian::little, "the first match is the lowest byte");
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHighs = 0x8080808080808080ull;
  for (;;) {
    const char* name = p;
    // The name ends at the first ':' or ' ': looked for eight bytes at a time while eight
    // are left (the lowest byte flagged by the zero-byte test is the first match).
    while (end - p >= 8) {
      uint64_t word;
      std::memcpy(&word, p, 8);
      const uint64_t colon = word ^ (kOnes * ':'), space = word ^ (kOnes * ' ');
      const uint64_t hit = (((colon - kOnes) & ~colon) | ((space - kOnes) & ~space)) & kHighs;
      if (hit != 0) {
        p += __builtin_ctzll(hit) / 8;
        break;
      }
      p += 8;
    }
    if (end - p < 8) {
      while (p < end && *p != ':' && *p != ' ') ++p;
    }
    if (p == end || *p != ':' || p == name) return false;
    const uint32_t name_size = uint32_t(p - name);
    // Its first 8 bytes, big-endian, zero padded.
    uint64_t prefix = 0;
    if (end - name >= 8) {
      prefix = LoadBig(name);
      if (name_size < 8) prefix &= ~(~uint64_t(0) >> (8 * name_size));
    } else {
      for (uint32_t i = 0; i < name_size; ++i) prefix |= uint64_t(static_cast<unsigned char>(name[i])) << (56 - 8 * i);
    }
    ++p;
    const bool negative = p < end && *p == '-';
    if (negative) ++p;
    const char* digits = p;
    uint64_t v = 0;
    bool wide = false;  // past 2^64 (the rest of its digits are read below) or int64
    while (p < end && *p >= '0' && *p <= '9') {
      if (v > (UINT64_MAX - 9) / 10) {
        wide = true;
        break;
      }
      v = v * 10 + uint64_t(*p - '0');
      ++p;
    }
    if (p == digits) return false;
    if (wide || v > uint64_t(INT64_MAX) + (negative ? 1 : 0)) {
      p = ParseWideColumn(digits - negative, p, end);  // p by value: a pointer to it kept p in memory
      if (p == nullptr) return false;
      v = 0;
    }
    const int64_t count = negative ? int64_t(0 - v) : int64_t(v);
    cols_.push_back(Col{prefix, uint32_t(name - held_.data()), name_size, count});
    if (p == end) return true;
    if (*p != ' ' || p + 1 == end) return false;
    ++p;
  }
}

const char* RollupWriter::ParseWideColumn(const char* from, const char* p, const char* end) {
  while (p < end && *p >= '0' && *p <= '9') ++p;
  Int128 exact;
  if (!ParseInt128(std::string_view(from, size_t(p - from)), &exact)) return nullptr;
  days_.back().wide = true;
  return p;
}

bool RollupWriter::SameName(const Col& a, const Col& b) const {
  // Names hold no NUL byte: equal zero-padded prefixes of names of at most 8 bytes mean
  // equal names.
  if (a.prefix != b.prefix || a.size != b.size) return false;
  return a.size <= 8 || std::memcmp(held_.data() + a.name + 8, held_.data() + b.name + 8, a.size - 8) == 0;
}

bool RollupWriter::Sum(std::vector<Col>* cols, size_t begin, size_t* end) {
  Col* const first = cols->data() + begin;
  const size_t n = *end - begin;
  // Open addressing on the name (its prefix, or a hash of the whole past 8 bytes, so that
  // names sharing their first bytes do not pile up). Each slot holds 1 + the index of a
  // sum in first[0, out): a sum is written over a column already read (out <= i).
  const size_t capacity = std::bit_ceil(std::max<size_t>(16, 2 * n));
  const size_t mask = capacity - 1;
  slots_.assign(capacity, 0);
  const char* base = held_.data();
  size_t out = 0;
  for (size_t i = 0; i < n; ++i) {
    const Col c = first[i];
    const uint64_t h = c.size <= 8 ? c.prefix ^ c.size : XXH3_64bits(base + c.name, c.size);
    for (size_t slot = size_t((h * 0x9E3779B97F4A7C15ull) >> 32) & mask;; slot = (slot + 1) & mask) {
      const uint32_t at = slots_[slot];
      if (at == 0) {
        first[out++] = c;
        slots_[slot] = uint32_t(out);
        break;
      }
      Col& sum = first[at - 1];
      if (SameName(sum, c)) {
        if (__builtin_add_overflow(sum.count, c.count, &sum.count)) return false;
        break;
      }
    }
  }
  size_t kept = 0;
  for (size_t i = 0; i < out; ++i) {
    if (first[i].count != 0) first[kept++] = first[i];
  }
  *end = begin + kept;
  return true;
}

void RollupWriter::SortByName(Col* first, size_t n) const {
  const char* base = held_.data();
  // Distinct names: the prefix decides unless both are longer than 8 bytes and share it.
  auto less = [base](const Col& a, const Col& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    if (a.size <= 8 || b.size <= 8) return a.size < b.size;
    return std::string_view(base + a.name, a.size) < std::string_view(base + b.name, b.size);
  };
  if (n <= 24) {  // a day's few columns
    for (size_t i = 1; i < n; ++i) {
      const Col c = first[i];
      size_t j = i;
      for (; j > 0 && less(c, first[j - 1]); --j) first[j] = first[j - 1];
      first[j] = c;
    }
    return;
  }
  std::sort(first, first + n, less);
}

Status RollupWriter::FinishDay() {
  if (days_.empty()) return Status::OK();
  Day& d = days_.back();
  if (!d.summed) {
    d.summed = true;
    size_t end = d.col_end;
    // One hour's columns are their own sums: sorted, each name once, none zero. A sum
    // that leaves int64 makes the day wide: summed again exactly when it is written.
    if (d.hours > 1 && !d.wide && !Sum(&cols_, d.col_begin, &end)) {
      d.wide = true;
      end = d.col_end;
    }
    if (end - d.col_begin > limits_.max_columns) {
      d.ok = false;
    }
    cols_.resize(end);
    d.col_end = end;
    if (!d.ok) {
      stats_.limited++;
      if (month_ok_) {  // the month's sums would be wrong or larger still
        month_ok_ = false;
        stats_.limited++;
      }
    }
  }
  if (month_ok_) return Status::OK();
  // No month rollup: each day is written as soon as it is summed.
  for (const Day& day : days_) {
    if (Status s = WriteDay(day); !s.ok()) return s;
  }
  Drop();
  return Status::OK();
}

bool RollupWriter::Folds(uint64_t rollup_columns, uint64_t hour_columns) const {
  return rollup_columns > 0 && hour_columns >= limits_.min_fold * rollup_columns;
}

void RollupWriter::BeginRollup(const Day* day) {
  key_.assign(group_).append(month_, 2);
  value_.clear();
  if (day != nullptr) {
    key_.push_back(day->symbol);
    AppendRollupMask(&value_, 0, day->symbol, day->mask);
  } else {
    for (const Day& d : days_) AppendRollupMask(&value_, 0, d.symbol, d.mask);
  }
}

Status RollupWriter::WriteRollup(const Day* day, const std::vector<Col>& cols, size_t begin, size_t end) {
  BeginRollup(day);
  for (size_t i = begin; i < end; ++i) {
    AppendColumn(&value_, 0, std::string_view(held_.data() + cols[i].name, cols[i].size), cols[i].count);
  }
  // Rollup columns are not data points: shard.K.columns counts the hours' (docs/formats.md#rollup-records).
  return out_->Add(key_, value_, 0);
}

Status RollupWriter::SumExactly(const Day* day, size_t begin, size_t end, uint64_t hour_columns) {
  ColumnSums sums;  // in name order: the rollup's column order
  if (!SumColumnsOfLines(std::string_view(held_).substr(begin, end - begin), &sums)) {
    stats_.limited++;  // leaves 128 bits: readers sum the hours, and fail naming it
    return Status::OK();
  }
  uint64_t columns = 0;
  for (const auto& [name, sum] : sums) columns += sum != 0;
  if (columns > limits_.max_columns) {
    stats_.limited++;
    return Status::OK();
  }
  if (!Folds(columns, hour_columns)) {
    stats_.unfolded++;
    return Status::OK();
  }
  BeginRollup(day);
  for (const auto& [name, sum] : sums) {
    if (sum != 0) AppendColumn(&value_, 0, name, sum);
  }
  (day != nullptr ? stats_.days : stats_.months)++;
  return out_->Add(key_, value_, 0);
}

Status RollupWriter::WriteDay(const Day& d) {
  if (d.ok && d.hours >= 2 && d.wide) {
    if (Status s = SumExactly(&d, d.line_begin, d.line_end, d.hour_columns); !s.ok()) return s;
  } else if (d.ok && d.hours >= 2) {
    if (Folds(d.col_end - d.col_begin, d.hour_columns)) {
      SortByName(cols_.data() + d.col_begin, d.col_end - d.col_begin);
      if (Status s = WriteRollup(&d, cols_, d.col_begin, d.col_end); !s.ok()) return s;
      stats_.days++;
    } else {
      stats_.unfolded++;
    }
  }
  if (d.line_end == d.line_begin) return Status::OK();
  return out_->AddLines(std::string_view(held_).substr(d.line_begin, d.line_end - d.line_begin), d.hours,
                        d.hour_columns);
}

Status RollupWriter::WriteHeld() {
  if (Status s = FinishDay(); !s.ok()) return s;
  if (month_ok_ && !days_.empty()) {
    if (days_.size() >= 2) {
      uint64_t hour_columns = 0;
      bool wide = false;
      for (const Day& d : days_) {
        hour_columns += d.hour_columns;
        wide |= d.wide;
      }
      month_cols_.assign(cols_.begin(), cols_.end());  // every day's sums, back to back
      size_t end = month_cols_.size();
      if (wide || !Sum(&month_cols_, 0, &end)) {
        const Status s = SumExactly(nullptr, days_.front().line_begin, days_.back().line_end, hour_columns);
        if (!s.ok()) return s;
      } else if (end > limits_.max_columns) {
        stats_.limited++;
      } else if (Folds(end, hour_columns)) {
        SortByName(month_cols_.data(), end);
        if (Status s = WriteRollup(nullptr, month_cols_, 0, end); !s.ok()) return s;
        stats_.months++;
      } else {
        stats_.unfolded++;
      }
    }
    for (const Day& d : days_) {
      if (Status s = WriteDay(d); !s.ok()) return s;
    }
  }
  Drop();
  holding_ = false;
  return Status::OK();
}

void RollupWriter::Drop() {
  held_.clear();
  cols_.clear();
  days_.clear();
  // Keep the capacity of an ordinary month; give back what a huge one took.
  if (held_.capacity() > (size_t(4) << 20)) std::string().swap(held_);
  if (cols_.capacity() > (size_t(1) << 18)) std::vector<Col>().swap(cols_);
  if (month_cols_.capacity() > (size_t(1) << 18)) std::vector<Col>().swap(month_cols_);
}

Status RollupWriter::Finish() {
  if (!holding_) return Status::OK();
  return WriteHeld();
}

// ---------------------------------------------------------------------------------------
// CheckRollups: per subtotal key and month, the sums of its hours by day and by month
// against the rollup lines seen.

namespace {

struct MonthCheck {
  std::string group;  // `{subns}.{ns}|{key}.`
  std::string month;  // 2 symbols
  // time (2 or 3 symbols) → sums by subkey, exact in 128 bits.
  std::map<std::string, std::map<std::string, Int128>> sums;
  std::set<std::string> overflow;  // times whose sums left 128 bits: they can have no rollup
  std::map<std::string, RollupHours> hours;    // time → the hours seen
  std::map<std::string, std::string> rollups;  // time → value as written

  Status Verify() const {
    for (const auto& [time, value] : rollups) {
      std::string expected;
      if (auto h = hours.find(time); h != hours.end()) AppendRollupMasks(&expected, 0, h->second);
      auto it = sums.find(time);
      if (overflow.count(time) != 0) return Status::Error("rollup '" + group + time + "' sums past 128 bits");
      if (it != sums.end()) {
        for (const auto& [subkey, n] : it->second) {
          if (n != 0) AppendColumn(&expected, 0, subkey, n);
        }
      }
      if (expected != value) {
        return Status::Error("rollup '" + group + time + "' is '" + Clipped(value, 200) + "', its hours make '" +
                             Clipped(expected, 200) + "'");
      }
    }
    return Status::OK();
  }
};

}  // namespace

Status CheckRollups(std::string_view file) {
  MonthCheck m;
  std::string previous;
  size_t pos = 0;
  uint64_t line_no = 0;
  while (pos < file.size()) {
    ++line_no;
    size_t nl = file.find('\n', pos);
    if (nl == std::string_view::npos) return Status::Error("line " + std::to_string(line_no) + " has no newline");
    const std::string_view line = file.substr(pos, nl - pos);
    pos = nl + 1;
    Result<Line> parts = SplitLine(line);
    if (!parts.ok()) return parts.status().Prefixed("line " + std::to_string(line_no) + ": ");
    if (!previous.empty() && CompareKeys(previous, parts->key) >= 0) {
      return Status::Error("line " + std::to_string(line_no) + ": key '" + Clipped(parts->key, 200) + "' is out of order");
    }
    previous.assign(parts->key);
    if (!IsSubtotalKey(parts->key)) continue;
    const size_t dot = parts->key.rfind('.');
    const std::string_view group = parts->key.substr(0, dot + 1), time = parts->key.substr(dot + 1);
    if (time.size() < 2 || time.size() > kYmdhSize) {
      return Status::Error("line " + std::to_string(line_no) + ": '" + Clipped(parts->key, 200) +
                           "' has no 2-, 3- or 4-symbol time");
    }
    if (group != m.group || time.substr(0, 2) != m.month) {
      if (Status s = m.Verify(); !s.ok()) return s;
      m = MonthCheck{std::string(group), std::string(time.substr(0, 2)), {}, {}, {}, {}};
    }
    if (time.size() < kYmdhSize) {
      m.rollups.emplace(std::string(time), std::string(parts->value));
      continue;
    }
    if (!MarkRollupHour(time, &m.hours[std::string(time.substr(0, 3))]) ||
        !MarkRollupHour(time, &m.hours[std::string(time.substr(0, 2))])) {
      return Status::Error("line " + std::to_string(line_no) + ": '" + Clipped(parts->key, 200) +
                           "' has no day and hour symbols");
    }
    ColumnReader reader(parts->value);
    Column c;
    auto& day = m.sums[std::string(time.substr(0, 3))];
    auto& month = m.sums[std::string(time.substr(0, 2))];
    while (reader.Next(&c)) {
      if (!AddInt128(&day[std::string(c.name)], c.count)) m.overflow.emplace(time.substr(0, 3));
      if (!AddInt128(&month[std::string(c.name)], c.count)) m.overflow.emplace(time.substr(0, 2));
    }
    if (!reader.status().ok()) return reader.status().Prefixed("line " + std::to_string(line_no) + ": ");
  }
  return m.Verify();
}

}  // namespace clickatron::rebuild
