#!/usr/bin/env python3
"""Writes the database fixtures that sst/tests/db_versions.rs reads: small
database directories written by another RocksDB than the harness's 11.8.1,
rocksdict's build (RocksDB 9.x, from PyPI), with the everyday options of
issue #30, and what that RocksDB itself says of each:

  NAME/db/        the database directory (LOG files left out)
  NAME/wal/       its WALs, where the database has a separate wal_dir
  NAME/expected   one line a fact, from the RocksDB that wrote it:
                    rocksdb VERSION
                    cf NAME
                    live HEXKEY                 (its iterator, in order)
                    probe HEXKEY USEFUL POSITIVE FOUND
                        (one Get: the change of rocksdb.bloom.filter.useful
                         and rocksdb.bloom.filter.full.positive, and whether
                         it found the key)

Regenerate (rocksdict is installed in a virtual environment of its own, not
by CI):

  python3 -m venv /tmp/rdict && /tmp/rdict/bin/pip install rocksdict
  /tmp/rdict/bin/python sst/tests/fixtures-db/generate.py
"""

import os
import re
import shutil
import sys
import tempfile

from rocksdict import BlockBasedOptions, Options, Rdict, WriteBatch

HERE = os.path.dirname(os.path.abspath(__file__))


def options(wal_dir=None, blob=False):
    o = Options(raw_mode=True)
    o.create_if_missing(True)
    o.create_missing_column_families(True)
    o.enable_statistics()
    o.set_disable_auto_compactions(True)
    t = BlockBasedOptions()
    t.set_bloom_filter(10, False)
    o.set_block_based_table_factory(t)
    if wal_dir:
        o.set_wal_dir(wal_dir)
    if blob:
        o.set_enable_blob_files(True)
        o.set_min_blob_size(16)
        o.set_enable_blob_gc(True)
    return o


def ticker(o, name):
    m = re.search(re.escape(name) + r" COUNT : (\d+)", o.get_statistics() or "")
    return int(m.group(1)) if m else 0


def rocksdb_version(db_dir):
    """The version the newest OPTIONS file names."""
    newest = max(f for f in os.listdir(db_dir) if f.startswith("OPTIONS-"))
    with open(os.path.join(db_dir, newest)) as f:
        return re.search(r"rocksdb_version=(\S+)", f.read()).group(1)


def key(i):
    return b"key%06d" % i


def record(db, o, cf_names, probes):
    """The `expected` file's text, asked of the open `db`."""
    lines = ["rocksdb " + rocksdb_version(db.path())]
    for cf in cf_names:
        h = db if cf == "default" else db.get_column_family(cf)
        lines.append("cf " + cf)
        for k in h.keys():
            lines.append("live " + k.hex())
        for p in probes:
            useful = ticker(o, "rocksdb.bloom.filter.useful")
            positive = ticker(o, "rocksdb.bloom.filter.full.positive")
            found = h.get(p) is not None
            lines.append(
                "probe %s %d %d %d"
                % (
                    p.hex(),
                    ticker(o, "rocksdb.bloom.filter.useful") - useful,
                    ticker(o, "rocksdb.bloom.filter.full.positive") - positive,
                    found,
                )
            )
    return "\n".join(lines) + "\n"


def write(name, build, wal=False, blob=False, cfs=("default",)):
    out = os.path.join(HERE, name)
    shutil.rmtree(out, ignore_errors=True)
    work = tempfile.mkdtemp()
    db_dir = os.path.join(work, "db")
    wal_dir = os.path.join(work, "wal") if wal else None
    o = options(wal_dir, blob)
    db = Rdict(db_dir, o)
    for cf in cfs:
        if cf != "default":
            db.create_column_family(cf, options(wal_dir, blob))
    build(db)
    db.flush_wal(True)
    # What this RocksDB says, asked of the database as it is now (the
    # unflushed writes in its memtable), and the directory copied as it is
    # (rocksdict's close() flushes the memtables: the copy is taken first,
    # as a crash would leave it, the WALs synced).
    probes = [key(i) for i in range(0, 1200, 7)] + [b"absent%04d" % i for i in range(60)]
    expected = record(db, o, cfs, probes)
    os.makedirs(out)
    shutil.copytree(db_dir, os.path.join(out, "db"), ignore=shutil.ignore_patterns("LOG*", "LOCK"))
    if wal_dir:
        shutil.copytree(wal_dir, os.path.join(out, "wal"))
    db.close()
    with open(os.path.join(out, "expected"), "w") as f:
        f.write(expected)
    shutil.rmtree(work)
    print(name, sum(len(fs) for _, _, fs in os.walk(out)), "files")


def wal_dir_and_deletes(db):
    for i in range(1000):
        db[key(i)] = b"v%d" % i
    db.flush()
    for i in range(0, 1000, 3):
        del db[key(i)]
    for i in range(1000, 1100):
        db[key(i)] = b"wal-only"


def range_deletes(db):
    for i in range(1000):
        db[key(i)] = b"v"
    db.flush()
    db.delete_range(key(100), key(300))
    db.flush()
    for i in range(150, 170):
        db[key(i)] = b"after the range delete"
    db.flush()
    db.delete_range(key(500), key(520))  # WAL only


def blob_files(db):
    for i in range(800):
        db[key(i)] = b"a value long enough for a blob file %d" % i
    db.flush()
    for i in range(0, 800, 2):
        db[key(i)] = b"rewritten into another blob file %d" % i
    db.flush()
    db.compact_range(None, None)


def wide_columns_and_families(db):
    other = db.get_column_family("other")
    for i in range(600):
        db.put_entity(key(i), names=[b"", b"c"], values=[b"v", b"w"])
        other[key(i + 300)] = b"o"
    db.flush()
    other.flush()
    b = WriteBatch(raw_mode=True)
    b.set_default_column_family(db.get_column_family_handle("other"))
    for i in range(0, 900, 5):
        b.delete(key(i))
    db.write(b)


def l0_only(db):
    for f in range(4):
        for i in range(f, 1000, 4):
            db[key(i)] = b"file %d" % f
        db.flush()
    for i in range(0, 1000, 11):
        del db[key(i)]


if __name__ == "__main__":
    write("wal_dir", wal_dir_and_deletes, wal=True)
    write("range_deletes", range_deletes)
    write("blob_files", blob_files, blob=True)
    write("wide_columns_cfs", wide_columns_and_families, cfs=("default", "other"))
    write("l0_only", l0_only)
