"""The Python model of docs/formats.md, for the tests, the benchmarks and the ops scripts.

Each rule of the formats page is written here once; keyformat/ is the same rules in C++.
tests/test_formats.py pins every function against the golden vectors (tests/golden/) and
against the real binaries (clickatron-key; clickatron-rebuild for shard keys and footers;
clickatron-oplog for XXH64 with a seed). Import it as `import formats` or `from formats import stored, shard_of`: the tests
get ops/lib on sys.path from tests/harness.py, the benchmarks from
tests/bench/bench_harness.py, the ops scripts put it there themselves.

Hours (docs/formats.md#hours-ymdh, #days)
    ymdh(ts) -> "c41l"               the token of the UTC hour holding unix seconds ts
    ymdh_fields(y, m, d, h) -> token the token of a UTC calendar hour
    unymdh(token) -> ts              unix seconds of the start of the token's hour
    ymdh_parts(token) -> (y, m, d, h)
    ymdh_day(token) -> day           days since 1970-01-01 of the token's hour
    day_text(day) -> "2012-04-01"    a day number as the YYYY-MM-DD of URLs, flags, files
    ALPHABET, MIN_TS, MAX_TS         the 32 symbols; the first and last second of the range
  Times and tokens outside 2000-01-01 00:00 .. 2031-12-31 23:59:59 UTC and impossible
  tokens raise ValueError (never wrapped).

Keys (docs/formats.md#keys-and-hashes, #text-files)
    is_literal(value) -> bool        stored as is: 1-11 bytes of 0x21-0x7E, none of : , . |
    key_hash(value) -> "h0aMB8AuNw4=" base64 of the first 8 bytes of the MD5
    stored(value) -> key             the value itself when literal, else its hash
    escape(original) -> text         a lookup record's value: % \\n \\r NUL escaped
  These take str (encoded as UTF-8) or bytes and answer in the type they were given.

Records (docs/formats.md#realtime-records)
    event_records(ns, key, ts, value=1, subs=()) -> [(key, value)]
                                     what one event writes: its total, one subtotal per
                                     (subns, subkey) of subs, a lookup per hashed key, in
                                     key order (`clickatron-key encode`); str or bytes
                                     as `key` is

Sharding (docs/formats.md#sharding)
    shard_key(key) -> "u|jehiah"     the shard key of a record key: the total part of a
                                     total, subtotal or rollup (realtime or archive form),
                                     the whole key of a lookup
    crc32(text) -> int               zlib's IEEE crc32
    shard_of(shard_key, shards) -> int  crc32(shard_key) % shards, as keyformat/shard.h
                                     and `clickatron-key shard`; a record key's shard is
                                     shard_of(shard_key(key), shards)

Checksums (docs/formats.md#export-footer, docs/oplog.md)
    xxh64(data, seed=0) -> int       XXH64 of bytes
    footer(body) -> b"#END count=2 xxh64=...\\n"  the footer line that ends body
"""
import base64
import calendar
import datetime
import hashlib
import struct
import zlib

# ---- Hours: YMDH (docs/formats.md#hours-ymdh) ---------------------------------------------

ALPHABET = "0123456789abcdefghijklmnopqrstuv"
MIN_TS = 946684800    # 2000-01-01 00:00:00 UTC
MAX_TS = 1956527999   # 2031-12-31 23:59:59 UTC


def ymdh_fields(year, month, day, hour):
    """The token of a UTC calendar hour. The fields must form a real date and hour."""
    if not 2000 <= year <= 2031:
        raise ValueError(f"year {year} is outside the YMDH range 2000..2031")
    datetime.datetime(year, month, day, hour)  # ValueError for Feb 30, hour 24, ...
    return ALPHABET[year - 2000] + ALPHABET[month] + ALPHABET[day] + ALPHABET[hour]


def ymdh(ts):
    """The token of the hour holding unix seconds ts (UTC; any second of the hour)."""
    if not MIN_TS <= ts <= MAX_TS:
        raise ValueError(f"time {ts} is outside the YMDH range 2000-01-01 00:00 to "
                         f"2031-12-31 23:59:59 UTC (unix {MIN_TS} to {MAX_TS})")
    t = datetime.datetime.fromtimestamp(ts, datetime.timezone.utc)
    return ymdh_fields(t.year, t.month, t.day, t.hour)


def ymdh_parts(token):
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


def unymdh(token):
    """Unix seconds of the start of the token's hour."""
    year, month, day, hour = ymdh_parts(token)
    return calendar.timegm((year, month, day, hour, 0, 0))


def ymdh_day(token):
    """The UTC day of a token, as days since 1970-01-01 (docs/formats.md#days)."""
    return unymdh(token) // 86400


def day_text(day):
    """YYYY-MM-DD of a day number (days since 1970-01-01, UTC: docs/formats.md#days)."""
    return (datetime.date(1970, 1, 1) + datetime.timedelta(days=day)).isoformat()


