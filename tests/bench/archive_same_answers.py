#!/usr/bin/python3
"""Asks two archive servers the same /get questions and counts the differences
(docs/benchmarks.md#scale: the Slurm executor's archive against the local executor's).

    tests/bench/archive_same_answers.py PORT_A PORT_B KEYS_FILE
    tests/bench/archive_same_answers.py PORT_A PORT_B --sample DB_FILE N SEED

KEYS_FILE has one stored key per line (keys never hold a newline or a comma); --sample takes
the keys of N lines of DB_FILE at random (the line after a random byte offset, seeded; a
line's chance follows the length of the line before it, which is random enough here and
reads N pages instead of the whole file). Every key is
asked of both servers on one keep-alive connection each, at 127.0.0.1; status and body must
be the same. Prints the number of keys, found (200) and differing answers; exit 1 if any
answer differs or a server fails.
"""
import http.client
import os
import random
import sys
import time
import urllib.parse


def sample_keys(db_file, n, seed):
    rng = random.Random(seed)
    size = os.path.getsize(db_file)
    keys = set()
    with open(db_file, "rb") as f:
        for _ in range(20 * n):  # a file of fewer than n keys gives what it has
            if len(keys) == n:
                break
            f.seek(rng.randrange(size))
            f.readline()  # the rest of the line the offset fell in
            line = f.readline() or (f.seek(0), f.readline())[1]
            keys.add(line.split(b",", 1)[0])
    return sorted(keys)


def main():
    if len(sys.argv) == 4:
        with open(sys.argv[3], "rb") as f:
            keys = [line.rstrip(b"\n") for line in f if line.strip()]
    elif len(sys.argv) == 7 and sys.argv[3] == "--sample":
        keys = sample_keys(sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
    else:
        sys.exit(__doc__)
    port_a, port_b = int(sys.argv[1]), int(sys.argv[2])
    conns = [http.client.HTTPConnection("127.0.0.1", p, timeout=30) for p in (port_a, port_b)]
    found = differ = 0
    bytes_read = 0
    started = time.monotonic()
    for key in keys:
        path = "/get?key=" + urllib.parse.quote_from_bytes(key, safe="")
        answers = []
        for c in conns:
            c.request("GET", path)
            r = c.getresponse()
            answers.append((r.status, r.read()))
        if answers[0] != answers[1]:
            differ += 1
            if differ <= 5:
                print(f"differs: {key[:100]!r}: {answers[0][0]} {len(answers[0][1])} B "
                      f"against {answers[1][0]} {len(answers[1][1])} B")
        if answers[0][0] == 200:
            found += 1
        elif answers[0][0] != 404:
            print(f"unexpected status {answers[0][0]} for {key[:100]!r}")
            differ += 1
        bytes_read += len(answers[0][1])
    elapsed = time.monotonic() - started
    print(f"keys {len(keys)}, found {found}, differing {differ}, "
          f"{bytes_read} answer bytes, {elapsed:.1f} s")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
