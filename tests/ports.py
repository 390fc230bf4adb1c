"""Free TCP ports on 127.0.0.1 for the servers a test starts.

A port the kernel hands out for bind(port 0) lies in its ephemeral range
(/proc/sys/net/ipv4/ip_local_port_range), which is also where it takes the local port of
every outgoing connection. Between picking such a port and the server's bind, any client
connection of the test (a sender reconnecting, a query) may get it as its own local port,
and the server then fails with "Address already in use". So ports come from below that
range (and above it, when there is room), where the kernel never picks a port by itself;
each is checked free with a bind, and a process never hands out the same port twice.
"""
import os
import random
import socket
import time

_LOWEST = 10000  # below: well-known and registered services
_handed_out = set()
_rng = random.Random(os.getpid() ^ time.time_ns())


def _ephemeral_range():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(x) for x in f.read().split())
            return low, high
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def _bind_ok(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port():
    """A port on 127.0.0.1 that is free now, outside the ephemeral range, never returned
    before by this process."""
    low, high = _ephemeral_range()
    spans = [(a, b) for a, b in ((_LOWEST, low - 1), (high + 1, 65535)) if b - a >= 100]
    for _ in range(2000):
        a, b = _rng.choice(spans) if spans else (_LOWEST, 65535)
        port = _rng.randint(a, b)
        if port in _handed_out or not _bind_ok(port):
            continue
        _handed_out.add(port)
        return port
    raise RuntimeError("no free port on 127.0.0.1 outside the ephemeral range")
