"""clickatron-rebuild offline steps: import, merge, compact, and their failure modes.

Runs the real binary on temp work directories; the golden seed example must come out of
import + merge byte for byte (tests/golden/seed-example), its rollup lines
(docs/formats.md#rollup-records) aside, and every rollup must be the sum of its hours.
"""
import os
import subprocess

import pytest

from formats import shard_key, shard_of
from harness import GOLDEN, run
from rollups import check_rollups, due_rollups, hours_only, rollups_of

SEED = os.path.join(GOLDEN, "seed-example")


def rebuild(*args, input=None, check=True):
    r = run("clickatron-rebuild", list(args), input=input, check=False)
    if check and r.returncode != 0:
        raise AssertionError(f"clickatron-rebuild {args} exited {r.returncode}: {r.stderr.decode()}")
    return r


def read(path):
    with open(path, "rb") as f:
        return f.read()


def merged_hours(path):
    """A merged file's bytes without its rollup lines, once they are checked."""
    data = read(path)
    check_rollups(data)
    return hours_only(data)


def test_import_merge_one_shard_is_the_golden_archive(tmp_path):
    work = tmp_path / "w"
    r = rebuild("import", "--work", work, "--input", os.path.join(SEED, "history.csv"), "--memory", "16M")
    assert b"14 records" in r.stdout
    rebuild("merge", "--work", work)
    assert merged_hours(work / "merged" / "shard-0.csv") == read(os.path.join(SEED, "archive.csv"))


def test_import_merge_two_shards_split_the_golden_lines(tmp_path):
    work = tmp_path / "w"
    rebuild("import", "--work", work, "--input", os.path.join(SEED, "history.csv"), "--archive-shards", "2")
    rebuild("merge", "--work", work, "--archive-shards", "2")
    golden = read(os.path.join(SEED, "archive.csv")).decode().splitlines()
    union = []
    for k in range(2):
        lines = merged_hours(work / "merged" / f"shard-{k}.csv").decode().splitlines()
        assert lines == sorted(lines, key=lambda l: l.split(",", 1)[0].encode())
        for line in lines:
            assert shard_of(shard_key(line.split(",", 1)[0]), 2) == k, line
        union += lines
    assert sorted(union) == sorted(golden)
    assert all(read(work / "merged" / f"shard-{k}.csv") for k in range(2))  # both hold data


def test_import_from_stdin_equals_import_from_file(tmp_path):
    work = tmp_path / "w"
    rebuild("import", "--work", work, "--input", "-", input=read(os.path.join(SEED, "history.csv")))
    rebuild("merge", "--work", work)
    assert merged_hours(work / "merged" / "shard-0.csv") == read(os.path.join(SEED, "archive.csv"))


def write(path, text):
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def segments(work):
    return sorted(p.name for p in (work / "segments").iterdir())


def test_malformed_lines_are_reported_with_line_numbers_and_nothing_is_imported(tmp_path):
    work = tmp_path / "w"
    src = write(tmp_path / "h.csv", "u|a.c3p0,1\nu|a.c3p1\nu|a.zzzz,1\nu|b.c3p0,x\nu|b.c3p1,2\n")
    r = rebuild("import", "--work", work, "--input", src, check=False)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "line 2: no ',' between key and value" in err
    assert "import aborted at line 2" in err and "nothing was imported" in err
    assert segments(work) == []
    r = rebuild("import", "--work", work, "--input", src, "--max-errors", "2", check=False)
    assert r.returncode == 1 and "import aborted at line 4" in r.stderr.decode()
    assert "line 3: key 'u|a.zzzz' is malformed" in r.stderr.decode()
    assert segments(work) == []
    r = rebuild("import", "--work", work, "--input", src, "--max-errors", "3")
    assert b"3 malformed line(s) skipped" in r.stdout
    rebuild("merge", "--work", work)
    assert read(work / "merged" / "shard-0.csv") == b"u|a,c3p0:1\nu|b,c3p1:2\n"


