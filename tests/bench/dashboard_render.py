#!/usr/bin/python3
"""The dashboard's first render of a long series, beside Chart.js alone drawing the same
points (docs/benchmarks.md#the-dashboards-first-render).

    tests/bench/dashboard_render.py --bin build/asan/bin [--runs 10] [--query QUERY]

Starts one archive shard, one realtime shard and the API on free 127.0.0.1 ports (temp dirs)
with one key, `u|bench`, counted every hour for 90 days, and opens the dashboard in Debian's
headless Chromium (chromium, chromium-driver, python3-selenium) --runs times, each a fresh
page of `/?key=bench&...` (QUERY, default 2160 hourly buckets ending at the last hour).

Each run reads two figures in the same page, one after the other:
  - dashboard: the `first-series-render` measure the page records (performance.measure) from
    the moment its API answers arrived to the chart drawn — everything the page does with
    the answers: labels in the zone, the chart, the panels, the table;
  - Chart.js alone: a line chart of the same labels and values, built in a canvas of the same
    size by `new Chart(...)` with animation off (what the chart costs by itself).
Prints each run, then the median of each and their ratio. The servers' build does not enter
the figures (both are measured in the browser after the answers arrived). Stops everything.
"""
import argparse
import os
import statistics
import sys
import tempfile

import bench_harness  # noqa: F401  (ops/lib and tests/ on sys.path)
import harness
from formats import ymdh  # docs/formats.md (ops/lib/formats.py)
from harness import Procs, free_port, run, wait_until

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

DAYS = 90
# 2026-11-03 12:00 UTC: the last hour of the history.
LAST_HOUR = 1793707200 + 12 * 3600

# Chart.js alone, on the same labels and values, in a box the size of the dashboard's chart.
REFERENCE = """
const s = window.dashboardState.series;
const box = document.createElement('div');
const shown = document.querySelector('#series-chart').parentElement.getBoundingClientRect();
box.style.cssText = `position:relative;width:${shown.width}px;height:${shown.height}px`;
const canvas = document.createElement('canvas');
box.append(canvas);
document.body.append(box);
const t0 = performance.now();
const chart = new Chart(canvas, {
  type: 'line',
  data: { labels: s.labels.slice(), datasets: [{ label: 'bench', data: s.values.slice(), fill: true,
          pointRadius: 0, tension: 0, borderColor: '#2364aa', backgroundColor: '#2364aa33' }] },
  options: { animation: false, responsive: true, maintainAspectRatio: false, normalized: true,
             scales: { x: { ticks: { maxTicksLimit: 12, maxRotation: 0 } }, y: { beginAtZero: true } } },
});
const took = performance.now() - t0;
chart.destroy();
box.remove();
return took;
"""


def start_cluster(procs, tmp):
    lines = []
    hour = LAST_HOUR - (DAYS * 24 - 1) * 3600
    i = 0
    while hour <= LAST_HOUR:
        lines.append(f"u|bench.{ymdh(hour)},{1 + i % 7 + (i // 24) % 5}")
        hour += 3600
        i += 1
    history = os.path.join(tmp, "history.csv")
    with open(history, "w") as f:
        f.write("".join(line + "\n" for line in lines))
    work = os.path.join(tmp, "work")
    for args in (["import", "--work", work, "--input", history, "--archive-shards", 1],
                 ["merge", "--work", work, "--archive-shards", 1], ["publish", "--work", work]):
        run("clickatron-rebuild", args, check=True)
    ar, rt, api = free_port(), free_port(), free_port()
    procs.start("clickatron-archive", ["--db-file", os.path.join(work, "current", "shard-0.csv"), "--port", ar],
                ready_port=ar)
    os.mkdir(os.path.join(tmp, "rt"))
    procs.start("clickatron-realtime", ["--data-dir", os.path.join(tmp, "rt"), "--port", rt], ready_port=rt)
    conf = os.path.join(tmp, "cluster.conf")
    with open(conf, "w") as f:
        f.write(f"port = {api}\nrealtime = 127.0.0.1:{rt}\narchive = 127.0.0.1:{ar}\n"
                f"oplog-dir = {os.path.join(tmp, 'oplog')}\nnode-id = api-bench\n")
    procs.start("clickatron-api", ["--config", conf], ready_port=api)
    return api


def browser():
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,1000", "--lang=en-US"):
        opts.add_argument(a)
    opts.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


def first_render(driver, url):
    driver.get("about:blank")
    driver.get(url)

    def drawn():
        return driver.execute_script(
            "const s = window.dashboardState; const m = performance.getEntriesByName('first-series-render');"
            "return s && s.series && s.busy === 0 && m.length ? m[0].duration : null")
    return wait_until(drawn, timeout=60, what="the first render")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="the clickatron binaries (any build)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--query", default=f"key=bench&unit=hour&units={DAYS * 24}&ref={LAST_HOUR}")
    args = ap.parse_args()
    harness.BIN = os.path.abspath(args.bin)
    tmp = tempfile.mkdtemp(prefix="clickatron-render-")
    procs = Procs(tmp)
    driver = None
    try:
        port = start_cluster(procs, tmp)
        driver = browser()
        url = f"http://127.0.0.1:{port}/?{args.query}"
        first_render(driver, url)  # warm: the browser's caches and JIT, as a user's second look
        page, alone = [], []
        for n in range(args.runs):
            page.append(first_render(driver, url))
            points = driver.execute_script("return window.dashboardState.series.values.length")
            alone.append(driver.execute_script(REFERENCE))
            print(f"run {n + 1}: {points} points, dashboard {page[-1]:.1f} ms, Chart.js alone {alone[-1]:.1f} ms")
        mp, ma = statistics.median(page), statistics.median(alone)
        print(f"median of {args.runs}: dashboard {mp:.1f} ms (min {min(page):.1f}, max {max(page):.1f}), "
              f"Chart.js alone {ma:.1f} ms (min {min(alone):.1f}, max {max(alone):.1f}); ratio {mp / ma:.2f}")
    finally:
        if driver is not None:
            driver.quit()
        errors = procs.stop_all()
        if errors:
            print("\n".join(errors), file=sys.stderr)


if __name__ == "__main__":
    main()
