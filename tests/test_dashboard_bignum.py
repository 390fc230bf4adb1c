"""The dashboard shows counts past 2^53 exactly (docs/api.md#conventions, docs/dashboard.md).

A JavaScript number holds integers exactly only up to 2^53; the API's counts are integers of
up to 128 bits. One archive shard holds a key whose two hours are 2^63 - 1 and 2^53 + 3 (a
double rounds both), Debian's headless Chromium loads the dashboard, and the all-time total,
the answer's JSON and the tooltips of the series and the breakdown show every digit.
"""
import calendar

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from formats import ymdh
from harness import wait_until
from test_api_read import Cluster, publish_archive

DAY = calendar.timegm((2026, 11, 3, 0, 0, 0))
H5, H6 = 2**63 - 1, 2**53 + 3
TOTAL = H5 + H6


@pytest.fixture
def browser():
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1280,1000", "--lang=en-US"):
        opts.add_argument(a)
    opts.binary_location = "/usr/bin/chromium"
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    try:
        yield driver
    finally:
        driver.quit()


def exact(n):
    return f"{n:,}"


def page(driver, script):
    return driver.execute_script(script)


def test_counts_past_2_53_show_exactly(procs, tmp_path, browser):
    t5, t6 = ymdh(DAY + 5 * 3600), ymdh(DAY + 6 * 3600)
    lines = [f"u|big.{t5},{H5}", f"u|big.{t6},{H6}", f"c.u|big.US.{t5},{H5}", f"c.u|big.US.{t6},{H6}"]
    work = publish_archive(tmp_path, lines, 1)
    cluster = Cluster(procs, tmp_path, [[work / "current" / "shard-0.csv"]])
    assert float(H5) != H5 and float(H6) != H6 and float(TOTAL) != TOTAL  # what a double would show

    ref = DAY + 23 * 3600
    browser.get(f"http://127.0.0.1:{cluster.port}/?ns=u&key=big&unit=hour&units=24&tz=UTC&ref={ref}")
    total = wait_until(lambda: (lambda t: t if t.startswith("all-time total: ") else None)(
        page(browser, "return document.getElementById('total').textContent")), timeout=15, what="the total")
    assert total == f"all-time total: {exact(TOTAL)}"
    wait_until(lambda: page(browser, "return document.querySelectorAll('#breakdowns canvas').length") == 1,
               timeout=15, what="the breakdown")

    shown = page(browser, "return document.getElementById('answer-json').textContent")
    assert f'"value":{H5}' in shown and f'"value":{H6}' in shown and f'"total":{TOTAL}' in shown, shown
    # The tooltips: the series' hours 5 and 6, and the breakdown's bar.
    labels = page(browser, """
        const c = Chart.getChart(document.getElementById('series-chart'));
        const label = c.options.plugins.tooltip.callbacks.label;
        const d = c.data.datasets[0];
        const b = Chart.getChart(document.querySelector('#breakdowns canvas'));
        return [label({dataset: d, dataIndex: 5}), label({dataset: d, dataIndex: 6}),
                b.options.plugins.tooltip.callbacks.label({dataset: b.data.datasets[0], dataIndex: 0})];""")
    assert labels == [f"u|big: {exact(H5)}", f"u|big: {exact(H6)}", f"c: {exact(TOTAL)}"], labels
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