def test_malformed_lines_read_by_several_threads_are_reported_in_input_order(tmp_path):
    # ~12 MB: many chunks, taken by two threads in whatever order they come.
    bad = {7: "u|a.c3p1", 150000: "u|a.zzzz,1", 300001: "u|b.c3p0,x", 450000: ""}
    lines = [bad.get(i, f"u|user{i % 50000}.c3p{'0123456789abcdefghijklmn'[i % 24]},1") for i in range(1, 500001)]
    src = write(tmp_path / "h.csv", "\n".join(lines) + "\n")
    work = tmp_path / "w"
    r = rebuild("import", "--work", work, "--input", src, "--jobs", "2", "--max-errors", "2", check=False)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "import aborted at line 300001: 3 malformed line(s), more than --max-errors 2" in err
    assert [int(l.split(" line ")[1].split(":")[0]) for l in err.splitlines() if ".csv line " in l] == [7, 150000, 300001]
    assert segments(work) == []
    r = rebuild("import", "--work", work, "--input", src, "--jobs", "2", "--max-errors", "4")
    assert b"499996 records" in r.stdout and b"4 malformed line(s) skipped" in r.stdout
    rebuild("merge", "--work", work, "--jobs", "2")
    one = tmp_path / "one"
    rebuild("import", "--work", one, "--input", src, "--max-errors", "4")
    rebuild("merge", "--work", one)
    assert read(work / "merged" / "shard-0.csv") == read(one / "merged" / "shard-0.csv")


def test_importing_twice_is_a_no_op_and_other_data_for_the_same_days_is_refused(tmp_path):
    work = tmp_path / "w"
    history = os.path.join(SEED, "history.csv")
    rebuild("import", "--work", work, "--input", history)
    before = segments(work)
    r = rebuild("import", "--work", work, "--input", history)
    assert b"already imported" in r.stdout and segments(work) == before
    other = write(tmp_path / "o.csv", "u|dst.c3b4,100\nu|new.c3c3,7\n")  # 2012-03-11 and -12
    r = rebuild("import", "--work", work, "--input", other, check=False)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "these days already have data: 2012-03-11" in err and "2012-03-12" in err and "--replace" in err
    assert segments(work) == before
    rebuild("import", "--work", work, "--input", other, "--replace")
    rebuild("merge", "--work", work)
    merged = read(work / "merged" / "shard-0.csv").decode()
    assert "u|dst,c3b4:100 c3c3:16\n" not in merged  # 03-12's dst hours were replaced too
    assert "u|dst,c3b4:100\n" in merged and "u|new,c3c3:7\n" in merged
    assert "u|jehiah,c413:2 c41l:5\n" in merged  # 2012-04-01 untouched


def test_imports_of_different_days_merge_into_one_line_per_key(tmp_path):
    work = tmp_path / "w"
    write(tmp_path / "a.csv", "u|k.c3p5,2\nc.u|k.US.c3p5,2\nu|k.c3p0,1\n")
    write(tmp_path / "b.csv", "u|k.c3a0,7\nc.u|k.US.c3p0,1\nu|k.c3p0,0\n")  # 03-10 and 03-25 (0: no-op)
    rebuild("import", "--work", work, "--input", tmp_path / "a.csv")
    r = rebuild("import", "--work", work, "--input", tmp_path / "b.csv", check=False)
    assert r.returncode == 1  # 03-25 is already there
    write(tmp_path / "b.csv", "u|k.c3a0,7\nc.u|k.US.c3a0,3\nc.u|k.JP.c3a0,4\n")
    rebuild("import", "--work", work, "--input", tmp_path / "b.csv")
    rebuild("merge", "--work", work)
    assert read(work / "merged" / "shard-0.csv") == (
        b"c.u|k.c3a0,JP:4 US:3\nc.u|k.c3p5,US:2\nu|k,c3a0:7 c3p0:1 c3p5:2\n")


