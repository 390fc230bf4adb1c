"""clickatron-oplog dump | verify | cursors | replay on oplog directories written here byte by byte.

The frames are built here from the documented format (oplog/frame.h, docs/oplog.md) —
length, seq, XXH64(payload, seed=seq), payload — with the XXH64 of the Python model
(ops/lib/formats.py), so these tests also pin the on-disk format down.
"""
import fcntl
import os
import struct

from formats import xxh64
from harness import run

M64 = (1 << 64) - 1


def frame(seq, payload):
    return struct.pack("<IQQ", len(payload), seq, xxh64(payload, seq)) + payload


def segment(d, first_seq, records):
    path = os.path.join(d, "seg-%020d.log" % first_seq)
    with open(path, "wb") as f:
        f.write(b"".join(frame(s, p) for s, p in records))
    return path


def oplog(*args):
    return run("clickatron-oplog", list(args))


RECORDS_1 = [(1, b"u|jehiah.c3p1,1\n"), (2, b"u|jehiah.c3p1,4\nref.u|jehiah.google.c3p1,4\n")]
RECORDS_2 = [(3, b"\x00\xff tab\there back\\slash\r"), (5, b"x" * 100)]


def make_log(tmp_path):
    d = str(tmp_path / "oplog")
    os.mkdir(d)
    segment(d, 1, RECORDS_1)
    segment(d, 3, RECORDS_2)
    with open(os.path.join(d, "realtime-shards"), "w") as f:  # someone else's file
        f.write("127.0.0.1:7101\n")
    return d


def test_dump_prints_every_record_escaped(tmp_path):
    d = make_log(tmp_path)
    r = oplog("dump", d)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == (
        "1 16 u|jehiah.c3p1,1\\n\n"
        "2 43 u|jehiah.c3p1,4\\nref.u|jehiah.google.c3p1,4\\n\n"
        "3 23 \\x00\\xff tab\\there back\\\\slash\\r\n"
        "5 100 " + "x" * 100 + "\n")
    assert r.stderr == b""


def test_dump_from_a_seq(tmp_path):
    d = make_log(tmp_path)
    r = oplog("dump", d, "--from", "3")
    assert r.returncode == 0
    assert [line.split(" ")[0] for line in r.stdout.decode().splitlines()] == ["3", "5"]
    r = oplog("dump", d, "--from", "4")
    assert [line.split(" ")[0] for line in r.stdout.decode().splitlines()] == ["5"]
    r = oplog("dump", d, "--from", "6")
    assert r.returncode == 0 and r.stdout == b""


def test_verify_counts_a_healthy_log(tmp_path):
    d = make_log(tmp_path)
    r = oplog("verify", d)
    assert r.returncode == 0, r.stderr
    size = sum(20 + len(p) for _, p in RECORDS_1 + RECORDS_2)
    assert r.stdout.decode() == (
        f"segments 2\nrecords 4\nbytes {size}\nfirst_seq 1\nlast_seq 5\nok\n")


def test_verify_an_empty_log(tmp_path):
    d = str(tmp_path)
    r = oplog("verify", d)
    assert r.returncode == 0
    assert r.stdout.decode() == "segments 0\nrecords 0\nbytes 0\nfirst_seq 0\nlast_seq 0\nok\n"


def test_verify_reports_a_torn_tail_without_failing(tmp_path):
    d = make_log(tmp_path)
    path = os.path.join(d, "seg-%020d.log" % 3)
    with open(path, "ab") as f:
        f.write(frame(6, b"the last record")[:-3])
    r = oplog("verify", d)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    good = os.path.getsize(path) - 32
    assert f"torn_tail {path} at offset {good}: frame cut short (seq 6), 32 bytes" in out
    assert "records 4\n" in out and out.endswith("ok\n")
    r = oplog("dump", d)
    assert r.returncode == 0
    assert b"torn tail in " + path.encode() in r.stderr


def test_verify_fails_on_corruption_naming_file_and_offset(tmp_path):
    d = make_log(tmp_path)
    path = os.path.join(d, "seg-%020d.log" % 1)
    data = bytearray(open(path, "rb").read())
    data[25] ^= 0x04  # inside the first record's payload; a whole record follows
    open(path, "wb").write(bytes(data))
    r = oplog("verify", d)
    assert r.returncode == 1
    msg = f"oplog segment {path} at offset 0 is corrupt: bad checksum (seq 1), and whole records follow it"
    assert r.stdout.decode().endswith(f"CORRUPT {msg}\n")
    assert r.stderr.decode() == f"clickatron-oplog: {msg}\n"
    r = oplog("dump", d)
    assert r.returncode == 1
    assert r.stdout == b""


