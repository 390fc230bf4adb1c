"""ops/lib/formats.py, the Python model of docs/formats.md that the tests, benchmarks and ops
scripts share, pinned twice: against the golden vectors (tests/golden/keyformat.tsv, which
keyformat/ also passes, and tests/golden/xxh64.tsv, computed with libxxhash), and against the
real binaries — clickatron-key for hours, keys, shards and event records, clickatron-rebuild
for the shard of every archive key and the footer of every segment it writes, and
clickatron-oplog for XXH64 with a seed (each oplog frame carries XXH64(payload, seq))."""
import csv
import os
import re
import struct
import subprocess

import pytest

from harness import GOLDEN, binary, run
import formats


def unescape(text):
    """Bytes of a golden input: `\\xHH` is the byte HH."""
    return re.sub(rb"\\x([0-9a-fA-F]{2})", lambda m: bytes([int(m[1], 16)]), text.encode())


def golden(name):
    with open(os.path.join(GOLDEN, name), newline="") as f:
        return [r for r in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
                if r and not r[0].startswith("#")]


def golden_rows(kind):
    return [(value, expected) for k, value, expected in golden("keyformat.tsv") if k == kind]


def key_tool(*args):
    """stdout of clickatron-key with str, int or bytes arguments."""
    r = subprocess.run([binary("clickatron-key")] + [a if isinstance(a, bytes) else str(a).encode() for a in args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 0, (args, r.stderr)
    return r.stdout


# ---- golden vectors -----------------------------------------------------------------------

@pytest.mark.parametrize("ts,expected", golden_rows("ymdh"))
def test_ymdh_matches_golden(ts, expected):
    if expected == "ERROR":
        with pytest.raises(ValueError, match="outside the YMDH range"):
            formats.ymdh(int(ts))
    else:
        assert formats.ymdh(int(ts)) == expected
        assert formats.ymdh_day(expected) == int(ts) // 86400


@pytest.mark.parametrize("token,expected", golden_rows("unymdh"))
def test_unymdh_matches_golden(token, expected):
    if expected == "ERROR":
        with pytest.raises(ValueError):
            formats.unymdh(token)
    else:
        assert formats.unymdh(token) == int(expected)
        assert formats.ymdh(int(expected)) == token


@pytest.mark.parametrize("value,expected", golden_rows("stored"))
def test_stored_and_hash_match_golden(value, expected):
    raw = unescape(value)
    assert formats.stored(raw) == expected.encode()
    assert formats.is_literal(raw) == (raw == expected.encode())
    if raw != expected.encode():
        assert formats.key_hash(raw) == expected.encode()
    if "\\x" not in value:  # str in, str out
        assert formats.stored(value) == expected


def test_crc32_and_shards_match_golden():
    rows = golden("keyformat.tsv")
    checked = 0
    for kind, key, expected in rows:
        if kind == "crc32":
            assert formats.crc32(key) == int(expected), key
        elif kind.startswith("shard"):
            assert formats.shard_of(key, int(kind[5:])) == int(expected), (kind, key)
        else:
            continue
        checked += 1
    assert checked >= 20


def test_xxh64_matches_golden():
    rows = golden("xxh64.tsv")
    assert len(rows) >= 15
    for data, seed, expected in rows:
        assert formats.xxh64(unescape(data), int(seed)) == int(expected, 16), (data, seed)
    assert formats.footer(b"") == b"#END count=0 xxh64=ef46db3751d8e999\n"  # docs/formats.md#export-footer


def test_fields_days_and_text():
    assert formats.ymdh_fields(2012, 4, 1, 21) == "c41l"
    assert formats.ymdh_parts("c41l") == (2012, 4, 1, 21)
    assert formats.ymdh(1333252799) == "c413"  # any second of the hour
    assert formats.ymdh_day("c41l") == 15431 and formats.day_text(15431) == "2012-04-01"
    for ts, token in golden_rows("ymdh"):
        if token != "ERROR":
            assert formats.day_text(int(ts) // 86400) == "%04d-%02d-%02d" % formats.ymdh_parts(token)[:3]
    for bad in [(1999, 12, 31, 23), (2032, 1, 1, 0), (2012, 2, 30, 0), (2012, 3, 1, 24)]:
        with pytest.raises(ValueError):
            formats.ymdh_fields(*bad)
    assert formats.escape("a%b\nc\rd\0e") == "a%25b%0Ac%0Dd%00e"
    assert formats.escape(b"x,y") == b"x,y"  # commas stay: the key ends at the first one
    assert formats.shard_key("c.u|jehiah.US.c41l") == "u|jehiah"      # realtime subtotal
    assert formats.shard_key("r.u|jehiah.c41") == "u|jehiah"          # archive day rollup
    assert formats.shard_key("u|jehiah") == formats.shard_key("u|jehiah.c41l") == "u|jehiah"
    assert formats.shard_key("_l|h0aMB8AuNw4=") == "_l|h0aMB8AuNw4="


def test_tokens_sort_in_time_order():
    hours = range(946684800, 1956527999, 3600 * 24 * 97 + 3600 * 5)
    tokens = [formats.ymdh(ts) for ts in hours]
    assert tokens == sorted(tokens)


# ---- the real binaries --------------------------------------------------------------------

# Inputs beyond the golden rows: the edges of the literal rule, reserved bytes, UTF-8, 4 KB.
VALUES = [b"US", b"abcdefghijk", b"abcdefghijkl", b"a b", b"a.b", b"a|b", b"a,b", b"a:b", b"~",
          b"\x7f", b"\xc3\xa9t\xc3\xa9", b"x\ny", b"http://t.co/x?y=1", b"%", b"k" * 4096]


def test_hours_keys_and_shards_match_clickatron_key():
    tool_lines = key_tool("ymdh", 1332637200), key_tool("unymdh", "c3p1"), key_tool("ymdh", formats.MAX_TS)
    assert tool_lines == (b"c3p1\n", b"1332637200\n", formats.ymdh(formats.MAX_TS).encode() + b"\n")
    for value in VALUES:
        assert key_tool("stored", value) == formats.stored(value) + b"\n", value
        assert key_tool("hash", value) == formats.key_hash(value) + b"\n", value
    for key in ["u|jehiah", "_l|h0aMB8AuNw4=", "c.u|x", "l|" + formats.key_hash("http://example.com/")]:
        for shards in (1, 2, 3, 7, 16, 1000):
            assert key_tool("shard", "--shards", shards, key) == b"%d\n" % formats.shard_of(key, shards)


@pytest.mark.parametrize("event", [
    ("u", b"jehiah", 1333314000, 2, {"c": b"US", "r": b"http://www.facebook.com/"}),
    ("u", b"a key with spaces", 946684800, -7, {}),
    ("l", b"x\ny%", 1956527999, 9223372036854775807, {"c": b"a.b", "ref": b"a.b", "z-1": b"ok"}),
])
def test_event_records_match_clickatron_key(event):
    ns, key, ts, value, subs = event
    args = ["encode", "--ns", ns, b"--key=" + key, "--ts", ts, "--value", value]
    for subns, subkey in subs.items():
        args.append(b"--sub=" + subns.encode() + b":" + subkey)
    expected = b"".join(k + b"," + v + b"\n" for k, v in formats.event_records(ns, key, ts, value, subs))
    assert key_tool(*args) == expected
    if event[1] == b"jehiah":  # str in, str out: the example of docs/formats.md#realtime-records
        assert formats.event_records("u", "jehiah", ts, value, {"c": "US", "r": "http://www.facebook.com/"}) == [
            ("_l|h0aMB8AuNw4=", "http://www.facebook.com/"), ("c.u|jehiah.US.c41l", "2"),
            ("r.u|jehiah.h0aMB8AuNw4=.c41l", "2"), ("u|jehiah.c41l", "2")]


def history_with_rollups():
    """Realtime records of 40 users (some hashed) over two hours of two days, country
    subtotals that fold twice a day (so merge writes day rollups), and the golden seed."""
    lines = []
    for u in range(40):
        user = formats.stored(f"user{u}" if u % 3 else f"http://example.com/{u}")
        for day in (15431, 15432):
            for hour in (3, 4):
                t = formats.ymdh(day * 86400 + hour * 3600)
                lines += [f"u|{user}.{t},3", f"c.u|{user}.US.{t},1", f"c.u|{user}.JP.{t},2"]
        if user != f"user{u}":
            lines.append(f"_l|{user},http://example.com/{u}")
    with open(os.path.join(GOLDEN, "seed-example", "history.csv")) as f:
        return "\n".join(lines) + "\n" + f.read()


def test_shard_of_and_footer_match_clickatron_rebuild(tmp_path):
    """import splits records into archive shards and foots every segment; merge writes the
    shard files (with day rollups) and their XXH64 in the merged meta."""
    history = tmp_path / "history.csv"
    history.write_text(history_with_rollups())
    work = tmp_path / "work"
    for step in (["import", "--input", history], ["merge"]):
        run("clickatron-rebuild", step + ["--work", work, "--archive-shards", 3], check=True)
    segments = sorted(work.glob("segments/*/shard-*.seg"))
    assert len(segments) == 3 * 5  # four days and the lookups
    for seg in segments:
        data = seg.read_bytes()
        cut = data.rindex(b"#END ")
        assert data[cut:] == formats.footer(data[:cut]), seg
    meta = dict(line.split(" = ", 1) for line in (work / "merged" / "meta").read_text().splitlines())
    rollups = 0
    for k in range(3):
        data = (work / "merged" / f"shard-{k}.csv").read_bytes()
        assert meta[f"shard.{k}.xxh64"] == "%016x" % formats.xxh64(data)
        for line in data.decode().splitlines():
            key = line.split(",", 1)[0]
            assert formats.shard_of(formats.shard_key(key), 3) == k, line
            rollups += key.count(".") == 2 and len(key.rsplit(".", 1)[1]) == 3
    assert rollups >= 40


def test_xxh64_with_a_seed_matches_clickatron_oplog(tmp_path):
    """Frames `len, seq, XXH64(payload, seed=seq), payload` (docs/oplog.md) hashed here are
    accepted by clickatron-oplog verify; one wrong bit in a hash is refused."""
    payloads = [(seq, bytes(range(n % 256)) * (1 + n // 256)) for n, seq in
                enumerate([1, 2, 3, 40, 1 << 32, (1 << 63) + 5], start=29)]
    log = tmp_path / "oplog"
    log.mkdir()

    def write(bad_seq=None):
        frames = b""
        for seq, p in payloads:
            h = formats.xxh64(p, seq) ^ (1 if seq == bad_seq else 0)
            frames += struct.pack("<IQQ", len(p), seq, h) + p
        (log / ("seg-%020d.log" % payloads[0][0])).write_bytes(frames)

    write()
    r = run("clickatron-oplog", ["verify", log])
    assert r.returncode == 0 and r.stdout.decode().endswith(f"records {len(payloads)}\n"
                                                           f"bytes {sum(20 + len(p) for _, p in payloads)}\n"
                                                           f"first_seq 1\nlast_seq {(1 << 63) + 5}\nok\n"), r
    write(bad_seq=40)
    assert run("clickatron-oplog", ["verify", log]).returncode != 0