def test_compact_folds_whole_months_and_the_merge_does_not_change(tmp_path):
    work = tmp_path / "w"
    rebuild("import", "--work", work, "--input", os.path.join(SEED, "history.csv"))
    rebuild("merge", "--work", work)
    before = read(work / "merged" / "shard-0.csv")
    r = rebuild("compact", "--work", work, "--before", "2012-03-31")
    assert b"nothing to do" in r.stdout  # March is not over before 03-31
    r = rebuild("compact", "--work", work, "--before", "2012-04-01")
    assert b"2 segment(s) -> 1 month segment(s) (2012-03)" in r.stdout.replace("→".encode(), b"->")
    names = segments(work)
    assert [n.split(".")[0] for n in names] == ["2012-03", "2012-04-01", "lookups"]
    meta = (work / "segments" / names[0] / "meta").read_text()
    assert "covers = 2012-03-11 import-" in meta and "covers = 2012-03-12 import-" in meta
    r = rebuild("compact", "--work", work, "--before", "2013-01-01")
    assert b"2012-04" in r.stdout
    rebuild("merge", "--work", work)
    assert read(work / "merged" / "shard-0.csv") == before
    # A day of a compacted month cannot be re-imported on its own.
    r = rebuild("import", "--work", work, "--input", write(tmp_path / "x.csv", "u|x.c3b4,1\n"), "--replace",
                check=False)
    assert r.returncode == 1 and "compacted segment 2012-03." in r.stderr.decode()


def test_a_corrupt_or_truncated_segment_is_found_by_its_checksum(tmp_path):
    work = tmp_path / "w"
    rebuild("import", "--work", work, "--input", os.path.join(SEED, "history.csv"))
    seg = work / "segments" / [n for n in segments(work) if n.startswith("2012-04-01")][0] / "shard-0.seg"
    good = read(seg)
    assert b"c41l:5" in good
    write(seg, good.replace(b"c41l:5", b"c41l:6"))
    r = rebuild("merge", "--work", work, check=False)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert f"segment {seg} is corrupt: checksum mismatch" in err, err
    assert not (work / "merged").exists()
    write(seg, good[:-10])
    r = rebuild("merge", "--work", work, check=False)
    assert r.returncode == 1 and "truncated" in r.stderr.decode()
    write(seg, good)
    rebuild("merge", "--work", work)
    assert merged_hours(work / "merged" / "shard-0.csv") == read(os.path.join(SEED, "archive.csv"))


def test_a_hash_collision_is_counted_and_reported_never_silently_resolved(tmp_path):
    work = tmp_path / "w"
    rebuild("import", "--work", work, "--input", os.path.join(SEED, "history.csv"))
    write(tmp_path / "c.csv", "u|x.c3p0,1\n_l|h0aMB8AuNw4=,http://evil.example/\n")
    rebuild("import", "--work", work, "--input", tmp_path / "c.csv")
    r = rebuild("merge", "--work", work)
    assert b"1 HASH COLLISION(S)" in r.stdout
    assert "hash collision: _l|h0aMB8AuNw4= is both" in r.stderr.decode()
    assert "collisions = 1\n" in (work / "merged" / "meta").read_text()
    text = (work / "merged" / "collisions.txt").read_text()
    assert "http://www.facebook.com/" in text and "http://evil.example/" in text


def unzstd(path):
    return subprocess.run(["zstd", "-q", "-dc", str(path)], stdout=subprocess.PIPE, check=True).stdout