def test_verify_fails_on_a_torn_older_segment(tmp_path):
    d = make_log(tmp_path)
    path = os.path.join(d, "seg-%020d.log" % 1)
    data = open(path, "rb").read()
    open(path, "wb").write(data[:-1])
    r = oplog("verify", d)
    assert r.returncode == 1
    assert "only the newest segment may end in a torn record" in r.stderr.decode()


def test_cursors_lists_names_seqs_and_backlog(tmp_path):
    d = make_log(tmp_path)
    with open(os.path.join(d, "cursors"), "w") as f:
        f.write("realtime-0 5\nrealtime-1 2\n")
    r = oplog("cursors", d)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == "last_seq 5\nrealtime-0 5 backlog 0\nrealtime-1 2 backlog 3\n"


def test_cursors_of_a_log_without_cursors(tmp_path):
    d = make_log(tmp_path)
    r = oplog("cursors", d)
    assert r.returncode == 0
    assert r.stdout.decode() == "last_seq 5\n"


def test_bad_cursor_file_is_named(tmp_path):
    d = make_log(tmp_path)
    with open(os.path.join(d, "cursors"), "w") as f:
        f.write("realtime-0 five\n")
    r = oplog("cursors", d)
    assert r.returncode == 1
    assert r.stderr.decode() == (
        f"clickatron-oplog: {d}/cursors line 1: seq 'five' is not a number\n")


def test_bad_command_lines(tmp_path):
    for args, message in [
        ([], "no command"),
        (["frobnicate", str(tmp_path)], "unknown command 'frobnicate'"),
        (["dump"], "dump takes one directory"),
        (["verify", "a", "b"], "verify takes one directory"),
        (["verify", str(tmp_path), "--from", "3"], "--from is an option of dump and replay only"),
        (["cursors", str(tmp_path), "--cursor", "realtime-0"], "--cursor is an option of replay only"),
        (["replay", str(tmp_path)], "replay needs --cursor NAME"),
        (["replay", str(tmp_path), "--cursor", "realtime-0", "--from", "0"], "--from must be a seq >= 1"),
        (["dump", str(tmp_path), "--from", "x"], "the argument ('x') for option '--from' is invalid"),
    ]:
        r = oplog(*args)
        assert r.returncode == 2, args
        assert message in r.stderr.decode(), (args, r.stderr)
    r = oplog("verify", str(tmp_path / "missing"))
    assert r.returncode == 1
    assert r.stderr.decode() == (
        f"clickatron-oplog: open directory {tmp_path}/missing: No such file or directory\n")
    r = oplog("--help")
    assert r.returncode == 0 and b"clickatron-oplog dump DIR [--from SEQ]" in r.stdout


def make_delivered_log(tmp_path):
    """make_log's records 1, 2, 3, 5, both shards' cursors at 5, and the API's rounds files."""
    d = make_log(tmp_path)
    with open(os.path.join(d, "cursors"), "w") as f:
        f.write("realtime-0 5\nrealtime-1 5\n")
    for k in (0, 1):
        with open(os.path.join(d, f"delivery-realtime-{k}.rounds"), "w") as f:
            f.write("boot x\n2\n5\n")
    return d


def test_replay_rewinds_one_cursor_and_removes_its_rounds_file(tmp_path):
    d = make_delivered_log(tmp_path)
    r = oplog("replay", d, "--cursor", "realtime-1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == (
        "cursor realtime-1 5 -> 0\n"
        "re-send 4 records (seq 1..5) when the API next starts\n"
        f"removed {d}/delivery-realtime-1.rounds\n")
    assert open(os.path.join(d, "cursors")).read() == "realtime-0 5\nrealtime-1 0\n"
    assert not os.path.exists(os.path.join(d, "delivery-realtime-1.rounds"))
    assert os.path.exists(os.path.join(d, "delivery-realtime-0.rounds"))  # the other shard's
    assert oplog("verify", d).returncode == 0  # the records themselves are untouched
    # --from: the records from that seq on; a second replay finds no rounds file to remove.
    r = oplog("replay", d, "--cursor", "realtime-0", "--from", "4")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == (
        "cursor realtime-0 5 -> 3\n"
        "re-send 1 record (seq 5..5) when the API next starts\n"
        f"removed {d}/delivery-realtime-0.rounds\n")
    r = oplog("replay", d, "--cursor", "realtime-0", "--from", "3")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().endswith(f"no {d}/delivery-realtime-0.rounds to remove\n")
    assert open(os.path.join(d, "cursors")).read() == "realtime-0 2\nrealtime-1 0\n"


