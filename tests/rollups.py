"""Rollup records of merged archive files (docs/formats.md#rollup-records), for the tests.

`hours_only` drops the rollup lines, so a merged file compares with an hour-level expected
file (the golden ones); `check_rollups` recomputes every rollup from its hours: the mask of
the hours summed (`.{day}:{bit h for hour h}` columns, one per day, keyformat/rollup_hours.h),
then their sums.
"""
from formats import ALPHABET


def mask_value(hours):
    """The mask columns of a rollup that summed these hour tokens."""
    days = {}
    for t in hours:
        days[t[2]] = days.get(t[2], 0) | (1 << ALPHABET.index(t[3]))
    return " ".join(f".{d}:{m}" for d, m in sorted(days.items(), key=lambda kv: ALPHABET.index(kv[0])))


def rollup_value(hours, sums):
    """A rollup's value: the mask of the hour tokens it summed, then its non-zero sums."""
    return " ".join(v for v in (mask_value(hours), _value(sums)) if v)


def _subtotal_time(key):
    """The time part of a subtotal key `{subns}.{ns}|...{time}`, or None for other keys."""
    first = min((i for i in (key.find("."), key.find("|")) if i >= 0), default=-1)
    if first < 0 or key[first] != ".":
        return None
    return key.rsplit(".", 1)[1]


def is_rollup(line):
    t = _subtotal_time(line.split(b",", 1)[0].decode() if isinstance(line, bytes) else line.split(",", 1)[0])
    return t is not None and len(t) in (2, 3)


def hours_only(data):
    """The bytes of a merged file without its rollup lines."""
    return b"".join(l for l in data.splitlines(keepends=True) if not is_rollup(l))


def _columns(value):
    out = {}
    for col in value.split(" "):
        name, _, n = col.rpartition(":")
        out[name] = out.get(name, 0) + int(n)
    return out


def _value(sums):
    return " ".join(f"{k}:{v}" for k, v in sorted(sums.items(), key=lambda kv: kv[0].encode()) if v != 0)


def rollups_of(data):
    """{rollup key: value} of the merged file's bytes."""
    out = {}
    for line in data.decode().splitlines():
        key, _, value = line.partition(",")
        if is_rollup(key):
            out[key] = value
    return out


def expected_rollups(data):
    """{day or month key: value} that the hours of the file make (every one, due or not: the
    mask of its hours, then its sums; only the mask where the sums cancel),
    {key: the number of hour records (days) or days (months) it covers},
    {key: the number of hour columns it sums}."""
    sums, covers, hour_columns, hours = {}, {}, {}, {}
    for line in data.decode().splitlines():
        key, _, value = line.partition(",")
        t = _subtotal_time(key)
        if t is None or len(t) != 4:
            continue
        group = key[: len(key) - 4]
        columns = _columns(value)
        for rollup, unit in ((group + t[:3], t), (group + t[:2], t[:3])):
            s = sums.setdefault(rollup, {})
            for k, n in columns.items():
                s[k] = s.get(k, 0) + n
            covers.setdefault(rollup, set()).add(unit)
            hours.setdefault(rollup, set()).add(t)
            hour_columns[rollup] = hour_columns.get(rollup, 0) + len(columns)
    return ({k: rollup_value(hours[k], v) for k, v in sums.items()}, {k: len(v) for k, v in covers.items()},
            hour_columns)


def due_rollups(data):
    """{key: value} of the rollups a merge writes for these hours (docs/formats.md#rollup-records):
    covering two hours (days) or two days (months), not empty, folding the hours' columns at
    least twice."""
    values, covers, hour_columns = expected_rollups(data)
    sums = {k: [c for c in v.split(" ") if not c.startswith(".")] for k, v in values.items()}
    return {k: v for k, v in values.items()
            if sums[k] and covers[k] >= 2 and hour_columns[k] >= 2 * len(sums[k])}


def check_rollups(data):
    """Asserts every rollup line of a merged file equals the sum of its hours, sits where
    the key order puts it, and returns the number of rollup lines."""
    keys = [line.split(b",", 1)[0] for line in data.splitlines()]
    assert keys == sorted(keys) and len(set(keys)) == len(keys), "keys out of order"
    expected = expected_rollups(data)[0]
    found = rollups_of(data)
    for key, value in found.items():
        assert value, f"empty rollup {key}"
        assert expected.get(key) == value, f"rollup {key} is {value!r}, its hours sum to {expected.get(key)!r}"
    return len(found)
