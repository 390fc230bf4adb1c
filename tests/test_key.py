"""clickatron-key: the command-line face of keyformat (docs/api.md#clickatron-key): the
examples of docs/formats.md, every golden keyformat row through the tool, records in key
order, and one-line errors with exit status 2."""
import csv
import os

from harness import GOLDEN, run


def out(args):
    r = run("clickatron-key", args)
    assert r.returncode == 0, r.stderr
    return r.stdout.decode()


def test_acceptance_examples():
    assert out(["hash", "http://www.facebook.com/"]) == "h0aMB8AuNw4=\n"
    assert out(["ymdh", "1332637200"]) == "c3p1\n"
    r = run("clickatron-key", ["ymdh", "2000000000"])
    assert r.returncode == 2
    assert r.stdout == b""
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "2031-12-31" in err and "2000-01-01" in err


def test_golden_rows_through_the_tool():
    with open(os.path.join(GOLDEN, "keyformat.tsv")) as f:
        rows = [r for r in csv.reader(f, delimiter="\t") if r and not r[0].startswith("#")]
    checked = 0
    for kind, value, expected in rows:
        if kind in ("ymdh", "unymdh"):
            r = run("clickatron-key", [kind, value])
            if expected == "ERROR":
                assert r.returncode == 2 and r.stderr, (kind, value)
            else:
                assert r.stdout.decode() == expected + "\n", (kind, value)
        elif kind == "stored" and "\\x" not in value:
            assert out(["stored", value]) == expected + "\n"
        elif kind.startswith("shard"):
            assert out(["shard", "--shards", kind[5:], value]) == expected + "\n"
        else:
            continue
        checked += 1
    assert checked >= 40


def test_encode_prints_records_in_key_order():
    text = out(["encode", "--ns", "u", "--key", "jehiah", "--ts", "1333314000", "--value", "2",
                "--sub", "c:US", "--sub", "r:http://www.facebook.com/"])
    assert text == ("_l|h0aMB8AuNw4=,http://www.facebook.com/\n"
                    "c.u|jehiah.US.c41l,2\n"
                    "r.u|jehiah.h0aMB8AuNw4=.c41l,2\n"
                    "u|jehiah.c41l,2\n")


def test_bad_input_is_one_line_exit_2():
    for args in (["unymdh", "c2u0"], ["stored", ""], ["shard", "--shards", "0", "u|x"],
                 ["encode", "--ns", "_l", "--key", "x", "--ts", "1333314000"],
                 ["encode", "--ns", "u", "--key", "x", "--ts", "1333314000", "--value", "0"],
                 ["encode", "--ns", "u", "--key", "x", "--ts", "1333314000", "--sub", "cUS"],
                 ["nonsense"], ["ymdh", "abc"]):
        r = run("clickatron-key", args)
        assert r.returncode == 2, args
        assert r.stdout == b"", args
        assert r.stderr.decode().startswith("clickatron-key: "), args
        assert r.stderr.decode().count("\n") == 1, (args, r.stderr)
