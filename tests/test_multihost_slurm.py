"""The nightly on a Slurm cluster whose controller and two nodes are hosts of their own
(munged and slurmd per host: tests/multihost_slurm.py), with one node cut off mid-run
(issue 32; docs/operations.md#the-rebuild-on-a-slurm-cluster). Slurm declares the node
down and runs its job again on the other; the night completes, and the published generation
is byte-identical to the local executor's steps run on a copy of the work directory from
before the night. Under keyed load and quiet-key queries: every count exact, no query
fails.

Runs as root with Slurm and munge installed (ops/install-deps installs them); skipped
loudly otherwise.
"""
import os
import shutil

import pytest

from harness import wait_until
from hosts import require_root
from formats import day_text
from multihost_scenario import T, scenario, ts
from multihost_slurm import HOSTS, MISSING, NODES, SlurmHosts


def live_files(work):
    current = os.path.join(work, "current")
    return {name: open(os.path.join(current, name), "rb").read() for name in sorted(os.listdir(current))}


def exits(work):
    """{task: {status, attempt, node}} of the last Slurm run in work."""
    runs = sorted(os.listdir(os.path.join(work, "slurm")))
    run = os.path.join(work, "slurm", runs[-1])
    out = {}
    for name in os.listdir(run):
        if name.endswith(".exit"):
            with open(os.path.join(run, name)) as f:
                out[name[:-5]] = dict(line.split(" = ", 1) for line in f.read().splitlines())
    return out


def test_multihost_nightly_on_slurm_with_a_node_cut_off_mid_run(tmp_path):
    require_root()
    if MISSING:
        pytest.fail("Slurm cannot run here: " + ", ".join(MISSING) + " not installed (ops/install-deps installs "
                    "slurm-wlm and munge)")
    with scenario(tmp_path, extra_hosts=HOSTS) as s:
        c = s.c
        slurm = SlurmHosts(c.net, c.tmp)
        try:
            first = s.load(hours=[ts(d, h) for d in (T - 1, T, T + 1) for h in range(24)], rate=12,
                           quiet=None).start()
            first.wait_acked(100)
            first.stop()
            c.wait_delivered()
            c.write_configs(extra=["executor = slurm"])
            slurm.up(c.env)
            load = s.load(rate=6, ledger=first.ledger).start()
            load.wait_acked(20)
            c.set_time(ts(T + 1) + 30 * 60)

            # The local executor's steps on a copy of the work directory: the reference.
            ref = os.path.join(c.tmp, "reference-work")
            shutil.copytree(c.work, ref, symlinks=True)
            day = day_text(T - 1)
            conf = c.config("rebuild")
            for step in (("export", "--config", conf, "--day", day), ("segment", "--config", conf, "--day", day),
                         ("late", "--config", conf), ("compact", "--before", day), ("merge", "--config", conf),
                         ("publish", "--archive-shards", 2)):
                # (the config says executor = slurm, which only nightly and import take: the
                # command line's --executor local wins)
                c.must(step[0], "--work", ref, *step[1:], *(("--executor", "local") if "--config" in step else ()))

            load.phase = "night on slurm"
            night = c.net.start("rebuild", "nightly", ["/usr/bin/env", "SLURM_CONF=" + slurm.confs["rebuild"],
                                                       c.rebuild_binary(), "nightly", "--work", c.work,
                                                       "--config", conf], env=c.env)
            on_n2 = wait_until(lambda: [job for job, node in slurm.running(c.env) if node == "n2"]
                               or (night.popen.poll() is not None and ["(the night ended)"]),
                               timeout=120, interval=0.02, what="a job running on n2")
            assert night.alive(), f"the night ended before a job ran on n2:\n{night.output()}"
            c.net.cut(NODES["n2"])
            load.phase = "node2 cut off"
            status = night.popen.wait(timeout=300)
            output = night.output()
            assert status == 0, output
            assert f"nightly {day_text(T + 1)}: done" in output or "done: archived 1 day(s)" in output, output

            # The job of the cut node ran again, on the other node.
            tasks = exits(c.work)
            task = on_n2[0].removeprefix("clickatron-")
            assert tasks[task]["node"] == "n1" and int(tasks[task]["attempt"]) >= 1, (task, tasks[task])
            assert all(e["status"] == "0" for e in tasks.values()), tasks

            # The same generation as the local executor's, byte for byte.
            assert live_files(c.work) == live_files(ref)
            assert c.manifest()["last_day"] == day
            load.phase = "after the night"
            wait_until(lambda: load.query_results[("after the night", "exact")] >= 10, timeout=60,
                       what="queries after the night")
            load.stop()
            acked, counted, doubt = s.check("nightly on slurm, node2 cut off", load, earlier=[first])
            assert counted >= acked > 0
            assert load.failed_queries() == {}, load.failed_queries()
            print(f"MULTIHOST slurm: the job cut off on n2: {task} {tasks[task]}; "
                  f"{[line for line in output.splitlines() if 'retried' in line or 'tasks done' in line][-3:]}")
        finally:
            slurm.down()