def test_publish_without_servers_writes_a_generation_manifest_and_backup(tmp_path):
    """The backup copy is zstd by default (docs/formats.md#backups) and gzip on request:
    each unpacks with its standard tool to the shard file, byte for byte."""
    import gzip
    work, backup = tmp_path / "w", tmp_path / "backup"
    rebuild("import", "--work", work, "--input", os.path.join(SEED, "history.csv"), "--archive-shards", "2")
    rebuild("merge", "--work", work, "--archive-shards", "2")
    r = rebuild("publish", "--work", work, "--backup", backup)
    target = os.readlink(work / "current")
    generation = target.split("/")[1]
    assert target.startswith("gen/20120401-") and len(generation) == 8 + 1 + 16
    manifest = (work / "current" / "manifest").read_text().splitlines()
    # rollups = 1: the merged files' rollups carry their masks (docs/formats.md#rollup-records).
    assert manifest[:4] == [f"generation = {generation}", "last_day = 2012-04-01", "rollups = 1", "shards = 2"]
    for k in range(2):
        data = read(work / "current" / f"shard-{k}.csv")
        assert f"shard.{k}.file = shard-{k}.csv" in manifest
        lines = data.count(b"\n")
        assert f"shard.{k}.records = {lines}" in manifest
        assert f"shard.{k}.bytes = {len(data)}" in manifest
        assert unzstd(backup / generation / f"shard-{k}.csv.zst") == data
        assert data == read(work / "merged" / f"shard-{k}.csv")
    assert sorted(os.listdir(backup / generation)) == ["manifest", "shard-0.csv.zst", "shard-1.csv.zst"]
    assert (backup / generation / "manifest").read_text() == (work / "current" / "manifest").read_text()
    r = rebuild("publish", "--work", work, "--backup", backup)
    assert b"already live, nothing to do" in r.stdout
    # Another backup directory, gzip: written from the live generation's files.
    r = rebuild("publish", "--work", work, "--backup", tmp_path / "gz", "--backup-codec", "gzip")
    assert b" gzip in " in r.stdout, r.stdout
    for k in range(2):
        assert gzip.decompress(read(tmp_path / "gz" / generation / f"shard-{k}.csv.gz")) == \
            read(work / "current" / f"shard-{k}.csv")
    r = rebuild("publish", "--work", work, "--backup", tmp_path / "x", "--backup-codec", "xz", check=False)
    assert r.returncode == 2 and b"backup-codec 'xz' is not zstd or gzip" in r.stderr, r.stderr


def test_release_refuses_days_the_archive_does_not_hold(tmp_path):
    work = tmp_path / "w"
    config = write(tmp_path / "c.conf", "realtime = 127.0.0.1:9\narchive = 127.0.0.1:9\n")
    r = rebuild("release", "--work", work, "--config", config, "--through", "2012-04-01", check=False)
    assert r.returncode == 1 and "nothing is published" in r.stderr.decode()
    rebuild("import", "--work", work, "--input", os.path.join(SEED, "history.csv"))
    rebuild("merge", "--work", work)
    rebuild("publish", "--work", work)
    r = rebuild("release", "--work", work, "--config", config, "--through", "2012-04-02", check=False)
    assert r.returncode == 1
    assert "holds days through 2012-04-01 only: refusing to release 2012-04-02" in r.stderr.decode()


def test_bad_command_lines_say_what_is_wrong(tmp_path):
    cases = [
        (["import", "--input", "x"], "--work is required"),
        (["import", "--work", tmp_path / "w"], "import needs --input FILE|-"),
        (["frobnicate", "--work", tmp_path / "w"], "unknown command 'frobnicate'"),
        (["segment", "--work", tmp_path / "w", "--day", "2012-02-30"], "--day: "),
        (["merge", "--work", tmp_path / "w", "--memory", "lots"], "--memory: memory size 'lots'"),
        (["export", "--work", tmp_path / "w", "--day", "2012-03-01"], "export needs --config FILE"),
    ]
    for args, message in cases:
        r = rebuild(*args, check=False)
        assert r.returncode == 2, args
        assert message in r.stderr.decode(), (args, r.stderr)
    config = write(tmp_path / "c.conf", "archive = 127.0.0.1:7201\n")
    r = rebuild("merge", "--work", tmp_path / "w", "--config", config, "--archive-shards", "2", check=False)
    assert r.returncode == 2 and "disagrees with the 1 archive shards of the config" in r.stderr.decode()
    r = rebuild("merge", "--work", tmp_path / "w", check=False)
    assert r.returncode == 1 and "no segments" in r.stderr.decode()
    assert rebuild("--help").stdout.startswith(b"usage: clickatron-rebuild")


