"""The dashboard (docs/dashboard.md) in a real browser, and the API endpoints it uses.

One cluster for the whole file, every server with a tiny --fwmatch-limit so every listing
pages: 2 archive shards (shard 0 with two replicas) holding 90 days of hourly clicks that end
on REF_DAY (America/New_York leaves DST inside them), 2 realtime shards holding today's
increments sent through the API, and the API serving the dashboard with display names for its
namespaces. Debian's headless Chromium, driven by Selenium (one browser for the file), loads
the pages; the page publishes what it drew in window.dashboardState, which the tests compare
with the API's own answers. No test asserts a duration: the first render is measured by
tests/bench/dashboard_render.py.

Screenshots go to $CLICKATRON_ARTIFACTS (default: the test's temp dir); with
CLICKATRON_DOCS_IMG=DIR they are also written there (docs/img holds the ones in the docs).
"""
import base64
import csv
import datetime
import io
import os
import shutil
import time
import urllib.parse
from zoneinfo import ZoneInfo

import pytest

from formats import stored, ymdh
from harness import Procs, free_port, get, post, run, wait_until
from test_api_read import publish_archive

# Debian's python3-selenium, chromium and chromium-driver (ops/install-deps): never skipped.
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

REF_DAY = datetime.datetime(2026, 11, 3, tzinfo=datetime.timezone.utc)
REF = int(REF_DAY.timestamp()) + 12 * 3600 + 1800  # 2026-11-03 12:30 UTC
FIRST_HOUR = int(REF_DAY.timestamp()) - 89 * 86400  # 90 days: 2026-08-06 .. 2026-11-03
URLS = ["http://www.example.com/a", "https://news.example.org/b?x=1"]
HASHED_KEY = "http://example.com/landing"
NY = "America/New_York"
NAMES = "display-name = u:user\ndisplay-name = l:link\ndisplay-name = c:country\ndisplay-name = r:referrer\n" \
        "country-codes = c\n"


def history():
    """Realtime-format lines: alice hourly for 90 days (subtotals c and r), a few others."""
    lines = []
    hashes = {u: stored(u) for u in URLS + [HASHED_KEY]}
    for u, h in hashes.items():
        lines.append(f"_l|{h},{u}")
    hour = FIRST_HOUR
    i = 0
    while hour <= REF:
        t = ymdh(hour)
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
            lines.append(f"u|{key}.{ymdh(REF - (d * 30 + k) * 3600)},{n}")
    for k in range(3):  # links: a second namespace for the landing page
        lines.append(f"l|x{k}.{ymdh(REF - k * 3600)},{10 * (k + 1)}")
    return lines


class DashCluster:
    def __init__(self, procs, tmp):
        self.procs = procs
        self.tmp = tmp
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
            self.realtime.append((self.start_realtime(k, port), port))
        self.port = free_port()
        conf = tmp / "cluster.conf"
        conf.write_text(
            f"port = {self.port}\n" + "".join(f"realtime = 127.0.0.1:{p}\n" for _, p in self.realtime) +
            "".join("archive = " + ",".join(f"127.0.0.1:{p}" for _, p in s) + "\n" for s in self.archive) +
            f"oplog-dir = {tmp / 'oplog'}\nnode-id = api-dash\n" + NAMES)
        self.conf = conf
        self.api = procs.start("clickatron-api", ["--config", conf], ready_port=self.port)
        self.url = f"http://127.0.0.1:{self.port}/"

    def start_realtime(self, k, port):
        return self.procs.start("clickatron-realtime", ["--data-dir", self.tmp / f"rt{k}", "--port", port,
                                                        "--fwmatch-limit", 5], ready_port=port)

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
def browser(artifacts):
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,1000", "--lang=en-US"):
        opts.add_argument(a)
    opts.binary_location = "/usr/bin/chromium"
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    driver.set_window_size(1280, 1000)
    # Exports are downloads: into the artifacts directory, never the home directory.
    driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": artifacts})
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
                      timeout=20, what="dashboard load")


def severe_logs(driver):
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def api_series(cluster, key, **q):
    data = cluster.json("/series", ns="u", key=key, **q)
    return [b["dt"] for b in reversed(data["series"])], [b["value"] for b in reversed(data["series"])], data


def zone(tz):
    return ZoneInfo(tz) if not tz.lstrip("+-").isdigit() else datetime.timezone(datetime.timedelta(hours=int(tz)))


def local_ts(tz, y, m, d, h=0, mi=0):
    return int(datetime.datetime(y, m, d, h, mi, tzinfo=zone(tz)).timestamp())


def local_labels(dts, unit, tz):
    fmt = {"hour": "%Y-%m-%d %H:%M", "month": "%Y-%m"}.get(unit, "%Y-%m-%d")
    return [datetime.datetime.fromtimestamp(dt, zone(tz)).strftime(fmt) for dt in dts]


