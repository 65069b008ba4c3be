#!/usr/bin/env python3
"""The database reader against RocksDB (rocksdict) in one process (issue 48).

  python python/bench/db_bench.py [--sizes 100000,1000000,5000000] [--probes 100000]
                                  [--work DIR] [--repeat 3] [--markdown]

For each size N, a database written by rocksdict (RocksDB 9.x from PyPI),
bloomfilter:10 (its default table options otherwise): 0.8 N keys flushed
and compacted to the last level, 0.2 N more flushed to L0, kept in
``--work`` (default /var/tmp/rocks-ribbon-db-bench) for later runs. Then, on
the same keys, alternating the two sides within each of ``--repeat``
rounds (each figure its best round):

* ``--probes`` absent keys, then as many present ones: rocksdict's ``get``
  one at a time and its ``get(list)`` (MultiGet), against ``Db.get_path``
  one at a time and ``Db.get_paths`` in one batch;
* every live key: rocksdict's key iterator against ``Db.live_keys()``,
  each in a child process of its own, with that process's peak RSS
  (``VmHWM``: the interpreter, the module and the walk).

Prints one table (``--markdown``: the bench report's section).
"""

import argparse
import os
import platform
import shutil
import subprocess
import sys
import time

M = 0x9E3779B97F4A7C15


def key(i):
    return b"%016x" % ((i * M) & 0xFFFFFFFFFFFFFFFF)


def absent(i):
    return b"%016x!" % ((i * 0xD1B54A32D192ED03) & 0xFFFFFFFFFFFFFFFF)


def write_db(path, n):
    from rocksdict import BlockBasedOptions, Options, Rdict, WriteBatch

    if os.path.exists(os.path.join(path, "DONE")):
        return
    shutil.rmtree(path, ignore_errors=True)
    o = Options(raw_mode=True)
    o.create_if_missing(True)
    o.set_disable_auto_compactions(True)
    o.set_write_buffer_size(1 << 30)
    t = BlockBasedOptions()
    t.set_bloom_filter(10, False)
    o.set_block_based_table_factory(t)
    db = Rdict(path, o)
    first = n * 8 // 10
    for lo in range(0, n, 100_000):
        wb = WriteBatch(raw_mode=True)
        for i in range(lo, min(n, lo + 100_000)):
            wb.put(key(i), b"v%d" % i)
        db.write(wb)
        if lo + 100_000 >= first and lo < first:
            db.flush()
            db.compact_range(None, None)
    db.flush()
    db.close()
    open(os.path.join(path, "DONE"), "w").close()


def best(f, repeat):
    t_best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        t_best = min(t_best, time.perf_counter() - t)
    return t_best, out


WALK = r"""
import sys, time
side, path = sys.argv[1], sys.argv[2]
t = time.perf_counter()
n = 0
if side == "rocksdict":
    from rocksdict import Options, Rdict, AccessType
    db = Rdict(path, Options(raw_mode=True), access_type=AccessType.read_only())
    for k in db.keys():
        n += 1
    db.close()
else:
    import rocks_ribbon as rr
    with rr.Db(path) as db:
        for k in db.live_keys():
            n += 1
dt = time.perf_counter() - t
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child
# would report its parent's peak.
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(n, dt, hwm)
"""


def walk(side, path):
    out = subprocess.run([sys.executable, "-c", WALK, side, path], check=True, capture_output=True, text=True)
    n, dt, rss = out.stdout.split()
    return int(n), float(dt), int(rss) * 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,1000000,5000000")
    ap.add_argument("--probes", type=int, default=100_000)
    ap.add_argument("--work", default="/var/tmp/rocks-ribbon-db-bench")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    import rocksdict
    import rocks_ribbon as rr
    from rocksdict import AccessType, Options, Rdict

    rows = []
    for n in [int(s) for s in a.sizes.split(",")]:
        path = os.path.join(a.work, "db%d" % n)
        write_db(path, n)
        q = min(a.probes, n)
        probes = {
            "absent": [absent(i) for i in range(q)],
            "present": [key(i * (n // q)) for i in range(q)],
        }
        rd = Rdict(path, Options(raw_mode=True), access_type=AccessType.read_only())
        ours = rr.Db(path)
        for what, keys in probes.items():
            res = {}
            sides = (
                ("rocksdict get", lambda: [rd.get(k) for k in keys]),
                ("rocksdict multi_get", lambda: rd.get(keys)),
                ("get_path", lambda: [ours.get_path(k) for k in keys]),
                ("get_paths", lambda: ours.get_paths(keys)),
            )
            # A first round untimed: both sides' block caches and the page
            # cache warm (each process keeps its own).
            for _, f in sides:
                f()
            for _ in range(a.repeat):
                for name, f in sides:
                    t, out = best(f, 1)
                    res[name] = min(res.get(name, float("inf")), t)
            found = sum(p["found"] for p in ours.get_paths(keys))
            want = sum(v is not None for v in rd.get(keys))
            assert found == want, (what, found, want)
            rows.append((n, what + " Gets", q, res))
        rd.close()
        ours.close()
        res = {}
        for _ in range(a.repeat):
            for side in ("rocksdict", "rocks_ribbon"):
                cnt, dt, rss = walk(side, path)
                prev = res.get(side)
                if prev is None or dt < prev[1]:
                    res[side] = (cnt, dt, rss)
        assert res["rocksdict"][0] == res["rocks_ribbon"][0], res
        rows.append((n, "live keys", res["rocksdict"][0], res))
    head = (f"rocks_ribbon {rr.__version__} against rocksdict {rocksdict.__version__ if hasattr(rocksdict, '__version__') else ''} "
            f"on Python {platform.python_version()}, {os.cpu_count()} CPUs, best of {a.repeat}")
    print(head if not a.markdown else head + ".\n")
    print("| database | what | keys | RocksDB (rocksdict) | rocks_ribbon | ratio | memory |")
    print("|---|---|---:|---|---|---:|---|")
    for n, what, q, res in rows:
        if what == "live keys":
            r, o = res["rocksdict"], res["rocks_ribbon"]
            print(f"| {n:,} keys | {what} | {q:,} | iterator {r[1]:.3f} s | live_keys {o[1]:.3f} s | {o[1] / r[1]:.2f} | "
                  f"peak RSS {r[2] / 2**20:.0f} / {o[2] / 2**20:.0f} MiB |")
        else:
            base = min(res["rocksdict get"], res["rocksdict multi_get"])
            print(f"| {n:,} keys | {what} | {q:,} | get {res['rocksdict get']:.3f} s, multi_get {res['rocksdict multi_get']:.3f} s "
                  f"| get_path {res['get_path']:.3f} s, get_paths {res['get_paths']:.3f} s | "
                  f"{res['get_paths'] / base:.2f} / {res['get_path'] / base:.2f} | |")


if __name__ == "__main__":
    main()