def test_external_sort_with_tiny_memory_gives_the_same_archive(tmp_path):
    lines = []
    for u in range(3000):
        for h in (0, 5, 23, 7):
            t = "c3p" + "0123456789abcdefghijklmn"[h]
            lines.append(f"u|user{u}.{t},{u % 7 + 1}\n")
            lines.append(f"c.u|user{u}.{'USJPDE'[u % 3 * 2:u % 3 * 2 + 2]}.{t},{u % 7 + 1}\n")
    lines += lines[:5000]  # repeated records are summed
    src = write(tmp_path / "h.csv", "".join(reversed(lines)))
    small, big = tmp_path / "s", tmp_path / "b"
    r = rebuild("import", "--work", small, "--input", src, "--memory", "1M", "--jobs", "2", "--archive-shards", "3")
    assert not r.stdout.endswith(b" 0 run(s)")
    rebuild("import", "--work", big, "--input", src, "--archive-shards", "3")
    for w in (small, big):
        rebuild("merge", "--work", w, "--archive-shards", "3", "--jobs", "2")
    for k in range(3):
        assert read(small / "merged" / f"shard-{k}.csv") == read(big / "merged" / f"shard-{k}.csv")
    total = sum(merged_hours(big / "merged" / f"shard-{k}.csv").count(b"\n") for k in range(3))
    assert total == 3000 + 3000 * 4  # one total line per user, one subtotal line per user-hour
    # and one day rollup per user: 4 hours of one country fold into one column
    assert sum(len(rollups_of(read(big / "merged" / f"shard-{k}.csv"))) for k in range(3)) == 3000


def test_a_failed_publish_keeps_the_old_generation_live(tmp_path):
    import socket
    work = tmp_path / "w"
    rebuild("import", "--work", work, "--input", os.path.join(SEED, "history.csv"))
    rebuild("merge", "--work", work)
    rebuild("publish", "--work", work)
    old = os.readlink(work / "current")
    rebuild("import", "--work", work, "--input", write(tmp_path / "n.csv", "u|n.c3p0,1\n"))
    rebuild("merge", "--work", work)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        config = write(tmp_path / "c.conf", f"archive = 127.0.0.1:{port}\n")
        r = rebuild("publish", "--work", work, "--config", config, check=False)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert f"127.0.0.1:{port}" in err and f"generation {old.split('/')[1]} stays live" in err, err
    assert os.readlink(work / "current") == old


def realtime_days(seed, days):
    """Realtime records (the import format) of a few users over `days` (YMDH day prefixes
    like 'c41'): random hours, 1-3 countries and referrers per hour."""
    import random
    rng = random.Random(seed)
    lines = []
    for day in days:
        for u in range(6):
            for hour in rng.sample("0123456789abcdefghijklmn", rng.randint(1, 8)):
                ymdh = day + hour
                total = 0
                for subns, names in (("c", ["US", "JP", "DE", "FR"]), ("r", [f"ref{i}" for i in range(30)])):
                    for name in rng.sample(names, rng.randint(1, 3)):
                        n = rng.randint(1, 5)
                        lines.append(f"{subns}.u|user{u}.{name}.{ymdh},{n}")
                        total += n // 2 if subns == "c" else 0
                lines.append(f"u|user{u}.{ymdh},{total + 1}")
    return "\n".join(lines) + "\n"


