"""The dashboard (docs/dashboard.md) in a real browser, and the API endpoints it uses.

One cluster for the whole file, every server with a tiny --fwmatch-limit so every listing
pages: 2 archive shards (shard 0 with two replicas) holding 90 days of hourly clicks that end
on REF_DAY (America/New_York leaves DST inside them), 2 realtime shards holding today's
increments sent through the API, and the API serving the dashboard. Debian's headless
Chromium, driven by Selenium, loads the pages; the page publishes what it drew in
window.dashboardState, which the tests compare with the API's own answers.

Screenshots go to $CLICKATRON_ARTIFACTS (default: the test's temp dir); with
CLICKATRON_DOCS_IMG=DIR they are also written there (docs/img holds the ones in the docs).
"""
import datetime
import json
import os
import shutil
import time
import urllib.parse
from zoneinfo import ZoneInfo

import pytest

from harness import Procs, free_port, get, post, run, wait_until
from test_api_read import publish_archive
from ymdh import encode as ymdh_encode

# Debian's python3-selenium, chromium and chromium-driver (ops/install-deps): never skipped.
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

REF_DAY = datetime.datetime(2026, 11, 3, tzinfo=datetime.timezone.utc)
REF = int(REF_DAY.timestamp()) + 12 * 3600 + 1800  # 2026-11-03 12:30 UTC
FIRST_HOUR = int(REF_DAY.timestamp()) - 89 * 86400  # 90 days: 2026-08-06 .. 2026-11-03
URLS = ["http://www.example.com/a", "https://news.example.org/b?x=1"]
HASHED_KEY = "http://example.com/landing"
NY = "America/New_York"


def stored(value):
    return run("clickatron-key", ["stored", value], check=True).stdout.decode().strip()


