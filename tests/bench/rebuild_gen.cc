// rebuild_gen: writes N realtime records (the format `clickatron-rebuild import` reads) of
// a realistic day to stdout, for the import + merge benchmark (docs/benchmarks.md).
//
//   rebuild_gen [--records N] [--users U] [--day YYYY-MM-DD] [--seed S] > day.csv
//
// The mix: U users (90% short literal names, 10% long ones that are hashed), for each
// hour of the day and each user a total, one or two country subtotals (`c.u`, 40 codes,
// skewed) and one or two referrer subtotals (`r.u`, 5000 referrers, skewed; long URLs
// hashed), in hour-major order like a day of events; then one lookup record per hashed
// value. Generation stops after N records (lookups included).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "keyformat/records.h"
#include "keyformat/stored_key.h"
#include "keyformat/ymdh.h"

using namespace clickatron;

namespace {

struct Value {
  std::string stored;
  std::string original;  // non-empty when hashed
};

Value Make(const std::string& original) {
  Value v;
  v.stored = StoredKey(original);
  if (!IsLiteralKey(original)) {
    v.original.clear();
    AppendEscapedLookupValue(&v.original, original);
  }
  return v;
}

// Zipf-like index in [0, n): small indexes are much more likely.
size_t Skewed(std::mt19937_64& rng, size_t n) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double x = u(rng);
  return std::min(n - 1, size_t(double(n) * x * x * x));
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t records = 100000000, users = 1000000, seed = 1;
  std::string day = "2012-03-25";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--records")) records = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--users")) users = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--seed")) seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--day")) day = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: rebuild_gen [--records N] [--users U] [--day YYYY-MM-DD] [--seed S]\n");
      return 2;
    }
  }
  Result<int64_t> d = ParseDay(day);
  if (!d.ok()) {
    std::fprintf(stderr, "rebuild_gen: %s\n", d.status().message().c_str());
    return 2;
  }
  std::mt19937_64 rng(seed);
  std::vector<Value> user_values;
  user_values.reserve(users);
  for (uint64_t u = 0; u < users; ++u) {
    char buf[64];
    if (u % 10 == 9) std::snprintf(buf, sizeof buf, "user.%llu@example.com", static_cast<unsigned long long>(u));
    else std::snprintf(buf, sizeof buf, "u%llx", static_cast<unsigned long long>(u));
    user_values.push_back(Make(buf));
  }
  static const char* kCountries[] = {"US", "JP", "DE", "GB", "FR", "BR", "IN", "CN", "CA", "AU",
                                     "ES", "IT", "NL", "SE", "NO", "DK", "FI", "PL", "RU", "MX",
                                     "AR", "CL", "CO", "ZA", "EG", "NG", "KE", "TR", "IL", "AE",
                                     "SA", "KR", "TW", "HK", "SG", "MY", "TH", "VN", "ID", "PH"};
  std::vector<Value> referrers;
  referrers.push_back(Make("direct"));
  referrers.push_back(Make("google"));
  for (int r = 2; r < 5000; ++r) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "http://site%d.example.com/path/%d", r, r * 7919 % 10007);
    referrers.push_back(Make(buf));
  }
  std::string out;
  out.reserve(1 << 22);
  uint64_t written = 0;
  std::vector<char> user_hashed(users, 0), ref_used(referrers.size(), 0);
  for (int hour = 0; hour < 24 && written < records; ++hour) {
    Result<Ymdh> t = EncodeYmdh(*d * kSecondsPerDay + hour * kSecondsPerHour);
    const std::string_view ymdh = t->view();
    for (uint64_t u = 0; u < users && written < records; ++u) {
      const Value& user = user_values[u];
      const int n = 1 + int(rng() % 9);
      auto line = [&](std::string_view key_part, int64_t count) {
        out.append(key_part);
        out.push_back(',');
        AppendCount(&out, count);
        out.push_back('\n');
        ++written;
      };
      std::string key;
      AppendTotalKey(&key, "u", user.stored, ymdh);
      line(key, n);
      const int countries = rng() % 10 < 6 ? 2 : 1;
      for (int c = 0; c < countries && written < records; ++c) {
        key.clear();
        AppendSubtotalKey(&key, "c", "u", user.stored, kCountries[(Skewed(rng, 40) + size_t(c) * 7) % 40], ymdh);
        line(key, countries == 1 ? n : (c == 0 ? n / 2 + 1 : n - n / 2 - 1));
      }
      const int refs = rng() % 100 < 55 ? 2 : 1;
      for (int r = 0; r < refs && written < records; ++r) {
        const size_t ri = (Skewed(rng, referrers.size()) + size_t(r) * 17) % referrers.size();
        key.clear();
        AppendSubtotalKey(&key, "r", "u", user.stored, referrers[ri].stored, ymdh);
        line(key, 1 + int(rng() % 3));
        ref_used[ri] = 1;
      }
      if (!user.original.empty()) user_hashed[u] = 1;
      if (out.size() > (1 << 22) - 512) {
        std::fwrite(out.data(), 1, out.size(), stdout);
        out.clear();
      }
    }
  }
  auto lookup = [&](const Value& v) {
    out += "_l|" + v.stored + "," + v.original + "\n";
    if (out.size() > (1 << 22) - 512) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  };
  for (uint64_t u = 0; u < users; ++u) {
    if (user_hashed[u]) lookup(user_values[u]);
  }
  for (size_t r = 0; r < referrers.size(); ++r) {
    if (ref_used[r] && !referrers[r].original.empty()) lookup(referrers[r]);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}
