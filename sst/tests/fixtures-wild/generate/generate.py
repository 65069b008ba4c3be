#!/usr/bin/env python3
"""Writes the SST fixtures of sst/tests/fixtures-wild/ with RocksDB 6.x.

Usage: generate.py OUT_DIR [lbry-rocksdb | faust-streaming-rocksdb], run by
the Python that has that wheel installed: `lbry-rocksdb==0.8.2` (RocksDB
6.25.3, CPython 3.9) or `faust-streaming-rocksdb==0.9.3` (RocksDB 6.14.6,
CPython 3.11, for BZip2); see README.md. Two settings those bindings do not
expose are set through the C++ library the wheel exports, with ctypes:

* a block-based filter: `rocksdb::NewBloomFilterPolicy(bits, true)`
  (use_block_based_builder) replaces the policy the binding's
  `BloomFilterPolicy(bits)` made, before the table factory copies it;
* statistics: `rocksdb::CreateDBStatistics()` is stored in
  `DBOptions::statistics` (found next to `max_total_wal_size`, whose offset
  is located by value), and `zstd_max_train_bytes` next to `max_dict_bytes`.

Each probe's recorded answer is the writer's own `rocksdb.bloom.filter.useful`
ticker: 0 when one `Get` raised it (the filter said "definitely not"), else 1.
"""
import ctypes
import os
import re
import shutil
import struct
import sys
import tempfile

import rocksdb

LIB = ctypes.CDLL(rocksdb._rocksdb.__file__)
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
WRITER = sys.argv[2] if len(sys.argv) > 2 else "lbry-rocksdb"

_new_bloom = LIB._ZN7rocksdb20NewBloomFilterPolicyEdb
_new_bloom.argtypes = [ctypes.c_double, ctypes.c_bool]
_new_bloom.restype = ctypes.c_void_p
_create_stats = LIB._ZN7rocksdb18CreateDBStatisticsEv
_create_stats.argtypes = [ctypes.c_void_p]  # the returned shared_ptr (sret)
_create_stats.restype = ctypes.c_void_p


def block_based_policy(bits):
    """A BloomFilterPolicy object whose shared_ptr now holds the block-based policy."""
    p = rocksdb.BloomFilterPolicy(bits)
    # cdef class layout: PyObject_HEAD (16), vtab (8), shared_ptr {ptr, ctrl}.
    assert type(p).__basicsize__ == 40
    slot = ctypes.c_void_p.from_address(id(p) + 24)
    assert slot.value, "no policy pointer where expected"
    slot.value = _new_bloom(float(bits), True)
    return p


