#!/usr/bin/env python3
"""Generates a realistic archive file for the clickatron-archive benchmark (docs/benchmarks.md#archive).

Writes, into OUT_DIR:
  data.csv      LINES archive records (docs/formats.md#archive-records), sorted by key: per
                user a total record `u|KEY` with 1-40 hour columns, one subtotal record per hour
                `c.u|KEY.YMDH` (country) with 1-5 columns, and for hashed keys (30%) the
                lookup record `_l|HASH`.
  keys.txt      a random sample of existing keys, percent-encoded for a query string
  prefixes.txt  a sample of /fwmatch prefixes `c.u|KEY.` (every subtotal of one user)

Deterministic (seeded). Shows progress on stderr and ends with a summary.
usage: archive_gen.py OUT_DIR [LINES]   (default 5,000,000 lines)
"""
import os
import random
import sys
import time

import bench_harness  # noqa: F401  (ops/lib on sys.path)
from formats import key_hash, ymdh_fields  # docs/formats.md (ops/lib/formats.py)

COUNTRIES = sorted(["US", "DE", "GB", "FR", "CA", "JP", "BR", "IN", "None", "AU", "NL", "ES",
                    "IT", "SE", "MX", "KR", "RU", "PL", "AR", "ZA"])
LITERAL = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def hours_from(rng, count):
    """count consecutive-ish hours (ascending) starting at a random hour of 2012-2025."""
    year = rng.randint(2012, 2025)
    month = rng.randint(1, 12)
    day = rng.randint(1, 28)
    hour = rng.randint(0, 23)
    out = []
    while len(out) < count:
        out.append(ymdh_fields(year, month, day, hour))
        hour += rng.choice((1, 1, 1, 2, 5))
        while hour > 23:
            hour -= 24
            day += 1
            if day > 28:
                day = 1
                month += 1
                if month > 12:
                    month = 1
                    year = min(year + 1, 2031)
    return out


def quote(key):
    return "".join(c if c.isalnum() or c in ".|_-" else "%%%02X" % ord(c) for c in key)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    lines_wanted = int(sys.argv[2]) if len(sys.argv) > 2 else 5_000_000
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(20120325)
    started = time.monotonic()
    records = []  # (key, value)
    users = 0
    seen = set()
    while len(records) < lines_wanted:
        users += 1
        if rng.random() < 0.3:
            original = "http://example.com/%d/%s" % (users, rng.choice(LITERAL) * rng.randint(1, 30))
            key = key_hash(original)
            records.append(("_l|" + key, original))
        else:
            key = "".join(rng.choice(LITERAL) for _ in range(rng.randint(3, 11)))
        if key in seen:
            continue
        seen.add(key)
        hours = hours_from(rng, rng.randint(1, 40))
        total_cols = []
        for h in hours:
            subs = rng.sample(COUNTRIES, rng.randint(1, 5))
            subs.sort()
            counts = [rng.randint(1, 500) for _ in subs]
            total_cols.append("%s:%d" % (h, sum(counts)))
            records.append(("c.u|%s.%s" % (key, h),
                            " ".join("%s:%d" % (s, n) for s, n in zip(subs, counts))))
        records.append(("u|" + key, " ".join(total_cols)))
        if users % 20000 == 0:
            print("archive_gen: %d users, %d records" % (users, len(records)), file=sys.stderr)
    del records[lines_wanted:]
    print("archive_gen: sorting %d records by key" % len(records), file=sys.stderr)
    records.sort(key=lambda r: r[0].encode())
    path = os.path.join(out_dir, "data.csv")
    size = 0
    with open(path + ".tmp", "w", encoding="utf-8", newline="\n") as f:
        for k, v in records:
            line = "%s,%s\n" % (k, v)
            size += len(line)
            f.write(line)
    os.replace(path + ".tmp", path)
    sample = rng.sample(range(len(records)), min(200_000, len(records)))
    with open(os.path.join(out_dir, "keys.txt"), "w") as f:
        for i in sample:
            f.write(quote(records[i][0]) + "\n")
    with open(os.path.join(out_dir, "prefixes.txt"), "w") as f:
        n = 0
        for i in sample:
            k = records[i][0]
            if k.startswith("u|"):
                f.write(quote("c." + k + ".") + "\n")
                n += 1
                if n == 50_000:
                    break
    print("archive_gen: wrote %s: %d records, %d bytes, %d users in %.1f s"
          % (path, len(records), size, users, time.monotonic() - started), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
