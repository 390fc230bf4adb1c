"""GET /metrics (docs/operations.md#prometheus): every server answers the values of its /stats
in the Prometheus text format, accepted by `promtool check metrics`, with typed counters and
latency histograms, guarded exactly as /stats, and equal to what /stats says.
"""
import pytest

from harness import SECRET, get, wait_until
from metrics_harness import GuardedCluster, bearer, parse_metrics, promtool, value
from test_secret import refused_both_ways

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@pytest.fixture
def cluster(procs, tmp_path):
    return GuardedCluster(procs, tmp_path)


def checked(r):
    """The exposition of r, after promtool's parser and linter accepted it."""
    assert r.status == 200, r
    assert r.headers["content-type"] == CONTENT_TYPE
    check = promtool("check", "metrics", input=r.body)
    assert check.returncode == 0, (check.stdout + check.stderr).decode()
    assert "# problem" not in r.text, r.text
    samples, types = parse_metrics(r.text)
    for name, kind in types.items():
        assert name.startswith("clickatron_"), name
        assert (kind == "counter") == name.endswith("_total"), (name, kind)
    return samples, types


def test_every_server_answers_promtool_clean_metrics_with_counters_and_histograms(cluster):
    for _ in range(3):
        cluster.incr("jehiah")
    cluster.wait_drained()
    assert get(cluster.archive_port, "/get?key=" + "u%7Cjehiah.qbol").text == "7\n"
    for job, ports in cluster.targets().items():
        for port in ports:
            samples, types = checked(cluster.metrics(port))
            assert types["clickatron_http_request_duration_seconds"] == "histogram", job
            assert types["clickatron_http_accepted_connections_total"] == "counter", job
            assert any(name == "clickatron_http_request_duration_seconds_count" and ("path", "/ping") in labels
                       for name, labels in samples), job
    samples, types = parse_metrics(cluster.metrics().text)
    # A latency histogram per route, in seconds, its buckets cumulative up to +Inf = _count.
    get_count = value(samples, "clickatron_http_request_duration_seconds_count", path="/incr")
    assert get_count == 3
    assert value(samples, "clickatron_http_request_duration_seconds_bucket", path="/incr", le="+Inf") == 3
    assert types["clickatron_api_realtime_delivery_lag_seconds"] == "histogram"
    assert types["clickatron_oplog_sync_duration_seconds"] == "histogram"


def test_metrics_equal_stats(cluster):
    for key in ("a", "b", "c", "d"):
        cluster.incr(key)
    cluster.wait_drained()
    stats = cluster.stats()
    samples, _ = parse_metrics(cluster.metrics().text)
    assert value(samples, "clickatron_api_incr_accepted_events_total") == stats["incr"]["accepted_events"] == 4
    assert value(samples, "clickatron_api_node_info", node_id="api-1") == 1
    assert value(samples, "clickatron_api_source_conflict") == 0
    for shard in stats["realtime"]:
        k = str(shard["shard"])
        assert value(samples, "clickatron_api_realtime_delivered_records_total", shard=k) == shard["delivered_records"]
        assert value(samples, "clickatron_api_realtime_backlog_records", shard=k) == 0
        assert value(samples, "clickatron_api_realtime_state", shard=k, state="idle") == 1
        assert value(samples, "clickatron_api_realtime_waiting_slot_release", shard=k) == 0
        for slot in shard["slots"]:
            s = str(slot["slot"])
            assert value(samples, "clickatron_api_realtime_slot_backlog_seconds", shard=k, slot=s) == 0
    assert value(samples, "clickatron_oplog_last_seq") == stats["oplog"]["last_seq"] == 4
    assert value(samples, "clickatron_api_late_entries") == 0
    assert ("clickatron_api_late_oldest_pending_day_timestamp_seconds", frozenset()) not in samples  # null
    assert value(samples, "clickatron_http_max_connections") == stats["limits"]["max_connections"]
    assert value(samples, "clickatron_api_queries_total", endpoint="series") == 0

    rt = cluster.stats(cluster.rt_ports[0])
    samples, _ = parse_metrics(cluster.metrics(cluster.rt_ports[0]).text)
    assert value(samples, "clickatron_realtime_incr_applied_total") == rt["counters"]["incr_applied"] > 0
    for slot in rt["slots"]:
        s = str(slot["slot"])
        assert value(samples, "clickatron_realtime_slot_records", slot=s) == slot["records"]
        for state in ("empty", "open", "closed", "released"):
            assert value(samples, "clickatron_realtime_slot_state", slot=s, state=state) == (state == slot["state"])
    assert ("clickatron_realtime_closed_through_timestamp_seconds", frozenset()) not in samples  # null
    assert value(samples, "clickatron_realtime_ring_info", ring=rt["ring"]) == 1

    ar = cluster.stats(cluster.archive_port)
    samples, _ = parse_metrics(cluster.metrics(cluster.archive_port).text)
    assert value(samples, "clickatron_archive_records") == ar["records"] == 2
    assert value(samples, "clickatron_archive_generation_info", generation="20261121-0123456789abcdef") == 1
    assert value(samples, "clickatron_archive_last_day_timestamp_seconds") == 1795132800  # 2026-11-20 00:00 UTC
    assert value(samples, "clickatron_archive_file_damaged") == 0


def test_metrics_are_guarded_as_stats(cluster):
    for port in [cluster.port, cluster.archive_port, *cluster.rt_ports]:
        refused_both_ways("GET", port, "/metrics")
        # What a Prometheus scrape sends: the secret as a bearer token.
        assert get(port, "/metrics", headers=bearer(), secret=False).status == 200
        assert get(port, "/metrics", headers=bearer("0" * len(SECRET)), secret=False).status == 403
        assert get(port, "/ping", secret=False).status == 200


def test_metrics_are_open_where_stats_is(procs, tmp_path):
    from test_secret import start_api, start_archive, start_realtime, write_db
    ports = [start_api(procs, tmp_path), start_archive(procs, write_db(tmp_path / "db.csv", 1)),
             start_realtime(procs, tmp_path)]
    for port in ports:
        for path in ("/stats", "/metrics"):
            assert get(port, path, secret=False).status == 200, (port, path)
    # The archive's sortdb-style trailing slash answers /metrics/ too, as /stats/.
    assert get(ports[1], "/metrics/", secret=False).status == 200


def test_a_scrape_counts_itself_like_any_request(cluster):
    """/metrics is a route with its own latency, so the cost of scraping shows in the scrapes."""
    for _ in range(2):
        cluster.metrics(cluster.archive_port)
    samples, _ = parse_metrics(cluster.metrics(cluster.archive_port).text)
    assert value(samples, "clickatron_http_request_duration_seconds_count", path="/metrics") == 2
    wait_until(lambda: cluster.stats(cluster.archive_port)["requests"]["/metrics"]["count"] == 3,
               what="the third scrape counted")