def url_params(driver):
    return {k: v[0] for k, v in urllib.parse.parse_qs(urllib.parse.urlparse(driver.current_url).query).items()}


def submit(driver, **fields):
    """Sets form fields by id and submits the form, as a user pressing Show would."""
    driver.execute_script(
        "for (const [k, v] of Object.entries(arguments[0])) document.getElementById(k).value = v;"
        "document.getElementById('controls').requestSubmit();", fields)


def check_series_is_the_apis(driver, cluster, s, key="alice"):
    """The plotted buckets are exactly the API's for the range the page asked."""
    r = s["series"]
    dts, values, data = api_series(cluster, key, unit=r["unit"], timezone=r["tz"], start=r["start"], end=r["end"])
    assert (r["dts"], r["values"], r["partial"]) == (dts, values, data["partial"])
    assert r["labels"] == local_labels(dts, r["unit"], r["tz"])
    return data


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
                              ("/keys?ns=u&prefix=%zz", 400, "INVALID_ARG_PREFIX"),
                              ("/keys?ns=u&prefx=a", 400, "UNKNOWN_ARG")]:
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
                        ("/ui/api.js", "text/javascript; charset=utf-8"), ("/ui/time.js", "text/javascript; charset=utf-8"),
                        ("/ui/format.js", "text/javascript; charset=utf-8"),
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


# ---- the landing page ----------------------------------------------------------------------

