"""clickatron-rebuild offline steps: import, merge, compact, and their failure modes.

Runs the real binary on temp work directories; the golden seed example must come out of
import + merge byte for byte (SPEC 3.4, shared/golden/seed-example).
"""
import os
import zlib

import pytest

from harness import GOLDEN, run

SEED = os.path.join(GOLDEN, "seed-example")


def rebuild(*args, input=None, check=True):
    r = run("clickatron-rebuild", list(args), input=input, check=False)
    if check and r.returncode != 0:
        raise AssertionError(f"clickatron-rebuild {args} exited {r.returncode}: {r.stderr.decode()}")
    return r


def read(path):
    with open(path, "rb") as f:
        return f.read()


def shard_key(archive_key):
    """SPEC 2.5 shard key of an archive key: `{ns}|{key}` or the whole `_l|hash`."""
    if archive_key.startswith("_l|"):
        return archive_key
    head, _, rest = archive_key.partition("|")
    ns = head.split(".")[-1]
    return ns + "|" + rest.split(".")[0]


def test_import_merge_one_shard_is_the_golden_archive(tmp_path):
    work = tmp_path / "w"
    r = rebuild("import", "--work", work, "--input", os.path.join(SEED, "history.csv"), "--memory", "16M")
    assert b"14 records" in r.stdout
    rebuild("merge", "--work", work)
    assert read(work / "merged" / "shard-0.csv") == read(os.path.join(SEED, "archive.csv"))


def test_import_merge_two_shards_split_the_golden_lines(tmp_path):
    work = tmp_path / "w"
    rebuild("import", "--work", work, "--input", os.path.join(SEED, "history.csv"), "--archive-shards", "2")
    rebuild("merge", "--work", work, "--archive-shards", "2")
    golden = read(os.path.join(SEED, "archive.csv")).decode().splitlines()
    union = []
    for k in range(2):
        lines = read(work / "merged" / f"shard-{k}.csv").decode().splitlines()
        assert lines == sorted(lines, key=lambda l: l.split(",", 1)[0].encode())
        for line in lines:
            assert zlib.crc32(shard_key(line.split(",", 1)[0]).encode()) % 2 == k, line
        union += lines
    assert sorted(union) == sorted(golden)
    assert all(read(work / "merged" / f"shard-{k}.csv") for k in range(2))  # both hold data


def test_import_from_stdin_equals_import_from_file(tmp_path):
    work = tmp_path / "w"
    rebuild("import", "--work", work, "--input", "-", input=read(os.path.join(SEED, "history.csv")))
    rebuild("merge", "--work", work)
    assert read(work / "merged" / "shard-0.csv") == read(os.path.join(SEED, "archive.csv"))
