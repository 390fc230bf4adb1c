"""net/: the shared evhttp server wrapper, driven through clickatron-net-testserver with raw
sockets: malformed requests, limits, keep-alive, async and streamed replies whose client
leaves, signals. Every test ends with SIGTERM, and the procs fixture fails it on a non-zero
exit (an ASan leak report included)."""
import json
import signal
import socket
import time

from harness import free_port, get, wait_until


def start(procs, *args):
    port = free_port()
    procs.start("clickatron-net-testserver", ["--port", port, *args], ready_port=port)
    return port


def raw(port, data, timeout=10.0):
    """Sends bytes on a new connection; returns everything until the server closes it."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer and close before reading everything
        chunks = []
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        s.close()


def status_line(response):
    return response.split(b"\r\n", 1)[0]


def body(response):
    return response.split(b"\r\n\r\n", 1)[1]


def stats(port):
    return get(port, "/stats").json()["data"]


def test_bad_percent_encoding_is_a_400_naming_the_parameter(procs):
    port = start(procs)
    r = raw(port, b"GET /get?key=%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status_line(r) == b"HTTP/1.1 400 Bad Request"
    assert body(r) == b"bad percent-encoding in query parameter 'key'\n"
    r = raw(port, b"GET /echo?a=1&key=%4 HTTP/1.0\r\n\r\n")
    assert status_line(r) == b"HTTP/1.0 400 Bad Request"
    assert json.loads(body(r)) == {"status_code": 400, "status_txt": "INVALID_ARG_KEY", "data": None}
    assert get(port, "/ping").body == b"OK"


def test_query_parameters_keep_order_and_repeats_and_json_escapes(procs):
    port = start(procs)
    r = get(port, "/echo/?key=a&k2=u%7Cjehiah&key=b%2Bc&sp=b+c&x=%C3%A9%FF%01%22")
    assert r.status == 200
    assert r.headers["content-type"] == "application/json"
    assert json.loads(r.body) == {
        "status_code": 200, "status_txt": "OK",
        "data": {"method": 0, "path": "/echo/", "body": "", "loop": 0,
                 "params": [["key", "a"], ["k2", "u|jehiah"], ["key", "b+c"], ["sp", "b c"],
                            ["x", "\u00e9\ufffd\u0001\""]]}}
    r = get(port, "/get/?key=x")
    assert (r.status, r.body, r.headers["x-archive-last-day"]) == (200, b"value-of-", "2012-03-25")
    assert get(port, "/nope").status == 404
    assert get(port, "/ping/").status == 404


def test_oversized_url_headers_and_body(procs):
    port = start(procs, "--max-body", 1000)
    r = raw(port, b"GET /get?key=" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status_line(r) == b"HTTP/1.1 414 URI Too Long"
    r = raw(port, b"GET /get?key=" + b"a" * 100000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status_line(r) == b"HTTP/1.1 400 Bad Request"
    r = raw(port, b"GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: " + b"h" * 50000 + b"\r\n\r\n")
    assert status_line(r) == b"HTTP/1.1 400 Bad Request"
    r = raw(port, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n" + b"z" * 1001)
    assert status_line(r) == b"HTTP/1.1 413 Request Entity Too Large"
    r = raw(port, b"POST /echo HTTP/1.0\r\nContent-Length: 1000\r\n\r\n" + b"z" * 1000)
    assert json.loads(body(r))["data"]["body"] == "z" * 1000
    assert get(port, "/ping").body == b"OK"


def test_garbage_and_clients_leaving_mid_request(procs):
    port = start(procs)
    for partial in [b"GET /get?key=a HTTP/1.1\r\nHost:", b"GET /ge",
                    b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\nabc",
                    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"]:
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(partial)
        s.close()
    for junk in [b"NOT HTTP AT ALL\r\n\r\n", b"GET\r\n\r\n", b"GET / HTTP/9.9\r\n\r\n",
                 b"BREW /ping HTTP/1.1\r\nHost: x\r\n\r\n",
                 b"GET /ping HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n",
                 b"GET /ping HTTP/1.1\r\nbad header line\r\n\r\n"]:
        assert b" 200 " not in status_line(raw(port, junk)), junk
    assert get(port, "/ping").body == b"OK"


def test_expect_100_continue_and_head(procs):
    port = start(procs, "--max-body", 1000)
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
    got = b""
    while b"\r\n\r\n" not in got:
        got += s.recv(65536)
    assert got == b"HTTP/1.1 100 Continue\r\n\r\n"
    s.sendall(b"hello")
    got = b""
    while not got.endswith(b"}"):
        got += s.recv(65536)
    assert status_line(got) == b"HTTP/1.1 200 OK"
    assert json.loads(body(got))["data"]["body"] == "hello"
    s.close()
    # Too large: evhttp's lingering close reads the body it refuses (curl sends it after
    # waiting 1 s for the 100), then answers 413 instead of resetting the connection.
    r = raw(port, b"POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n"
            + b"z" * 5000)
    assert status_line(r) == b"HTTP/1.1 413 Request Entity Too Large"
    # HEAD: the headers of the GET, a Content-Length, no body; keep-alive stays in step.
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"HEAD /get?key=1 HTTP/1.1\r\nHost: x\r\n\r\nGET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
    got = b""
    while not got.endswith(b"\r\n\r\nOK"):
        got += s.recv(65536)
    head, rest = got.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"\r\nContent-Length: 9" in head
    assert rest.startswith(b"HTTP/1.1 200 OK\r\n")
    s.close()


def test_keepalive_and_pipelining(procs):
    port = start(procs)
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"".join(b"GET /echo?n=%d HTTP/1.1\r\nHost: x\r\n\r\n" % i for i in range(5)))
    got = b""
    while got.count(b"HTTP/1.1 200 OK") < 5 or not got.endswith(b"}"):
        got += s.recv(65536)
    order = [json.loads(part.split(b"\r\n\r\n", 1)[1])["data"]["params"][0][1]
             for part in got.split(b"HTTP/1.1 ")[1:]]
    assert order == ["0", "1", "2", "3", "4"]
    s.sendall(b"GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
    got = b""
    while not got.endswith(b"OK"):
        got += s.recv(65536)
    assert status_line(got) == b"HTTP/1.1 200 OK"
    s.close()


def test_async_reply_and_stream_whose_client_leaves(procs):
    port = start(procs)
    # A deferred reply answered later.
    r = get(port, "/slow?ms=50")
    assert (r.status, r.body) == (200, b"slow done\n")
    # A deferred reply whose client leaves first: the reply later goes nowhere, harmlessly.
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /slow?ms=300 HTTP/1.1\r\nHost: x\r\n\r\n")
    wait_until(lambda: stats(port)["pending"] == 1, what="pending reply")
    s.close()
    wait_until(lambda: stats(port)["pending"] == 0, what="the late reply")
    # A stream whose client stops reading and leaves: the server notices and stops.
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /stream?chunks=1000000&size=65536 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert s.recv(65536).startswith(b"HTTP/1.1 200 OK")
    s.close()
    wait_until(lambda: stats(port)["closed_early"] == 1, what="stream noticing the close")
    assert stats(port)["pending"] == 0
    # A whole stream: 20 chunks of 1000 bytes, chunked encoding.
    r = get(port, "/stream?chunks=20&size=1000")
    assert r.status == 200 and r.headers["transfer-encoding"] == "chunked"
    assert r.body == (b"x" * 999 + b"\n") * 20


def test_sigterm_with_requests_pending_exits_cleanly(procs):
    port = start(procs)
    proc = procs.started[-1]
    socks = []
    # Replies that would take ten minutes: an exit within terminate()'s deadline did not wait
    # for them.
    for path in [b"/slow?ms=600000", b"/slow?ms=600000", b"/stream?chunks=1000000&size=65536"]:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        socks.append(s)
    wait_until(lambda: stats(port)["pending"] == 3, what="three pending replies")
    assert proc.terminate(timeout=60) == 0  # no leak report, no crash
    for s in socks:
        s.close()


def test_sighup_runs_the_callback(procs):
    port = start(procs)
    procs.started[-1].popen.send_signal(signal.SIGHUP)
    wait_until(lambda: stats(port)["sighups"] == 1, what="SIGHUP callback")
    assert get(port, "/ping").body == b"OK"


def test_several_loops_share_one_port(procs):
    port = start(procs, "--threads", 2)
    loops = set()
    for _ in range(60):
        r = get(port, "/echo?x=1")
        assert r.status == 200
        loops.add(r.json()["data"]["loop"])
    assert loops == {0, 1}
    latency = stats(port)["latency"]
    assert latency["/echo"]["count"] == 60
    assert 0 < latency["/echo"]["p50_us"] <= latency["/echo"]["p99_us"] <= latency["/echo"]["max_us"]


def test_port_in_use_is_a_clear_error(procs):
    port = start(procs)
    from harness import run
    r = run("clickatron-net-testserver", ["--port", port], timeout=20)
    assert r.returncode == 1
    assert r.stderr.decode() == f"clickatron-net-testserver: 127.0.0.1:{port}: Address already in use\n"