def test_landing_page_shows_namespaces_leaderboard_and_health_from_the_api(cluster, browser, artifacts):
    browser.get(cluster.url)
    browser.execute_script("localStorage.clear()")  # a fresh browser: nothing remembered
    open_page(browser, cluster, f"ref={REF}")
    s = settled(browser)
    # The namespaces are the API's, named by the cluster config.
    chips = [(b.get_attribute("data-ns"), b.text) for b in browser.find_elements(By.CSS_SELECTOR, "#landing-namespaces button")]
    assert chips == [("l", "link (l)"), ("u", "user (u)")]
    assert [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#ns option")] == ["link (l)", "user (u)"]
    # The leaderboard of u (the default) over the range the page drew: the API's.
    r = s["range"]
    assert (r["kind"], r["preset"], r["end"]) == ("preset", "30d", REF + 1)
    assert r["start"] == int(datetime.datetime(2026, 10, 5, tzinfo=datetime.timezone.utc).timestamp())
    want = cluster.json("/leaderboard", ns="u", unit=r["unit"], timezone="UTC", start=r["start"], end=r["end"], limit=10)
    assert s["leaderboard"]["entries"] == want["leaderboard"] and s["leaderboard"]["total"] == want["total"]
    assert [e["key"] for e in want["leaderboard"]][:2] == ["alice", HASHED_KEY]
    rows = browser.find_elements(By.CSS_SELECTOR, "#leaderboard tbody tr")
    assert rows[0].text.split()[:3] == ["1", "alice", f"{want['leaderboard'][0]['value']:,}"]
    # The cluster's health, from /cluster.
    assert s["health"] == {"realtime_up": 2, "realtime": 2, "archive_up": 3, "archive": 3, "last_day": "2026-11-03",
                           "shards_down": 0, "backlog": 0}
    assert "realtime 2/2 up" in browser.find_element(By.ID, "health").text
    screenshot(browser, artifacts, "dashboard-landing.png")
    # Another namespace, then a key of the leaderboard.
    loads = s["loads"]
    browser.find_element(By.CSS_SELECTOR, '#landing-namespaces button[data-ns="l"]').click()
    s = settled(browser, loads)
    assert url_params(browser)["ns"] == "l"
    assert [e["key"] for e in s["leaderboard"]["entries"]] == ["x2", "x1", "x0"]
    loads = s["loads"]
    browser.find_element(By.CSS_SELECTOR, '#leaderboard a[data-key="x1"]').click()
    s = settled(browser, loads)
    assert (s["series"]["ns"], s["series"]["key"]) == ("l", "x1")
    assert severe_logs(browser) == []


# ---- the dashboard in Chromium ------------------------------------------------------------

def test_page_loads_clean_and_suggests_keys_as_a_combobox(cluster, browser, artifacts):
    open_page(browser, cluster, f"ref={REF}")
    settled(browser)
    key = browser.find_element(By.ID, "key")
    assert (key.get_attribute("role"), key.get_attribute("aria-expanded"),
            key.get_attribute("aria-controls")) == ("combobox", "false", "suggestions")
    key.send_keys("al")
    want = [k["key"] for k in cluster.json("/keys", ns="u", prefix="al", limit=20)["keys"]]
    got = wait_until(lambda: [li.get_attribute("data-key") for li in
                              browser.find_elements(By.CSS_SELECTOR, "#suggestions li[data-key]")] or None,
                     timeout=10, what="suggestions")
    assert got == want == ["albert", "alfred", "alice", "alina"]
    assert browser.find_element(By.ID, "suggestions").is_displayed()
    assert key.get_attribute("aria-expanded") == "true"
    key.send_keys(Keys.ARROW_DOWN, Keys.ARROW_DOWN)
    assert key.get_attribute("aria-activedescendant") == "suggestion-1"
    options = browser.find_elements(By.CSS_SELECTOR, "#suggestions li[role=option]")
    assert [o.get_attribute("aria-selected") for o in options] == ["false", "true", "false", "false"]
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
    # Every asset is local: nothing but the API's own address was asked.
    hosts = browser.execute_script("return performance.getEntriesByType('resource').map(e => new URL(e.name).host)")
    assert set(hosts) == {f"127.0.0.1:{cluster.port}"}


def test_from_to_draws_exactly_the_buckets_of_the_range_in_the_zone(cluster, browser, artifacts):
    # Dates: from New York's midnight of the 30th to the end of the 2nd (the 1st has 25 hours).
    open_page(browser, cluster, f"key=alice&from=2026-10-30&to=2026-11-02&tz={NY}")
    s = settled(browser)
    start, end = local_ts(NY, 2026, 10, 30), local_ts(NY, 2026, 11, 3)
    assert (s["series"]["start"], s["series"]["end"], s["series"]["unit"]) == (start, end, "hour")
    data = check_series_is_the_apis(browser, cluster, s)
    assert len(data["series"]) == (end - start) // 3600 == 97
    assert s["series"]["tz_offset"] == -5
    screenshot(browser, artifacts, "dashboard-series.png")
    # By day: exactly 4 buckets, one of 25 hours.
    submit(browser, unit="day")
    s = settled(browser, s["loads"])
    data = check_series_is_the_apis(browser, cluster, s)
    assert s["series"]["labels"] == ["2026-10-30", "2026-10-31", "2026-11-01", "2026-11-02"]
    assert data["partial"] == []
    assert url_params(browser)["unit"] == "day"
    # Local times and unix seconds, in an offset zone written with its '+' in the URL.
    start, end = local_ts("+5", 2026, 10, 31, 6), local_ts("+5", 2026, 11, 2, 18)
    open_page(browser, cluster, f"key=alice&from=2026-10-31T06:00&to={end}&tz=+5&unit=day")
    s = settled(browser)
    assert browser.find_element(By.ID, "tz").get_attribute("value") == "+5"
    assert (s["series"]["start"], s["series"]["end"], s["series"]["tz_offset"]) == (start, end, 5)
    data = check_series_is_the_apis(browser, cluster, s)
    assert data["partial"] == [start, s["series"]["dts"][-1]]  # both ends cut
    assert severe_logs(browser) == []


def test_presets_and_drag_to_zoom_change_the_url(cluster, browser, artifacts):
    open_page(browser, cluster, f"key=alice&tz={NY}&ref={REF}")
    s = settled(browser)
    assert (s["range"]["preset"], s["range"]["unit"]) == ("30d", "day")
    presets = {b.get_attribute("data-preset"): b for b in browser.find_elements(By.CSS_SELECTOR, "#presets button")}
    assert list(presets) == ["24h", "7d", "30d", "90d", "month"]
    expected = {"24h": (REF - REF % 3600 - 23 * 3600, "hour"), "7d": (local_ts(NY, 2026, 10, 28), "hour"),
                "month": (local_ts(NY, 2026, 11, 1), "day"), "90d": (local_ts(NY, 2026, 8, 6), "day")}
    for preset, (start, unit) in expected.items():
        loads = state(browser)["loads"]
        browser.find_element(By.CSS_SELECTOR, f'#presets button[data-preset="{preset}"]').click()
        s = settled(browser, loads)
        assert url_params(browser)["range"] == preset
        assert (s["range"]["start"], s["range"]["end"], s["series"]["unit"]) == (start, REF + 1, unit), preset
        assert presets[preset].get_attribute("aria-pressed") == "true"
        check_series_is_the_apis(browser, cluster, s)
    # Drag across buckets 10..20 of the 90 days: they become the range.
    loads = s["loads"]
    dts = s["series"]["dts"]
    x10, x20, width, height = browser.execute_script(
        "const c = Chart.getChart(document.getElementById('series-chart'));"
        "return [c.scales.x.getPixelForValue(10), c.scales.x.getPixelForValue(20), c.width, c.height]")
    canvas = browser.find_element(By.ID, "series-chart")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", canvas)
    ActionChains(browser).move_to_element_with_offset(canvas, int(x10 - width / 2), 0).click_and_hold() \
        .move_by_offset(int(x20 - x10), 0).release().perform()
    s = settled(browser, loads)
    q = url_params(browser)
    assert (q["from"], q["to"]) == ("2026-08-16", "2026-08-26")  # whole New York days 10..20
    assert (s["series"]["start"], s["series"]["end"]) == (dts[10], dts[21])
    assert s["series"]["unit"] == "hour" and len(s["series"]["dts"]) == 11 * 24
    check_series_is_the_apis(browser, cluster, s)
    screenshot(browser, artifacts, "dashboard-zoomed.png")
    # Back returns to the 90 days.
    browser.back()
    s = settled(browser, s["loads"])
    assert url_params(browser)["range"] == "90d" and "from" not in url_params(browser)
    assert severe_logs(browser) == []


def test_the_unit_follows_the_range_keeping_a_valid_choice(cluster, browser):
    open_page(browser, cluster, f"key=alice&ref={REF}&range=90d&unit=hour")
    s = settled(browser)
    assert (s["series"]["unit"], len(s["series"]["dts"])) == ("hour", 89 * 24 + 13)  # kept: 2149 points
    check_series_is_the_apis(browser, cluster, s)
    span = (s["range"]["start"], s["range"]["end"])
    # Switching the unit keeps the range (it used to turn 30 days into 30 hours).
    submit(browser, unit="week")
    s = settled(browser, s["loads"])
    assert (s["range"]["start"], s["range"]["end"], s["series"]["unit"]) == (*span, "week")
    check_series_is_the_apis(browser, cluster, s)
    # Hours over almost four years would be 33,000 points: drawn by weeks from Monday, and said so.
    open_page(browser, cluster, f"key=alice&ref={REF}&from=2023-01-01&unit=hour")
    s = settled(browser)
    assert s["series"]["unit"] == "mweek"
    assert "hour buckets would be about" in s["range"]["notice"]
    assert s["range"]["notice"] in browser.find_element(By.ID, "series-meta").text
    assert severe_logs(browser) == []


def test_ref_is_shown_and_clears_and_the_all_time_total_is_up_to_now(cluster, browser):
    open_page(browser, cluster, f"key=alice&ref={REF}")
    s = settled(browser)
    chip = browser.find_element(By.ID, "ref-chip")
    assert chip.is_displayed() and "ends at 2026-11-03 12:30" in chip.text
    # The all-time total is every count up to now, not up to the reference (it used to be).
    up_to_now = cluster.json("/series", ns="u", key="alice", unit="month", units=-1, rollup="true")["total"]
    up_to_ref = cluster.json("/series", ns="u", key="alice", unit="month", units=-1, rollup="true",
                             unit_reference_ts=REF)["total"]
    assert up_to_now > up_to_ref
    assert s["totals"]["all_time"] == up_to_now
    assert browser.find_element(By.ID, "total").text == f"all-time total: {up_to_now:,}"
    in_range = cluster.json("/series", ns="u", key="alice", unit="day", start=s["range"]["start"], end=REF + 1,
                            rollup="true")["total"]
    assert s["totals"]["range"] == in_range
    loads = s["loads"]
    browser.find_element(By.ID, "ref-clear").click()
    s = settled(browser, loads)
    assert "ref" not in url_params(browser) and not chip.is_displayed()
    assert s["range"]["end"] > REF + 86400  # now
    assert severe_logs(browser) == []


def test_breakdowns_equal_api_with_names_shares_and_a_compared_key(cluster, browser, artifacts):
    open_page(browser, cluster, f"key=alice&ref={REF}&blimit=5&cmp=bob&tz={NY}")
    s = wait_until(lambda: (lambda s: s if s["busy"] == 0 and len(s["breakdowns"]) == 2 else None)(state(browser)),
                   timeout=20, what="breakdowns")
    r = s["range"]
    total = cluster.json("/series", ns="u", key="alice", unit=r["unit"], timezone=NY, start=r["start"], end=r["end"],
                         rollup="true")["total"]
    assert s["totals"]["range"] == total
    for sub in ("c", "r"):
        want = cluster.json("/breakdown", ns="u", key="alice", sub=sub, unit=r["unit"], start=r["start"], end=r["end"],
                            limit=5, timezone=NY)["breakdown"]
        assert [(e["subkey"], e["value"]) for e in s["breakdowns"][sub]] == [(e["subkey"], e["value"]) for e in want]
        assert [e["share"] for e in s["breakdowns"][sub]] == [f"{100 * e['value'] / total:.2f}" for e in want]
    assert {e["subkey"] for e in s["breakdowns"]["r"]} == set(URLS)
    assert {(e["subkey"], e["name"]) for e in s["breakdowns"]["c"]} == {("US", "United States"), ("DE", "Germany")}
    titles = [h.text for h in browser.find_elements(By.CSS_SELECTOR, ".breakdown h3 span:first-child")]
    assert titles == ["Top 2 by country", "Top 2 by referrer"]
    # the compared key, on the same axes, with its total
    dts, values, _ = api_series(cluster, "bob", unit=r["unit"], timezone=NY, start=r["start"], end=r["end"])
    assert s["compare"] == {"key": "bob", "dts": dts, "values": values}
    assert s["series"]["dts"] == dts
    assert s["totals"]["compare"] == sum(values)
    assert browser.execute_script(
        "return Chart.getChart(document.getElementById('series-chart')).data.datasets.map(d => d.label)") == \
        ["alice (user)", "bob (user)"]
    screenshot(browser, artifacts, "dashboard-breakdowns.png")
    assert severe_logs(browser) == []


def test_previous_period_log_scale_and_a_second_axis(cluster, browser):
    open_page(browser, cluster, f"key=alice&ref={REF}&range=7d&cmp=bob&prev=1&scale=log&axis=right")
    s = settled(browser)
    r = s["range"]
    span = r["end"] - r["start"]
    dts, values, _ = api_series(cluster, "alice", unit=r["unit"], timezone="UTC", start=r["start"] - span, end=r["start"])
    assert s["previous"] == {"dts": dts, "values": values}
    chart = browser.execute_script(
        "const c = Chart.getChart(document.getElementById('series-chart'));"
        "return {y: c.options.scales.y.type, y2: c.options.scales.y2 && c.options.scales.y2.position,"
        " axes: c.data.datasets.map(d => d.yAxisID), labels: c.data.datasets.map(d => d.label)}")
    assert chart == {"y": "logarithmic", "y2": "right", "axes": ["y", "y2", "y"],
                     "labels": ["alice (user)", "bob (user)", "previous period"]}
    assert browser.find_element(By.ID, "prev").is_selected() and browser.find_element(By.ID, "scale").is_selected()
    # Unchecked, the options leave the URL.
    loads = s["loads"]
    browser.find_element(By.ID, "scale").click()
    s = settled(browser, loads)
    assert "scale" not in url_params(browser)
    assert browser.execute_script(
        "return Chart.getChart(document.getElementById('series-chart')).options.scales.y.type") == "linear"
    assert severe_logs(browser) == []


def test_partial_buckets_are_marked_and_tooltips_tell_the_two_1ams_apart(cluster, browser, artifacts):
    # Hours of New York's fall-back: 01:00 comes twice.
    open_page(browser, cluster, f"key=alice&tz={NY}&from=2026-11-01T00:00&to=2026-11-01T03:00&unit=hour")
    s = settled(browser)
    assert s["series"]["labels"] == ["2026-11-01 00:00", "2026-11-01 01:00", "2026-11-01 01:00", "2026-11-01 02:00"]
    tips = [browser.execute_script("return window.dashboardTooltip(arguments[0])", i) for i in range(4)]
    assert tips[1] == "2026-11-01 01:00 EDT (UTC-4, America/New_York)"
    assert tips[2] == "2026-11-01 01:00 EST (UTC-5, America/New_York)"
    # Days cut at both ends of the range: the API's partial buckets, dashed and marked.
    open_page(browser, cluster, f"key=alice&tz={NY}&from=2026-10-30T12:00&to=2026-11-02T06:00&unit=day")
    s = settled(browser)
    data = check_series_is_the_apis(browser, cluster, s)
    assert s["series"]["partial"] == [local_ts(NY, 2026, 10, 30, 12), local_ts(NY, 2026, 11, 2)] == data["partial"]
    assert browser.execute_script("return window.dashboardTooltip(0)").endswith(" — partial bucket")
    assert "partial buckets" in browser.find_element(By.ID, "series-meta").text
    browser.find_element(By.CSS_SELECTOR, "#series-table-box summary").click()
    rows = browser.find_elements(By.CSS_SELECTOR, "#series-table tbody tr")
    assert [r.get_attribute("class") for r in rows] == ["partial", "", "", "partial"]
    assert rows[0].text.startswith("2026-10-30 (partial)")
    screenshot(browser, artifacts, "dashboard-partial.png")
    assert severe_logs(browser) == []


def read_csv(text):
    return list(csv.reader(io.StringIO(text)))


def test_csv_and_png_export_what_is_shown(cluster, browser):
    open_page(browser, cluster, f"key=alice&tz={NY}&ref={REF}&range=7d&unit=day&cmp=bob")
    s = settled(browser)
    wait_until(lambda: len(state(browser)["breakdowns"]) == 2, timeout=10, what="breakdowns")
    browser.find_element(By.CSS_SELECTOR, '#series-section button.csv').click()
    e = wait_until(lambda: state(browser)["lastExport"], timeout=5, what="the series CSV")
    assert e["name"] == "clickatron-u-alice-series.csv"
    rows = read_csv(e["text"])
    r = s["range"]
    main = cluster.json("/series", ns="u", key="alice", unit="day", timezone=NY, start=r["start"], end=r["end"])
    cmp = cluster.json("/series", ns="u", key="bob", unit="day", timezone=NY, start=r["start"], end=r["end"])
    assert rows[0] == ["bucket_start", "dt", "alice", "bob", "partial"]
    want = [[datetime.datetime.fromtimestamp(b["dt"], ZoneInfo(NY)).isoformat(timespec="minutes"), str(b["dt"]),
             str(b["value"]), str(c["value"]), "yes" if b["dt"] in main["partial"] else "no"]
            for b, c in zip(reversed(main["series"]), reversed(cmp["series"]))]
    assert rows[1:] == want
    assert rows[-1][-1] == "yes"  # today, up to the reference
    # A breakdown's CSV: its subkeys, names, counts and shares.
    browser.find_element(By.CSS_SELECTOR, '.breakdown[data-sub="c"] button.csv').click()
    e = wait_until(lambda: (lambda x: x if x["name"].endswith("top-c.csv") else None)(state(browser)["lastExport"]),
                   timeout=5, what="the breakdown CSV")
    b = cluster.json("/breakdown", ns="u", key="alice", sub="c", unit="day", timezone=NY, start=r["start"], end=r["end"],
                     limit=10)["breakdown"]
    total = cluster.json("/series", ns="u", key="alice", unit="day", timezone=NY, start=r["start"], end=r["end"],
                         rollup="true")["total"]
    names = {"US": "United States", "DE": "Germany"}
    assert read_csv(e["text"]) == [["rank", "subkey", "name", "count", "share_percent"]] + [
        [str(i + 1), x["subkey"], names[x["subkey"]], str(x["value"]), f"{100 * x['value'] / total:.2f}"] for i, x in enumerate(b)]
    # A PNG of the chart as drawn.
    browser.find_element(By.CSS_SELECTOR, '#series-section button.png').click()
    e = wait_until(lambda: (lambda x: x if x["name"].endswith(".png") else None)(state(browser)["lastExport"]),
                   timeout=5, what="the PNG")
    assert e["href"].startswith("data:image/png;base64,")
    png = base64.b64decode(e["href"].split(",", 1)[1])
    w, h = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and (w, h) == tuple(browser.execute_script(
        "const c = document.getElementById('series-chart'); return [c.width, c.height]"))
    # The landing page's leaderboard.
    open_page(browser, cluster, f"ref={REF}")
    s = settled(browser)
    browser.find_element(By.CSS_SELECTOR, '#landing button.csv').click()
    e = wait_until(lambda: state(browser)["lastExport"], timeout=5, what="the leaderboard CSV")
    r = s["range"]
    lb = cluster.json("/leaderboard", ns="u", unit=r["unit"], timezone="UTC", start=r["start"], end=r["end"], limit=10)
    assert read_csv(e["text"]) == [["rank", "key", "count", "share_percent"]] + [
        [str(i + 1), x["key"], str(x["value"]), f"{100 * x['value'] / lb['total']:.2f}"] for i, x in enumerate(lb["leaderboard"])]
    assert severe_logs(browser) == []


def test_a_new_view_dims_the_old_one_while_it_loads(cluster, browser):
    open_page(browser, cluster, f"key=alice&ref={REF}")
    s = settled(browser)
    # In the same task as the submit: the old chart is marked as loading at once.
    marks = browser.execute_script(
        "document.getElementById('key').value = 'bob'; document.getElementById('controls').requestSubmit();"
        "const sec = document.getElementById('series-section'); const bd = document.getElementById('breakdowns');"
        "return [sec.classList.contains('loading'), sec.getAttribute('aria-busy'), bd.classList.contains('loading'),"
        " getComputedStyle(document.getElementById('series-box')).opacity]")
    assert marks == [True, "true", True, "0.3"]
    s = settled(browser, s["loads"])
    assert s["series"]["key"] == "bob" and s["loading"] == {"series": False, "breakdowns": False, "health": False}
    assert browser.find_element(By.ID, "series-section").get_attribute("aria-busy") == "false"
    assert severe_logs(browser) == []


def test_live_refreshes_every_panel_at_the_chosen_interval(cluster, browser):
    open_page(browser, cluster, "key=livekey&range=24h&live=2s")
    s = settled(browser)
    assert browser.find_element(By.ID, "live").get_attribute("value") == "2s"
    assert [o.get_attribute("value") for o in browser.find_elements(By.CSS_SELECTOR, "#live option")] == ["", "2s", "10s", "1m"]
    updated = browser.find_element(By.ID, "updated").text
    assert updated.startswith("updated ")
    before = s["series"]["values"][-1]
    cluster.incr(ns="u", key="livekey", value=5, sub=["c:NZ"])
    # The series and the breakdowns both show it, without Show being pressed.
    wait_until(lambda: state(browser)["series"]["values"][-1] == before + 5, timeout=15, what="the live increment")
    wait_until(lambda: state(browser)["breakdowns"].get("c") == [{"subkey": "NZ", "value": 5, "share": "100.00",
                                                                  "name": "New Zealand"}],
               timeout=15, what="the live breakdown")
    assert browser.find_element(By.ID, "updated").text != updated
    # 1 minute, then off: the URL says so.
    Select = __import__("selenium.webdriver.support.select", fromlist=["Select"]).Select
    Select(browser.find_element(By.ID, "live")).select_by_value("1m")
    assert url_params(browser)["live"] == "1m"
    Select(browser.find_element(By.ID, "live")).select_by_value("")
    assert "live" not in url_params(browser)
    assert severe_logs(browser) == []


def test_every_panel_recovers_after_an_api_error_in_live_mode(cluster, browser):
    shard = int(run("clickatron-key", ["shard", "--shards", "2", "u|alice"], check=True).stdout)
    open_page(browser, cluster, "key=alice&range=24h&live=2s")
    s = settled(browser)
    assert set(s["breakdowns"]) == {"c", "r"}
    proc, port = cluster.realtime[shard]
    proc.terminate()
    try:
        s = wait_until(lambda: (lambda s: s if s["error"] else None)(state(browser)), timeout=15, what="the error shown")
        assert s["error"]["status_txt"] == "REALTIME_UNAVAILABLE"
        assert browser.find_element(By.ID, "error").is_displayed()
    finally:
        cluster.realtime[shard] = (cluster.start_realtime(shard, port), port)
    # Back without pressing Show: the series and both breakdowns.
    s = wait_until(lambda: (lambda s: s if not s["error"] and s["series"] and len(s["breakdowns"]) == 2 else None)(
        state(browser)), timeout=20, what="every panel back")
    assert not browser.find_element(By.ID, "error").is_displayed()
    assert s["panelErrors"] == {}
    browser.get_log("browser")  # the 503s the page asked for while the shard was down are expected here
    cluster.delivered()


def test_the_zone_list_offers_only_zones_the_api_takes(cluster, browser):
    open_page(browser, cluster, f"key=alice&ref={REF}")
    s = wait_until(lambda: (lambda s: s if len(s["zones"]) > 100 else None)(state(browser)), timeout=10, what="zones")
    zones = s["zones"]
    assert zones[:3] == ["UTC", "-14", "-13"] and "+14" in zones and "America/New_York" in zones
    for bad in ("America/St_Johns", "Asia/Tehran", "Australia/Adelaide", "Pacific/Chatham", "Asia/Calcutta"):
        assert bad not in zones
    options = browser.execute_script("return [...document.querySelectorAll('#tz-list option')].map(o => o.value)")
    assert options == zones
    for tz in zones:  # every one of them answered by the API, as the page would ask
        r = get(cluster.port, "/series?" + urllib.parse.urlencode(
            {"ns": "u", "key": "alice", "unit": "day", "timezone": tz, "start": REF - 30 * 86400, "end": REF}))
        assert r.status == 200, (tz, r.json())
    assert severe_logs(browser) == []


def test_dark_mode_follows_the_system_and_the_toggle(cluster, browser, artifacts):
    def background():
        return browser.execute_script("return getComputedStyle(document.body).backgroundColor")
    try:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        open_page(browser, cluster, f"key=alice&ref={REF}&cmp=bob")
        settled(browser)
        assert background() == "rgb(20, 23, 28)"
        assert browser.execute_script("return Chart.defaults.color") == "#9aa5b4"
        screenshot(browser, artifacts, "dashboard-dark.png")
        theme = browser.find_element(By.ID, "theme")
        assert theme.text == "theme: auto"
        theme.click()  # dark
        theme.click()  # light, whatever the system prefers
        assert theme.text == "theme: light" and background() == "rgb(246, 247, 249)"
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "light"}]})
        theme.click()  # auto
        assert theme.text == "theme: auto" and background() == "rgb(246, 247, 249)"
        theme.click()  # dark, on a light system
        assert background() == "rgb(20, 23, 28)"
        open_page(browser, cluster, f"key=alice&ref={REF}")  # kept by the browser
        assert browser.find_element(By.ID, "theme").text == "theme: dark"
    finally:
        browser.execute_script("localStorage.removeItem('clickatron.theme')")
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    assert severe_logs(browser) == []


