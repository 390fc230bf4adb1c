"""The cluster secret (docs/operations.md#threat-model): every internal endpoint of the
realtime, archive and API servers answers 401 SECRET_MISSING without X-Clickatron-Secret,
403 SECRET_WRONG with another value, and changes nothing; with the secret it works. The
sortdb reads stay open unless require-secret-for-reads; the API's /stats unless
stats-secret. A server refuses to start on a non-loopback address without a secret, and on
a secret file that is missing, open to others or too short.
"""
import os
import urllib.parse

from formats import day_text
from harness import SECRET, SECRET_FILE, SENDER, free_port, get, post, request, run, wait_until
from test_limits import stats_limits
from test_realtime import DAY0, key, verify_export, ymdh

WRONG = "0" * len(SECRET)
Q = urllib.parse.quote


def refused(r, code, status_txt):
    assert r.status == code, r
    body = r.json()
    assert (body["status_code"], body["status_txt"], body["data"]) == (code, status_txt, None), body
    assert SECRET not in r.text
    return body["message"]


def refused_both_ways(method, port, path, body=None, headers=None):
    """The request without the secret (401) and with a wrong one (403)."""
    refused(request(port, method, path, body=body, headers=headers, secret=False), 401, "SECRET_MISSING")
    refused(request(port, method, path, body=body, headers=headers, secret=WRONG), 403, "SECRET_WRONG")


def refusals(port):
    """/stats limits.secret_missing and limits.secret_wrong."""
    limits = stats_limits(port)
    return limits["secret_missing"], limits["secret_wrong"]


def secret_file(tmp_path, text, mode=0o600, name="secret"):
    path = tmp_path / name
    path.write_text(text)
    os.chmod(path, mode)
    return str(path)


# ---- realtime ----


def start_realtime(procs, tmp_path, *extra):
    data = tmp_path / "rt"
    data.mkdir(exist_ok=True)
    port = free_port()
    procs.start("clickatron-realtime", ["--data-dir", data, "--port", port, *extra], ready_port=port)
    return port


def realtime_stats(port):
    r = get(port, "/stats")
    assert r.status == 200, r
    return r.json()["data"]


def test_realtime_internal_endpoints_need_the_secret_and_change_nothing_without_it(procs, tmp_path):
    port = start_realtime(procs, tmp_path)
    k = key("a", DAY0)
    incr = "/incr?source=api-1&seq=1"
    refused_both_ways("POST", port, incr, body=f"{k},5\n", headers=SENDER)
    refused_both_ways("POST", port, f"/set?day={day_text(DAY0)}", body="_l|h0aMB8AuNw4=,http://x/\n")
    assert get(port, "/get?key=" + Q(k)).status == 404
    assert get(port, "/get?key=" + Q("_l|h0aMB8AuNw4=")).status == 404
    stats = realtime_stats(port)
    assert stats["counters"]["incr_batches"] == 0 and stats["counters"]["set_lines"] == 0
    assert stats["sources"] == {}
    assert refusals(port) == (2, 2)  # what knocked without the secret shows in /stats

    assert post(port, incr, f"{k},5\n", headers=SENDER).status == 200
    assert post(port, f"/set?day={day_text(DAY0)}", "_l|h0aMB8AuNw4=,http://x/\n").status == 200
    assert get(port, "/get?key=" + Q(k)).text == "5\n"

    # A whole day: /export refused without the secret, nothing streamed.
    refused_both_ways("GET", port, f"/export?day={day_text(DAY0)}")
    assert realtime_stats(port)["counters"]["exports"] == 0
    r = get(port, f"/export?day={day_text(DAY0)}")
    assert r.status == 200 and verify_export(r.body)[k] == "5"

    # /close and /release: the day stays open, then stays held.
    refused_both_ways("POST", port, f"/close?day={day_text(DAY0)}")
    slot = realtime_stats(port)["slots"][DAY0 % 3]
    assert (slot["day"], slot["state"]) == (day_text(DAY0), "open")
    assert post(port, f"/close?day={day_text(DAY0)}").status == 200
    refused_both_ways("POST", port, f"/release?day={day_text(DAY0)}")
    slot = realtime_stats(port)["slots"][DAY0 % 3]
    assert (slot["day"], slot["state"]) == (day_text(DAY0), "closed")
    assert post(port, f"/release?day={day_text(DAY0)}").status == 200
    assert realtime_stats(port)["slots"][DAY0 % 3]["state"] == "released"


