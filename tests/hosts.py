"""Test hosts: network namespaces on one private bridge, for the multi-host tests
(tests/test_multihost_*.py, docs/operations.md: the procedures they run).

Each host is a network namespace with one veth (`eth0`) whose other end is a port of a
bridge that lives in a namespace of its own (the "switch"), so nothing touches the
machine's real interfaces. Every address comes from 198.18.0.0/15 (RFC 2544, the
benchmarking range) and nothing else. The veth pairs are created with both ends already in
their namespaces: no link ever exists in the root namespace.

    net = Network(tmp_path, {"api1": 11, "rt1": 21})   # host name -> last octet of 198.18.0.x
    with net:                                         # creates; removes everything on exit
        net.start("rt1", "realtime", [binary, ...])   # a process inside host rt1
        with net.inside("client"): request(...)        # traffic only from inside a host
        net.cut("rt1"); net.heal("rt1")               # its switch port down / up
        net.partition("api1", "rt1"); net.heal_partition("api1", "rt1")

Processes run with `ip netns exec`, which keeps the root's filesystem: each host gets its
own directory (`net.root(host)`) for its configs and data.

Traffic rule (docs/operations.md#threat-model, and this machine's): a request to
198.18.0.0/15 from the root namespace would leave the machine by its default route. The
test's own requests go through `request()` here, which refuses to send unless the calling
thread is inside one of this network's hosts (`inside()` moves a thread there with setns;
threads it starts inherit the host).

Clean-up: `close()` stops every process it started (SIGTERM, then SIGKILL by pid after a
deadline), kills whatever else still runs in its namespaces (children of those processes,
by pid, from `ip netns pids`), and deletes the namespaces, which removes their links and
the bridge. At start, leftovers of an earlier run that crashed — namespaces named with
PREFIX whose creating process is gone — are removed the same way. Without root nothing
here can run: `require_root()` skips the test, loudly.
"""
import contextlib
import ctypes
import http.client
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import warnings

import pytest

from harness import Proc, Response

PREFIX = "ctmh"  # every namespace of these tests: ctmh<pid of the pytest process>-<host>
SUBNET = "198.18.0"  # the hosts' addresses: SUBNET.<octet>/24, inside 198.18.0.0/15
_NAME = re.compile(r"^" + PREFIX + r"(\d+)-")
_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)
_ROOT_NET = os.stat("/proc/self/ns/net").st_ino  # the namespace pytest started in


def require_root():
    """Skips the calling test, saying why, unless this process can make namespaces."""
    why = None
    if os.geteuid() != 0:
        why = ("MULTIHOST TESTS SKIPPED: they need root to create network namespaces (ip netns, veth, "
               "bridge); CI runs as root and runs them")
    elif shutil.which("ip") is None or shutil.which("nsenter") is None:
        why = "MULTIHOST TESTS SKIPPED: `ip` (iproute2) or `nsenter` (util-linux) is not installed"
    if why:
        warnings.warn(why)  # in the warnings summary of every run, not only with -rs
        pytest.skip(why)


def ip(*args, check=True):
    r = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and r.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed ({r.returncode}): {r.stderr.strip()}")
    return r


def _setns(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, _CLONE_NEWNET) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"setns({path}): {os.strerror(e)}")
    finally:
        os.close(fd)


def _namespace_pids(ns):
    r = ip("netns", "pids", ns, check=False)
    return [int(p) for p in r.stdout.split()] if r.returncode == 0 else []


def _kill_and_wait(pids, timeout=10.0):
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)
            time.sleep(0.02)


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_namespace(ns):
    """Kills every process inside ns (by pid) and deletes it."""
    _kill_and_wait(_namespace_pids(ns))
    ip("netns", "del", ns, check=False)


def remove_leftovers():
    """Removes the namespaces (and their processes) of earlier runs whose pytest is gone, and
    their directories under /tmp (tests/multihost_slurm.py's munge sockets)."""
    removed = []
    for name in os.listdir(tempfile.gettempdir()):
        m = _NAME.match(name)
        if m and not _pid_alive(int(m.group(1))):
            shutil.rmtree(os.path.join(tempfile.gettempdir(), name), ignore_errors=True)
            removed.append(name)
    for line in ip("netns", "list").stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        m = _NAME.match(name)
        if m and not _pid_alive(int(m.group(1))):
            remove_namespace(name)
            removed.append(name)
    return removed