def x_label_boxes(driver):
    """[left, right] of each x-axis tick label drawn, in canvas pixels."""
    return driver.execute_script("""
        const c = Chart.getChart(document.getElementById('series-chart'));
        const s = c.scales.x;
        const ctx = c.ctx;
        ctx.save();
        ctx.font = Chart.helpers.toFont(s.options.ticks.font).string;
        const boxes = s.ticks.map((t, i) => {
          const label = s.options.ticks.callback.call(s, t.value, i, s.ticks);
          const w = ctx.measureText(label).width;
          const x = s.getPixelForTick(i);
          return [x - w / 2, x + w / 2];
        });
        ctx.restore();
        return [boxes, c.width];""")


def test_narrow_screens_have_no_horizontal_scroll_nor_overlapping_labels(cluster, browser, artifacts):
    try:
        for width in (400, 360):
            browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": 860, "deviceScaleFactor": 1, "mobile": True})
            for query in (f"ref={REF}", f"key=alice&ref={REF}&cmp=bob&unit=hour&range=7d", "view=cluster"):
                open_page(browser, cluster, query)
                settled(browser)
                wait_until(lambda: browser.execute_script(
                    "return document.querySelectorAll('.breakdown canvas').length === document.querySelectorAll('.breakdown .bars').length"),
                    timeout=5, what="breakdown charts")
                scroll, client = browser.execute_script(
                    "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
                assert scroll <= client, (width, query, scroll, client)
                if "key=" in query:
                    boxes, canvas_width = x_label_boxes(browser)
                    assert len(boxes) >= 2
                    for a, b in zip(boxes, boxes[1:]):
                        assert a[1] <= b[0], (width, boxes)  # no two labels overlap
                    assert boxes[0][0] >= 0 and boxes[-1][1] <= canvas_width
                    if width == 400:
                        screenshot(browser, artifacts, "dashboard-mobile.png")
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert severe_logs(browser) == []


def test_charts_have_text_alternatives(cluster, browser):
    open_page(browser, cluster, f"key=alice&ref={REF}&range=7d&unit=day")
    s = settled(browser)
    wait_until(lambda: len(state(browser)["breakdowns"]) == 2, timeout=10, what="breakdowns")
    canvas = browser.find_element(By.ID, "series-chart")
    assert canvas.get_attribute("role") == "img"
    label = canvas.get_attribute("aria-label")
    assert label.startswith("Line chart of alice (user): 7 day buckets") and "data table" in label
    browser.find_element(By.CSS_SELECTOR, "#series-table-box summary").click()
    cells = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
             for tr in browser.find_elements(By.CSS_SELECTOR, "#series-table tbody tr")]
    assert [c[1].replace(",", "") for c in cells] == [str(v) for v in s["series"]["values"]]
    for c in browser.find_elements(By.CSS_SELECTOR, ".breakdown canvas"):
        assert c.get_attribute("role") == "img" and c.get_attribute("aria-label").startswith("Bar chart: Top")
    assert len(browser.find_elements(By.CSS_SELECTOR, ".breakdown details table")) == 2
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
    # A range the page cannot read is named, before the API is asked.
    open_page(browser, cluster, "key=alice&from=yesterday")
    s = settled(browser)
    assert s["error"]["status_txt"] == "INVALID_RANGE" and "from 'yesterday' is not a date" in s["error"]["message"]
    assert severe_logs(browser) == []


