"""What a host without the cluster secret can do (issue 32; docs/operations.md#threat-model):
from an extra host on the cluster's network that has no secret file, every internal endpoint
of every server refuses — 401 SECRET_MISSING without the header, 403 SECRET_WRONG with a
guessed one — and nothing changes: every realtime shard's slots, rings and closed day, every
archive replica's generation and reload count, every API's late store, the live manifest and
every answer are the same before and after. A server it starts on its own address without a
secret refuses to start, and a nightly run from it changes nothing.

Runs as root only (network namespaces: tests/hosts.py); skipped loudly otherwise.
"""
import os

from harness import SECRET, binary
from hosts import request
from formats import day_text
from multihost_cluster import API_PORT, APIS, ARCHIVE_PORTS, ARCHIVES, RT_PORT
from multihost_scenario import LOAD_KEYS, T, scenario

SENDER = {"X-Clickatron-Sender": "7e57000000000bad"}


def state(c, s):
    """Everything the intruder must not change, read with the secret from the client host."""
    out = {"manifest": c.manifest()}
    for host in c.realtimes:
        st = c.rt_stats(host)
        out[host] = (st["ring"], st["closed_through"], [(x["day"], x["state"], x["records"]) for x in st["slots"]])
    for replicas in ARCHIVES:
        for host in replicas:
            st = c.get(host, "/stats").json()["data"]
            out[host] = (st["generation"], st["reloads"], st["records"])
    for api in APIS:
        late = c.get(api, "/late?after=0", secret=SECRET).body
        out[api] = (c.api_stats(api)["late"], late)
    for ns, key in list(s.quiet) + LOAD_KEYS[:4]:
        out[(ns, key)] = c.series("api1", ns, key, s.first_hour, s.hours)
    return out


def internal_requests(c):
    """(what, address, port, method, path, body, headers) of every guarded endpoint."""
    day = day_text(T)
    reqs = []
    for host in c.realtimes:
        a = c.addr(host)
        reqs += [(f"{host} /incr", a, RT_PORT, "POST", "/incr?source=intruder&seq=1", "u|k00.ymdh,5\n", SENDER),
                 (f"{host} /set", a, RT_PORT, "POST", f"/set?day={day}", "_l|x,y\n", {}),
                 (f"{host} /export", a, RT_PORT, "GET", f"/export?day={day}", None, {}),
                 (f"{host} /close", a, RT_PORT, "POST", f"/close?day={day_text(T + 1)}", b"", {}),
                 (f"{host} /release", a, RT_PORT, "POST", f"/release?day={day_text(T - 1)}", b"", {})]
    for s, replicas in enumerate(ARCHIVES):
        for host in replicas:
            reqs += [(f"{host} /reload", c.addr(host), ARCHIVE_PORTS[s], method, "/reload", b"" if method == "POST"
                      else None, {}) for method in ("GET", "POST")]
    for api in APIS:
        reqs += [(f"{api} /late", c.addr(api), API_PORT, "GET", "/late?after=0", None, {}),
                 (f"{api} /late/release", c.addr(api), API_PORT, "POST", "/late/release?through=1000", b"", {})]
    return reqs


def test_multihost_a_host_without_the_secret_changes_nothing(tmp_path):
    with scenario(tmp_path, extra_hosts={"intruder": 50}) as s:
        c = s.c
        before = state(c, s)

        answers = {}
        with c.net.inside("intruder"):
            for what, address, port, method, path, body, headers in internal_requests(c):
                for secret, want in ((None, (401, "SECRET_MISSING")), ("a-guessed-secret-" + "x" * 16,
                                                                       (403, "SECRET_WRONG"))):
                    r = request(address, port, method, path, body=body, headers=headers, secret=secret)
                    got = (r.status, r.json().get("status_txt"))
                    answers[(what, secret is None)] = got
                    assert got == want, (what, secret, r)
            # A server of its own on its address, without a secret: refused at start.
            data = os.path.join(c.net.root("intruder"), "rt")
            os.makedirs(data)
            r = c.net.run("intruder", [binary("clickatron-realtime"), "--data-dir", data, "--address",
                                       c.addr("intruder"), "--port", RT_PORT], env=c.env, timeout=60)
            assert r.returncode == 1 and "SECRET_REQUIRED" in r.stderr, r
            # A nightly from it through yesterday, which realtime holds: the cluster config
            # without the secret file.
            conf = os.path.join(c.net.root("intruder"), "cluster.conf")
            with open(conf, "w") as f:
                f.write("".join(line + "\n" for line in c.config_text("intruder").splitlines()
                                if not line.startswith("secret-file")))
            r = c.rebuild("nightly", "--work", os.path.join(c.net.root("intruder"), "work"), "--config", conf,
                          "--day", day_text(T - 1), host="intruder")
            assert r.returncode == 1 and "SECRET_MISSING" in r.stderr, r

        assert state(c, s) == before
        assert c.rt_stats(c.realtimes[0])["limits"]["secret_missing"] >= 2
        print(f"MULTIHOST no secret: {len(answers)} requests to internal endpoints from the intruder host, "
              f"every one refused (401 without the header, 403 with a wrong one); state unchanged")
