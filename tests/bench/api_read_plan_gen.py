#!/usr/bin/env python3
"""Data for the read-plan benchmark (tests/bench/api_read_plan_load.sh, docs/benchmarks.md#api-read-plan).

Writes, into OUT_DIR:
  rollups/shard-0.csv  one archive file (docs/formats.md#archive-records, sorted by key):
                       bench|long — 5 years of hourly history up to W with a subtotal record
                       `c` of 50 subkeys (45 literal, 5 hashed with lookup records) every
                       hour, and its day and month rollup records (docs/formats.md#rollup-records);
                       bench|z00000..z{SERIES_KEYS-1} — totals of every hour of the 40 days
                       up to W
  rollups/manifest     generation, last_day = 2024-06-29 (W), rollups = 1
  hours/shard-0.csv    the same file (a hard link), and a manifest without rollups: the
  hours/manifest       hour-only plan over the same records
  realtime.csv         realtime-format lines of 2024-06-30 00:00..20:00: bench|long's
                       subtotals and the 1,000 most popular series keys' totals
  zipf.txt             200,000 series keys drawn with Zipf (s = 1.1) popularity over
                       1,000,000 keys: ranks beyond SERIES_KEYS name keys without data
  ref.txt              unit_reference_ts: 2024-06-30 20:00 UTC

Deterministic (seeded). usage: api_read_plan_gen.py OUT_DIR [SERIES_KEYS]  (default 10,000)
"""
import bisect
import os
import random
import sys
import time
from datetime import datetime, timezone

import bench_harness  # noqa: F401  (ops/lib and tests/ on sys.path)
from formats import key_hash, ymdh  # docs/formats.md (ops/lib/formats.py)
from rollups import mask_value  # docs/formats.md#rollup-records (tests/rollups.py)

W = datetime(2024, 6, 29, tzinfo=timezone.utc)
REF = int(datetime(2024, 6, 30, 20, tzinfo=timezone.utc).timestamp())
YEARS = 5
SUBKEYS = 50
ZIPF_KEYS = 1_000_000
ZIPF_S = 1.1
ZIPF_DRAWS = 200_000


def columns(pairs):
    return " ".join(f"{name}:{n}" for name, n in sorted(pairs.items(), key=lambda kv: kv[0].encode()))


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    series_keys = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    started = time.monotonic()
    rng = random.Random(20261125)
    last_hour = int(W.timestamp()) + 23 * 3600
    first_hour = last_hour - YEARS * 365 * 86400 + 3600
    names = [f"s{i:02d}" for i in range(SUBKEYS - 5)]
    lookups = {}
    for i in range(5):
        original = f"http://example.com/{i}"
        names.append(key_hash(original))
        lookups[names[-1]] = original
    weights = [1.0 / (i + 1) for i in range(SUBKEYS)]
    records = {}

    # bench|long: every hour, 50 subkeys, with day and month rollups.
    total, periods, hours = [], {}, {}
    for h in range(first_hour, last_hour + 1, 3600):
        token = ymdh(h)
        cols = {name: 1 + int(200 * w * rng.random()) for name, w in zip(names, weights)}
        records[f"c.bench|long.{token}"] = columns(cols)
        total.append(f"{token}:{sum(cols.values())}")
        for period in (token[:2], token[:3]):
            hours.setdefault(period, []).append(token)
            acc = periods.setdefault(period, {})
            for name, n in cols.items():
                acc[name] = acc.get(name, 0) + n
    records["bench|long"] = " ".join(total)
    for period, acc in periods.items():
        records[f"c.bench|long.{period}"] = mask_value(hours[period]) + " " + columns(acc)
    for h, original in lookups.items():
        records[f"_l|{h}"] = original
    print(f"api_read_plan_gen: bench|long: {len(total)} hours, {len(periods)} rollups "
          f"({time.monotonic() - started:.0f} s)", file=sys.stderr)

    # Series keys: 40 days of hours each.
    for k in range(series_keys):
        cols = " ".join(f"{ymdh(h)}:{1 + rng.randrange(50)}" for h in range(last_hour - 40 * 86400 + 3600, last_hour + 1, 3600))
        records[f"bench|z{k:05d}"] = cols
    print(f"api_read_plan_gen: {series_keys} series keys ({time.monotonic() - started:.0f} s)", file=sys.stderr)

    os.makedirs(os.path.join(out, "rollups"), exist_ok=True)
    os.makedirs(os.path.join(out, "hours"), exist_ok=True)
    path = os.path.join(out, "rollups", "shard-0.csv")
    with open(path + ".tmp", "w") as f:
        for key in sorted(records, key=lambda k: k.encode()):
            f.write(f"{key},{records[key]}\n")
    os.replace(path + ".tmp", path)
    hours_path = os.path.join(out, "hours", "shard-0.csv")
    if os.path.exists(hours_path):
        os.remove(hours_path)
    os.link(path, hours_path)
    for name, flag in (("rollups", 1), ("hours", 0)):
        with open(os.path.join(out, name, "manifest"), "w") as f:
            f.write(f"generation = 20240629-bench{flag}\nlast_day = 2024-06-29\nrollups = {flag}\n")

    # Today's realtime hours.
    with open(os.path.join(out, "realtime.csv"), "w") as f:
        for h in range(REF - 20 * 3600, REF + 1, 3600):
            token = ymdh(h)
            for name in names:
                f.write(f"c.bench|long.{name}.{token},{1 + rng.randrange(100)}\n")
            f.write(f"bench|long.{token},{1 + rng.randrange(5000)}\n")
            for k in range(min(1000, series_keys)):
                f.write(f"bench|z{k:05d}.{token},{1 + rng.randrange(50)}\n")

    # Zipf-popular series keys.
    cdf, acc = [], 0.0
    for r in range(1, ZIPF_KEYS + 1):
        acc += 1.0 / r ** ZIPF_S
        cdf.append(acc)
    with open(os.path.join(out, "zipf.txt"), "w") as f:
        for _ in range(ZIPF_DRAWS):
            r = bisect.bisect_left(cdf, rng.random() * acc)
            f.write(f"z{r:05d}\n" if r < series_keys else f"n{r:07d}\n")
    with open(os.path.join(out, "ref.txt"), "w") as f:
        f.write(f"{REF}\n")
    print(f"api_read_plan_gen: done in {time.monotonic() - started:.0f} s, "
          f"{os.path.getsize(path)} bytes, {len(records)} records", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
