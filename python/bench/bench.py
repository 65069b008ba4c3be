#!/usr/bin/env python3
"""Throughput of rocks_ribbon against issue 34's targets, measured in one run.

  python python/bench/bench.py [--keys 1000000] [--repeat 5]

* batch query of N keys (half present) on a RocksDB-format Ribbon filter
  (``ribbonfilter:10`` of N keys): from a NumPy ``S`` array (target >= 20 M
  keys/s) and from a list of ``bytes`` (target >= 5 M keys/s);
* the build of that filter from a list of ``bytes`` (and from a NumPy
  ``S`` array) through ``build_filter``, against the Rust build of the same keys, policy and
  context timed in Rust alone (``_rust_build_seconds``; target: within 1.3x).

Rust and Python alternate within each of ``--repeat`` rounds (the machine
is shared: both see the same load); each figure is its best round. Prints one line per figure.
"""

import argparse
import platform
import time

import numpy as np

import rocks_ribbon as rr
from rocks_ribbon._rocks_ribbon import _rust_build_seconds, _rust_query_seconds


def best(f, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--policy", default="ribbonfilter:10")
    a = ap.parse_args()
    n = a.keys
    keys = [b"user%012d" % i for i in range(n)]
    queries = [b"user%012d" % (i * 2) for i in range(n)]  # half present
    q_array = np.array(queries)  # dtype S16
    k_array = np.array(keys)
    print(f"rocks_ribbon {rr.__version__}, Python {platform.python_version()}, NumPy {np.__version__}, "
          f"{n} keys, policy {a.policy}, best of {a.repeat}")

    # Rust and Python alternate within each round, so that both see the
    # same load (the machine is shared); each figure is its best round.
    rust_b, py_b, py_ba, rust_q, py_s, py_l = [], [], [], [], [], []
    for _ in range(a.repeat):
        secs, rust_bytes = _rust_build_seconds(a.policy, keys)
        rust_b.append(secs)
        t = time.perf_counter()
        py_bytes = rr.build_filter(a.policy, keys)
        py_b.append(time.perf_counter() - t)
        assert py_bytes == rust_bytes, "the two builds must give the same bytes"
        t = time.perf_counter()
        from_array = rr.build_filter(a.policy, k_array)
        py_ba.append(time.perf_counter() - t)
        assert from_array == rust_bytes
        r = rr.FilterReader(py_bytes)
        secs, rq_n = _rust_query_seconds(py_bytes, queries)
        rust_q.append(secs)
        t = time.perf_counter()
        ans_s = r.may_match_many(q_array)
        py_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        ans_l = r.may_match_many(queries)
        py_l.append(time.perf_counter() - t)
        assert (ans_s == ans_l).all() and ans_s[: n // 2].all() and rq_n == int(ans_s.sum())
    rust_s, py_s_b, rq_s, s_s, l_s = min(rust_b), min(py_b), min(rust_q), min(py_s), min(py_l)
    print(f"build  Rust (timed in Rust)   {rust_s * 1e3:8.1f} ms  {n / rust_s / 1e6:6.2f} M keys/s")
    print(f"build  Python build_filter    {py_s_b * 1e3:8.1f} ms  {n / py_s_b / 1e6:6.2f} M keys/s"
          f"  ratio {py_s_b / rust_s:.2f}x (target <= 1.3x)  [{r.kind}, {len(py_bytes)} bytes]")
    ba = min(py_ba)
    print(f"build  Python from NumPy S16  {ba * 1e3:8.1f} ms  {n / ba / 1e6:6.2f} M keys/s  ratio {ba / rust_s:.2f}x")
    print(f"query  Rust (timed in Rust)   {rq_s * 1e3:8.1f} ms  {n / rq_s / 1e6:6.2f} M keys/s")
    print(f"query  NumPy S{q_array.dtype.itemsize} array         {s_s * 1e3:8.1f} ms  {n / s_s / 1e6:6.2f} M keys/s (target >= 20)  {s_s / rq_s:.2f}x Rust")
    print(f"query  list of bytes          {l_s * 1e3:8.1f} ms  {n / l_s / 1e6:6.2f} M keys/s (target >= 5)  {l_s / rq_s:.2f}x Rust")
    one_s, _ = best(lambda: [r.may_match(k) for k in queries[:100_000]], 1)
    print(f"query  may_match one by one   {one_s * 1e4:8.1f} ms/1e6  {1e5 / one_s / 1e6:6.2f} M keys/s (100,000 calls)")


if __name__ == "__main__":
    main()