def test_realtime_reads_are_open_unless_required(procs, tmp_path):
    port = start_realtime(procs, tmp_path)
    k = key("a", DAY0)
    assert post(port, "/incr?source=api-1&seq=1", f"{k},5\n", headers=SENDER).status == 200
    fwsum = "/fwsum?key=" + Q("c.u|a.") + "&from=" + ymdh(DAY0) + "&to=" + ymdh(DAY0, 23)
    for path in ("/get?key=" + Q(k), "/mget?key=" + Q(k), "/fwmatch?key=u", fwsum, "/stats", "/ping"):
        assert get(port, path, secret=False).status == 200, path

    data = tmp_path / "rt2"
    data.mkdir()
    port2 = free_port()
    procs.start("clickatron-realtime", ["--data-dir", data, "--port", port2, "--require-secret-for-reads"],
                ready_port=port2)
    assert post(port2, "/incr?source=api-1&seq=1", f"{k},7\n", headers=SENDER).status == 200
    for path in ("/get?key=" + Q(k), "/mget?key=" + Q(k), "/fwmatch?key=u", fwsum, "/stats"):
        refused_both_ways("GET", port2, path)
    assert get(port2, "/get?key=" + Q(k)).text == "7\n"
    assert get(port2, "/ping", secret=False).status == 200  # health checks stay open


def test_realtime_refuses_to_start_without_a_secret_off_loopback_or_with_a_bad_file(tmp_path):
    data = tmp_path / "rt"
    data.mkdir()
    base = ["--data-dir", data, "--port", 0]
    r = run("clickatron-realtime", base + ["--address", "0.0.0.0"], secret=False, timeout=30)
    assert r.returncode == 1
    assert r.stderr.decode() == ("clickatron-realtime: SECRET_REQUIRED: address 0.0.0.0 is not loopback, so a "
                                 "secret-file is required (docs/operations.md#threat-model)\n")
    r = run("clickatron-realtime", base + ["--require-secret-for-reads"], secret=False, timeout=30)
    assert r.returncode == 1 and "SECRET_REQUIRED: require-secret-for-reads" in r.stderr.decode()
    open_file = secret_file(tmp_path, SECRET + "\n", mode=0o644)
    r = run("clickatron-realtime", base + ["--secret-file", open_file], timeout=30)
    assert r.returncode == 2
    assert r.stderr.decode() == (f"clickatron-realtime: SECRET_FILE_OPEN: secret-file {open_file}: mode 0644 "
                                 "lets the group or others use it (chmod 600 it)\n")
    for text, name in (("\n", "SECRET_FILE_EMPTY"), ("short\n", "SECRET_FILE_SHORT")):
        r = run("clickatron-realtime", base + ["--secret-file", secret_file(tmp_path, text)], timeout=30)
        assert r.returncode == 2 and r.stderr.decode().startswith(f"clickatron-realtime: {name}: "), r.stderr
    missing = str(tmp_path / "none")
    r = run("clickatron-realtime", base + ["--secret-file", missing], timeout=30)
    assert r.returncode == 2 and r.stderr.decode().startswith(
        f"clickatron-realtime: SECRET_FILE_UNREADABLE: secret-file {missing}: "), r.stderr


# ---- archive ----


def write_db(path, value):
    path.write_text(f"a,{value}\nb,2\n")
    return str(path)


def start_archive(procs, db, *extra):
    port = free_port()
    procs.start("clickatron-archive", ["--db-file", db, "--port", port, *extra], ready_port=port)
    return port


def test_archive_reload_needs_the_secret_reads_stay_open(procs, tmp_path):
    db = write_db(tmp_path / "db.csv", 1)
    port = start_archive(procs, db)
    write_db(tmp_path / "next.csv", 9)
    os.rename(tmp_path / "next.csv", db)
    refused_both_ways("POST", port, "/reload")
    refused_both_ways("GET", port, "/reload/")
    assert get(port, "/get?key=a", secret=False).text == "1\n"  # the old file is still served
    assert refusals(port) == (2, 2)
    r = post(port, "/reload")
    assert (r.status, r.text) == (200, "db reloaded\n")
    # sortdb-compatible: the reads and /stats need nothing.
    for path in ("/get?key=a", "/get/?key=a", "/mget?key=a&key=b", "/fwmatch?key=a", "/stats", "/ping"):
        assert get(port, path, secret=False).status == 200, path
    assert get(port, "/get?key=a", secret=False).text == "9\n"


def test_archive_reads_need_the_secret_when_required(procs, tmp_path):
    port = start_archive(procs, write_db(tmp_path / "db.csv", 1), "--require-secret-for-reads")
    for path in ("/get?key=a", "/get/?key=a", "/mget?key=a", "/fwmatch?key=a", "/stats"):
        refused_both_ways("GET", port, path)
    assert get(port, "/get?key=a").text == "1\n"
    assert get(port, "/mget?key=a&key=b").text == "a,1\nb,2\n"
    assert get(port, "/ping", secret=False).status == 200


