"""YMDH, the 4-character hour token of docs/formats.md#hours-ymdh, for the Python tools.

b32(year - 2000) b32(month) b32(day) b32(hour) in the alphabet 0-9a-v, all UTC, so tokens
sort in time order. The format holds 2000-01-01 00:00 to 2031-12-31 23:00 UTC; anything
else is refused with ValueError, never wrapped. keyformat/ymdh.h is the same rule in C++;
tests/golden/keyformat.tsv pins both (tests/test_ymdh_lib.py checks this one).

The ops scripts and the tests import it from here (sys.path gets ops/lib), so the alphabet
exists once in Python.
"""
import calendar
import datetime

ALPHABET = "0123456789abcdefghijklmnopqrstuv"
MIN_TS = 946684800    # 2000-01-01 00:00:00 UTC
MAX_TS = 1956527999   # 2031-12-31 23:59:59 UTC


def encode_fields(year, month, day, hour):
    """The token of a UTC calendar hour. The fields must form a real date and hour."""
    if not 2000 <= year <= 2031:
        raise ValueError(f"year {year} is outside the YMDH range 2000..2031")
    datetime.datetime(year, month, day, hour)  # ValueError for Feb 30, hour 24, ...
    return ALPHABET[year - 2000] + ALPHABET[month] + ALPHABET[day] + ALPHABET[hour]


def encode(ts):
    """The token of the hour holding unix seconds ts (UTC; any second of the hour)."""
    if not MIN_TS <= ts <= MAX_TS:
        raise ValueError(f"time {ts} is outside the YMDH range 2000-01-01 00:00 to "
                         f"2031-12-31 23:59:59 UTC (unix {MIN_TS} to {MAX_TS})")
    t = datetime.datetime.fromtimestamp(ts, datetime.timezone.utc)
    return encode_fields(t.year, t.month, t.day, t.hour)


def decode_fields(token):
    """(year, month, day, hour) of a token; ValueError when it is not a valid token."""
    if len(token) != 4 or any(c not in ALPHABET for c in token):
        raise ValueError(f"time token {token!r} is not YMDH")
    year, month, day, hour = (2000 + ALPHABET.index(token[0]), ALPHABET.index(token[1]),
                              ALPHABET.index(token[2]), ALPHABET.index(token[3]))
    try:
        datetime.datetime(year, month, day, hour)
    except ValueError:
        raise ValueError(f"time token {token!r} is not a real UTC hour") from None
    return year, month, day, hour


def decode(token):
    """Unix seconds of the start of the token's hour."""
    year, month, day, hour = decode_fields(token)
    return calendar.timegm((year, month, day, hour, 0, 0))


def day_text(token):
    """YYYY-MM-DD, the UTC day of a token."""
    year, month, day, _ = decode_fields(token)
    return "%04d-%02d-%02d" % (year, month, day)
