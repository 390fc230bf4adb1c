"""Read queries refuse what they do not understand (docs/api-read.md#parameters-and-answers):
a parameter an endpoint does not take, or one given twice, is a named 400 on every read
endpoint, as /incr's unknown parameters are — a typo never silently changes the answer.

Before, `/series?…&timzone=America/New_York` answered in UTC with 200 and
`/breakdown?…&limt=3` answered the default limit.
"""
import pytest

from harness import Procs, get
from test_api_read import Cluster, history_lines, publish_archive

SERIES = "/series?ns=u&key=jehiah&unit=day&units=2&unit_reference_ts=1333314000"
BREAKDOWN = "/breakdown?ns=u&key=jehiah&sub=c&unit=day&units=1&unit_reference_ts=1333314000"
# Every read endpoint, a request it answers, and the parameters it takes (in its message).
ENDPOINTS = [
    (SERIES, "ns, key, unit, units, unit_reference_ts, start, end, timezone, hour_offset, rollup"),
    (BREAKDOWN, "ns, key, sub, unit, units, unit_reference_ts, start, end, timezone, hour_offset, limit"),
    ("/keys?ns=u&prefix=j", "ns, prefix, limit"),
    ("/subtotals?ns=u&key=jehiah&unit_reference_ts=1333314000",
     "ns, key, unit, units, unit_reference_ts, start, end, timezone, hour_offset"),
    ("/lookup?hash=h0aMB8AuNw4%3D", "hash"),
    ("/leaderboard?ns=u&unit_reference_ts=1333314000",
     "ns, unit, units, unit_reference_ts, start, end, timezone, hour_offset, limit"),
    ("/namespaces", None),
    ("/timezones", None),
    ("/cluster", None),
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("params")
    procs = Procs(tmp)
    try:
        work = publish_archive(tmp, history_lines(), 1)
        yield Cluster(procs, tmp, [[work / "current" / "shard-0.csv"]])
    finally:
        errors = procs.stop_all()
        assert not errors, errors


def answer(cluster, path):
    r = get(cluster.port, path)
    return r.status, r.json()


def test_the_typos_of_the_issue_are_named(cluster):
    status, body = answer(cluster, SERIES + "&timzone=America/New_York")
    assert (status, body["status_txt"], body["data"]) == (400, "UNKNOWN_ARG", None)
    assert body["message"] == ("unknown parameter 'timzone' (/series takes ns, key, unit, units, unit_reference_ts, "
                               "start, end, timezone, hour_offset, rollup)")
    status, body = answer(cluster, BREAKDOWN + "&limt=3")
    assert (status, body["status_txt"]) == (400, "UNKNOWN_ARG")
    assert "'limt'" in body["message"]
    # Spelt right, the same requests answer.
    assert answer(cluster, SERIES + "&timezone=America/New_York")[1]["data"]["tz_offset"] == -4
    assert len(answer(cluster, BREAKDOWN + "&limit=1")[1]["data"]["breakdown"]) == 1


def test_every_read_endpoint_refuses_unknown_and_repeated_parameters(cluster):
    for path, takes in ENDPOINTS:
        status, body = answer(cluster, path)
        assert (status, body["status_code"]) == (200, 200), (path, body)
        sep = "&" if "?" in path else "?"
        status, body = answer(cluster, path + sep + "colour=red")
        assert (status, body["status_txt"], body["data"]) == (400, "UNKNOWN_ARG", None), (path, body)
        endpoint = path.split("?")[0]
        assert body["message"] == (f"unknown parameter 'colour' ({endpoint} takes {takes})" if takes else
                                   f"unknown parameter 'colour' ({endpoint} takes none)"), path
        if takes is None:
            continue
        first = path.split("?")[1].split("&")[0]  # its first parameter, again
        name = first.split("=")[0]
        status, body = answer(cluster, path + "&" + first)
        assert (status, body["status_txt"]) == (400, "INVALID_ARG_" + name.upper()), (path, body)
        assert body["message"] == f"{name} is given twice; give it once"
        # An empty value given twice is given twice too.
        status, body = answer(cluster, f"{path}&{name}=")
        assert (status, body["status_txt"]) == (400, "INVALID_ARG_" + name.upper()), (path, body)


def test_the_first_problem_in_request_order_is_the_one_named(cluster):
    status, body = answer(cluster, "/series?colour=red&ns=u")
    assert (status, body["status_txt"]) == (400, "UNKNOWN_ARG")
    status, body = answer(cluster, "/series?ns=u&units=3&units=4&colour=red")
    assert (status, body["status_txt"]) == (400, "INVALID_ARG_UNITS")
    # /breakdown never took rollup: now it says so.
    status, body = answer(cluster, BREAKDOWN + "&rollup=true")
    assert (status, body["status_txt"]) == (400, "UNKNOWN_ARG")
