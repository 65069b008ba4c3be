"""Long calls release the GIL: another Python thread keeps running meanwhile."""

import threading
import time

import numpy as np

import rocks_ribbon as rr


def longest_pause_while(work):
    """Runs ``work`` in a thread; returns (its duration, the longest time this
    thread went without running Python meanwhile)."""
    done = threading.Event()
    span = {}

    def run():
        t = time.perf_counter()
        work()
        span["d"] = time.perf_counter() - t
        done.set()

    th = threading.Thread(target=run)
    last = time.perf_counter()
    longest = 0.0
    th.start()
    while not done.is_set():
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
    th.join()
    return span["d"], longest


def test_batch_build_and_query_release_the_gil():
    keys = np.array([b"k%011d" % i for i in range(2_000_000)])
    f = rr.Ribbon.build(keys, bits=7)
    # A call holding the GIL stalls this thread for the whole call: one
    # C call holding it (b"".join of 2*10^7 items) measured a pause of 0.58
    # of the thread's span; these calls measured 0.03 to 0.15.
    d, pause = longest_pause_while(lambda: rr.Ribbon.build(keys, bits=7))
    assert pause < 0.35 * d, (pause, d)
    # One call each (between calls the GIL changes hands anyway).
    d, pause = longest_pause_while(lambda: f.may_match_many(keys))
    assert pause < 0.35 * d, (pause, d)
