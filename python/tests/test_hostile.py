"""Issue 44, the Python package: no write through a planted symlink, no
open that blocks on a FIFO, MemoryError (and a live interpreter) for a
batch too large for memory, no hang in a forked child, and garbage refused
as the CLI refuses it."""

import os
import subprocess
import sys
import textwrap

import pytest

import rocks_ribbon as rr
from rocks_ribbon._rocks_ribbon import ShardedFilter, assemble_files, build_shard
from conftest import copy_db, key, options, rocksdict


def run_python(code, timeout=60):
    """Runs ``code`` in a fresh interpreter; a hang fails the test."""
    try:
        return subprocess.run(
            [sys.executable, "-u", "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"blocked for {timeout} s after:\n{e.stdout}\n{e.stderr}")


def shards(tmp_path, shard_bits=1):
    paths = []
    for i in range(1 << shard_bits):
        p = tmp_path / f"s{i}.rbn"
        p.write_bytes(build_shard([], i, shard_bits))
        paths.append(str(p))
    return paths


def test_assemble_files_never_writes_through_a_planted_symlink(tmp_path):
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    out = tmp_path / "out.rbs"
    # The old temporary name, planted as a link to the victim.
    os.symlink(victim, str(out) + f".tmp-{os.getpid()}")
    paths = shards(tmp_path)
    assemble_files(1, paths, str(out))
    assert victim.read_bytes() == b"keep"
    assert ShardedFilter(str(out)).shard_bits == 1
    # A link at the output itself is refused, not followed nor replaced.
    link = tmp_path / "link.rbs"
    os.symlink(victim, link)
    with pytest.raises(OSError, match="not a regular file"):
        assemble_files(1, paths, str(link))
    assert victim.read_bytes() == b"keep" and os.path.islink(link)
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_fifos_are_refused_at_once(tmp_path):
    fifo = str(tmp_path / "f.fifo")
    os.mkfifo(fifo)
    paths = shards(tmp_path)
    r = run_python(
        f"""
        import rocks_ribbon as rr
        from rocks_ribbon._rocks_ribbon import ShardedFilter, assemble_files
        for what, call, kind in [
            ("ShardedFilter", lambda: ShardedFilter({fifo!r}), OSError),
            ("assemble_files", lambda: assemble_files(1, [{fifo!r}, {paths[1]!r}], {str(tmp_path / "o.rbs")!r}), OSError),
            ("Ribbon.open", lambda: rr.Ribbon.open({fifo!r}), rr.IoError),
            ("SstFile", lambda: rr.SstFile({fifo!r}), rr.IoError),
        ]:
            try:
                call()
            except kind as e:
                assert "not a regular file" in str(e), (what, e)
            else:
                raise AssertionError(what + " opened a FIFO")
        print("refused")
        """,
        timeout=30,
    )
    assert r.returncode == 0 and "refused" in r.stdout, r.stderr


MEMORY_CHILD = """
import resource
import time
import numpy as np
import rocks_ribbon as rr

N = 100_000_000
keys = np.zeros(N, dtype="S1")  # 100 MB here; 8 bytes of hash per key in Rust
big = bytes(500 << 20)  # 500 MB here: no room for a copy
reader = rr.FilterReader(rr.build_filter("ribbonfilter:10", [b"a"]))
ribbon = rr.Ribbon.build([b"a"])
sketch = rr.Sketch(10)
calls = [
    ("FilterReader.may_match_many", lambda: reader.may_match_many(keys)),
    ("Ribbon.may_match_many", lambda: ribbon.may_match_many(keys)),
    ("build_filter", lambda: rr.build_filter("ribbonfilter:10", keys)),
    ("Ribbon.build", lambda: rr.Ribbon.build(keys)),
    ("Sketch.insert_many", lambda: sketch.insert_many(keys)),
    ("SstFile.from_bytes", lambda: rr.SstFile.from_bytes(big)),
    ("Ribbon.from_bytes", lambda: rr.Ribbon.from_bytes(big)),
    EXTRA
]
vm = int([l for l in open("/proc/self/status") if l.startswith("VmSize:")][0].split()[1]) * 1024
# Room for the array's copy (tobytes) and a little more: not for N hashes.
limit = vm + 400 * 2**20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
for what, call in calls:
    t0 = time.time()
    try:
        got = call()
    except MemoryError as e:
        print("MemoryError", what, e, "in", round(time.time() - t0, 1), "s")
    else:
        # Queries work chunk by chunk: they may well answer.
        print("answered", what, len(got), "in", round(time.time() - t0, 1), "s")
print("alive", rr.Ribbon.build([b"x"]).may_match(b"x"))
"""


def test_a_batch_too_large_is_a_memory_error_not_an_abort(tmp_path):
    # The database of Db.get_paths: any database will do.
    path = str(tmp_path / "db")
    db = rocksdict.Rdict(path, options())
    db[key(1)] = b"v"
    db.close()
    extra = f'("Db.get_paths", (lambda d: lambda: d.get_paths(keys))(rr.Db({path!r}))),'
    r = run_python(MEMORY_CHILD.replace("EXTRA", extra), timeout=120)
    assert r.returncode == 0, f"the interpreter died ({r.returncode}): {r.stdout}\n{r.stderr}"
    # Builds hold a hash (or a slice) per key: 800 MB and more, past the limit.
    for what in ["build_filter", "Ribbon.build", "Sketch.insert_many", "SstFile.from_bytes", "Ribbon.from_bytes"]:
        assert f"MemoryError {what} cannot allocate" in r.stdout, (what, r.stdout, r.stderr)
    # Queries answer in chunks into one buffer of a byte per key, or raise.
    for what in ["FilterReader.may_match_many", "Ribbon.may_match_many", "Db.get_paths"]:
        assert f"MemoryError {what}" in r.stdout or f"answered {what} 100000000" in r.stdout, (what, r.stdout)
    assert "alive True" in r.stdout, r.stdout


@pytest.fixture()
def small_db(tmp_path):
    path = str(tmp_path / "db")
    db = rocksdict.Rdict(path, options())
    for i in range(20000):
        db[key(i)] = b"v"
    db.close()
    return path


def test_live_keys_in_a_forked_child_raise_instead_of_hanging(small_db):
    it = rr.Db(small_db).live_keys()
    assert next(it) == key(0)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            for _ in range(100000):
                next(it)
        except RuntimeError as e:
            code = 0 if "fork" in str(e) else 2
        except BaseException:
            code = 3
        os._exit(code)
    assert wait_child(pid, "next() of live_keys()") == 0
    # The parent reads on.
    assert next(it) == key(1)


def test_live_keys_after_close_raise_closed(small_db):
    db = rr.Db(small_db)
    it = db.live_keys()
    assert next(it) == key(0)
    db.close()
    with pytest.raises(rr.ClosedError, match="closed"):
        next(it)
    with pytest.raises(rr.ClosedError):
        next(it)


def test_from_rocksdb_refuses_what_filter_reader_refuses():
    for junk in [b"", b"\x00", b"\xff" * 3, b"\x00" * 5]:
        with pytest.raises(rr.NotAFilterError):
            rr.FilterReader(junk)
        with pytest.raises(rr.NotAFilterError):
            rr.Ribbon.from_rocksdb(junk)
    members = [b"k%d" % i for i in range(1000)]
    data = rr.build_filter("ribbonfilter:10", members)
    assert rr.FilterReader(data).kind == "Standard128Ribbon"
    assert all(rr.Ribbon.from_rocksdb(data, 1000).may_match_many(members))


def test_format_version_is_the_range_rocksdb_accepts():
    for fv in range(0, 8):
        assert rr.FilterReader(rr.build_filter("bloomfilter:10", [b"a"], format_version=fv)).may_match(b"a")
    for fv in [-5, -1, 8, 1000]:
        with pytest.raises(ValueError, match=f"format_version {fv}: RocksDB 11.8 writes tables of format_version 0 to 7"):
            rr.build_filter("ribbonfilter:10", [b"a"], format_version=fv)


def wait_child(pid, what, timeout=30):
    """The exit code of child ``pid``; it is killed (and the test fails)
    when it runs past ``timeout`` seconds."""
    import time

    deadline = time.time() + timeout
    while time.time() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail(f"{what} hung in the forked child")


def forked_while_busy(busy, in_child):
    """Forks while another thread runs ``busy()`` in a loop (holding the
    handle's lock with the GIL released most of the time) and runs
    ``in_child()`` in the child: 0 for success, 2 for a RuntimeError that
    says why, anything else a failure."""
    import threading
    import time

    stop = threading.Event()
    started = threading.Event()

    def loop():
        while not stop.is_set():
            started.set()
            busy()

    t = threading.Thread(target=loop)
    t.start()
    started.wait()
    # Into the busy call, past its GIL-holding start.
    time.sleep(0.02)
    try:
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                in_child()
                code = 0
            except RuntimeError as e:
                code = 2 if "fork" in str(e) else 3
            except BaseException:
                code = 4
            os._exit(code)
        return pid
    finally:
        stop.set()
        t.join()


def test_a_db_queried_in_a_forked_child_never_waits_on_the_parents_lock(small_db):
    db = rr.Db(small_db)
    batch = [key(i) for i in range(0, 20000, 2)] * 8
    for _ in range(5):
        pid = forked_while_busy(lambda: db.get_paths(batch), lambda: db.get_path(key(7)))
        assert wait_child(pid, "Db.get_path") == 0


def test_a_sketch_in_a_forked_child_never_waits_on_the_parents_lock():
    sketch = rr.Sketch(100)
    batch = sorted(b"k%d" % i for i in range(300000))
    for _ in range(5):
        pid = forked_while_busy(lambda: sketch.insert_many(batch), lambda: sketch.keys)
        assert wait_child(pid, "Sketch.keys") in (0, 2)
