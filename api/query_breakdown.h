// Breakdown arithmetic: subtotals summed per subkey over a query's hours (docs/api.md#api-breakdown
// /breakdown), the top-N ranking, and the JSON of the answer. Pure code.
//
// The archive total record is the index of which subtotal records exist: only its hours in
// range (and <= W) are fetched, as `{sub}.{ns}|{key}.{ymdh}` records of `subkey:n` columns.
// Realtime answers an /fwmatch of `{sub}.{ns}|{key}.` with `{sub}.{ns}|{key}.{subkey}.{ymdh},n`
// lines, of which only hours in range and of days > W count; or, asked for those hours
// alone, an /fwsum with their sums, `{subkey},n` lines. Sums are kept per stored subkey, as
// views into the backend bodies (the caller keeps them alive).
//
// Ranking: largest sum first, ties by the subkey as shown (the original for a hashed subkey),
// at most `limit`; subkeys whose sum is 0 are left out. Since showing a hashed subkey needs
// its lookup record, Candidates() returns just the subkeys that can still make the cut — the
// top `limit` and everything tied with the last of them — and only those are looked up.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "api/query_params.h"
#include "api/query_plan.h"
#include "base/int128.h"
#include "base/status.h"

namespace clickatron {

struct SubkeyCount {
  std::string_view stored;
  Int128 value = 0;
};

struct BreakdownEntry {
  std::string subkey;  // as shown
  Int128 value = 0;
  bool operator==(const BreakdownEntry&) const = default;
};

class BreakdownSum {
 public:
  // rollups: the time tokens of the day and month rollup records to count (CollectTokens of
  // rollup_plan.h: their masks were checked against the index); archive bodies may then hold
  // rollup records, and one whose token is not among them is skipped (its hours are read
  // instead). Without, a record whose time is not a YMDH hour is malformed. The set must
  // outlive the sum.
  BreakdownSum(HourRange range, int64_t watermark, const std::unordered_set<std::string_view>* rollups = nullptr)
      : range_(range), watermark_(watermark), rollups_(rollups) {}

  // An archive /mget body of subtotal records; prefix = "{sub}.{ns}|{key}.". Hour records
  // count when their hour is in range and of a day <= W; day and month rollup records
  // (rollup_plan.h, only those among rollups) when every hour of their period is, their
  // sums without their mask (keyformat/rollup_hours.h).
  Status AddArchive(std::string_view body, std::string_view prefix);
  // A realtime /fwmatch body of subtotal keys; prefix = "{sub}.{ns}|{key}.".
  Status AddRealtime(std::string_view body, std::string_view prefix);
  // A realtime /fwsum body: `subkey,sum` lines, already of the hours in range past W (the
  // query asked for exactly those, docs/api.md#realtime-fwsum).
  Status AddRealtimeSums(std::string_view body);

  // The subkeys that can be in the top `limit`, largest first (ties by stored bytes).
  std::vector<SubkeyCount> Candidates(int limit) const;
  size_t subkeys() const { return sums_.size(); }
  // The first stored subkey whose sum left 128 bits (sums are exact,
  // docs/formats.md#counts); empty when none did. The answer is then an error.
  const std::string& overflow() const { return overflow_; }
  // Every subkey's sum added up (a leaderboard's namespace total); false when it leaves
  // 128 bits.
  bool Total(Int128* total) const;

 private:
  void Add(std::string_view subkey, Int128 n);

  HourRange range_;
  int64_t watermark_;
  const std::unordered_set<std::string_view>* rollups_;
  std::unordered_map<std::string_view, Int128> sums_;
  std::string overflow_;
};

// The archive keys of the subtotal records to fetch: one per hour of the total record's
// columns inside range with a day <= w, in time order.
Status ArchiveSubtotalKeys(std::string_view total_value, HourRange range, int64_t w,
                           std::string_view sub, std::string_view ns, std::string_view stored_key,
                           std::vector<std::string>* keys);

// Ranks candidates under their shown names: shown(stored) gives the original of a hashed
// subkey, or the stored bytes. Largest first, ties by shown name, at most limit.
std::vector<BreakdownEntry> RankBreakdown(const std::vector<SubkeyCount>& candidates, int limit,
                                          const std::function<std::string(std::string_view)>& shown);

// The `data` object of a /breakdown answer: ns ... tz_offset, "sub", "breakdown".
std::string BreakdownJson(const QueryParams& q, const std::vector<BreakdownEntry>& entries);

}  // namespace clickatron
