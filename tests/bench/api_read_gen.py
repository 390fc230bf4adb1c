#!/usr/bin/env python3
"""Data for the clickatron-api read-path benchmark (docs/benchmarks.md#api-read-path).

Writes, into OUT_DIR:
  shard-0.csv     one archive file of LINES records (docs/formats.md#archive-records, sorted
                  by key): the archive benchmark's filler (tests/bench/archive_gen.py: users with totals,
                  country subtotals and lookups) merged with the query keys below
  manifest        generation + last_day = 2024-06-29 (the watermark W)
  realtime.csv    realtime-format lines of 2024-06-30 00:00..20:00 for the query keys
  series.txt      /series query keys: bench|s0000..s0999, each a total record of hourly
                  columns over the 60 days up to W
  breakdown.txt   /breakdown query keys: bench|b00..b19, each with a subtotal record `c` of 50
                  subkeys (45 literal, 5 hashed with lookup records) for every hour of 35 days
  ref.txt         unit_reference_ts for the queries: 2024-06-30 20:00 UTC (so every query
                  reads 29-30 days from the archive and today's hours from realtime)

Deterministic (seeded). Progress on stderr, a summary at the end.
usage: api_read_gen.py OUT_DIR [LINES]   (default 5,000,000)
"""
import heapq
import os
import random
import subprocess
import sys
import time
from datetime import datetime, timezone

import bench_harness  # noqa: F401  (ops/lib on sys.path)
from formats import key_hash, ymdh  # docs/formats.md (ops/lib/formats.py)

W = datetime(2024, 6, 29, tzinfo=timezone.utc)
REF = int(datetime(2024, 6, 30, 20, tzinfo=timezone.utc).timestamp())
SERIES_KEYS = 1000
BREAKDOWN_KEYS = 20
SUBKEYS = 50


def hours(days_before_w, last_ts):
    first = last_ts - days_before_w * 86400 + 3600
    return list(range(first, last_ts + 1, 3600))


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    lines = int(sys.argv[2]) if len(sys.argv) > 2 else 5_000_000
    os.makedirs(out, exist_ok=True)
    started = time.monotonic()
    rng = random.Random(20240630)
    last_archive_hour = int(W.timestamp()) + 23 * 3600
    today = [REF - (20 - h) * 3600 for h in range(21)]
    records, live = [], []
    for i in range(SERIES_KEYS):
        key = "s%04d" % i
        cols = " ".join("%s:%d" % (ymdh(h), rng.randint(1, 900)) for h in hours(60, last_archive_hour))
        records.append(("bench|" + key, cols))
        live += ["bench|%s.%s,%d" % (key, ymdh(h), rng.randint(1, 900)) for h in today]
    subkeys = ["k%02d" % i for i in range(SUBKEYS - 5)]
    originals = ["https://referrer-%d.example.com/some/long/path" % i for i in range(5)]
    for o in originals:
        subkeys.append(key_hash(o))
        records.append(("_l|" + key_hash(o), o))
    subkeys.sort()
    for i in range(BREAKDOWN_KEYS):
        key = "b%02d" % i
        total = []
        for h in hours(35, last_archive_hour):
            counts = [rng.randint(1, 50) for _ in subkeys]
            total.append("%s:%d" % (ymdh(h), sum(counts)))
            records.append(("c.bench|%s.%s" % (key, ymdh(h)),
                            " ".join("%s:%d" % (s, n) for s, n in zip(subkeys, counts))))
        records.append(("bench|" + key, " ".join(total)))
        for h in today:
            n_total = 0
            for s in subkeys:
                n = rng.randint(1, 50)
                n_total += n
                live.append("c.bench|%s.%s.%s,%d" % (key, s, ymdh(h), n))
            live.append("bench|%s.%s,%d" % (key, ymdh(h), n_total))
    records.sort(key=lambda r: r[0].encode())
    filler_dir = os.path.join(out, "filler")
    filler_lines = lines - len(records)
    filler = os.path.join(filler_dir, "data.csv")
    if not os.path.exists(filler) or sum(1 for _ in open(filler, "rb")) != filler_lines:
        here = os.path.dirname(os.path.abspath(__file__))
        subprocess.run([sys.executable, os.path.join(here, "archive_gen.py"), filler_dir, str(filler_lines)],
                       check=True)
    print("api_read_gen: merging %d query records into %d filler records" % (len(records), filler_lines),
          file=sys.stderr)

    def filler_lines_iter():
        with open(filler, "rb") as f:
            for line in f:
                yield line.split(b",", 1)[0], line

    ours = ((k.encode(), ("%s,%s\n" % (k, v)).encode()) for k, v in records)
    size = count = 0
    path = os.path.join(out, "shard-0.csv")
    with open(path + ".tmp", "wb") as f:
        for _, line in heapq.merge(filler_lines_iter(), ours, key=lambda kl: kl[0]):
            f.write(line)
            size += len(line)
            count += 1
    os.replace(path + ".tmp", path)
    with open(os.path.join(out, "manifest"), "w") as f:
        f.write("generation = bench-%s\nlast_day = %s\nshards = 1\n" % (W.strftime("%Y%m%d"), W.strftime("%Y-%m-%d")))
    with open(os.path.join(out, "realtime.csv"), "w") as f:
        f.write("".join(l + "\n" for l in live))
    with open(os.path.join(out, "series.txt"), "w") as f:
        f.write("".join("s%04d\n" % i for i in range(SERIES_KEYS)))
    with open(os.path.join(out, "breakdown.txt"), "w") as f:
        f.write("".join("b%02d\n" % i for i in range(BREAKDOWN_KEYS)))
    with open(os.path.join(out, "ref.txt"), "w") as f:
        f.write("%d\n" % REF)
    print("api_read_gen: wrote %s: %d records, %d bytes; %d realtime lines; in %.1f s"
          % (path, count, size, len(live), time.monotonic() - started), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
