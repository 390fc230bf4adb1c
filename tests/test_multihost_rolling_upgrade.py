"""A rolling upgrade of every server, one host at a time, under load, following
docs/operations.md#upgrades-and-restarts (issue 32): the archive replicas first, then the
realtime shards, then the APIs (archive before API, realtime before API), each stopped with
SIGTERM and started again from the build, waiting for it to serve (and, for a realtime
shard, for the APIs to have delivered to it again) before the next host; then the nightly
runs with the new build. The "new build" is the build under test: the test proves the
procedure, not a format change between two versions.

Queries go through a balancer's behaviour (tests/multihost_load.py): an API that is down or
does not answer a GET is left for the other. Nothing acknowledged is lost, nothing counted
twice; no query fails while an archive replica or an API restarts. While a realtime shard
restarts, the guide says queries needing its live days answer 503 for those seconds: those
are counted per host and must be the named 503, never a number.

Runs as root only (network namespaces: tests/hosts.py); skipped loudly otherwise.
"""
from harness import wait_until
from formats import day_text
from multihost_cluster import APIS, ARCHIVES
from multihost_scenario import T, scenario, ts


def test_multihost_rolling_upgrade_of_every_server_under_load(tmp_path):
    with scenario(tmp_path) as s:
        c = s.c
        load = s.load(rate=10).start()
        load.wait_acked(40)
        generation = c.manifest()["generation"]

        def settle(phase):
            wait_until(lambda: load.query_results[(phase, "exact")] + load.query_results[
                (phase, "exact (balancer retry after no connection)")] >= 5, timeout=60,
                what=f"queries answered in '{phase}'")

        for replicas in ARCHIVES:
            for host in replicas:
                load.phase = f"upgrade {host}"
                assert c.stop(host) == 0
                c.start_archive(host)
                assert c.get(host, "/stats").json()["data"]["generation"] == generation
                settle(load.phase)
        for shard, host in enumerate(list(c.realtimes)):
            load.phase = f"upgrade {host}"
            acked = load.stats["acked_requests"]
            assert c.stop(host) == 0
            c.start_realtime(shard)
            load.wait_acked(acked + 20)
            for api in APIS:
                wait_until(lambda: c.backlog(api, shard) < 50, timeout=60, what=f"{api} delivering to {host}")
            settle(load.phase)
        for api in APIS:
            load.phase = f"upgrade {api}"
            load.down.add(api)  # the balancer's health check takes it out
            assert c.stop(api) == 0
            c.start_api(api)
            load.down.discard(api)
            settle(load.phase)

        # The rebuild host: the next night runs with the new build.
        load.phase = "night after the upgrade"
        c.set_time(ts(T + 1) + 30 * 60)
        r = c.nightly()
        assert r.returncode == 0, r.stdout + r.stderr
        assert c.manifest()["last_day"] == day_text(T - 1)
        settle(load.phase)
        load.stop()

        acked, counted, doubt = s.check("rolling upgrade of 9 servers", load)
        assert counted >= acked > 0
        failed = load.failed_queries()
        realtime_phases = {f"upgrade {h}" for h in c.realtimes}
        assert all(p in realtime_phases and o == "503 REALTIME_UNAVAILABLE" for p, o in failed), failed
        print(f"MULTIHOST rolling upgrade: queries failed (all while a realtime shard restarted, "
              f"named 503): {sum(failed.values())}")
