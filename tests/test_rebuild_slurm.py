"""`nightly --executor slurm` on a private two-node Slurm cluster (ops/slurm-local).

The seed example is the archive's history (bootstrap), realtime holds three generated
days; the nightly archives two of them as a graph of Slurm jobs over nodes n1 and n2.
The archive files must be byte-identical to the local executor's, a task that fails once is
retried by Slurm (RequeueExit) with the same result, and a task that fails for good makes
the driver exit 1 naming it and its log, after which the next run completes.

Skipped, saying why, only where Slurm and munge are not installed (ops/install-deps
installs them).
"""
import os
import shutil
import subprocess
import time

import pytest

from formats import day_text
from harness import ROOT, binary, wait_until, with_secret
from test_rebuild_cluster import DAY0, Cluster, bootstrap, rebuild, records_for

SLURM_LOCAL = os.path.join(ROOT, "ops", "slurm-local")
MISSING = [t for t in ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "scancel")
           if shutil.which(t) is None]
pytestmark = pytest.mark.skipif(bool(MISSING), reason="Slurm cannot run here: " + ", ".join(MISSING) +
                                " not installed (ops/install-deps installs slurm-wlm and munge)")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A private cluster of two nodes for the module's tests; SLURM_CONF set while it runs."""
    d = tmp_path_factory.mktemp("slurm")
    r = subprocess.run([SLURM_LOCAL, "up", str(d)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=90)
    if r.returncode != 0:
        subprocess.run([SLURM_LOCAL, "down", str(d)], timeout=120)
        raise AssertionError(f"ops/slurm-local up failed:\n{r.stderr.decode()}")
    old = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(d / "slurm.conf")
    yield d
    if old is None:
        del os.environ["SLURM_CONF"]
    else:
        os.environ["SLURM_CONF"] = old
    r = subprocess.run([SLURM_LOCAL, "down", str(d)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    assert r.returncode == 0, r.stderr.decode()


def archive_files(work):
    """The live generation's files: every shard file and the manifest, as bytes."""
    return {p.name: p.read_bytes() for p in sorted((work / "current").iterdir())}


def reports(work):
    """{task: {key: value}} of every task report of every Slurm run in work."""
    out = {}
    for p in sorted((work / "slurm").glob("*/*.report")):
        out[p.name] = dict(line.split(" = ", 1) for line in p.read_text().splitlines())
    return out


def runs(work):
    """The run directories of the Slurm graphs in work, oldest first."""
    return sorted((work / "slurm").iterdir()) if (work / "slurm").exists() else []


def exit_file(work, task, run=-1):
    """{status, attempt, node} of a task's last attempt in run number `run`, or None."""
    all_runs = runs(work)
    if not -len(all_runs) <= run < len(all_runs) or not (all_runs[run] / f"{task}.exit").exists():
        return None
    return dict(line.split(" = ", 1) for line in (all_runs[run] / f"{task}.exit").read_text().splitlines())


def start_nightly(cluster, day, *extra):
    args = with_secret("clickatron-rebuild", ["nightly", "--work", cluster.work, "--config", cluster.config,
                                              "--day", day_text(day), "--executor", "slurm", *extra])
    return subprocess.Popen([binary("clickatron-rebuild")] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


class Archive:
    """The one archive server of a one-shard cluster, stopped and started again by the test."""

    def __init__(self, procs, cluster):
        self.procs, self.cluster = procs, cluster
        self.port = cluster.archive_ports[0][0]
        self.proc = next(p for p in procs.started if p.args[0].endswith("clickatron-archive"))

    def stop(self):
        self.proc.terminate()

    def start(self):
        self.proc = self.procs.start("clickatron-archive", ["--db-file", self.cluster.work / "current" / "shard-0.csv",
                                                             "--port", self.port], ready_port=self.port)


def test_nightly_on_slurm_is_byte_identical_to_the_local_executor_and_uses_both_nodes(procs, tmp_path, slurm):
    days = [DAY0, DAY0 + 1, DAY0 + 2]
    counts, lookups = records_for(days, users=60)
    clusters = {}
    for name in ("local", "slurm"):
        (tmp_path / name).mkdir()
        # The same data in data directories of the same ids (ring-id): the same generation.
        clusters[name] = Cluster(procs, tmp_path / name, realtime=2, archive_replicas=(1, 1),
                                 ring_ids=["0123456789abcdef", "fedcba9876543210"])
        clusters[name].load(counts, lookups)
        bootstrap(clusters[name])

    local = clusters["local"]
    r = rebuild("nightly", "--work", local.work, "--config", local.config, "--day", day_text(DAY0 + 1))
    assert "nightly 2013-05-11: done: archived 2 day(s) 2013-05-10..2013-05-11" in r.stdout.decode()

    on_slurm = clusters["slurm"]
    t0 = time.monotonic()
    r = rebuild("nightly", "--work", on_slurm.work, "--config", on_slurm.config, "--day", day_text(DAY0 + 1),
                "--executor", "slurm", timeout=240)
    out = r.stdout.decode()
    elapsed = time.monotonic() - t0
    assert "nightly 2013-05-11: done: archived 2 day(s) 2013-05-10..2013-05-11" in out, out
    # Progress per step, then a summary per step.
    assert "export 4/4, segment 2/2, late 1/1, compact 1/1, merge 2/2, publish 1/1, release 1/1 tasks done" in out, out
    assert "nightly on slurm: merge: 2 task(s) on " in out, out

    # The same archive, byte for byte: shard files and manifest (so the same generation).
    assert archive_files(on_slurm.work) == archive_files(local.work)
    assert b"last_day = 2013-05-11\n" in (on_slurm.work / "current" / "manifest").read_bytes()
    for port in on_slurm.rt_ports:
        assert [on_slurm.slot_state(port, d) for d in days] == ["released", "released", "open"]
    # 4 exports, 2 segments, late, compact, 2 merges, merge + publish, release: 13 commands.
    rep = reports(on_slurm.work)
    assert len(rep) == 13, sorted(rep)
    assert all(v["status"] == "ok" for v in rep.values()), rep
    assert {v["node"] for v in rep.values()} == {"n1", "n2"}, rep
    assert int(rep["merge-0-1.0.report"]["records"]) > 0
    # The tasks' changes were all finished, nothing half-done is left.
    assert not list((on_slurm.work / "txn").iterdir())
    assert not (on_slurm.work / "merging").exists()
    print(f"slurm nightly: {elapsed:.1f} s")


def test_a_failed_task_is_retried_or_fails_the_night_naming_it_and_the_next_run_completes(procs, tmp_path, slurm):
    days = [DAY0, DAY0 + 1]
    counts, lookups = records_for(days, users=40, seed=5)
    cluster = Cluster(procs, tmp_path, realtime=2, archive_replicas=(1,))
    cluster.load(counts, lookups)
    bootstrap(cluster)
    archive = Archive(procs, cluster)
    # The reference: the local executor's steps in a work directory of their own (no
    # release, so realtime keeps the day for the Slurm runs).
    ref = tmp_path / "ref"
    rebuild("import", "--work", ref, "--input", os.path.join(os.path.dirname(__file__), "golden", "seed-example",
                                                              "history.csv"), "--archive-shards", 1)
    rebuild("export", "--work", ref, "--config", cluster.config, "--day", day_text(DAY0))
    rebuild("segment", "--work", ref, "--config", cluster.config, "--day", day_text(DAY0))
    rebuild("compact", "--work", ref, "--before", day_text(DAY0))
    rebuild("merge", "--work", ref, "--config", cluster.config)
    rebuild("publish", "--work", ref, "--archive-shards", 1)

    # 1. The archive server goes down once the graph runs: publish cannot reload it, and
    # with no retry the night fails naming the task and its log; nothing was released.
    p = start_nightly(cluster, DAY0, "--slurm-retries", "0")
    wait_until(lambda: exit_file(cluster.work, f"export-{day_text(DAY0)}-0", run=0) or p.poll() is not None,
               timeout=60, what="the first export task")
    archive.stop()
    out, err = p.communicate(timeout=180)
    assert p.returncode == 1, (out.decode(), err.decode())
    message = err.decode()
    assert "clickatron-rebuild nightly: task publish-0 failed (Slurm job" in message, message
    assert "attempt 1 of 1" in message and "publish-0.log" in message, message
    assert "the rest of the graph was cancelled" in message, message
    assert [cluster.slot_state(port, DAY0) for port in cluster.rt_ports] == ["closed", "closed"]

    # 2. The next run, with a retry: the archive fails publish once more, comes back, and
    # Slurm's second attempt of publish completes the night. (The day's export and segment
    # are in the work directory since the first run: this graph starts at late, and the
    # archive goes down once that task is done.)
    archive.start()
    p = start_nightly(cluster, DAY0, "--slurm-retries", "1")
    wait_until(lambda: exit_file(cluster.work, "late-0", run=1) or p.poll() is not None,
               timeout=60, what="the late task of the second run")
    archive.stop()
    wait_until(lambda: exit_file(cluster.work, "publish-0", run=1) or p.poll() is not None, timeout=120,
               what="publish's first attempt")
    assert exit_file(cluster.work, "publish-0", run=1)["status"] != "0"
    archive.start()
    out, err = p.communicate(timeout=180)
    assert p.returncode == 0, (out.decode(), err.decode())
    assert len(runs(cluster.work)) == 2
    last = exit_file(cluster.work, "publish-0", run=1)
    assert (last["status"], last["attempt"]) == ("0", "1"), last
    assert "publish: 1 task(s) on" in out.decode() and "1 retried attempt(s)" in out.decode(), out.decode()

    # The same files as the local steps, the day released on every realtime shard.
    assert archive_files(cluster.work) == archive_files(ref)
    assert [cluster.slot_state(port, DAY0) for port in cluster.rt_ports] == ["released", "released"]
    assert [cluster.slot_state(port, DAY0 + 1) for port in cluster.rt_ports] == ["open", "open"]


def test_bulk_load_on_slurm_merges_to_the_same_files_as_a_local_import(tmp_path, slurm):
    """`import --executor slurm`: split by day, chunks imported in parallel on both nodes,
    merged per shard: the merged files of one local import and merge, byte for byte."""
    import random
    days = [DAY0 + d for d in range(6)]
    counts, lookups = records_for(days, users=50, seed=3)
    lines = [f"{k},{v}" for k, v in counts.items()] + [f"{k},{orig}" for (_, k), orig in lookups.items()]
    random.Random(9).shuffle(lines)
    seed = open(os.path.join(os.path.dirname(__file__), "golden", "seed-example", "history.csv")).read()
    history = tmp_path / "history.csv"
    history.write_text(seed + "\n".join(lines) + "\n")

    local = tmp_path / "local"
    rebuild("import", "--work", local, "--input", history, "--archive-shards", 2)
    rebuild("merge", "--work", local, "--archive-shards", 2)

    work = tmp_path / "slurm-work"
    r = rebuild("import", "--work", work, "--input", history, "--archive-shards", 2, "--executor", "slurm",
                "--chunks", 3, timeout=240)
    out = r.stdout.decode()
    assert "split 1/1, import 3/3, merge 3/3 tasks done" in out, out
    assert "import on slurm: done:" in out, out
    merged = {p.name: p.read_bytes() for p in (work / "merged").iterdir() if p.name != "meta"}
    assert merged == {p.name: p.read_bytes() for p in (local / "merged").iterdir() if p.name != "meta"}
    assert sorted(merged) == ["shard-0.csv", "shard-1.csv"]
    # Every generated day is a segment of its own, as a local import makes them.
    spans = sorted(p.name.split(".")[0] for p in (work / "segments").iterdir())
    assert [s for s in spans if s.startswith("2013")] == [day_text(d) for d in days]
    assert {v["node"] for v in reports(work).values()} == {"n1", "n2"}
    assert not (work / "bulk").exists() or not list((work / "bulk").iterdir())

    # The same load again: every chunk is already imported, the merge is up to date.
    r = rebuild("import", "--work", work, "--input", history, "--archive-shards", 2, "--executor", "slurm",
                "--chunks", 3, timeout=240)
    assert {p.name: p.read_bytes() for p in (work / "merged").iterdir() if p.name != "meta"} == merged
    logs = "".join(p.read_text() for p in runs(work)[-1].glob("import-*.log"))
    assert logs.count("already imported") == 3, logs