def test_replay_refusals_change_nothing(tmp_path):
    d = make_delivered_log(tmp_path)
    before = {name: open(os.path.join(d, name), "rb").read() for name in sorted(os.listdir(d))}
    for args, message in [
        (["--cursor", "realtime-7"],
         f"no cursor named 'realtime-7' in {d}/cursors (cursors: realtime-0, realtime-1)"),
        (["--cursor", "realtime-1", "--from", "6"], f"seq 6 is after the last record in {d} (seq 5)"),
        (["--cursor", "realtime-1/x"], "cursor name 'realtime-1/x' has a character outside"),
    ]:
        r = oplog("replay", d, *args)
        assert r.returncode == 1, args
        assert r.stderr.decode().startswith("clickatron-oplog: replay refused: " + message), (args, r.stderr)
        assert r.stdout == b""
    # While a process holds the directory's lock (a running API), nothing is changed.
    with open(os.path.join(d, "LOCK"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        r = oplog("replay", d, "--cursor", "realtime-1")
    assert r.returncode == 1
    assert r.stderr.decode() == (
        f"clickatron-oplog: replay refused: oplog directory {d} is in use by another process "
        f"(it holds {d}/LOCK; a running clickatron-api keeps its oplog locked)\n")
    before["LOCK"] = b""
    after = {name: open(os.path.join(d, name), "rb").read() for name in sorted(os.listdir(d))}
    assert after == before
    r = oplog("replay", str(tmp_path / "missing"), "--cursor", "realtime-1")
    assert r.returncode == 1
    assert not os.path.exists(tmp_path / "missing")


# A compressed batch (oplog/batch.h): the frame's length has bit 31 set, its checksum is
# seeded with the bitwise not of its seq, and its payload is a
# zstd frame (with its content size) of the body: per record varint seq delta (0 for the
# first, which the header's seq names), varint length, payload. The block below is
# `zstd -1` of that body, pinned as bytes: the reader must take any valid zstd frame.
BATCH_RECORDS = [(3, b"0 20782 u|u0262.qbpk,1\n1 20782 c.u|u0262.DE.qbpk,1\n"),
                 (4, b"1 20782 r.u|u0262.direct.qbpk,1\n"), (7, b"0 20782 u|u0263.qbpk,1\n")]
BATCH_BLOCK = bytes.fromhex(
    "28b52ffd2470550200340300333020323037383220757c75303236322e7162706b2c310a31632e44450120"
    "72646972656374031730332e7162706b2c310a0800430d00f2288a14283728827f12cc9360359b638fee90bf")


def varint(v):
    out = b""
    while v >= 0x80:
        out += bytes([(v & 0x7F) | 0x80])
        v >>= 7
    return out + bytes([v])


def batch_frame(first_seq, block):
    return struct.pack("<IQQ", len(block) | 1 << 31, first_seq, xxh64(block, first_seq ^ M64)) + block


def test_the_pinned_batch_block_holds_the_documented_body():
    body = b""
    prev = BATCH_RECORDS[0][0]
    for seq, payload in BATCH_RECORDS:
        body += varint(seq - prev) + varint(len(payload)) + payload
        prev = seq
    # zstd's raw literals: the body's text is in the block as it is, and its size up front.
    assert BATCH_BLOCK[:4] == b"\x28\xb5\x2f\xfd" and BATCH_BLOCK[5] == len(body)
    assert b"0 20782 u|u0262.qbpk,1\n" in BATCH_BLOCK


def test_a_log_of_record_frames_and_compressed_batches_reads_as_one(tmp_path):
    # A segment of the format before batches (record frames), then one the upgraded API wrote.
    d = str(tmp_path / "oplog")
    os.mkdir(d)
    segment(d, 1, [(1, b"a,1\n"), (2, b"b,2\n")])
    with open(os.path.join(d, "seg-%020d.log" % 3), "wb") as f:
        f.write(batch_frame(3, BATCH_BLOCK) + frame(8, b"c,3\n"))
    r = oplog("dump", d, "--from", "2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == (
        "2 4 b,2\\n\n"
        "3 51 0 20782 u|u0262.qbpk,1\\n1 20782 c.u|u0262.DE.qbpk,1\\n\n"
        "4 32 1 20782 r.u|u0262.direct.qbpk,1\\n\n"
        "7 23 0 20782 u|u0263.qbpk,1\\n\n"
        "8 4 c,3\\n\n")
    r = oplog("verify", d)
    assert r.returncode == 0, r.stderr
    size = 2 * 24 + 20 + len(BATCH_BLOCK) + 24
    assert r.stdout.decode() == f"segments 2\nrecords 6\nbytes {size}\nfirst_seq 1\nlast_seq 8\nok\n"
    # A flipped bit inside the batch with a record after it: corruption, named.
    path = os.path.join(d, "seg-%020d.log" % 3)
    data = bytearray(open(path, "rb").read())
    data[30] ^= 1
    open(path, "wb").write(bytes(data))
    r = oplog("verify", d)
    assert r.returncode == 1
    assert f"CORRUPT oplog segment {path} at offset 0 is corrupt: bad checksum (seq 3), and whole records follow it" in r.stdout.decode()
