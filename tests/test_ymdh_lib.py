"""ops/lib/ymdh.py, the hour token the Python tools and tests share, against the golden
YMDH rows (tests/golden/keyformat.tsv) that clickatron-key and keyformat/ymdh.h also pass."""
import csv
import os

import pytest

from harness import GOLDEN
import ymdh


def golden_rows(kind):
    with open(os.path.join(GOLDEN, "keyformat.tsv")) as f:
        rows = [r for r in csv.reader(f, delimiter="\t") if r and not r[0].startswith("#")]
    return [(value, expected) for k, value, expected in rows if k == kind]


@pytest.mark.parametrize("ts,expected", golden_rows("ymdh"))
def test_encode_matches_golden(ts, expected):
    if expected == "ERROR":
        with pytest.raises(ValueError, match="outside the YMDH range"):
            ymdh.encode(int(ts))
    else:
        assert ymdh.encode(int(ts)) == expected


@pytest.mark.parametrize("token,expected", golden_rows("unymdh"))
def test_decode_matches_golden(token, expected):
    if expected == "ERROR":
        with pytest.raises(ValueError):
            ymdh.decode(token)
    else:
        assert ymdh.decode(token) == int(expected)
        assert ymdh.encode(int(expected)) == token


def test_fields_and_days():
    assert ymdh.encode_fields(2012, 4, 1, 21) == "c41l"
    assert ymdh.decode_fields("c41l") == (2012, 4, 1, 21)
    assert ymdh.day_text("c41l") == "2012-04-01"
    assert ymdh.encode(1333252799) == "c413"  # any second of the hour
    for bad in [(1999, 12, 31, 23), (2032, 1, 1, 0), (2012, 2, 30, 0), (2012, 3, 1, 24)]:
        with pytest.raises(ValueError):
            ymdh.encode_fields(*bad)


def test_tokens_sort_in_time_order():
    hours = range(946684800, 1956527999, 3600 * 24 * 97 + 3600 * 5)
    tokens = [ymdh.encode(ts) for ts in hours]
    assert tokens == sorted(tokens)
