#!/usr/bin/env python3
"""Writes the RocksDB 6.29 database fixture of the doctor's tests (issue 44):
a database written by RocksDB 6.29.5 (PyPI's aimrocks 0.5.2, which bundles
it) with a built-in Bloom filter configured in code, as 6.x applications
configure it. RocksDB 6.x records any such policy in its OPTIONS file as
`filter_policy=rocksdb.BuiltinBloomFilter`, which RocksDB 7 and later read
as the read-only built-in policy: every built-in filter is read, none is
built.

  bloom_in_code/db/   the database directory (LOG files left out): 1000 and
                      2000 keys flushed and compacted to L1, 300 more
                      flushed to L0 (FastLocalBloom, format_version 5)
  bloom_in_code/expected
                      rocksdb VERSION
                      live HEXKEY         (its iterator, in order)
                      probe HEXKEY FOUND  (its Get)

Regenerate (aimrocks in a virtual environment of its own, not by CI):

  python3 -m venv /tmp/aim && /tmp/aim/bin/pip install aimrocks==0.5.2
  /tmp/aim/bin/python sst/tests/fixtures-db/rocksdb629/generate.py
"""

import os
import shutil

import aimrocks

HERE = os.path.dirname(os.path.abspath(__file__))


def key(i):
    return b"key%08d" % i


def main():
    case = os.path.join(HERE, "bloom_in_code")
    shutil.rmtree(case, ignore_errors=True)
    d = os.path.join(case, "db")
    os.makedirs(case)
    table = aimrocks.BlockBasedTableFactory(filter_policy=aimrocks.BloomFilterPolicy(10))
    opts = aimrocks.Options(create_if_missing=True, disable_auto_compactions=True, table_factory=table)
    db = aimrocks.DB(d, opts)
    # Two overlapping files, so that the compaction writes a new one.
    for i in range(0, 2000, 2):
        db.put(key(i), b"value")
    db.flush()
    for i in range(2000):
        db.put(key(i), b"value")
    db.flush()
    db.compact_range()
    for i in range(2000, 2300):
        db.put(key(i), b"value")
    db.flush()
    version = None
    for name in sorted(os.listdir(d)):
        if name.startswith("OPTIONS-"):
            for line in open(os.path.join(d, name)):
                if line.strip().startswith("rocksdb_version="):
                    version = line.strip().split("=", 1)[1]
    lines = ["rocksdb %s" % version]
    it = db.iterkeys()
    it.seek_to_first()
    lines += ["live %s" % k.hex() for k in it]
    del it  # before close: aimrocks aborts on an iterator outliving its DB
    # Present keys, absent keys inside the key range and beyond it.
    probes = [key(i) for i in range(0, 2300, 97)] + [b"key%08dx" % i for i in range(0, 2300, 89)] + [key(i) for i in range(5000, 5100, 7)]
    for p in probes:
        lines.append("probe %s %d" % (p.hex(), 0 if db.get(p) is None else 1))
    db.close()
    for name in os.listdir(d):
        if name.startswith("LOG") or name == "LOCK":
            os.remove(os.path.join(d, name))
    with open(os.path.join(case, "expected"), "w") as f:
        f.write("\n".join(lines) + "\n")
    # aimrocks 0.5.2 crashes while tearing down a closed DB and its options
    # (after every file is written and closed): leave before it does.
    os._exit(0)


if __name__ == "__main__":
    main()