# ---- Keys and hashes (docs/formats.md#keys-and-hashes) ------------------------------------

RESERVED = b":,.|"


def _bytes(value):
    return value.encode() if isinstance(value, str) else bytes(value)


def _like(value, result):
    """result (bytes) in the type of value."""
    return result.decode() if isinstance(value, str) else result


def is_literal(value):
    """True when value is stored as is: 1-11 bytes, each 0x21-0x7E and none of : , . |"""
    b = _bytes(value)
    return 1 <= len(b) <= 11 and all(0x21 <= c <= 0x7E and c not in RESERVED for c in b)


def key_hash(value):
    """Standard base64 (with its `=`) of the first 8 bytes of value's MD5: 12 characters."""
    return _like(value, base64.b64encode(hashlib.md5(_bytes(value)).digest()[:8]))


def stored(value):
    """The stored form of a user key or subkey: itself when literal, else its hash."""
    return value if is_literal(value) else key_hash(value)


def escape(original):
    """A lookup record's value (docs/formats.md#text-files): % newline CR NUL as %25 %0A %0D %00."""
    b = _bytes(original).replace(b"%", b"%25").replace(b"\n", b"%0A").replace(b"\r", b"%0D")
    return _like(original, b.replace(b"\0", b"%00"))


# ---- Realtime records (docs/formats.md#realtime-records) ----------------------------------

def event_records(ns, key, ts, value=1, subs=()):
    """[(record key, value)] of one event in key order, as `clickatron-key encode` prints them:
    `{ns}|{key}.{ymdh}`, `{subns}.{ns}|{key}.{subkey}.{ymdh}` per (subns, subkey) of subs (a
    dict or pairs), `_l|{hash}` with the escaped original per hashed key or subkey. Keys and
    values are str, or bytes when key is bytes."""
    hour = ymdh(ts).encode()
    ns, user_key, count = _bytes(ns), _bytes(key), str(value).encode()
    key_part = stored(user_key)
    records = {ns + b"|" + key_part + b"." + hour: count}
    for subns, subkey in dict(subs).items():
        records[_bytes(subns) + b"." + ns + b"|" + key_part + b"." + stored(_bytes(subkey)) + b"." + hour] = count
    for original in [user_key] + [_bytes(subkey) for subkey in dict(subs).values()]:
        if not is_literal(original):
            records[b"_l|" + key_hash(original)] = escape(original)
    return [(_like(key, k), _like(key, v)) for k, v in sorted(records.items())]


# ---- Sharding (docs/formats.md#sharding) --------------------------------------------------

def shard_key(key):
    """The shard key of a record key: `{ns}|{stored key}` of a total, subtotal or rollup
    (realtime or archive form), the whole key of a lookup `_l|{hash}`."""
    if key.startswith("_l|"):
        return key
    head, _, rest = key.partition("|")
    return head.rsplit(".", 1)[-1] + "|" + rest.split(".", 1)[0]


def crc32(text):
    """zlib's (IEEE) crc32 of a str (UTF-8) or bytes."""
    return zlib.crc32(_bytes(text))


def shard_of(shard_key, shards):
    """The shard, of `shards`, of a shard key (`u|jehiah`, `_l|h0aMB8AuNw4=`)."""
    return crc32(shard_key) % shards


# ---- XXH64 and the export footer (docs/formats.md#export-footer, docs/oplog.md) -----------

_M64 = (1 << 64) - 1
_P1, _P2, _P3, _P4, _P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                           0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & _M64


def _round(acc, lane):
    return (_rotl((acc + lane * _P2) & _M64, 31) * _P1) & _M64


def xxh64(data, seed=0):
    """XXH64 of bytes with a 64-bit seed (the footer's is 0, an oplog frame's its seq)."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M64, (seed + _P2) & _M64, seed & _M64, (seed - _P1) & _M64]
        while i + 32 <= n:
            v = [_round(acc, lane) for acc, lane in zip(v, struct.unpack_from("<4Q", data, i))]
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M64
        for acc in v:
            h = ((h ^ _round(0, acc)) * _P1 + _P4) & _M64
    else:
        h = (seed + _P5) & _M64
    h = (h + n) & _M64
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, struct.unpack_from("<Q", data, i)[0]), 27) * _P1 + _P4) & _M64
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ (struct.unpack_from("<I", data, i)[0] * _P1 & _M64), 23) * _P2 + _P3) & _M64
        i += 4
    while i < n:
        h = (_rotl(h ^ (data[i] * _P5 & _M64), 11) * _P1) & _M64
        i += 1
    h = ((h ^ (h >> 33)) * _P2) & _M64
    h = ((h ^ (h >> 29)) * _P3) & _M64
    return h ^ (h >> 32)


def footer(body):
    """The `#END count=<lines> xxh64=<16 hex>\\n` line that ends body (bytes of whole lines)."""
    return b"#END count=%d xxh64=%016x\n" % (body.count(b"\n"), xxh64(body))
