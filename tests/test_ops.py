"""Operations: ops/demo brings up a whole local cluster from nothing, every curl it prints
answers, ops/cluster reports and stops it cleanly, and the nightly cron job runs the real
clickatron-rebuild with its lock and failure reporting.

The demo runs in a temp dir on free ports with small data (`--clicks`, `--days`), the
binaries of CLICKATRON_BIN (`--bin`, so no release build) and `--skip-install`.
"""
import collections
import datetime
import fcntl
import os
import re
import signal
import subprocess
import time
import urllib.parse

import pytest

from harness import BIN, ROOT, free_port, get, post, run, wait_until

OPS = os.path.join(ROOT, "ops")


def sh(args, timeout=120, env=None):
    """Runs an ops script; returns CompletedProcess with text output."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=timeout, env=full_env, stdin=subprocess.DEVNULL)


def pids_in(var):
    run_dir = os.path.join(var, "run")
    pids = {}
    if os.path.isdir(run_dir):
        for name in os.listdir(run_dir):
            if name.endswith(".pid"):
                with open(os.path.join(run_dir, name)) as f:
                    text = f.read().strip()
                if text.isdigit():
                    pids[name[:-4]] = int(text)
    return pids


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes (its parent, the runner, has not reaped it yet).
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture
def demo_var(tmp_path):
    """A var dir for ops/demo; at teardown whatever it started is stopped (and, should
    ops/cluster fail, killed) so no test leaves a process behind."""
    var = str(tmp_path / "var")
    yield var
    if os.path.exists(os.path.join(var, "cluster.env")):
        sh([os.path.join(OPS, "cluster"), "--var", var, "stop"], timeout=120)
    for pid in pids_in(var).values():
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def start_demo(var, clicks=20000, days=3, stream_rate=5, extra=()):
    ports = [free_port() for _ in range(5)]
    args = [os.path.join(OPS, "demo"), "--skip-install", "--bin", BIN, "--var", var,
            "--clicks", str(clicks), "--days", str(days),
            "--api-port", str(ports[0]),
            "--realtime-ports", f"{ports[1]},{ports[2]}",
            "--archive-ports", f"{ports[3]},{ports[4]}",
            "--stream-rate", str(stream_rate), "--stream-seconds", "600", *extra]
    r = sh(args, timeout=300)
    assert r.returncode == 0, f"ops/demo failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r.stdout, ports


def printed_curls(stdout):
    """The URLs of the `curl -s '...'` lines ops/demo printed, with the comment above each."""
    curls = []
    comment = ""
    for line in stdout.splitlines():
        if line.startswith("# "):
            comment = line[2:]
        m = re.fullmatch(r"curl -s '(http://127\.0\.0\.1:\d+/[^']*)'", line)
        if m:
            curls.append((m.group(1), comment))
    return curls


def fetch(url):
    """The URL as an operator pastes it: without the cluster secret."""
    parts = urllib.parse.urlsplit(url)
    path = parts.path + ("?" + parts.query if parts.query else "")
    return get(parts.port, path, secret=False)


def day_start(day):
    return int(datetime.datetime.combine(day, datetime.time(), datetime.timezone.utc).timestamp())


def test_gen_demo_data_history_is_consistent_and_deterministic(tmp_path):
    out1, out2 = tmp_path / "a.csv", tmp_path / "b.csv"
    gen = os.path.join(OPS, "gen-demo-data")
    for out in (out1, out2):
        r = sh([gen, "history", "--clicks", "5000", "--days", "2", "--end-day", "2026-03-08",
                "--output", str(out)])
        assert r.returncode == 0, r.stderr
    assert out1.read_bytes() == out2.read_bytes()
    assert "5,000 clicks" in r.stderr and "(2026-03-07 .. 2026-03-08)" in r.stderr

    totals = collections.Counter()
    sums = collections.Counter()
    lookups = {}
    hashed = set()
    hours = set()
    for line in out1.read_text().splitlines():
        key, value = line.split(",", 1)
        if key.startswith("_l|"):
            lookups[key[3:]] = value
            continue
        n = int(value)
        assert n > 0
        ns_part, rest = key.split("|", 1)
        if "." in ns_part:  # subtotal: {subns}.{ns}|{key}.{subkey}.{ymdh}
            subns, ns = ns_part.split(".")
            user_key, subkey, token = rest.split(".")
            sums[(subns, ns, user_key, token)] += n
            if len(subkey) == 12 and subkey.endswith("="):
                hashed.add(subkey)
        else:
            user_key, token = rest.split(".")
            totals[(ns_part, user_key, token)] += n
            hours.add(token)
    # Exactly --clicks clicks, counted once per link and once per owner.
    assert sum(v for (ns, _, _), v in totals.items() if ns == "l") == 5000
    assert sum(v for (ns, _, _), v in totals.items() if ns == "u") == 5000
    # Every subtotal namespace sums to the total of its hour (docs/formats.md#archive-records).
    for (ns, user_key, token), n in totals.items():
        assert sums[("c", ns, user_key, token)] == n
        assert sums[("r", ns, user_key, token)] == n
    # The 48 hours of the two days, as clickatron-key encodes them.
    assert len(hours) == 48
    first = run("clickatron-key", ["ymdh", day_start(datetime.date(2026, 3, 7))], check=True)
    last = run("clickatron-key", ["ymdh", day_start(datetime.date(2026, 3, 8)) + 23 * 3600], check=True)
    assert min(hours) == first.stdout.decode().strip()
    assert max(hours) == last.stdout.decode().strip()
    assert hashed and hashed <= set(lookups)  # every hashed subkey has its lookup record
    # Hashed referrers: the hash is clickatron-key's, and the lookup holds the original.
    assert lookups["h0aMB8AuNw4="] == "http://www.facebook.com/"
    for h, original in list(lookups.items())[:5]:
        assert run("clickatron-key", ["hash", original], check=True).stdout.decode().strip() == h


def test_demo_cluster_answers_every_printed_query_and_stops_clean(demo_var):
    stdout, ports = start_demo(demo_var)
    api_port = ports[0]
    for step in ("[1/6]", "[2/6]", "[3/6]", "[4/6]", "[5/6]", "[6/6]"):
        assert step in stdout
    assert "Clickatron is running" in stdout
    # The dashboard's address comes first, and it serves the page.
    m = re.search(r"^Dashboard: (http://127\.0\.0\.1:(\d+)/) ", stdout, re.M)
    assert m and int(m.group(2)) == api_port and m.start() < stdout.index("Clickatron is running"), stdout
    page = fetch(m.group(1))
    assert page.status == 200 and page.headers["content-type"] == "text/html; charset=utf-8", page

    status = sh([os.path.join(OPS, "cluster"), "--var", demo_var, "status"])
    assert status.returncode == 0, status.stdout + status.stderr
    names = ["realtime-0", "realtime-1", "archive-0", "archive-1", "api", "stream"]
    for name in names:
        assert re.search(rf"^  {name}\s+\d+\s+\S+\s+alive$", status.stdout, re.M), status.stdout

    # Its own random secret, readable by its owner only, named by the cluster config and
    # required by every server's internal endpoints.
    secret_path = os.path.join(demo_var, "cluster.secret")
    assert os.stat(secret_path).st_mode & 0o777 == 0o600
    secret = open(secret_path).read().strip()
    assert re.fullmatch(r"[0-9a-f]{64}", secret), secret
    assert f"secret-file = {secret_path}\n" in open(os.path.join(demo_var, "cluster.conf")).read()
    for port, path in ((ports[1], "/close?day=2020-01-01"), (ports[3], "/reload")):
        r = post(port, path, secret=False)
        assert (r.status, r.json()["status_txt"]) == (401, "SECRET_MISSING"), r
        r = post(port, path, secret="x" * 64)
        assert (r.status, r.json()["status_txt"]) == (403, "SECRET_WRONG"), r

    curls = printed_curls(stdout)
    assert len(curls) >= 12, stdout
    # The live stream reaches the realtime tier: today's hours of u|jehiah appear there.
    realtime_url = next(u for u, _ in curls if f":{ports[1]}/" in u or f":{ports[2]}/" in u)
    wait_until(lambda: fetch(realtime_url).status == 200 and fetch(realtime_url).body,
               timeout=30, what="live clicks in the realtime tier")

    for url, comment in curls:
        r = fetch(url)
        assert r.status == 200, f"{comment}\n{url} -> {r}"
        assert r.body, f"{url} answered an empty body"
        if f":{api_port}/" in url and "/stats" not in url:
            doc = r.json()
            assert doc["status_code"] == 200 and doc["status_txt"] == "OK", doc
            assert doc["data"], f"{url}: empty data {doc}"
            data = doc["data"]
            if "/series" in url and "rollup=true" not in url:
                assert data["series"] and any(b["value"] > 0 for b in data["series"]), (url, data)
            if "/breakdown" in url:
                assert data["breakdown"] and data["breakdown"][0]["value"] > 0, (url, data)

    by_path = {urllib.parse.urlsplit(u).query: u for u, _ in curls}
    # The named time zone: 7 day buckets with New York's offset (-5 in winter, -4 in summer).
    ny = fetch(next(u for q, u in by_path.items() if "America/New_York" in q)).json()["data"]
    assert len(ny["series"]) == 7 and ny["tz_offset"] in (-4, -5)
    # Referrers are long URLs stored as hashes; the breakdown shows the originals.
    refs = fetch(next(u for q, u in by_path.items() if "sub=r" in q)).json()["data"]["breakdown"]
    assert all(b["subkey"] == "direct" or b["subkey"].startswith("http") for b in refs), refs
    # The roll-up is the sum of every click of jehiah (history + live), so at least the
    # history's share: more than the last 7 days alone.
    total = fetch(next(u for q, u in by_path.items() if "rollup=true" in q)).json()["data"]["total"]
    week = sum(b["value"] for b in ny["series"])
    assert total >= week > 0

    # Today's hours from 00:00 UTC are filled through the realtime tier (gen-demo-data today):
    # every whole hour of today has clicks, as a running cluster's would.
    assert "today: " in stdout and " clicks from " in stdout, stdout
    now = int(time.time())
    for hour in range(now - now % 86400, now - now % 3600, 3600):
        doc = get(api_port, f"/leaderboard?ns=u&unit=hour&start={hour}&end={hour + 3600}").json()
        assert doc["status_code"] == 200 and doc["data"]["total"] > 0, (hour, doc)

    # status tells a dead process from a live one; start brings back only what is missing.
    victim = pids_in(demo_var)["realtime-1"]
    os.kill(victim, signal.SIGKILL)
    wait_until(lambda: not alive(victim), what="realtime-1 to die")
    status = sh([os.path.join(OPS, "cluster"), "--var", demo_var, "status"])
    assert status.returncode == 3
    assert re.search(r"^  realtime-1\s+-\s+\d+\s+dead \(exited with status 137", status.stdout, re.M), status.stdout
    restart = sh([os.path.join(OPS, "cluster"), "--var", demo_var, "start"], timeout=120)
    assert restart.returncode == 0, restart.stdout + restart.stderr
    assert re.search(r"started realtime-1 \(pid \d+", restart.stdout)
    assert "api already running" in restart.stdout

    logs = sh([os.path.join(OPS, "cluster"), "--var", demo_var, "logs", "-n", "5", "stream"])
    assert logs.returncode == 0 and "gen-demo-data live" in logs.stdout

    pids = pids_in(demo_var)
    assert set(pids) == set(names)
    stop = sh([os.path.join(OPS, "cluster"), "--var", demo_var, "stop"], timeout=200)
    assert stop.returncode == 0, stop.stdout + stop.stderr
    for name in names:
        assert re.search(rf"^  stopped {name} \(pid \d+\): exit 0$", stop.stdout, re.M), stop.stdout
    assert "stopped cleanly" in stop.stdout
    for name, pid in pids.items():
        assert not alive(pid), f"{name} (pid {pid}) still running after ops/cluster stop"
    # Nothing else of ours is left either: no runner shell still watching a process.
    leftovers = subprocess.run(["pgrep", "-f", f"clickatron-runner.*{demo_var}"],
                               stdout=subprocess.PIPE, text=True)
    assert leftovers.stdout == ""
    status = sh([os.path.join(OPS, "cluster"), "--var", demo_var, "status"])
    assert status.returncode == 3 and "alive" not in status.stdout


def test_demo_rejects_bad_options_before_touching_anything(tmp_path):
    var = str(tmp_path / "var")
    cases = [
        (["--clicks", "0"], "--clicks '0' is not a positive number"),
        (["--api-port", "70000"], "--api-port '70000' is not a port"),
        (["--realtime-ports", "7101,x"], "'x' is not a port"),
        (["--api-port", "7101", "--realtime-ports", "7101,7102"], "a port is used twice"),
        (["--bogus", "1"], "unknown option --bogus"),
    ]
    for args, message in cases:
        r = sh([os.path.join(OPS, "demo"), "--skip-install", "--bin", BIN, "--var", var, *args])
        assert r.returncode != 0 and message in r.stderr, (args, r.stderr)
    assert not os.path.exists(os.path.join(var, "cluster.conf"))


def test_cluster_without_a_demo_says_what_to_do(tmp_path):
    r = sh([os.path.join(OPS, "cluster"), "--var", str(tmp_path), "status"])
    assert r.returncode == 1
    assert "no cluster in" in r.stderr and "run ops/demo first" in r.stderr


NIGHTLY = os.path.join(OPS, "cron", "clickatron-nightly")


def nightly_setup(tmp_path):
    config = tmp_path / "cluster.conf"
    port = free_port()  # nothing listens there: the export step must fail
    config.write_text(f"port = {free_port()}\nrealtime = 127.0.0.1:{port}\n"
                      f"archive = 127.0.0.1:{free_port()}\noplog-dir = {tmp_path}/oplog\n")
    return ["--work", str(tmp_path / "work"), "--config", str(config), "--bin", BIN,
            "--log", str(tmp_path / "log" / "nightly.log")]


def test_nightly_refuses_to_overlap_a_running_one(tmp_path):
    args = nightly_setup(tmp_path)
    lock = tmp_path / "work" / "nightly.lock"
    lock.parent.mkdir()
    with open(lock, "w") as held:
        held.write("4242\n")
        held.flush()
        fcntl.flock(held, fcntl.LOCK_EX)
        # It does not wait for the lock, which this test holds until after the run: waiting
        # would end in sh()'s timeout.
        r = sh([NIGHTLY, *args, "--day", "2026-11-20"], timeout=120)
    assert r.returncode == 75
    assert f"another run holds {lock} (pid 4242)" in r.stderr
    assert "not starting a second one for every closed day through 2026-11-20" in r.stderr
    log = (tmp_path / "log" / "nightly.log").read_text()
    assert "another run holds" in log and "start:" not in log


def test_nightly_failure_exits_nonzero_naming_the_day_and_the_retry(tmp_path):
    args = nightly_setup(tmp_path)
    r = sh([NIGHTLY, *args, "--day", "2026-11-20"])
    assert r.returncode == 1, r.stdout + r.stderr
    assert ("FAILED: the nightly rebuild of every closed day through 2026-11-20 stopped: "
            "clickatron-rebuild nightly exited") in r.stderr
    assert "To retry:" in r.stderr and "--day 2026-11-20" in r.stderr
    log = (tmp_path / "log" / "nightly.log").read_text()
    assert re.search(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ clickatron-nightly: start: .*nightly .*--day 2026-11-20", log, re.M)
    assert "FAILED: clickatron-rebuild nightly exited" in log
    # The lock was released with the failed run: the next run is not refused.
    again = sh([NIGHTLY, *args, "--day", "2026-11-20"])
    assert again.returncode == 1


def test_nightly_without_day_is_a_catch_up_the_rebuild_dates_itself(tmp_path):
    """No --day: the job does not compute a day; clickatron-rebuild nightly catches up
    through today UTC - 2 by its own clock."""
    args = nightly_setup(tmp_path)
    r = sh([NIGHTLY, *args])
    assert r.returncode == 1, r.stdout + r.stderr
    assert ("FAILED: the nightly rebuild of every closed day through the day before yesterday (UTC) stopped"
            in r.stderr)
    start = [l for l in (tmp_path / "log" / "nightly.log").read_text().splitlines() if "start:" in l]
    assert len(start) == 1 and "nightly --work" in start[0] and "--day" not in start[0], start
    assert "--day" not in r.stderr.split("To retry:")[1].splitlines()[1]


def test_nightly_rejects_bad_setup(tmp_path):
    args = nightly_setup(tmp_path)
    r = sh([NIGHTLY, *args, "--day", "2026-02-30"])
    assert r.returncode == 2 and "--day '2026-02-30' is not a YYYY-MM-DD day" in r.stderr
    r = sh([NIGHTLY, *args, "--config", str(tmp_path / "nope.conf")])
    assert r.returncode == 2 and "nope.conf does not exist" in r.stderr
    r = sh([NIGHTLY, *args, "--bin", str(tmp_path)])
    assert r.returncode == 2 and "clickatron-rebuild not found" in r.stderr


def archive_stats(port):
    return get(port, "/stats").json()["data"]


def test_nightly_moves_yesterday_into_the_archive_then_backup_restores_it(demo_var, tmp_path):
    """The cron job end to end on the demo cluster: history through the day before
    yesterday, increments for yesterday through the API, then ops/cron/clickatron-nightly
    publishes yesterday; the gzip backup it wrote restores the generation, and the archive
    records convert back into history that imports into another shard count."""
    today = datetime.datetime.now(datetime.timezone.utc).date()
    yesterday = today - datetime.timedelta(days=1)
    stdout, ports = start_demo(demo_var, clicks=5000, days=2, stream_rate=0,
                               extra=["--end-day", str(yesterday - datetime.timedelta(days=1))])
    api, ar_ports = ports[0], ports[3:5]
    assert archive_stats(ar_ports[0])["last_day"] == str(yesterday - datetime.timedelta(days=1))

    # Yesterday's events, on keys that cover both realtime shards (an export needs data).
    noon = day_start(yesterday) + 12 * 3600
    keys = [f"k{i}" for i in range(8)]
    shards = {run("clickatron-key", ["shard", "--shards", "2", f"t|{k}"], check=True).stdout.strip()
              for k in keys}
    assert shards == {b"0", b"1"}
    body = "".join(f"ns=t&key={k}&value={i + 1}&ts={noon}&sub=c:US\n" for i, k in enumerate(keys))
    r = post(api, "/incr", body)
    assert r.status == 200, r

    def series(key):
        doc = get(api, f"/series?ns=t&key={key}&unit=day&units=2").json()
        assert doc["status_code"] == 200, doc
        return [b["value"] for b in doc["data"]["series"]]
    # From the realtime tier (the archive stops the day before).
    wait_until(lambda: series("k7") == [0, 8], timeout=30, what="yesterday's events in realtime")

    # By hand for yesterday (the API's window keeps it writable; this test sends nothing more).
    nightly = sh([NIGHTLY, "--var", demo_var, "--day", str(yesterday)], timeout=300)
    assert nightly.returncode == 0, nightly.stdout + nightly.stderr
    assert f"clickatron-nightly: OK: every closed day through {yesterday} published and released" in nightly.stdout
    log = open(os.path.join(demo_var, "log", "nightly.log")).read()
    assert f"--day {yesterday}" in log and "OK:" in log
    for port in ar_ports:
        assert archive_stats(port)["last_day"] == str(yesterday)
    # Same answers, now from the archive tier.
    assert series("k7") == [0, 8] and series("k0") == [0, 1]
    bd = get(api, "/breakdown?ns=t&key=k3&sub=c&unit=day&units=2").json()["data"]["breakdown"]
    assert bd == [{"subkey": "US", "value": 4}]
    # Re-running the same day is a no-op that succeeds.
    again = sh([NIGHTLY, "--var", demo_var, "--day", str(yesterday)], timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr

    # The backup of the live generation (zstd, the default codec) brings it back after its
    # files are lost.
    generation = archive_stats(ar_ports[0])["generation"]
    backup = os.path.join(demo_var, "backup", generation)
    assert sorted(os.listdir(backup)) == ["manifest", "shard-0.csv.zst", "shard-1.csv.zst"]
    work = os.path.join(demo_var, "rebuild")
    gen_dir = os.path.join(work, "gen", generation)
    before = {n: open(os.path.join(gen_dir, n), "rb").read() for n in ("shard-0.csv", "shard-1.csv")}
    subprocess.run(["rm", "-rf", gen_dir], check=True)
    restore = sh([os.path.join(OPS, "restore-archive"), "--backup", backup, "--work", work,
                  "--config", os.path.join(demo_var, "cluster.conf")])
    assert restore.returncode == 0, restore.stdout + restore.stderr
    for port in ar_ports:
        assert f"127.0.0.1:{port} serves generation {generation}" in restore.stdout
        assert archive_stats(port)["generation"] == generation
    for name, data in before.items():
        assert open(os.path.join(gen_dir, name), "rb").read() == data
    assert series("k7") == [0, 8]
    # A backup that does not match its manifest is refused, and nothing changes.
    bad = tmp_path / "bad"
    subprocess.run(["cp", "-r", backup, str(bad)], check=True)
    subprocess.run(f"zstd -q -dc {bad}/shard-1.csv.zst | head -n 1 | zstd -q > {bad}/x && mv {bad}/x {bad}/shard-1.csv.zst",
                   shell=True, check=True)
    other_work = tmp_path / "other-work"
    refused = sh([os.path.join(OPS, "restore-archive"), "--backup", str(bad), "--work", str(other_work)])
    assert refused.returncode == 1 and "does not match its manifest" in refused.stderr, refused.stderr
    assert not os.path.lexists(other_work / "current")
    assert os.listdir(other_work / "gen") == []

    # Archive records → history → import with 3 shards: the same records, spread anew (one
    # shard read from its zstd backup copy, one from the generation's file).
    history = tmp_path / "history.csv"
    with open(history, "wb") as out:
        subprocess.run([os.path.join(OPS, "archive-to-history"),
                        os.path.join(backup, "shard-0.csv.zst"), os.path.join(gen_dir, "shard-1.csv")],
                       stdout=out, check=True)
    new_work = str(tmp_path / "work3")
    run("clickatron-rebuild", ["import", "--work", new_work, "--input", history, "--archive-shards", 3],
        check=True, timeout=300)
    run("clickatron-rebuild", ["merge", "--work", new_work, "--archive-shards", 3], check=True, timeout=300)
    old_lines = sorted(b"".join(before.values()).splitlines())
    new_lines = sorted(b"".join(open(os.path.join(new_work, "merged", f"shard-{k}.csv"), "rb").read()
                                for k in range(3)).splitlines())
    assert new_lines == old_lines
