"""Shared pieces of the integration tests: real binaries on 127.0.0.1, free ports, temp dirs.

Every process a test starts goes through Procs, which kills it at teardown. Readiness is a
poll with a deadline (never a sleep): `wait_until(lambda: ...)`.
"""
import atexit
import http.client
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

from ports import free_port  # noqa: F401 (tests import it from here)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# ops/lib holds the Python helpers the ops scripts, the tests and the benchmarks share
# (formats.py: the model of docs/formats.md), so each exists once.
OPS_LIB = os.path.join(ROOT, "ops", "lib")
if OPS_LIB not in sys.path:
    sys.path.insert(0, OPS_LIB)
BIN = os.environ.get("CLICKATRON_BIN") or os.path.join(ROOT, "build", "asan", "bin")
GOLDEN = os.environ.get("CLICKATRON_GOLDEN_DIR") or os.path.join(ROOT, "tests", "golden")

# A test that writes to a realtime shard's /incr itself names its sender like an API process
# does (X-Clickatron-Sender, docs/api.md#clickatron-realtime): headers=SENDER.
SENDER_ID = "7e57000000000001"
SENDER = {"X-Clickatron-Sender": SENDER_ID}

# The cluster secret (docs/operations.md#threat-model). Every cluster a test starts runs
# with one, as a real cluster does: Procs.start gives the servers and the API
# --secret-file SECRET_FILE, run() gives it to clickatron-rebuild, request() sends the
# header. One random secret per pytest process, in a private directory removed at exit; a
# test that needs a cluster config naming it writes `secret-file = {SECRET_FILE}`.
SECRET_HEADER = "X-Clickatron-Secret"
SECRET = secrets.token_hex(16)
_SECRET_DIR = tempfile.mkdtemp(prefix="clickatron-secret-")
atexit.register(shutil.rmtree, _SECRET_DIR, ignore_errors=True)
SECRET_FILE = os.path.join(_SECRET_DIR, "cluster.secret")
with open(os.open(SECRET_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as _f:
    _f.write(SECRET + "\n")
# The programs that read --secret-file.
SECRET_PROGRAMS = ("clickatron-realtime", "clickatron-archive", "clickatron-api", "clickatron-rebuild")


def with_secret(name, args):
    """args with --secret-file SECRET_FILE added for a program that reads it, unless the
    arguments already name one (or ask for --help)."""
    args = [str(a) for a in args]
    if name in SECRET_PROGRAMS and "--secret-file" not in args and "--help" not in args:
        args += ["--secret-file", SECRET_FILE]
    return args


def binary(name):
    path = os.path.join(BIN, name)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} is not built (set CLICKATRON_BIN or run ops/test)")
    return path


def wait_until(predicate, timeout=20.0, interval=0.02, what="condition"):
    """Polls predicate until it returns a truthy value; raises after the deadline."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception as e:  # a server not up yet refuses connections
            last_error = e
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what} (last error: {last_error})")


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def text(self):
        return self.body.decode("utf-8", "replace")

    def json(self):
        import json
        return json.loads(self.body)

    def __repr__(self):
        return f"Response({self.status}, {self.body[:200]!r})"


def request(port, method, path, body=None, headers=None, timeout=10.0, host="127.0.0.1", secret=True):
    """One HTTP request on a new connection; returns Response (never raises on HTTP errors).
    secret: True sends the cluster secret (SECRET), False none, a string that string."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        if isinstance(body, str):
            body = body.encode()
        headers = dict(headers or {})
        if secret is True:
            headers.setdefault(SECRET_HEADER, SECRET)
        elif secret:
            headers[SECRET_HEADER] = secret
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        return Response(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        conn.close()


def get(port, path, **kw):
    return request(port, "GET", path, **kw)


def post(port, path, body=b"", **kw):
    return request(port, "POST", path, body=body, **kw)


def qs(**params):
    """Query string with repeated keys for list values."""
    return urllib.parse.urlencode(params, doseq=True)


class Proc:
    def __init__(self, args, log_path, env=None):
        self.args = args
        self.log_path = log_path
        self.log = open(log_path, "ab")
        self.popen = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT,
                                      env=env, start_new_session=True)

    @property
    def pid(self):
        return self.popen.pid

    def alive(self):
        return self.popen.poll() is None

    def output(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def terminate(self, timeout=20.0):
        """SIGTERM and wait; returns the exit status."""
        if self.alive():
            self.popen.send_signal(signal.SIGTERM)
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
            raise AssertionError(f"{self.args[0]} ignored SIGTERM for {timeout}s")
        finally:
            self.log.close()

    def kill9(self):
        if self.alive():
            self.popen.send_signal(signal.SIGKILL)
        self.popen.wait()
        self.log.close()


class Procs:
    """Starts binaries for one test and stops every one of them at teardown."""

    def __init__(self, tmp_path):
        self.tmp_path = tmp_path
        self.started = []

    def start(self, name, args, ready_port=None, ready_path="/ping", env=None, timeout=30.0, secret=True):
        """secret=False starts the program without the cluster secret (with_secret)."""
        n = len(self.started)
        log_path = os.path.join(str(self.tmp_path), f"{name}.{n}.log")
        args = with_secret(name, args) if secret else [str(a) for a in args]
        proc = Proc([binary(name)] + args, log_path, env=env)
        self.started.append(proc)
        if ready_port is not None:
            def ready():
                if not proc.alive():
                    raise AssertionError(f"{name} exited with {proc.popen.returncode}:\n{proc.output()}")
                return get(ready_port, ready_path, timeout=2).status == 200
            try:
                wait_until(ready, timeout=timeout, what=f"{name} on port {ready_port}")
            except AssertionError:
                raise
        return proc

    def stop_all(self):
        errors = []
        for p in reversed(self.started):
            if p.alive():
                try:
                    status = p.terminate()
                    if status not in (0, -signal.SIGTERM):
                        errors.append(f"{p.args[0]} exited {status}:\n{p.output()[-3000:]}")
                except AssertionError as e:
                    errors.append(str(e))
            elif not p.log.closed:
                p.log.close()
        return errors


def run(name, args, input=None, timeout=120, check=False, secret=True):
    """Runs a command-line tool to completion; returns CompletedProcess (bytes).
    secret=False runs it without the cluster secret (with_secret)."""
    if isinstance(input, str):
        input = input.encode()
    args = with_secret(name, args) if secret else [str(a) for a in args]
    r = subprocess.run([binary(name)] + args, input=input,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f"{name} {args} exited {r.returncode}: {r.stderr.decode()}")
    return r