def test_shared_url_reopens_the_view_and_back_forward_work(cluster, browser):
    open_page(browser, cluster, f"ref={REF}")
    s = settled(browser)
    browser.find_element(By.ID, "key").send_keys("alice")
    browser.execute_script(
        "document.getElementById('unit').value = 'week'; document.getElementById('from').value = '2026-09-06';"
        "document.getElementById('tz').value = 'Europe/Berlin'; document.getElementById('controls').requestSubmit();")
    s = wait_until(lambda: (lambda x: x if x["busy"] == 0 and x["series"] else None)(state(browser)), timeout=20,
                   what="the series")
    url = browser.current_url
    assert url_params(browser) == {"ns": "u", "key": "alice", "unit": "week", "from": "2026-09-06", "tz": "Europe/Berlin",
                                   "ref": str(REF)}
    assert "tz=Europe/Berlin" in url
    shown = s["series"]
    check_series_is_the_apis(browser, cluster, s)
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
    wait_until(lambda: state(browser)["view"] == "explore" and state(browser)["series"] == shown, timeout=10,
               what="the view again")
    assert browser.current_url == url
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
    health = wait_until(lambda: state(browser)["health"], timeout=10)
    assert (health["archive_up"], health["archive"]) == (2, 3)
    assert "archive 2/3 replicas up" in browser.find_element(By.ID, "health").text
    screenshot(browser, artifacts, "dashboard-cluster.png")
    assert severe_logs(browser) == []
