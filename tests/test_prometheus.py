"""Monitoring with the tools operators run (docs/operations.md#prometheus): the shipped rules
pass `promtool check rules` and their unit tests, every alert has a runbook in
docs/operations.md, the nightly's textfile is read by a real node exporter, and a real
Prometheus — Debian's, its own data directory, a free loopback port — scraping a cluster
through the shipped config (the cluster secret as a bearer token) fires the backlog alert
when a realtime shard stops under a trickle of increments, and resolves it when the shard
is back.
"""
import json
import os
import re
import shutil
import subprocess
import threading
import urllib.request

from harness import BIN, SECRET, SECRET_FILE, Proc, free_port, get, wait_until
from test_docs import anchors as heading_anchors
from metrics_harness import (NODE_EXPORTER, PROMETHEUS, ROOT, RULE_TESTS, RULES, SCRAPE_CONFIG,
                             GuardedCluster, parse_metrics, promtool, value)

OPERATIONS = os.path.join(ROOT, "docs", "operations.md")
NIGHTLY = os.path.join(ROOT, "ops", "cron", "clickatron-nightly")
# The rendering of docs/operations.md#testing-the-rules: time runs 60 times faster — every
# `for:` minute is a second, and the backlog alert's 60 s threshold is 1 s.
SPEEDUP = 60