def archive_of(*realtime):
    """The hour-level archive lines (docs/formats.md#archive-records) of realtime records."""
    sums = {}
    for text in realtime:
        for line in text.splitlines():
            key, value = line.rsplit(",", 1)
            head, ymdh = key.rsplit(".", 1)
            if head.startswith("u|"):
                record, column = head, ymdh
            else:
                record, column = head.rsplit(".", 1)[0] + "." + ymdh, head.rsplit(".", 1)[1]
            cols = sums.setdefault(record, {})
            cols[column] = cols.get(column, 0) + int(value)
    out = []
    for record in sorted(sums, key=str.encode):
        cols = sums[record]
        out.append(record + "," + " ".join(f"{c}:{n}" for c, n in sorted(cols.items(), key=lambda kv: kv[0].encode())))
    return ("\n".join(out) + "\n").encode()


def test_rollups_over_days_and_months_follow_new_days_replaced_days_and_compact(tmp_path):
    # 2012-03-30 .. 2012-04-01 and 2012-05-01 first; then 2012-04-02 arrives (the nightly's
    # new day), then 2012-04-01 is replaced, then March and April are compacted.
    work = tmp_path / "w"
    first = realtime_days(1, ["c3u", "c3v", "c41", "c51"])
    rebuild("import", "--work", work, "--input", write(tmp_path / "a.csv", first), "--jobs", "2")
    r = rebuild("merge", "--work", work, "--jobs", "2")
    merged = read(work / "merged" / "shard-0.csv")
    assert hours_only(merged) == archive_of(first)
    assert check_rollups(merged) > 0
    due = due_rollups(merged)
    assert rollups_of(merged) == due
    assert any(k.endswith(".c3") for k in due) and any(len(k.rsplit(".", 1)[1]) == 3 for k in due)
    assert f"(rollups: {sum(len(k.rsplit('.', 1)[1]) == 3 for k in due)} day, ".encode() in r.stdout

    new_day = realtime_days(2, ["c42"])
    rebuild("import", "--work", work, "--input", write(tmp_path / "b.csv", new_day))
    rebuild("merge", "--work", work)
    after = read(work / "merged" / "shard-0.csv")
    assert hours_only(after) == archive_of(first, new_day)
    check_rollups(after)
    assert rollups_of(after) == due_rollups(after)
    months = lambda data: {k: v for k, v in rollups_of(data).items() if k.endswith(".c4")}
    assert months(after) != months(merged)  # April's month rollups now count 04-02
    assert any(k.endswith(".c42") for k in rollups_of(after))

    replaced = realtime_days(3, ["c41"])
    rebuild("import", "--work", work, "--input", write(tmp_path / "c.csv", replaced), "--replace")
    rebuild("merge", "--work", work)
    after = read(work / "merged" / "shard-0.csv")
    without_0401 = "".join(l + "\n" for l in first.splitlines() if not l.split(",")[0].endswith(
        tuple(".c41" + h for h in "0123456789abcdefghijklmn")))
    assert hours_only(after) == archive_of(without_0401, new_day, replaced)
    check_rollups(after)
    assert rollups_of(after) == due_rollups(after)

    rebuild("compact", "--work", work, "--before", "2012-05-01")
    assert [n.split(".")[0] for n in segments(work)] == ["2012-03", "2012-04", "2012-05-01"]
    rebuild("merge", "--work", work)
    assert read(work / "merged" / "shard-0.csv") == after

    # ops/archive-to-history skips the rollups (their hours are there): re-imported, the
    # same file comes out.
    import subprocess
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ops", "archive-to-history")
    history = subprocess.run([tool, work / "merged" / "shard-0.csv"], capture_output=True, check=True).stdout
    again = tmp_path / "again"
    rebuild("import", "--work", again, "--input", write(tmp_path / "h.csv", history))
    rebuild("merge", "--work", again)
    assert read(again / "merged" / "shard-0.csv") == after