def our_namespaces():
    """Every namespace of these tests that exists now (of any run)."""
    return [line.split()[0] for line in ip("netns", "list").stdout.splitlines()
            if line.split() and _NAME.match(line.split()[0])]


class Host:
    def __init__(self, network, name, octet, ns):
        self.network, self.name, self.octet, self.ns = network, name, octet, ns
        self.address = f"{SUBNET}.{octet}"
        self.port_name = f"p{octet}"  # its port on the switch
        self.partitioned_from = set()


class Network:
    """Hosts on one switch; see the module docstring."""

    def __init__(self, tmp_path, hosts):
        self.tmp = str(tmp_path)
        self.run_id = f"{PREFIX}{os.getpid()}"
        self.switch = f"{self.run_id}-sw"
        self.hosts = {}
        self.procs = []  # (host, Proc)
        for name, octet in hosts.items():
            assert 1 <= octet <= 250 and re.fullmatch(r"[a-z0-9]{1,8}", name), (name, octet)
            self.hosts[name] = Host(self, name, octet, f"{self.run_id}-{name}")
        self._lock = threading.Lock()

    # -- life cycle -----------------------------------------------------------------------
    def __enter__(self):
        self.create()
        return self

    def __exit__(self, *exc):
        errors = self.close()
        if errors and exc[0] is None:
            raise AssertionError("process exit problems:\n" + "\n".join(errors))

    def create(self):
        remove_leftovers()
        for ns in [self.switch] + [h.ns for h in self.hosts.values()]:
            if ns in our_namespaces():  # this very process ran an earlier test and crashed in it
                remove_namespace(ns)
        ip("netns", "add", self.switch)
        ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
        ip("-n", self.switch, "link", "set", "br0", "up")
        for host in self.hosts.values():
            self.add_host(host.name, host.octet)

    def add_host(self, name, octet):
        """Creates host `name` (also one added after the others: a replacement host)."""
        host = self.hosts.get(name) or Host(self, name, octet, f"{self.run_id}-{name}")
        self.hosts[name] = host
        ip("netns", "add", host.ns)
        ip("link", "add", "eth0", "netns", host.ns, "type", "veth", "peer", "name", host.port_name,
           "netns", self.switch)
        ip("-n", self.switch, "link", "set", host.port_name, "master", "br0")
        ip("-n", self.switch, "link", "set", host.port_name, "up")
        ip("-n", host.ns, "addr", "add", f"{host.address}/24", "dev", "eth0")
        ip("-n", host.ns, "link", "set", "eth0", "up")
        ip("-n", host.ns, "link", "set", "lo", "up")
        os.makedirs(self.root(name), exist_ok=True)
        return host

    def remove_host(self, name):
        """The host is gone: every process in it killed (by pid), its namespace deleted."""
        host = self.hosts.pop(name)
        for h, proc in list(self.procs):
            if h == name:
                proc.kill9()
                self.procs.remove((h, proc))
        remove_namespace(host.ns)

    def close(self):
        """Stops and removes everything; returns what went wrong at the processes' exits
        (a status other than 0 at SIGTERM, a process that ignored it)."""
        errors = []
        for name, proc in reversed(self.procs):
            if proc.alive():
                try:
                    status = proc.terminate(timeout=20)
                    if status not in (0, -signal.SIGTERM):
                        errors.append(f"{' '.join(proc.args[4:6])} on {name} exited {status} at SIGTERM:\n"
                                      f"{proc.output()[-3000:]}")
                except AssertionError as e:
                    errors.append(str(e))
            elif not proc.log.closed:
                proc.log.close()
        for host in list(self.hosts.values()):
            remove_namespace(host.ns)
        remove_namespace(self.switch)
        left = [ns for ns in our_namespaces() if ns.startswith(self.run_id + "-")]
        assert not left, f"namespaces left after close: {left}"
        return errors

    # -- hosts --------------------------------------------------------------------------
    def root(self, name):
        """The host's own directory: its etc/, var/lib/, var/log/."""
        return os.path.join(self.tmp, "hosts", name)

    def address(self, name):
        return self.hosts[name].address

    def enter(self, host, keep_sys=False):
        """The command prefix that runs a program inside host. `ip netns exec` mounts a sysfs
        of the namespace over /sys, which hides the cgroup hierarchies: a program that needs
        them (slurmd) is started with keep_sys, through nsenter, which enters the network
        namespace only."""
        ns = self.hosts[host].ns
        return ["nsenter", f"--net=/run/netns/{ns}"] if keep_sys else ["ip", "netns", "exec", ns]

    def start(self, host, label, args, env=None, keep_sys=False):
        """Starts args inside host; a harness.Proc (its pid is the program's: ip netns exec
        and nsenter exec it), logged to HOST_ROOT/var/log/LABEL.N.log."""
        logs = os.path.join(self.root(host), "var", "log")
        os.makedirs(logs, exist_ok=True)
        n = sum(1 for h, _ in self.procs if h == host)
        proc = Proc(self.enter(host, keep_sys) + [str(a) for a in args],
                    os.path.join(logs, f"{label}.{n}.log"), env=env)
        self.procs.append((host, proc))
        return proc

    def run(self, host, args, env=None, timeout=300, input=None):
        """Runs a command to completion inside host; CompletedProcess (text)."""
        return subprocess.run(["ip", "netns", "exec", self.hosts[host].ns] + [str(a) for a in args],
                              env=env, input=input, capture_output=True, text=True, timeout=timeout)

    def pids(self, host):
        return _namespace_pids(self.hosts[host].ns)

    @contextlib.contextmanager
    def inside(self, host):
        """Moves the calling thread into host's network namespace (threads it starts inherit
        it) and back to where it was at the end."""
        back = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        try:
            _setns(f"/run/netns/{self.hosts[host].ns}")
            try:
                yield self.hosts[host]
            finally:
                if _libc.setns(back, _CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns back to the original namespace failed")
        finally:
            os.close(back)

    # -- faults -------------------------------------------------------------------------
    def cut(self, name):
        """Cuts the host off: its switch port goes down (frames to and from it are lost)."""
        ip("-n", self.switch, "link", "set", self.hosts[name].port_name, "down")

    def heal(self, name):
        ip("-n", self.switch, "link", "set", self.hosts[name].port_name, "up")

    def partition(self, a, b):
        """Cuts a from b only, both ways: each routes the other's address to a neighbour that
        never answers (SUBNET.254), so packets go nowhere and a connect times out, as over a
        broken path; every other host still reaches both."""
        for x, y in ((a, b), (b, a)):
            ip("-n", self.hosts[x].ns, "route", "add", f"{self.address(y)}/32", "via", f"{SUBNET}.254",
               "dev", "eth0")
            # The neighbour entry of y is forgotten, so nothing still goes out on it.
            ip("-n", self.hosts[x].ns, "neigh", "flush", "to", self.address(y), check=False)

    def heal_partition(self, a, b):
        for x, y in ((a, b), (b, a)):
            ip("-n", self.hosts[x].ns, "route", "del", f"{self.address(y)}/32", check=False)


def in_a_test_host():
    """True when the calling thread is outside the namespace pytest started in."""
    return os.stat("/proc/thread-self/ns/net").st_ino != _ROOT_NET


def request(address, port, method, path, body=None, headers=None, timeout=10.0, secret=None):
    """One HTTP request to a test host from the calling thread, which must be inside a test
    host (Network.inside): never from the root namespace. secret: the value of
    X-Clickatron-Secret to send, or None. Returns harness.Response; raises OSError when no
    answer came (refused, timed out, reset)."""
    if not in_a_test_host():
        raise AssertionError(f"refusing to send {method} {path} to {address} from the root namespace")
    assert address.startswith(SUBNET + "."), address
    conn = http.client.HTTPConnection(address, port, timeout=timeout)
    try:
        headers = dict(headers or {})
        if secret is not None:
            headers["X-Clickatron-Secret"] = secret
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        return Response(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    except http.client.HTTPException as e:
        raise ConnectionError(f"{address}:{port}: {e!r}") from e
    finally:
        conn.close()


def wait_port(address, port, proc=None, timeout=60.0, path="/ping"):
    """Polls GET path until 200 (the caller inside a host); fails at once if proc exited."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if proc is not None and not proc.alive():
            raise AssertionError(f"{proc.args[4]} exited {proc.popen.returncode}:\n{proc.output()[-3000:]}")
        try:
            if request(address, port, "GET", path, timeout=2).status == 200:
                return
        except OSError as e:
            last = e
        time.sleep(0.05)
    raise TimeoutError(f"{address}:{port}{path} did not answer 200 within {timeout}s (last: {last})")