def test_archive_refuses_to_start_without_a_secret_off_loopback(tmp_path):
    db = write_db(tmp_path / "db.csv", 1)
    r = run("clickatron-archive", ["--db-file", db, "--port", 0, "--address", "0.0.0.0"], secret=False, timeout=30)
    assert r.returncode == 1
    assert r.stderr.decode() == ("clickatron-archive: SECRET_REQUIRED: address 0.0.0.0 is not loopback, so a "
                                 "secret-file is required (docs/operations.md#threat-model)\n")
    wrong_mode = secret_file(tmp_path, SECRET, mode=0o640)
    r = run("clickatron-archive", ["--db-file", db, "--port", 0, "--secret-file", wrong_mode], timeout=30)
    assert r.returncode == 2 and r.stderr.decode().startswith("clickatron-archive: SECRET_FILE_OPEN: ")


# ---- API ----


def start_api(procs, tmp_path, *extra, secret=True):
    port = free_port()
    config = tmp_path / "api.conf"
    config.write_text(f"port = {port}\nrealtime = 127.0.0.1:1\narchive = 127.0.0.1:1\n"
                      f"oplog-dir = {tmp_path / 'oplog'}\nnode-id = api-1\n")
    procs.start("clickatron-api", ["--config", config, *extra], ready_port=port, secret=secret)
    return port


def test_api_late_data_needs_the_secret_public_endpoints_do_not(procs, tmp_path):
    port = start_api(procs, tmp_path)
    refused_both_ways("GET", port, "/late")
    refused_both_ways("POST", port, "/late/release?through=0")
    assert refusals(port) == (2, 2)
    assert get(port, "/late").status == 200
    assert post(port, "/late/release?through=0").status == 200
    # The public API: no secret needed, also for /stats by default.
    assert get(port, "/incr?ns=u&key=a", secret=False).status == 200
    assert get(port, "/series?ns=u&key=a&unit=day&units=1", secret=False).status in (200, 503)
    assert get(port, "/stats", secret=False).status == 200
    assert get(port, "/ping", secret=False).status == 200


def test_api_stats_secret_option(procs, tmp_path):
    port = start_api(procs, tmp_path, "--stats-secret")
    refused_both_ways("GET", port, "/stats")
    r = get(port, "/stats")
    assert r.status == 200 and r.json()["data"]["incr"]["accepted_events"] == 0
    assert get(port, "/incr?ns=u&key=a", secret=False).status == 200


def test_api_refuses_stats_secret_or_a_public_address_without_a_secret(tmp_path):
    config = tmp_path / "api.conf"
    config.write_text(f"port = {free_port()}\nrealtime = 127.0.0.1:1\noplog-dir = {tmp_path / 'oplog'}\n")
    r = run("clickatron-api", ["--config", config, "--stats-secret"], secret=False, timeout=30)
    assert r.returncode == 2
    assert r.stderr.decode() == ("clickatron-api: SECRET_REQUIRED: stats-secret is set but no secret-file "
                                 "names the cluster secret\n")
    r = run("clickatron-api", ["--config", config, "--address", "0.0.0.0"], secret=False, timeout=30)
    assert r.returncode == 2 and "SECRET_REQUIRED: address 0.0.0.0 is not loopback" in r.stderr.decode()
    assert not os.path.exists(tmp_path / "oplog")  # refused before anything was created


def test_api_without_the_secret_cannot_deliver_to_a_shard_that_requires_it(procs, tmp_path):
    """The sender's error names the refusal; with the secret the same record is delivered."""
    rt = start_realtime(procs, tmp_path)
    port = free_port()
    config = tmp_path / "api.conf"
    config.write_text(f"port = {port}\nrealtime = 127.0.0.1:{rt}\noplog-dir = {tmp_path / 'oplog'}\n"
                      "node-id = api-1\n")
    api = procs.start("clickatron-api", ["--config", config], ready_port=port, secret=False)
    assert get(port, "/incr?ns=u&key=held").status == 200

    def last_error():
        return get(port, "/stats").json()["data"]["realtime"][0].get("last_error") or ""
    assert "SECRET_MISSING" in wait_until(last_error, what="the shard's refusal at the sender")
    assert get(rt, "/fwmatch?key=u%7Cheld.").text == ""
    assert api.terminate() == 0
    procs.start("clickatron-api", ["--config", config], ready_port=port)
    wait_until(lambda: get(rt, "/fwmatch?key=u%7Cheld.").text.count("\n") == 1, what="delivered with the secret")


def test_the_harness_runs_every_cluster_with_the_secret():
    assert os.stat(SECRET_FILE).st_mode & 0o777 == 0o600
    assert open(SECRET_FILE).read() == SECRET + "\n" and len(SECRET) == 32
