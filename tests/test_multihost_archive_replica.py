"""An archive replica's host cut off under query load (issue 32;
docs/operations.md#adding-archive-replicas): the other replica of its shard answers every
query, with no 5xx. A nightly while it is cut off fails at publish naming it and keeps the
previous generation live (a half-published generation is never left behind); once its host
is back, the next nightly publishes and the replica serves the new generation — it caught
up. Every acknowledged increment counted once.

Runs as root only (network namespaces: tests/hosts.py); skipped loudly otherwise.
"""
import os
import shutil

from harness import wait_until
from formats import day_text
from multihost_cluster import ARCHIVE_PORTS
from multihost_guide import code_blocks, run, section
from multihost_scenario import T, scenario, ts


def served(c, host):
    """(generation, last_day) the archive server on host serves."""
    stats = c.get(host, "/stats").json()["data"]
    return stats.get("generation"), stats.get("last_day")


def test_multihost_archive_replica_cut_off_then_catches_up(tmp_path):
    with scenario(tmp_path) as s:
        c = s.c
        # Yesterday gets increments too: the nightly archives it.
        first = s.load(hours=[ts(d, h) for d in (T - 1, T, T + 1) for h in range(24)], rate=12,
                       quiet=None).start()
        first.wait_acked(100)
        first.stop()
        c.wait_delivered()
        old = served(c, "ar1")
        assert old[1] == day_text(T - 2)

        load = s.load(rate=8, ledger=first.ledger).start()
        load.wait_acked(40)
        load.phase = "replica cut off"
        c.net.cut("ar1")
        wait_until(lambda: load.query_results[("replica cut off", "exact")] >= 30, timeout=120,
                   what="30 queries answered while ar1 is cut off")

        # A night while the replica is cut off: publish cannot reload it, fails naming it, and
        # the previous generation stays live.
        load.phase = "night, replica cut off"
        c.set_time(ts(T + 1) + 30 * 60)
        r = c.nightly()
        assert r.returncode != 0, r.stdout + r.stderr
        assert f"{c.addr('ar1')}:{ARCHIVE_PORTS[0]}" in r.stderr, r.stderr
        refusal = [line for line in r.stderr.splitlines() if c.addr("ar1") in line][-1]
        assert c.manifest()["last_day"] == day_text(T - 2)
        for host in ("ar2", "ar3", "ar4"):
            assert served(c, host) == old, host
        wait_until(lambda: load.query_results[("night, replica cut off", "exact")] >= 20, timeout=120,
                   what="20 queries answered after the failed night")

        load.phase = "healed"
        c.net.heal("ar1")
        assert served(c, "ar1") == old
        r = c.nightly()
        assert r.returncode == 0, r.stdout + r.stderr
        assert c.manifest()["last_day"] == day_text(T - 1)
        new = (c.manifest()["generation"], day_text(T - 1))
        for host in ("ar1", "ar2", "ar3", "ar4"):
            assert served(c, host) == new, host
        load.phase = "after the night"
        wait_until(lambda: load.query_results[("after the night", "exact")] >= 20, timeout=120,
                   what="20 queries answered after the second night")

        # The archive's disk lost: the guide's restore of the live generation's backup, on the
        # rebuild host (docs/operations.md#backups-and-restore), under the same load.
        load.phase = "restore"
        shutil.rmtree(os.path.join(c.work, "gen", new[0]))
        restore = code_blocks(section("Backups and restore"))[0]
        out = run(c, "rebuild", restore, replace={"20261121-1f0c6e2a9d3b4c51": new[0]})
        assert f"restore-archive: {new[0]} is live" in out or new[0] in out, out
        for host in ("ar1", "ar2", "ar3", "ar4"):
            assert served(c, host) == new, host
        wait_until(lambda: load.query_results[("restore", "exact")] >= 10, timeout=120,
                   what="10 queries answered after the restore")
        load.stop()

        acked, counted, doubt = s.check("archive replica ar1 cut off", load, earlier=[first])
        assert counted >= acked > 0
        assert load.failed_queries() == {}, load.failed_queries()
        print(f"MULTIHOST archive replica: the night while ar1 was cut off: {refusal}")