def history():
    """Realtime-format lines: alice hourly for 90 days (subtotals c and r), a few others."""
    lines = []
    hashes = {u: stored(u) for u in URLS + [HASHED_KEY]}
    for u, h in hashes.items():
        lines.append(f"_l|{h},{u}")
    hour = FIRST_HOUR
    i = 0
    while hour <= REF:
        t = ymdh_encode(hour)
        n = 1 + i % 7 + (i // 24) % 5
        de = n // 3
        lines += [f"u|alice.{t},{n}", f"c.u|alice.US.{t},{n - de}"]
        if de:
            lines.append(f"c.u|alice.DE.{t},{de}")
        a = n // 2
        lines.append(f"r.u|alice.{hashes[URLS[0]]}.{t},{a}") if a else None
        lines.append(f"r.u|alice.{hashes[URLS[1]]}.{t},{n - a}")
        hour += 3600
        i += 1
    for k, (key, n) in enumerate([("alina", 3), ("albert", 4), ("bob", 5), (hashes[HASHED_KEY], 6)]):
        for d in range(3):
            lines.append(f"u|{key}.{ymdh_encode(REF - (d * 30 + k) * 3600)},{n}")
    return lines


class DashCluster:
    def __init__(self, procs, tmp):
        work = publish_archive(tmp, history(), 2)
        shard = [work / "current" / f"shard-{k}.csv" for k in range(2)]
        self.archive = []
        for files in ([shard[0], shard[0]], [shard[1]]):
            replicas = []
            for f in files:
                port = free_port()
                replicas.append((procs.start("clickatron-archive", ["--db-file", f, "--port", port,
                                                                    "--fwmatch-limit", 2],
                                             ready_port=port), port))
            self.archive.append(replicas)
        self.realtime = []
        for k in range(2):
            port = free_port()
            (tmp / f"rt{k}").mkdir()
            self.realtime.append((procs.start("clickatron-realtime",
                                              ["--data-dir", tmp / f"rt{k}", "--port", port,
                                               "--fwmatch-limit", 5], ready_port=port), port))
        self.port = free_port()
        conf = tmp / "cluster.conf"
        conf.write_text(
            f"port = {self.port}\n" + "".join(f"realtime = 127.0.0.1:{p}\n" for _, p in self.realtime) +
            "".join("archive = " + ",".join(f"127.0.0.1:{p}" for _, p in s) + "\n" for s in self.archive) +
            f"oplog-dir = {tmp / 'oplog'}\nnode-id = api-dash\n")
        self.conf = conf
        self.api = procs.start("clickatron-api", ["--config", conf], ready_port=self.port)
        self.url = f"http://127.0.0.1:{self.port}/"

    def json(self, path, **params):
        r = get(self.port, path + ("?" + urllib.parse.urlencode(params) if params else ""))
        body = r.json()
        assert r.status == 200 and body["status_code"] == 200, (path, params, body)
        return body["data"]

    def incr(self, **params):
        r = get(self.port, "/incr?" + urllib.parse.urlencode(params, doseq=True))
        assert r.status == 200, r

    def delivered(self):
        return wait_until(lambda: self.json("/stats")["backlog_records"] == 0, what="oplog delivery")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dashboard")
    procs = Procs(tmp)
    try:
        c = DashCluster(procs, tmp)
        # Today's realtime data: alice (in both tiers), alfred (realtime only) over many
        # hours, so each realtime listing is several pages of 5 lines.
        now = int(time.time())
        for h in range(12):
            c.incr(ns="u", key="alice", ts=now - h * 3600, sub=["c:NZ", "r:" + URLS[0]])
            c.incr(ns="u", key="alfred", ts=now - h * 3600)
        c.delivered()
        yield c
    finally:
        errors = procs.stop_all()
        assert not errors, errors


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    out = os.environ.get("CLICKATRON_ARTIFACTS") or str(tmp_path_factory.mktemp("artifacts"))
    os.makedirs(out, exist_ok=True)
    return out


@pytest.fixture(scope="module")
def browser():
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,1000", "--lang=en-US"):
        opts.add_argument(a)
    opts.binary_location = "/usr/bin/chromium"
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    driver.set_window_size(1280, 1000)
    try:
        yield driver
    finally:
        driver.quit()


def screenshot(driver, artifacts, name):
    path = os.path.join(artifacts, name)
    driver.save_screenshot(path)
    docs = os.environ.get("CLICKATRON_DOCS_IMG")
    if docs:
        shutil.copy(path, os.path.join(docs, name))


def state(driver):
    return driver.execute_script("return JSON.parse(JSON.stringify(window.dashboardState || null))")


def open_page(driver, cluster, query=""):
    driver.get(cluster.url + (("?" + query) if query else ""))
    wait_until(lambda: (state(driver) or {}).get("ready"), timeout=10, what="dashboard start")


def settled(driver, loads_before=0):
    """Waits until the page finished what it was loading (and loaded at least once more)."""
    return wait_until(lambda: (lambda s: s if s["busy"] == 0 and s["loads"] > loads_before else None)(state(driver)),
                      timeout=15, what="dashboard load")


def severe_logs(driver):
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def api_series(cluster, key, **q):
    data = cluster.json("/series", ns="u", key=key, **q)
    return [b["dt"] for b in reversed(data["series"])], [b["value"] for b in reversed(data["series"])], data


def local_labels(dts, unit, tz):
    zone = ZoneInfo(tz) if not tz.lstrip("+-").isdigit() else datetime.timezone(datetime.timedelta(hours=int(tz)))
    fmt = {"hour": "%Y-%m-%d %H:%M", "month": "%Y-%m"}.get(unit, "%Y-%m-%d")
    return [datetime.datetime.fromtimestamp(dt, zone).strftime(fmt) for dt in dts]


# ---- the API endpoints (no browser) -------------------------------------------------------

def test_keys_merges_both_tiers_sorted_deduplicated_and_bounded(cluster):
    d = cluster.json("/keys", ns="u", prefix="al")
    assert [k["key"] for k in d["keys"]] == ["albert", "alfred", "alice", "alina"]
    assert d["more"] is False and d["limit"] == 20 and d["prefix"] == "al"
    d = cluster.json("/keys", ns="u", prefix="al", limit=2)
    assert [k["key"] for k in d["keys"]] == ["albert", "alfred"] and d["more"] is True
    d = cluster.json("/keys", ns="u", prefix="alf", limit=1)  # realtime only, read through pages
    assert d["keys"] == [{"key": "alfred", "stored": "alfred"}] and d["more"] is False
    # every key of u: the hashed one is listed by its stored form and shown as its original
    d = cluster.json("/keys", ns="u")
    h = stored(HASHED_KEY)
    assert sorted(k["stored"] for k in d["keys"]) == [k["stored"] for k in d["keys"]]
    assert {"key": HASHED_KEY, "stored": h} in d["keys"]
    assert len(d["keys"]) == 6
    # a key typed whole is found by its hash
    d = cluster.json("/keys", ns="u", prefix=HASHED_KEY)
    assert d["keys"] == [{"key": HASHED_KEY, "stored": h, "exact": True}]
    assert cluster.json("/keys", ns="u", prefix="http://example.com/nothing")["keys"] == []
    assert cluster.json("/keys", ns="l", prefix="al")["keys"] == []
    for path, status, txt in [("/keys", 400, "MISSING_ARG_NS"), ("/keys?ns=_l", 400, "INVALID_ARG_NS"),
                              ("/keys?ns=u&limit=0", 400, "INVALID_ARG_LIMIT"),
                              ("/keys?ns=u&limit=1001", 400, "INVALID_ARG_LIMIT"),
                              ("/keys?ns=u&prefix=" + "a" * 4097, 400, "INVALID_ARG_PREFIX"),
                              ("/keys?ns=u&prefix=%zz", 400, "INVALID_ARG_PREFIX")]:
        r = get(cluster.port, path)
        assert (r.status, r.json()["status_txt"], r.json()["data"]) == (status, txt, None), (path, r)
        assert r.json()["message"]


def test_subtotals_lists_the_namespaces_a_key_has_in_the_range(cluster):
    assert cluster.json("/subtotals", ns="u", key="alice", unit_reference_ts=REF)["subtotals"] == ["c", "r"]
    assert cluster.json("/subtotals", ns="u", key="alice", unit="day", units=1,
                        unit_reference_ts=REF)["subtotals"] == ["c", "r"]
    # before the first hour with data: none; bob never had subtotals
    assert cluster.json("/subtotals", ns="u", key="alice", unit="day", units=3,
                        unit_reference_ts=FIRST_HOUR - 86400)["subtotals"] == []
    assert cluster.json("/subtotals", ns="u", key="bob", unit_reference_ts=REF)["subtotals"] == []
    # today's realtime subtotals of alice (NZ) are found in realtime alone
    assert cluster.json("/subtotals", ns="u", key="alice", unit="day", units=2)["subtotals"] == ["c", "r"]
    r = get(cluster.port, "/subtotals?ns=u")
    assert (r.status, r.json()["status_txt"]) == (400, "MISSING_ARG_KEY")
    r = get(cluster.port, "/subtotals?ns=u&key=alice&timezone=Mars/Olympus")
    assert (r.status, r.json()["status_txt"]) == (400, "INVALID_ARG_TIMEZONE")


def test_cluster_gathers_every_backend_stats(cluster):
    d = cluster.json("/cluster")
    assert [(s["shard"], s["up"]) for s in d["realtime"]] == [(0, True), (1, True)]
    assert [[(r["replica"], r["up"]) for r in s["replicas"]] for s in d["archive"]] == [[(0, True), (1, True)], [(0, True)]]
    assert d["archive"][0]["replicas"][1]["stats"]["last_day"] == "2026-11-03"
    assert "slots" in d["realtime"][1]["stats"]


def test_static_files_types_and_bad_paths(cluster):
    for path, ctype in [("/", "text/html; charset=utf-8"), ("/ui/app.js", "text/javascript; charset=utf-8"),
                        ("/ui/style.css", "text/css; charset=utf-8"), ("/ui/chart.js", "text/javascript; charset=utf-8")]:
        r = get(cluster.port, path)
        assert (r.status, r.headers["content-type"]) == (200, ctype), path
    with open("/usr/share/javascript/chart.js/chart.min.js", "rb") as f:
        assert get(cluster.port, "/ui/chart.js").body == f.read()
    for path, status, txt in [("/ui/../api_server.cc", 400, "INVALID_PATH"), ("/ui/%2e%2e/x.js", 400, "INVALID_PATH"),
                              ("/ui/sub/app.js", 400, "INVALID_PATH"), ("/ui/.hidden.js", 400, "INVALID_PATH"),
                              ("/ui/", 400, "INVALID_PATH"), ("/ui/nope.js", 404, "NOT_FOUND")]:
        r = get(cluster.port, path)
        assert (r.status, r.json()["status_txt"]) == (status, txt), (path, r)
    assert post(cluster.port, "/", "").status == 405


def test_api_refuses_to_start_without_chartjs_or_ui(tmp_path, procs):
    conf = tmp_path / "c.conf"
    conf.write_text(f"realtime = 127.0.0.1:{free_port()}\noplog-dir = {tmp_path / 'o'}\n"
                    f"ui-chartjs = {tmp_path / 'missing.js'}\nport = {free_port()}\n")
    r = run("clickatron-api", ["--config", conf], timeout=30)
    assert r.returncode == 1
    assert f"ui-chartjs {tmp_path / 'missing.js'}" in r.stderr.decode() and "libjs-chart.js" in r.stderr.decode()
    r = run("clickatron-api", ["--config", conf, "--ui-dir", tmp_path / "nowhere",
                               "--ui-chartjs", "/usr/share/javascript/chart.js/chart.min.js"], timeout=30)
    assert r.returncode == 1 and f"ui-dir {tmp_path / 'nowhere'}" in r.stderr.decode()


# ---- the dashboard in Chromium ------------------------------------------------------------

def test_page_loads_clean_and_suggests_keys(cluster, browser, artifacts):
    open_page(browser, cluster)
    key = browser.find_element(By.ID, "key")
    key.send_keys("al")
    want = [k["key"] for k in cluster.json("/keys", ns="u", prefix="al", limit=20)["keys"]]
    got = wait_until(lambda: [li.get_attribute("data-key") for li in
                              browser.find_elements(By.CSS_SELECTOR, "#suggestions li[data-key]")] or None,
                     timeout=10, what="suggestions")
    assert got == want == ["albert", "alfred", "alice", "alina"]
    assert browser.find_element(By.ID, "suggestions").is_displayed()
    screenshot(browser, artifacts, "dashboard-suggestions.png")
    # a hashed key typed whole
    key.clear()
    key.send_keys(HASHED_KEY)
    wait_until(lambda: [li.get_attribute("data-stored") for li in
                        browser.find_elements(By.CSS_SELECTOR, "#suggestions li[data-key]")] == [stored(HASHED_KEY)],
               timeout=10, what="the hashed key's suggestion")
    assert severe_logs(browser) == []
    failed = browser.execute_script(
        "return performance.getEntriesByType('resource').filter(e => e.responseStatus !== 200).map(e => e.name)")
    assert failed == []


def test_series_equals_api(cluster, browser, artifacts):
    q = f"key=alice&unit=hour&units=2160&ref={REF}"
    open_page(browser, cluster, q)
    s = settled(browser)
    dts, values, data = api_series(cluster, "alice", unit="hour", units=2160, unit_reference_ts=REF)
    assert s["series"]["values"] == values and s["series"]["dts"] == dts
    assert sum(values) > 0 and len(values) == 2160
    assert s["total"] == cluster.json("/series", ns="u", key="alice", unit="month", units=-1,
                                      rollup="true", unit_reference_ts=REF)["total"]
    assert severe_logs(browser) == []


def test_unit_and_time_zone_change_buckets_across_dst(cluster, browser, artifacts):
    open_page(browser, cluster, f"key=alice&unit=day&units=7&ref={REF}")
    s = settled(browser)
    loads = s["loads"]
    # New York: 2026-11-01 is 25 hours long (DST ends); bucket starts move from -4 to -5
    tz = browser.find_element(By.ID, "tz")
    tz.clear()
    tz.send_keys(NY, Keys.TAB)
    s = settled(browser, loads)
    dts, values, data = api_series(cluster, "alice", unit="day", units=7, unit_reference_ts=REF, timezone=NY)
    assert s["series"]["dts"] == dts and s["series"]["values"] == values
    assert s["series"]["tz_offset"] == data["tz_offset"] == -5
    assert {dts[i + 1] - dts[i] for i in range(6)} == {86400, 90000}  # one 25-hour day
    assert s["series"]["labels"] == local_labels(dts, "day", NY)
    assert s["series"]["labels"][-3:] == ["2026-11-01", "2026-11-02", "2026-11-03"]
    assert NY in browser.find_element(By.ID, "series-meta").text and "tz_offset -5" in browser.find_element(By.ID, "series-meta").text
    screenshot(browser, artifacts, "dashboard-series.png")
    # hour buckets over the change, then an integer offset, then weeks from Monday
    for unit, units, zone in [("hour", 48, NY), ("hour", 30, "-7"), ("mweek", 4, "3"), ("month", 3, NY)]:
        loads = state(browser)["loads"]
        browser.execute_script(
            "document.getElementById('unit').value = arguments[0];"
            "document.getElementById('units').value = arguments[1];"
            "document.getElementById('tz').value = arguments[2];"
            "document.getElementById('controls').requestSubmit();", unit, str(units), zone)
        s = settled(browser, loads)
        dts, values, data = api_series(cluster, "alice", unit=unit, units=units, unit_reference_ts=REF, timezone=zone)
        assert (s["series"]["unit"], s["series"]["dts"], s["series"]["values"]) == (unit, dts, values), (unit, zone)
        assert s["series"]["labels"] == local_labels(dts, unit, zone), (unit, zone)
        assert s["series"]["tz_offset"] == data["tz_offset"]
    assert severe_logs(browser) == []


def test_breakdowns_equal_api_with_hashed_subkeys_expanded(cluster, browser, artifacts):
    open_page(browser, cluster, f"key=alice&unit=day&units=30&ref={REF}&blimit=5&cmp=bob")
    s = wait_until(lambda: (lambda s: s if s["busy"] == 0 and len(s["breakdowns"]) == 2 else None)(state(browser)),
                   timeout=15, what="breakdowns")
    for sub in ("c", "r"):
        want = cluster.json("/breakdown", ns="u", key="alice", sub=sub, unit="day", units=30,
                            unit_reference_ts=REF, limit=5, timezone="UTC")["breakdown"]
        assert s["breakdowns"][sub] == want, sub
    assert {e["subkey"] for e in s["breakdowns"]["r"]} == set(URLS)
    assert {e["subkey"] for e in s["breakdowns"]["c"]} == {"US", "DE"}
    # the compared key, on the same axes
    dts, values, _ = api_series(cluster, "bob", unit="day", units=30, unit_reference_ts=REF)
    assert s["compare"] == {"key": "bob", "dts": dts, "values": values}
    assert s["series"]["dts"] == dts
    screenshot(browser, artifacts, "dashboard-breakdowns.png")
    assert severe_logs(browser) == []


def test_missing_key_and_api_errors_are_shown(cluster, browser, artifacts):
    open_page(browser, cluster, f"key=nobody&ref={REF}")
    s = settled(browser)
    assert s["missing"] is True
    notice = browser.find_element(By.ID, "notice")
    assert notice.is_displayed() and "nobody" in notice.text and "never been counted" in notice.text
    open_page(browser, cluster, f"key=alice&tz=Mars/Olympus&ref={REF}")
    s = settled(browser)
    r = get(cluster.port, f"/series?ns=u&key=alice&unit=day&units=30&timezone=Mars/Olympus&unit_reference_ts={REF}")
    assert s["error"] == {"status": 400, "status_txt": "INVALID_ARG_TIMEZONE", "message": r.json()["message"]}
    box = browser.find_element(By.ID, "error")
    assert box.is_displayed() and box.text == f"INVALID_ARG_TIMEZONE: {r.json()['message']}"
    assert s["series"] is None and not browser.find_element(By.ID, "series-section").is_displayed()
    screenshot(browser, artifacts, "dashboard-error.png")
    browser.get_log("browser")  # the 400s the page asked for are expected here


def test_live_shows_a_new_increment(cluster, browser):
    open_page(browser, cluster, "key=livekey&unit=hour&units=3&live=1")
    s = settled(browser)
    assert browser.find_element(By.ID, "live").is_selected()
    before = s["series"]["values"][-1]
    cluster.incr(ns="u", key="livekey", value=5)
    wait_until(lambda: state(browser)["series"]["values"][-1] == before + 5, timeout=10, what="the live increment")
    assert severe_logs(browser) == []


def test_shared_url_reopens_the_view_and_back_forward_work(cluster, browser):
    open_page(browser, cluster, f"ref={REF}")
    browser.find_element(By.ID, "key").send_keys("alice")
    browser.execute_script(
        "document.getElementById('unit').value = 'week'; document.getElementById('units').value = '6';"
        "document.getElementById('tz').value = 'Europe/Berlin'; document.getElementById('controls').requestSubmit();")
    s = settled(browser)
    url = browser.current_url
    q = urllib.parse.parse_qs(urllib.parse.urlparse(url).query)
    assert {k: v[0] for k, v in q.items()} == {"key": "alice", "unit": "week", "units": "6", "tz": "Europe/Berlin", "ref": str(REF)}
    shown = s["series"]
    # a fresh page from the shared URL draws the same view
    browser.get("about:blank")
    browser.get(url)
    wait_until(lambda: (state(browser) or {}).get("ready"), timeout=10)
    s = settled(browser)
    assert s["series"] == shown
    assert browser.find_element(By.ID, "tz").get_attribute("value") == "Europe/Berlin"
    # to the cluster view and back
    browser.find_element(By.ID, "nav-cluster").click()
    wait_until(lambda: state(browser)["view"] == "cluster" and state(browser)["cluster"], timeout=10)
    browser.back()
    wait_until(lambda: state(browser)["view"] == "explore", timeout=10)
    s = settled(browser)
    assert s["series"] == shown and browser.current_url == url
    browser.forward()
    wait_until(lambda: state(browser)["view"] == "cluster", timeout=10)
    assert severe_logs(browser) == []


def test_cluster_view_shows_a_stopped_archive_replica_as_down(cluster, browser, artifacts):
    open_page(browser, cluster, "view=cluster")
    s = wait_until(lambda: state(browser)["cluster"], timeout=10)
    assert [(a["shard"], a["replica"], a["up"]) for a in s["archive"]] == [(0, 0, True), (0, 1, True), (1, 0, True)]
    assert {a["last_day"] for a in s["archive"]} == {"2026-11-03"}
    assert [r["up"] for r in s["realtime"]] == [True, True]
    cluster.archive[0][1][0].terminate()
    open_page(browser, cluster, "view=cluster")
    s = wait_until(lambda: state(browser)["cluster"], timeout=10)
    assert [(a["shard"], a["replica"], a["up"]) for a in s["archive"]] == [(0, 0, True), (0, 1, False), (1, 0, True)]
    row = browser.find_element(By.CSS_SELECTOR, 'tr[data-tier="archive"][data-shard="0"][data-replica="1"]')
    assert row.get_attribute("data-up") == "false" and "down" in row.text
    screenshot(browser, artifacts, "dashboard-cluster.png")
    assert severe_logs(browser) == []