def test_rules_pass_promtool_check_and_their_unit_tests():
    check = promtool("check", "rules", RULES)
    assert check.returncode == 0, (check.stdout + check.stderr).decode()
    tests = subprocess.run([shutil.which("promtool") or "/usr/bin/promtool", "test", "rules",
                            os.path.basename(RULE_TESTS)], cwd=os.path.dirname(RULE_TESTS),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    assert tests.returncode == 0, tests.stdout.decode()
    assert b"SUCCESS" in tests.stdout


def alerts_of(path):
    text = open(path).read()
    return re.findall(r"^\s+- alert: (\w+)$", text, re.M), text


def test_every_alert_is_unit_tested_and_has_a_runbook_in_operations():
    alerts, text = alerts_of(RULES)
    assert len(alerts) == len(set(alerts)) >= 18
    tested = set(re.findall(r"alertname: (\w+)", open(RULE_TESTS).read()))
    assert set(alerts) <= tested, set(alerts) - tested
    anchors = heading_anchors(OPERATIONS)  # GitHub's anchors, as tests/test_docs.py reads them
    runbooks = re.findall(r"runbook: docs/operations\.md#([\w-]+)\n\s+runbook_url: "
                          r"file:///usr/share/doc/clickatron/operations\.md#([\w-]+)", text)
    assert len(runbooks) == len(alerts)
    for runbook, url in runbooks:
        assert runbook == url and runbook in anchors, runbook


# ---- the nightly's textfile ----


def nightly(tmp_path, config, textfile, *extra):
    return subprocess.run([NIGHTLY, "--work", str(tmp_path / "work"), "--config", str(config), "--bin", BIN,
                           "--log", str(tmp_path / "nightly.log"), "--textfile", str(textfile), *extra],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)


def textfile_values(path):
    text = open(path).read()
    check = promtool("check", "metrics", input=text.encode())
    assert check.returncode == 0, (check.stdout + check.stderr).decode()
    samples, types = parse_metrics(text)
    assert set(types.values()) == {"gauge"}
    return {name: v for (name, _), v in samples.items()}


def test_the_nightly_writes_its_result_for_node_exporter(procs, tmp_path):
    rt = free_port()
    os.makedirs(tmp_path / "rt")
    procs.start("clickatron-realtime", ["--data-dir", tmp_path / "rt", "--port", rt], ready_port=rt)
    config = tmp_path / "cluster.conf"
    config.write_text(f"port = {free_port()}\nrealtime = 127.0.0.1:{rt}\narchive = 127.0.0.1:{free_port()}\n"
                      f"oplog-dir = {tmp_path}/oplog\nsecret-file = {SECRET_FILE}\n")
    textfile = tmp_path / "lib" / "metrics" / "clickatron-nightly.prom"  # its directory is created

    ok = nightly(tmp_path, config, textfile)
    assert ok.returncode == 0, ok.stderr
    first = textfile_values(textfile)
    assert first["clickatron_nightly_last_exit_status"] == 0
    assert first["clickatron_nightly_last_success_timestamp_seconds"] == \
        first["clickatron_nightly_last_run_timestamp_seconds"] > 0
    assert first["clickatron_nightly_last_duration_seconds"] >= 0

    # A failed run (the realtime shard gone): the status, and the last success kept.
    procs.started[-1].terminate()
    failed = nightly(tmp_path, config, textfile)
    assert failed.returncode == 1
    after = textfile_values(textfile)
    assert after["clickatron_nightly_last_exit_status"] == 1
    assert after["clickatron_nightly_last_success_timestamp_seconds"] == \
        first["clickatron_nightly_last_success_timestamp_seconds"]
    assert after["clickatron_nightly_last_run_timestamp_seconds"] >= first["clickatron_nightly_last_run_timestamp_seconds"]
    # A bad setup is a failed run too; no temporary file is left beside the result.
    bad = nightly(tmp_path, tmp_path / "nope.conf", textfile)
    assert bad.returncode == 2 and textfile_values(textfile)["clickatron_nightly_last_exit_status"] == 2
    assert os.listdir(textfile.parent) == ["clickatron-nightly.prom"]

    # Read by a real node exporter through a link in its textfile directory (the way
    # docs/operations.md#prometheus installs it).
    collector_dir = tmp_path / "node-exporter"
    collector_dir.mkdir()
    os.symlink(textfile, collector_dir / "clickatron-nightly.prom")
    port = free_port()
    exporter = Proc([NODE_EXPORTER, f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
                     "--collector.textfile", f"--collector.textfile.directory={collector_dir}"],
                    str(tmp_path / "node-exporter.log"))
    procs.started.append(exporter)
    r = wait_until(lambda: get(port, "/metrics", secret=False), what="node exporter")
    samples, _ = parse_metrics("\n".join(line for line in r.text.splitlines() if not line.startswith("go_")))
    assert value(samples, "clickatron_nightly_last_exit_status") == 2
    assert value(samples, "node_textfile_scrape_error") == 0


# ---- a real Prometheus ----


def render(text, replacements):
    """text with each (old, new, count) replaced, count asserted: a shipped line that moved
    fails the test instead of silently not being shortened."""
    for old, new, count in replacements:
        n = len(re.findall(old, text, re.M))
        assert n == count, (old, n)
        text = re.sub(old, new, text, flags=re.M)
    return text


def faster(match):
    """`for: 5m` -> `for: 5s`, `for: 3h` -> `for: 3m` (time SPEEDUP times faster)."""
    n, unit = int(match.group(2)), match.group(3)
    seconds = n * {"s": 1, "m": 60, "h": 3600}[unit] // SPEEDUP
    return f"{match.group(1)}{max(seconds, 1)}s"


def prometheus_dir(tmp_path, cluster):
    """The shipped config, rules and a secret file, rendered SPEEDUP times faster."""
    d = tmp_path / "prometheus"
    d.mkdir()
    (d / "prometheus.yml").write_text(render(open(SCRAPE_CONFIG).read(), [
        (r"^(  scrape_interval:) 15s$", r"\1 1s", 1), (r"^(  evaluation_interval:) 15s$", r"\1 1s", 1)]))
    rules = open(RULES).read()
    n_for = len(re.findall(r"^(\s+for:) (\d+)([smh])$", rules, re.M))
    (d / "clickatron.rules.yml").write_text(render(rules, [
        (r"^(\s+for: )(\d+)([smh])$", faster, n_for),
        (r"^(\s+clickatron_api_realtime_slot_backlog_seconds >) 60$", r"\1 1", 1)]))
    secret = d / "clickatron.secret"
    secret.write_text(SECRET + "\n")
    os.chmod(secret, 0o600)
    for job, ports in cluster.targets().items():
        (d / f"{job}.targets.yml").write_text(f"- targets: {json.dumps([f'127.0.0.1:{p}' for p in ports])}\n")
    (d / "clickatron-node.targets.yml").write_text("[]\n")
    check = promtool("check", "config", str(d / "prometheus.yml"))
    assert check.returncode == 0, (check.stdout + check.stderr).decode()
    return d


def prom_api(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]


def backlog_alerts(port):
    return [a for a in prom_api(port, "/api/v1/alerts")["alerts"]
            if a["labels"]["alertname"] == "ClickatronDeliveryBacklog"]


def test_a_real_prometheus_fires_the_backlog_alert_and_resolves_it(procs, tmp_path):
    cluster = GuardedCluster(procs, tmp_path)
    d = prometheus_dir(tmp_path, cluster)
    port = free_port()
    prometheus = Proc([PROMETHEUS, f"--config.file={d / 'prometheus.yml'}", f"--storage.tsdb.path={d / 'data'}",
                       f"--web.listen-address=127.0.0.1:{port}"], str(tmp_path / "prometheus.log"))
    procs.started.append(prometheus)
    wait_until(lambda: get(port, "/-/ready", secret=False).status == 200, timeout=60, what="prometheus ready")
    # Every server scraped through the shipped config, the guarded ones with the secret.
    wait_until(lambda: (lambda t: len(t) == 4 and all(x["health"] == "up" for x in t))(
        prom_api(port, "/api/v1/targets")["activeTargets"]), timeout=30, what="4 targets up")

    # A trickle of increments (keys on both shards), bounded in count, stopped at the end.
    stop, sent = threading.Event(), [0]

    def trickle():
        while not stop.is_set() and sent[0] < 3000:
            try:
                cluster.incr(f"k{sent[0] % 16}")
            except AssertionError:
                pass  # an answer other than 200 does not stop the trickle
            sent[0] += 1
            stop.wait(0.1)
    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        cluster.rt_procs[0].terminate()
        firing = wait_until(lambda: [a for a in backlog_alerts(port) if a["state"] == "firing"], timeout=90,
                            what="ClickatronDeliveryBacklog firing")
        assert {a["labels"]["shard"] for a in firing} == {"0"}
        assert firing[0]["annotations"]["runbook"] == "docs/operations.md#clickatrondeliverybacklog"
        cluster.start_realtime(0)
        wait_until(lambda: backlog_alerts(port) == [], timeout=90, what="ClickatronDeliveryBacklog resolved")
    finally:
        stop.set()
        thread.join(timeout=10)
    cluster.wait_drained()
    assert prometheus.alive()
