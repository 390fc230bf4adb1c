"""A realtime host lost with its disk, under load, and a new host in its place at a new
address, by docs/operations.md#replaying-an-oplog-after-losing-a-realtime-host run as
written: the guide's shell blocks are read from the guide at test time (tests/multihost_guide.py)
and run on the hosts they name; only `systemctl` is the test's (it owns the processes).
Shard 1 is lost, as in the guide's example. Every acknowledged increment counted once —
also after the next nightly archives the replayed day.

Runs as root only (network namespaces: tests/hosts.py); skipped loudly otherwise.
"""
import os
import shutil

from harness import wait_until
from formats import day_text
from multihost_cluster import APIS, RT_PORT
from multihost_guide import code_blocks, run, section, split_at_systemctl
from multihost_scenario import T, scenario, ts

LOST = 1  # the shard the guide's example loses


def test_multihost_realtime_host_lost_replaced_by_the_guides_replay(tmp_path):
    with scenario(tmp_path, extra_hosts={"rt4": 24}) as s:
        c = s.c
        c.net.remove_host("rt4")  # not there yet: it is the host that will replace rt2
        first = s.load(hours=[ts(d, h) for d in (T - 1, T, T + 1) for h in range(24)], rate=10,
                       quiet=None).start()
        first.wait_acked(80)
        first.stop()
        c.wait_delivered()
        load = s.load(rate=8, ledger=first.ledger).start()
        load.wait_acked(40)

        # rt2 is lost with its disk.
        load.phase = "shard 1 lost"
        lost = c.realtimes[LOST]
        lost_address = c.addr(lost)
        c.kill9(lost)
        shutil.rmtree(c.lib(lost))
        c.net.remove_host(lost)
        load.wait_acked(load.stats["acked_requests"] + 40)  # the APIs keep acknowledging

        # Step 1: a replacement with an empty data directory, at a new address: its line in
        # place on every host, and line K of oplog-dir/realtime-shards on every API host.
        new = "rt4"
        c.net.add_host(new, 24)
        c.realtimes[LOST] = new
        c.write_configs()
        c.start_realtime(LOST)
        for api in APIS:
            path = os.path.join(c.oplog(api), "realtime-shards")
            with open(path) as f:
                lines = f.read().splitlines()
            assert lines[LOST] == f"{lost_address}:{RT_PORT}", lines
            lines[LOST] = f"{c.addr(new)}:{RT_PORT}"
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")

        guide = code_blocks(section("Replaying an oplog after losing a realtime host"))
        # Step 2, on the rebuild host: read the archive's last day, close it on the new shard.
        step2 = guide[0]
        out = run(c, "rebuild", step2 + 'echo "LAST_ARCHIVED_DAY=$LAST_ARCHIVED_DAY"\n',
                    address=f"{c.addr(new)}:{RT_PORT}")
        last_archived = out.strip().splitlines()[-1].split("=", 1)[1]
        assert last_archived == day_text(T - 2)
        assert c.rt_stats(new)["closed_through"] == last_archived

        # Step 3, on each API host in turn (the balancer sends the load to the other).
        load.phase = "replay"
        for api in APIS:
            for kind, text in split_at_systemctl(guide[1]):
                if kind == "systemctl" and text == "stop clickatron-api":
                    load.down.add(api)
                    assert c.stop(api) == 0
                elif kind == "systemctl" and text == "start clickatron-api":
                    c.start_api(api)
                    load.down.discard(api)
                else:
                    out = run(c, api, text, values={"LAST_ARCHIVED_DAY": last_archived})
                    assert f"cursor realtime-{LOST}.slot-0" in out, out

        # Step 4: the backlog of shard K goes to 0 on every API.
        load.phase = "replayed"
        for api in APIS:
            wait_until(lambda: c.backlog(api, LOST) == 0, timeout=180, what=f"{api} delivering shard {LOST}")
        load.wait_acked(load.stats["acked_requests"] + 40)
        load.stop()
        acked, counted, doubt = s.check("realtime host rt2 lost, rt4 replayed", load, earlier=[first])
        assert counted >= acked > 0
        # Queries: the lost shard's keys answer a named 503 until the replay; those in flight
        # on the dead address (a connect timeout) when an API stops for step 3 are abandoned
        # by it (net/http_server.h: a stopping server drops replies still waiting on a
        # backend) and, when the other API does the same, get no answer at all. Nothing
        # else fails, and never a wrong number.
        failed = load.failed_queries()
        assert set(o for _, o in failed) <= {"503 REALTIME_UNAVAILABLE", "no answer"}, failed
        assert all(p in ("shard 1 lost", "replay") for p, _ in failed), failed
        assert all(("u", key) in s.quiet_on_shard(LOST) for _, _, key, _ in load.no_answers), load.no_answers

        # The next night archives yesterday from the new shard's replayed ring: still exact.
        c.set_time(ts(T + 1) + 30 * 60)
        r = c.nightly()
        assert r.returncode == 0, r.stdout + r.stderr
        assert c.manifest()["last_day"] == day_text(T - 1)
        acked2, counted2, doubt2 = s.check("realtime host lost, after the next nightly", load, earlier=[first])
        assert (acked2, counted2) == (acked, counted)
