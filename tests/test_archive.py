"""clickatron-archive end to end: the sortdb golden answers, misses, limits, bad
requests, refusal of bad files at startup and reload, the manifest header, and the
`mv new data && kill -HUP` swap under load with zero failed or wrong answers."""
import email.utils
import http.client
import os
import signal
import subprocess
import threading
import time

import pytest

from harness import GOLDEN, binary, free_port, get, post, request, wait_until

SORTDB = os.path.join(GOLDEN, "sortdb")


def start_archive(procs, db_file, *extra, port=None):
    port = port or free_port()
    proc = procs.start("clickatron-archive", ["--db-file", db_file, "--port", port, *extra],
                       ready_port=port)
    return proc, port


def write(path, content):
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(path, mode) as f:
        f.write(content)
    return str(path)


def golden_requests():
    rows = []
    with open(os.path.join(SORTDB, "requests.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            request, expected = line.split("\t", 1)
            rows.append((request, expected.replace("\\n", "\n")))
    assert rows, "no golden requests"
    return rows


def run_refused(db_file, *extra):
    """Starts the server on a bad file; it must exit non-zero at once with a message."""
    r = subprocess.run([binary("clickatron-archive"), "--db-file", db_file,
                        "--port", str(free_port()), *extra],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    return r.returncode, r.stderr.decode()


def test_golden_sortdb_requests(procs):
    _, port = start_archive(procs, os.path.join(SORTDB, "data.csv"), "--threads", "2")
    for request, expected in golden_requests():
        r = get(port, request)
        assert (r.status, r.text) == (200, expected), request
        # sortdb routed the trailing-slash forms the same way
        path, query = request.split("?", 1)
        r = get(port, path + "/?" + query)
        assert (r.status, r.text) == (200, expected), request
        assert "x-archive-last-day" not in r.headers  # no manifest beside the golden file


def test_misses_mget_and_fwmatch_limits(procs, tmp_path):
    _, port = start_archive(procs, os.path.join(SORTDB, "data.csv"), "--fwmatch-limit", "3")
    r = get(port, "/get?key=u|jehiah.c3h")  # a prefix of a key is not the key
    assert (r.status, r.body) == (404, b"")
    r = get(port, "/get?key=zzz")
    assert (r.status, r.body) == (404, b"")
    assert r.headers["content-length"] == "0"
    before = int(time.time())
    r = get(port, "/get?key=u|jehiah.c3hh")
    after = time.time()
    assert (r.headers["content-length"], r.headers["date"][-4:]) == ("3", " GMT")
    assert before <= email.utils.parsedate_to_datetime(r.headers["date"]).timestamp() <= after
    # every parameter whose name starts with k is a key; request order; misses skipped
    r = get(port, "/mget?key=u|jehiah.c3i0&k=nope&kk=c.u|jehiah.c3h5&x=u|jehiah.c3hh")
    assert (r.status, r.text) == (200, "u|jehiah.c3i0,7\nc.u|jehiah.c3h5,US:2\n")
    r = get(port, "/mget?key=nope&key=zzz")
    assert (r.status, r.text) == (200, "")
    r = get(port, "/fwmatch?key=c.u|jehiah.c3h")
    assert r.text == "c.u|jehiah.c3h5,US:2\nc.u|jehiah.c3h7,US:1\nc.u|jehiah.c3h9,None:2 US:3\n"
    r = get(port, "/fwmatch?key=c.u|jehiah.c3h&limit=2")
    assert r.text == "c.u|jehiah.c3h5,US:2\nc.u|jehiah.c3h7,US:1\n"
    r = get(port, "/fwmatch?key=c.u|jehiah.c3h&limit=3")  # exactly the cap
    assert len(r.text.splitlines()) == 3
    # Above the cap: refused with a name and the cap, never cut (docs/operations.md#limits).
    r = get(port, "/fwmatch?key=c.u|jehiah.c3h&limit=4")
    assert (r.status, r.json()["status_txt"], r.headers["x-fwmatch-limit"]) == (400, "INVALID_ARG_LIMIT", "3")
    assert r.json()["message"] == "limit 4 is above this server's --fwmatch-limit 3; ask for at most that, page with after="
    r = get(port, "/fwmatch?key=nothing")
    assert (r.status, r.text) == (200, "")
    stats = get(port, "/stats").json()["data"]
    assert (stats["get_hits"], stats["get_misses"]) == (1, 2)
    assert (stats["mget_keys"], stats["mget_hits"]) == (5, 2)
    assert stats["fwmatch_lines"] == 8 and stats["bad_requests"] == 1
    assert stats["records"] == 14
    assert stats["bytes"] == os.path.getsize(os.path.join(SORTDB, "data.csv"))
    assert stats["requests"]["/get"]["count"] == 3
    assert stats["requests"]["/fwmatch"]["count"] == 5
    assert r.status == 200 and get(port, "/ping").text == "OK\n"


def test_fwmatch_pages_with_after(procs):
    # Cut answers say so (X-Fwmatch-More: 1); after= the last key reads on to the end.
    _, port = start_archive(procs, os.path.join(SORTDB, "data.csv"), "--fwmatch-limit", "5")
    pages, after = [], None
    while True:
        r = get(port, "/fwmatch?key=c.u%7Cjehiah." + (f"&after={after.replace('|', '%7C')}" if after else ""))
        assert r.status == 200, r
        pages.append(r.text)
        if "x-fwmatch-more" not in r.headers:
            break
        assert r.headers["x-fwmatch-more"] == "1"
        after = r.text.splitlines()[-1].split(",")[0]
    assert [len(p.splitlines()) for p in pages] == [5, 5, 2]
    with open(os.path.join(SORTDB, "data.csv")) as f:
        assert "".join(pages) == "".join(l for l in f if l.startswith("c.u|jehiah."))
    r = get(port, "/fwmatch?key=u%7Cjehiah.&limit=2")  # exactly the limit, nothing after: not cut
    assert len(r.text.splitlines()) == 2 and "x-fwmatch-more" not in r.headers
    r = get(port, "/fwmatch?key=u%7Cjehiah.&after=u%7Cjehiah.c3hh")
    assert r.text == "u|jehiah.c3i0,7\n"
    r = get(port, "/fwmatch?key=u&after=%zz")
    assert (r.status, r.json()["status_txt"]) == (400, "INVALID_ARG_AFTER")
    r = request(port, "PUT", "/reload")  # every server's 405 (docs/api.md#conventions)
    assert (r.status, r.headers["allow"], r.json()["status_txt"], r.json()["message"]) == \
        (405, "GET, POST", "METHOD_NOT_ALLOWED", "/reload takes GET or POST")


@pytest.mark.parametrize("path,status_txt,message", [
    ("/get", "MISSING_ARG_KEY", "missing argument: key"),
    ("/get?kee=u", "MISSING_ARG_KEY", "missing argument: key"),
    ("/get?key=", "INVALID_ARG_KEY", "key is empty"),
    ("/get?key=" + "a" * 4097, "INVALID_ARG_KEY", "key is longer than 4096 bytes"),
    ("/get?key=a%zz", "INVALID_ARG_KEY", "bad percent-encoding in key"),
    ("/mget", "MISSING_ARG_KEY", "missing argument: key"),
    ("/mget?key=a&key=" + "b" * 4097, "INVALID_ARG_KEY", "key is longer than 4096 bytes"),
    ("/fwmatch", "MISSING_ARG_KEY", "missing argument: key"),
    ("/fwmatch?key=", "INVALID_ARG_KEY",
     "key (the prefix) is empty; /fwmatch does not dump the file"),
    ("/fwmatch?key=u&limit=0", "INVALID_ARG_LIMIT", "limit '0' is not a positive integer"),
    ("/fwmatch?key=u&limit=-1", "INVALID_ARG_LIMIT", "limit '-1' is not a positive integer"),
    ("/fwmatch?key=u&limit=ten", "INVALID_ARG_LIMIT", "limit 'ten' is not a positive integer"),
])
def test_bad_requests(procs, path, status_txt, message):
    _, port = start_archive(procs, os.path.join(SORTDB, "data.csv"))
    r = get(port, path)
    assert r.status == 400
    assert r.json() == {"status_code": 400, "status_txt": status_txt, "data": None,
                        "message": message}
    assert get(port, "/get?key=u|jehiah.c3hh").text == "13\n"  # still serving


def test_keys_with_plus_slash_equals(procs, tmp_path):
    keys = [line.strip() for line in open(os.path.join(SORTDB, "key-order.txt"))
            if line.strip() and not line.startswith("#")]
    db = write(tmp_path / "order.csv", "".join(f"{k},{i}\n" for i, k in enumerate(keys)))
    _, port = start_archive(procs, db)
    for i, k in enumerate(keys):
        encoded = "".join(c if c.isalnum() else "%%%02X" % ord(c) for c in k)
        assert get(port, "/get?key=" + encoded).text == f"{i}\n", k
    # sortdb clients send '+' unencoded: it is a literal plus, not a space
    assert get(port, "/get?key=ab+").text == f"{keys.index('ab+')}\n"
    assert get(port, "/get?key=ab=").text == f"{keys.index('ab=')}\n"
    assert get(port, "/fwmatch?key=ab").text == "".join(
        f"{k},{i}\n" for i, k in enumerate(keys) if k.startswith("ab"))


@pytest.mark.parametrize("name,content,message", [
    ("unsorted.csv", "a,1\nc,2\nb,3\n",
     "line 3: key 'b' is not after the key before it 'c' (the file must be sorted by key, "
     "each key once)"),
    # sorted as whole lines (LC_ALL=C sort) instead of by key: ab+ before ab
    ("line-sorted.csv", "ab+,1\nab,2\n", "line 2: key 'ab' is not after the key before it 'ab+'"),
    ("duplicate.csv", "a,1\na,2\n", "line 2: key 'a' is not after the key before it 'a'"),
    ("truncated.csv", "a,1\nb,2\nc,3",
     "line 3: the file does not end with a newline (truncated last line)"),
    ("nosep.csv", "a,1\nb 2\n", "line 2: no separator ',' in the line"),
])
def test_bad_file_refused_at_startup(tmp_path, name, content, message):
    db = write(tmp_path / name, content)
    code, err = run_refused(db)
    assert code != 0
    assert message in err
    assert db in err


def test_bad_file_refused_at_reload_old_file_kept(procs, tmp_path):
    data = write(tmp_path / "data.csv", "a,1\nb,2\n")
    proc, port = start_archive(procs, data)
    write(tmp_path / "new.csv", "a,1\nc,3\nb,2\n")
    os.rename(tmp_path / "new.csv", data)
    r = post(port, "/reload")
    assert r.status == 500
    assert "line 3: key 'b' is not after the key before it 'c'" in r.text
    assert get(port, "/get?key=b").text == "2\n"  # the old mapping, still served
    # the same through SIGHUP: a log line names the bad line, nothing changes
    write(tmp_path / "new.csv", "a,1\nb,2")
    os.rename(tmp_path / "new.csv", data)
    proc.popen.send_signal(signal.SIGHUP)
    wait_until(lambda: get(port, "/stats").json()["data"]["failed_reloads"] == 2,
               what="the refused SIGHUP reload")
    assert "reload refused, still serving the old file" in proc.output()
    assert "line 2: the file does not end with a newline" in proc.output()
    assert get(port, "/get?key=b").text == "2\n"
    stats = get(port, "/stats").json()["data"]
    assert (stats["reloads"], stats["failed_reloads"], stats["records"]) == (0, 2, 2)
    # a good file then goes live, and GET /reload works too
    write(tmp_path / "new.csv", "a,1\nb,22\n")
    os.rename(tmp_path / "new.csv", data)
    r = get(port, "/reload")
    assert (r.status, r.text) == (200, "db reloaded\n")
    assert get(port, "/get?key=b").text == "22\n"


def test_concurrent_reloads_all_answered(procs, tmp_path):
    data = write(tmp_path / "data.csv", "a,0\n")
    _, port = start_archive(procs, data, "--threads", "2")
    results = []

    def reload_once():
        results.append(post(port, "/reload"))

    for version in range(1, 4):
        write(tmp_path / "new.csv", f"a,{version}\n")
        os.rename(tmp_path / "new.csv", data)
        threads = [threading.Thread(target=reload_once) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert get(port, "/get?key=a").text == f"{version}\n"
    assert [(r.status, r.text) for r in results] == [(200, "db reloaded\n")] * 24
    stats = get(port, "/stats").json()["data"]
    assert 3 <= stats["reloads"] <= 24 and stats["failed_reloads"] == 0


def test_page_multiple_file_and_last_line(procs, tmp_path):
    # sortdb read past the mapping of a file whose size is a multiple of the page size
    page = os.sysconf("SC_PAGE_SIZE")
    lines = []
    size = 0
    i = 0
    while size + 12 + 64 < page:
        line = f"k{i:06d},v{i}\n"
        lines.append(line)
        size += len(line)
        i += 1
    last = "zz," + "x" * (page - size - 4) + "\n"
    content = "".join(lines) + last
    assert len(content) == page
    db = write(tmp_path / "page.csv", content)
    _, port = start_archive(procs, db)
    assert get(port, "/get?key=zz").text == last[3:]
    assert get(port, "/get?key=zzz").status == 404
    assert get(port, "/get?key=zz%00").status == 404
    assert get(port, "/fwmatch?key=z").text == last
    assert get(port, "/get?key=k000000").text == "v0\n"


def test_tab_separator_and_config_file(procs, tmp_path):
    db = write(tmp_path / "data.tab", "a,b\tone\nc\ttwo\tthree\n")
    port = free_port()
    config = write(tmp_path / "archive.conf",
                   f"db-file = {db}\nport = {port}\nfield-separator = tab\nthreads = 2\n"
                   "realtime = 127.0.0.1:7101\n")  # options of other programs are ignored
    procs.start("clickatron-archive", ["--config", config], ready_port=port)
    assert get(port, "/get?key=a,b").text == "one\n"
    assert get(port, "/get?key=c").text == "two\tthree\n"
    assert get(port, "/mget?key=c").text == "c\ttwo\tthree\n"
    assert get(port, "/stats").json()["data"]["threads"] == 2


def test_bad_flags():
    code, err = run_refused("/nonexistent/file.csv")
    assert code != 0 and "/nonexistent/file.csv: open: No such file or directory" in err
    r = subprocess.run([binary("clickatron-archive"), "--port", "1"], stderr=subprocess.PIPE)
    assert r.returncode == 2 and b"--db-file is required" in r.stderr
    r = subprocess.run([binary("clickatron-archive"), "--db-file", "x", "--field-separator", "ab"],
                       stderr=subprocess.PIPE)
    assert r.returncode == 2 and b"--field-separator must be a single character" in r.stderr


def publish(work, generation, last_day, content):
    gen_dir = work / "gen" / generation
    gen_dir.mkdir(parents=True)
    write(gen_dir / "shard-0.csv", content)
    write(gen_dir / "manifest",
          f"generation = {generation}\nlast_day = {last_day}\nshards = 1\n"
          f"shard.0.file = shard-0.csv\nshard.0.records = {content.count(chr(10))}\n"
          f"shard.0.bytes = {len(content.encode())}\n")
    tmp_link = work / "current.tmp"
    os.symlink(os.path.join("gen", generation), tmp_link)
    os.replace(tmp_link, work / "current")


def test_manifest_header_and_generation_swap(procs, tmp_path):
    work = tmp_path / "work"
    publish(work, "g1", "2026-03-20", "a,1\nb,2\n")
    _, port = start_archive(procs, str(work / "current" / "shard-0.csv"))
    for path in ("/get?key=a", "/get?key=missing", "/mget?key=a", "/fwmatch?key=a", "/get"):
        r = get(port, path)
        assert r.headers.get("x-archive-last-day") == "2026-03-20", path
    stats = get(port, "/stats").json()["data"]
    assert (stats["generation"], stats["last_day"]) == ("g1", "2026-03-20")
    assert stats["real_path"].endswith("/gen/g1/shard-0.csv")

    publish(work, "g2", "2026-03-21", "a,10\nb,20\nc,30\n")
    assert post(port, "/reload").text == "db reloaded\n"
    r = get(port, "/get?key=c")
    assert (r.text, r.headers["x-archive-last-day"]) == ("30\n", "2026-03-21")
    stats = get(port, "/stats").json()["data"]
    assert (stats["generation"], stats["records"]) == ("g2", 3)

    # a generation whose manifest disagrees with its file is refused; g2 stays
    publish(work, "g3", "2026-03-22", "a,1\n")
    with open(work / "gen" / "g3" / "manifest", "a") as f:
        f.write("shard.0.records = 7\n")
    r = post(port, "/reload")
    assert r.status == 500 and "record count 1 does not match the manifest's 7" in r.text
    assert get(port, "/get?key=c").headers["x-archive-last-day"] == "2026-03-21"


def test_answers_carry_their_generation_tag_and_a_holder_of_it_gets_304(procs, tmp_path):
    """ETag "<generation>" on every answer of a file with a manifest; If-None-Match naming
    the served generation gets 304 with the file's headers and no body (on /get, /mget and
    /fwmatch, found or not); another generation's tag, or a file without a manifest, gets
    the whole answer (docs/api.md#archive-conditional-requests)."""
    work = tmp_path / "work"
    publish(work, "g1", "2026-03-20", "a,1\nb,2\n")
    _, port = start_archive(procs, str(work / "current" / "shard-0.csv"))
    for path, body in (("/get?key=a", b"1\n"), ("/get?key=zz", b""), ("/mget?key=a&key=b", b"a,1\nb,2\n"),
                       ("/fwmatch?key=b", b"b,2\n")):
        r = get(port, path)
        assert (r.body, r.headers["etag"]) == (body, '"g1"'), path
        r = get(port, path, headers={"If-None-Match": '"g1"'})
        assert (r.status, r.body, r.headers["etag"], r.headers["x-archive-generation"],
                r.headers["x-archive-last-day"]) == (304, b"", '"g1"', "g1", "2026-03-20"), path
        r = get(port, path, headers={"If-None-Match": '"g0"'})
        assert (r.status in (200, 404), r.body) == (True, body), path
    # a bad request stays a bad request, whatever it claims to hold
    assert get(port, "/get?key=", headers={"If-None-Match": '"g1"'}).status == 400
    assert get(port, "/stats").json()["data"]["not_modified"] == 4

    publish(work, "g2", "2026-03-21", "a,10\n")
    assert post(port, "/reload").text == "db reloaded\n"
    r = get(port, "/get?key=a", headers={"If-None-Match": '"g1"'})
    assert (r.status, r.body, r.headers["etag"]) == (200, b"10\n", '"g2"')

    plain = tmp_path / "plain.csv"
    write(plain, "a,1\n")
    _, port = start_archive(procs, str(plain))
    r = get(port, "/get?key=a", headers={"If-None-Match": "*"})
    assert (r.status, r.body, "etag" in r.headers) == (200, b"1\n", False)


def version_file(tmp_path, version, nkeys):
    return write(tmp_path / f"v{version}.csv",
                 "".join(f"key{i:05d},v{version}-{i}\n" for i in range(nkeys)))


def test_swap_under_load_20_times(procs, tmp_path):
    """`mv new data && kill -HUP` 20 times while 4 keep-alive clients send mixed gets:
    every answer is right for some version live during the request, none fails, and
    right after each swap is seen the answers come from the new file."""
    nkeys = 2000
    data = tmp_path / "data.csv"
    os.rename(version_file(tmp_path, 0, nkeys), data)
    proc, port = start_archive(procs, str(data), "--threads", "2")
    live = {"version": 0}  # lowest version a request started now may see
    stop = threading.Event()
    errors = []
    counts = [0] * 4

    def client(n):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        i = n
        try:
            while not stop.is_set():
                i = (i * 7919 + 13) % nkeys
                lowest = live["version"]
                kind = i % 4
                if kind == 3:
                    path = f"/get?key=nokey{i}"
                elif kind == 2:
                    path = f"/mget?key=key{i:05d}&key=zz&k=key{(i + 1) % nkeys:05d}"
                else:
                    path = f"/get?key=key{i:05d}"
                conn.request("GET", path)
                r = conn.getresponse()
                body = r.read().decode()
                highest = live["version"] + 1  # a swap may be landing right now
                counts[n] += 1
                if kind == 3:
                    ok = r.status == 404 and body == ""
                elif kind == 2:
                    ok = False
                    if r.status == 200:
                        lines = body.split("\n")
                        for v in range(lowest, highest + 1):
                            if body == (f"key{i:05d},v{v}-{i}\n"
                                        f"key{(i + 1) % nkeys:05d},v{v}-{(i + 1) % nkeys}\n"):
                                ok = True
                        ok = ok and len(lines) == 3
                else:
                    ok = r.status == 200 and any(body == f"v{v}-{i}\n"
                                                 for v in range(lowest, highest + 1))
                if not ok:
                    errors.append((path, r.status, body, lowest, highest))
        except Exception as e:  # a failed request is a test failure, not a crash
            errors.append(("exception", repr(e)))
        finally:
            conn.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    try:
        for version in range(1, 21):
            new = version_file(tmp_path, version, nkeys)
            os.rename(new, data)                       # mv new data
            if version % 2:
                proc.popen.send_signal(signal.SIGHUP)  # && kill -HUP (asynchronous)
                wait_until(lambda: get(port, "/stats").json()["data"]["reloads"] == version,
                           what=f"reload {version}")
            else:                                      # POST /reload returns after the switch
                assert post(port, "/reload").text == "db reloaded\n"
            live["version"] = version
            # right after the reload is seen, answers come from the new file
            assert get(port, "/get?key=key00042").text == f"v{version}-42\n"
            before = sum(counts)
            wait_until(lambda: sum(counts) >= before + 100, what="load between swaps")
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert errors == []
    assert sum(counts) > 2000
    stats = get(port, "/stats").json()["data"]
    assert (stats["reloads"], stats["failed_reloads"]) == (20, 0)
    assert stats["bad_requests"] == 0


def test_sigterm_exits_cleanly(procs):
    proc, port = start_archive(procs, os.path.join(SORTDB, "data.csv"), "--threads", "3")
    assert get(port, "/get?key=u|jehiah.c3hh").text == "13\n"
    assert proc.terminate() == 0
    assert "stopped" in proc.output()
