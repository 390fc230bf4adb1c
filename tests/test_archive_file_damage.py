"""clickatron-archive survives its live file changing under it
(docs/archive.md#a-file-changed-under-the-server): the real server on a real generation
(DIR/current/shard-0.csv), a small bounded load from a thread, then the served file
truncated in place (os.truncate) or rewritten in place (os.pwrite). The process stays up;
reads that meet the damage answer 503 ARCHIVE_FILE_DAMAGED; /stats and one log line say
what happened; a reload of the still-damaged file is refused by name; after the file is
restored, POST /reload brings back byte-identical answers.

The rule every answer is held to (asserted exactly):
  * a truncation: every answer is the one the whole file gave (200, byte-identical), or the
    named 503; a key whose line lies past the new end, asked after the truncation, is the
    503; everything asked after /stats showed the damage is the 503.
  * a rewrite in place: the same, except that in the window between the write and the
    watcher marking the file (docs/archive.md: inotify's wake-up) an answer covering the
    rewritten lines may hold the rewritten bytes: every byte the old or the new one at its
    place, the length the old answer's — never anything else.
On the code before this change the first read past the new end killed the server (SIGBUS).
"""
import http.client
import os
import random
import threading
import time

from harness import get, post, wait_until

LINES = 20000
REWRITTEN = range(5000, 6000)  # lines whose value the rewrite test changes ("value-" -> "VALUE-")


def line_of(i, value_word="value"):
    return f"k{i:06d},{value_word}-{i:06d}-{'x' * (i % 13)}\n"


def key_of(i):
    return f"k{i:06d}"


def make_generation(tmp_path):
    """DIR/gen/g1/shard-0.csv with DIR/current -> gen/g1; returns (served path, content, line offsets)."""
    gen = tmp_path / "gen" / "g1"
    gen.mkdir(parents=True)
    lines = [line_of(i) for i in range(LINES)]
    content = "".join(lines).encode()
    (gen / "shard-0.csv").write_bytes(content)
    os.symlink(os.path.join("gen", "g1"), tmp_path / "current")
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line)
    return str(tmp_path / "current" / "shard-0.csv"), content, offsets


def expected(path_query, lines):
    """The whole file's answer to a read, from its lines."""
    kind, arg = path_query.split("?key=", 1)
    if kind == "/get":
        i = int(arg[1:])
        return lines[i].split(",", 1)[1]
    if kind == "/mget":
        return "".join(lines[int(k[1:])] for k in arg.split("&key="))
    return "".join(l for l in lines if l.startswith(arg))


def reads_for(rng):
    """A bounded, seeded mix: mostly /get, some /mget of three keys and /fwmatch of ten lines."""
    i = rng.randrange(LINES)
    n = rng.randrange(10)
    if n == 0:
        keys = sorted({i, rng.randrange(LINES), rng.randrange(LINES)})
        return "/mget?key=" + "&key=".join(key_of(k) for k in keys), keys
    if n == 1:
        return f"/fwmatch?key={key_of(i)[:6]}", list(range(i - i % 10, i - i % 10 + 10))
    return f"/get?key={key_of(i)}", [i]


class Load:
    """One keep-alive client asking seeded reads until stopped (at most 50,000): each answer is
    kept with the line numbers it covers and the monotonic times it was sent and answered."""

    def __init__(self, port, seed):
        self.port, self.rng = port, random.Random(seed)
        self.answers, self.error = [], None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            while not self.stop.is_set() and len(self.answers) < 50000:
                path, covers = reads_for(self.rng)
                sent = time.monotonic()
                conn.request("GET", path)
                r = conn.getresponse()
                body = r.read()
                self.answers.append((path, covers, sent, time.monotonic(), r.status, body))
        except Exception as e:  # the server died (the old code) or stopped answering
            self.error = repr(e)
        finally:
            conn.close()

    def finish(self):
        self.stop.set()
        self.thread.join(30)
        assert not self.thread.is_alive()
        return self.answers


def is_damaged_503(status, body):
    import json
    if status != 503:
        return False
    envelope = json.loads(body)
    return envelope["status_code"] == 503 and envelope["status_txt"] == "ARCHIVE_FILE_DAMAGED"


def stats(port):
    return get(port, "/stats").json()["data"]


def start_served(procs, tmp_path):
    from test_archive import start_archive
    served, content, offsets = make_generation(tmp_path)
    proc, port = start_archive(procs, served)
    lines = content.decode().splitlines(keepends=True)
    # The whole file's answers, byte-identical to what the lines say.
    rng = random.Random(7)
    baseline = [reads_for(rng)[0] for _ in range(300)]
    baseline += [f"/get?key={key_of(0)}", f"/get?key={key_of(LINES - 1)}", f"/fwmatch?key={key_of(5555)[:6]}"]
    before = {}
    for path in baseline:
        r = get(port, path)
        assert (r.status, r.text) == (200, expected(path, lines)), path
        before[path] = r.body
    return proc, port, served, content, offsets, lines, before


def restore_and_reload(proc, port, served, content, before):
    with open(served, "r+b") as f:  # in place, as `cp backup current/shard-0.csv` does
        f.write(content)
        f.truncate(len(content))
    r = post(port, "/reload")
    assert (r.status, r.text) == (200, "db reloaded\n")
    for path, body in before.items():
        r = get(port, path)
        assert (r.status, r.body) == (200, body), path
    s = stats(port)
    assert (s["file_damaged"], s["damage"], s["damage_episodes"]) == (False, None, 1)
    assert proc.alive()


def damage_lines(proc):
    return [l for l in proc.output().splitlines() if "FILE DAMAGED" in l]


