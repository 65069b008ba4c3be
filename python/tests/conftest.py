"""Shared helpers: real databases written by rocksdict (RocksDB 9.x, from
PyPI; used in these tests only) and the statistical bound of the FP checks."""

import math
import os
import re
import shutil

import pytest

rocksdict = pytest.importorskip("rocksdict")

#: Sigmas of the FP-rate checks (rare checks, as RocksDB's bloom_test: 3).
SIGMAS = 3.0

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO, "sst", "tests", "fixtures-versions")


def fp_bound(p, n):
    """The most false positives within SIGMAS of a binomial(n, p) mean."""
    return n * p + SIGMAS * math.sqrt(n * p * (1 - p)) + 1


def options(bits=10.0, prefix=None):
    """rocksdict options: raw byte keys, statistics, a Bloom filter of
    ``bits`` bits per key (rocksdict offers no Ribbon), no compactions."""
    o = rocksdict.Options(raw_mode=True)
    o.create_if_missing(True)
    o.enable_statistics()
    o.set_disable_auto_compactions(True)
    t = rocksdict.BlockBasedOptions()
    t.set_bloom_filter(bits, False)
    if prefix:
        o.set_prefix_extractor(rocksdict.SliceTransform.create_fixed_prefix(prefix))
    o.set_block_based_table_factory(t)
    return o


def ticker(o, name):
    """One statistics counter of rocksdict's RocksDB."""
    m = re.search(re.escape(name) + r" COUNT : (\d+)", o.get_statistics() or "")
    return int(m.group(1)) if m else 0


def ssts(path):
    """The SST files of a database directory, sorted."""
    return sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".sst"))


def copy_db(db, src, dst):
    """A copy of an open database's directory, unflushed WAL data included
    (rocksdict's close() flushes memtables, so copy before closing)."""
    db.flush_wal(True)
    shutil.copytree(src, dst)
    for lock in ("LOCK",):
        p = os.path.join(dst, lock)
        if os.path.exists(p):
            os.remove(p)
    return dst


def key(i):
    return b"key%08d" % i