def cpp_options(o):
    """The address of the C++ rocksdb::Options inside a rocksdb.Options."""
    magic = 0x5A5A123456789A
    saved = o.max_total_wal_size
    o.max_total_wal_size = magic
    words = (ctypes.c_uint64 * (type(o).__basicsize__ // 8)).from_address(id(o))
    found = []
    for w in words[2:]:
        if w < 0x100000 or w % 8:
            continue
        at = ctypes.string_at(w, 256).find(struct.pack("<Q", magic))
        if at >= 0:
            found.append((w, at))
    o.max_total_wal_size = saved
    assert len(found) == 1, found
    return found[0]


def enable_statistics(o):
    base, wal_at = cpp_options(o)
    # DBOptions: ... uint64_t max_total_wal_size; shared_ptr<Statistics> statistics; bool use_fsync;
    stats = base + wal_at + 8
    assert ctypes.string_at(stats, 16) == b"\0" * 16
    o.use_fsync = True
    assert ctypes.string_at(stats + 16, 1) == b"\1", "use_fsync not after statistics"
    o.use_fsync = False
    buf = ctypes.create_string_buffer(16)
    _create_stats(buf)
    ctypes.memmove(stats, buf, 16)  # the reference moves into the options


def set_zstd_max_train_bytes(o, dict_bytes, n):
    base, _ = cpp_options(o)
    marker = 0x0BADF00D
    opts = dict(o.compression_opts)
    opts["max_dict_bytes"] = marker
    o.compression_opts = opts
    mem = ctypes.string_at(base, 4096)
    at = mem.find(struct.pack("<I", marker))
    assert at >= 0 and mem.find(struct.pack("<I", marker), at + 1) < 0
    # CompressionOptions: ... uint32_t max_dict_bytes; uint32_t zstd_max_train_bytes;
    ctypes.c_uint32.from_address(base + at).value = dict_bytes
    ctypes.c_uint32.from_address(base + at + 4).value = n
    assert o.compression_opts["max_dict_bytes"] == dict_bytes


def useful(db):
    s = db.get_property(b"rocksdb.options-statistics").decode()
    m = re.search(r"^rocksdb\.bloom\.filter\.useful COUNT : (\d+)$", s, re.M)
    return int(m.group(1))


def keys_and_probes(n, seed, after_keys=False):
    import random
    r = random.Random(seed)
    keys = sorted({b"user%08d:%s" % (r.randrange(10**8), bytes(r.choice(b"abcdefghij") for _ in range(r.randrange(0, 9)))) for _ in range(n)})
    absent = []
    # Only keys within the table's range: a Get outside it never reaches the
    # table (the version skips the file), so its filter is not asked.
    while len(absent) < n:
        k = b"user%08d:%s" % (r.randrange(10**8), b"zz" * r.randrange(0, 3))
        if k not in keys and keys[0] < k < keys[-1]:
            absent.append(k)
    if after_keys:
        # The smallest key after each key: after a data block's last key,
        # it sorts before the index separator, so Get reads that block (its
        # filter first) and, finding no key at or after it, the next one.
        absent = [k + b"\0" for k in keys[:-1]]
    probes = keys[:: max(1, len(keys) // 100)] + absent
    return keys, probes


def value(k, i):
    words = [b"alpha", b"beta", b"gamma", b"delta", b"epsilon", b"zeta"]
    return b"%s-%s-%d-%s" % (k, words[i % 6], i * 7919 % 1000, words[(i * 5) % 6] * 3)


def write(name, fv, compression, block_based=True, dict_bytes=0, train_bytes=0, n=300, seed=1, bits=10,
          after_keys=False):
    d = tempfile.mkdtemp()
    o = rocksdb.Options(create_if_missing=True)
    o.compression = compression
    o.write_buffer_size = 64 << 20
    o.target_file_size_base = 64 << 20
    if dict_bytes:
        opts = dict(o.compression_opts)
        opts["max_dict_bytes"] = dict_bytes
        o.compression_opts = opts
        if train_bytes:
            set_zstd_max_train_bytes(o, dict_bytes, train_bytes)
    policy = block_based_policy(bits) if block_based else rocksdb.BloomFilterPolicy(bits)
    o.table_factory = rocksdb.BlockBasedTableFactory(
        format_version=fv, filter_policy=policy, block_size=512, whole_key_filtering=True)
    enable_statistics(o)
    db = rocksdb.DB(os.path.join(d, "db"), o)
    keys, probes = keys_and_probes(n, seed, after_keys)
    for i, k in enumerate(keys):
        db.put(k, value(k, i))
    db.compact_range()
    ssts = [f for f in os.listdir(os.path.join(d, "db")) if f.endswith(".sst")]
    options_file = [f for f in os.listdir(os.path.join(d, "db")) if f.startswith("OPTIONS-")][0]
    with open(os.path.join(d, "db", options_file)) as f:
        version = re.search(r"rocksdb_version=([0-9.]+)", f.read()).group(1)
    assert len(ssts) == 1, ssts
    answers = []
    for p in probes:
        before = useful(db)
        got = db.get(p)
        assert (got is not None) == (p in set(keys))
        answers.append(0 if useful(db) > before else 1)
    assert useful(db) > 0
    shutil.copy(os.path.join(d, "db", ssts[0]), os.path.join(OUT, name + ".sst"))
    with open(os.path.join(OUT, name + ".probes"), "w") as f:
        f.writelines(p.hex() + "\n" for p in probes)
    with open(os.path.join(OUT, name + ".expected"), "w") as f:
        f.writelines("%d\n" % a for a in answers)
    del db
    shutil.rmtree(d)
    print(name, "written by RocksDB", version, "keys", len(keys), "probes", len(probes), "negatives", answers.count(0))


C = rocksdb.CompressionType
if __name__ == "__main__" and WRITER == "lbry-rocksdb":
    # RocksDB 6.25.3 (lbry-rocksdb 0.8.2; no BZip2 in that build).
    write("blockbased_fv0_snappy", 0, C.snappy_compression, seed=10)
    write("blockbased_fv1_zlib", 1, C.zlib_compression, seed=11)
    write("blockbased_fv2_lz4", 2, C.lz4_compression, seed=12, bits=6)
    write("blockbased_fv3_zstd", 3, C.zstd_compression, seed=13)
    write("blockbased_fv4_none", 4, C.no_compression, seed=14, bits=16)
    write("blockbased_fv5_lz4hc", 5, C.lz4hc_compression, seed=15)
    write("blockbased_fv3_bits2_afterkeys", 3, C.no_compression, seed=16, bits=2, after_keys=True)
    write("dict_zstd_raw_fv5", 5, C.zstd_compression, block_based=False, dict_bytes=4096, seed=20)
    write("dict_zstd_trained_fv4", 4, C.zstd_compression, block_based=False, dict_bytes=4096, train_bytes=65536, seed=21)
    write("dict_lz4_fv5", 5, C.lz4_compression, block_based=False, dict_bytes=4096, seed=22)
    write("dict_zlib_fv3", 3, C.zlib_compression, block_based=False, dict_bytes=4096, seed=23)
    write("dict_zstd_blockbased_fv2", 2, C.zstd_compression, dict_bytes=2048, train_bytes=32768, seed=24)
elif __name__ == "__main__" and WRITER == "faust-streaming-rocksdb":
    # RocksDB 6.14.6 (faust-streaming-rocksdb 0.9.3, with BZip2).
    write("bzip2_blockbased_fv2_v6_14", 2, C.bzip2_compression, seed=30)
    write("bzip2_full_fv4_v6_14", 4, C.bzip2_compression, block_based=False, seed=31)
    write("bzip2_blockbased_fv1_v6_14", 1, C.bzip2_compression, seed=32)
else:
    sys.exit("usage: generate.py OUT_DIR [lbry-rocksdb | faust-streaming-rocksdb]")