def test_truncated_in_place(procs, tmp_path):
    proc, port, served, content, offsets, lines, before = start_served(procs, tmp_path)
    load = Load(port, seed=1)
    wait_until(lambda: len(load.answers) >= 200 or load.error, what="load under way")
    cut = offsets[LINES // 2] + 5  # mid-line: line LINES/2 + 1 loses its end
    os.truncate(served, cut)
    truncated_at = time.monotonic()
    past_end = [i for i in range(LINES) if offsets[i] + len(lines[i]) > cut]

    # A key past the new end: the read faults and is answered, by name.
    r = get(port, f"/get?key={key_of(LINES - 1)}")
    assert is_damaged_503(r.status, r.body), r
    message = r.json()["message"]
    real = os.path.realpath(served)
    assert message.startswith(f"{real}: truncated in place from {len(content)} to {cut} bytes"), message
    assert message.endswith("; restore the file or publish a new generation, then reload"), message
    s = wait_until(lambda: (lambda s: s if s["file_damaged"] else None)(stats(port)), what="/stats damaged")
    seen_at = time.monotonic()
    # The read's SIGBUS or the watcher's inotify event, whichever came first.
    assert s["damage"]["seen_by"] in ("sigbus", "inotify"), s["damage"]
    assert s["damage"]["message"].startswith(f"{real}: truncated in place from {len(content)} to {cut} bytes")
    assert s["damage_episodes"] == 1 and s["damaged_reads"] >= 1
    wait_until(lambda: len([a for a in load.answers if a[2] > seen_at]) >= 100 or load.error, what="load after")
    answers = load.finish()
    assert load.error is None, load.error
    assert proc.alive()

    past = set(past_end)
    for path, covers, sent, _, status, body in answers:
        if status == 200:
            assert body == expected(path, lines).encode(), (path, body[:200])
            assert sent < seen_at, f"{path} answered 200 after /stats showed the damage"
            assert not (sent > truncated_at and past.intersection(covers)), f"{path} read past the new end"
        else:
            assert is_damaged_503(status, body), (path, status, body[:200])
    assert sum(1 for a in answers if a[4] == 503) > 0

    # Every read answers the 503 now; a bad request is still a 400; /ping answers.
    for path in before:
        r = get(port, path)
        assert is_damaged_503(r.status, r.body), path
    assert get(port, "/get?key=").status == 400
    assert get(port, "/ping").text == "OK\n"
    assert len(damage_lines(proc)) == 1, damage_lines(proc)

    # Still truncated: the reload is refused by name and the damage stays reported.
    r = post(port, "/reload")
    assert r.status == 500
    assert r.text.startswith("reload refused, the served file stays damaged (ARCHIVE_FILE_DAMAGED): "), r.text
    assert "the file does not end with a newline (truncated last line)" in r.text
    s = stats(port)
    assert s["file_damaged"] and s["failed_reloads"] == 1
    assert get(port, f"/get?key={key_of(1)}").status == 503

    restore_and_reload(proc, port, served, content, before)
    assert len(damage_lines(proc)) == 1


def test_rewritten_in_place(procs, tmp_path):
    proc, port, served, content, offsets, lines, before = start_served(procs, tmp_path)
    rewritten = list(lines)
    for i in REWRITTEN:
        rewritten[i] = line_of(i, "VALUE")
    load = Load(port, seed=2)
    wait_until(lambda: len(load.answers) >= 200 or load.error, what="load under way")
    start, end = offsets[REWRITTEN[0]], offsets[REWRITTEN[-1]] + len(lines[REWRITTEN[-1]])
    written_from = time.monotonic()
    fd = os.open(served, os.O_WRONLY)
    try:  # same size, same shape: only the values change
        os.pwrite(fd, "".join(rewritten[REWRITTEN[0]:REWRITTEN[-1] + 1]).encode(), start)
    finally:
        os.close(fd)
    assert os.path.getsize(served) == len(content) and end <= len(content)

    s = wait_until(lambda: (lambda s: s if s["file_damaged"] else None)(stats(port)), what="/stats damaged")
    seen_at = time.monotonic()
    assert s["damage"]["seen_by"] in ("inotify", "stat"), s["damage"]
    real = os.path.realpath(served)
    assert s["damage"]["message"].startswith(f"{real}: rewritten in place (size {len(content)} unchanged, mtime changed)")
    r = get(port, f"/get?key={key_of(REWRITTEN[0])}")
    assert is_damaged_503(r.status, r.body), r
    assert r.json()["message"].startswith(f"{real}: rewritten in place"), r.json()["message"]
    wait_until(lambda: len([a for a in load.answers if a[2] > seen_at]) >= 100 or load.error, what="load after")
    answers = load.finish()
    assert load.error is None, load.error
    assert proc.alive()

    for path, covers, sent, answered, status, body in answers:
        if status != 200:
            assert is_damaged_503(status, body), (path, status, body[:200])
            continue
        assert sent < seen_at, f"{path} answered 200 after /stats showed the damage"
        old, new = expected(path, lines).encode(), expected(path, rewritten).encode()
        if body == old:
            continue
        # The window: between the write and the watcher's mark, the bytes as the file held
        # them — each the old or the new byte at its place (a copy racing the write may mix).
        assert answered > written_from, (path, body[:200])
        assert len(body) == len(old) and all(b in (o, n) for b, o, n in zip(body, old, new)), (path, body[:200])

    for path in before:
        r = get(port, path)
        assert is_damaged_503(r.status, r.body), path
    assert len(damage_lines(proc)) == 1, damage_lines(proc)
    restore_and_reload(proc, port, served, content, before)
