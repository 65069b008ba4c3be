#!/usr/bin/env python3
"""A synthetic database of many SST files for timing `ribbon doctor` (issue 36).

    python3 scripts/doctor-synthetic.py OUT_DIR [--files 10000] [--base SST]
    time ribbon doctor --json OUT_DIR > /dev/null

OUT_DIR gets CURRENT, a MANIFEST listing FILES live files spread over levels
1 to 6 with disjoint key ranges, an OPTIONS file, and FILES hard links to one
real SST written by RocksDB 11.8.1 (default: the test corpus's
sst/tests/corpus/full_bloom_fv5_snappy_crc32c.sst, a FastLocalBloom filter).
The doctor reads each file's footer, properties and filter as if they were
distinct files, so its time and memory grow with the number of files, not
with the number of keys. The apparent size is FILES times the base file's
size: a 10 MB base SST (any RocksDB table with a filter) makes 10^4 files a
100 GB-class database; disk use stays one file.

Pure Python, no dependency. The MANIFEST is RocksDB's log format
(db/log_format.h: 32 KiB blocks, records with a masked CRC-32C) holding
VersionEdits (db/version_edit.cc: comparator, log number, next file number,
last sequence, and kNewFile2 records).
"""

import argparse
import os
import struct
import sys

BLOCK = 32768
HEADER = 7


def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


TABLE = _crc_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def lp(b):
    return varint(len(b)) + b


def write_log(records):
    out = bytearray()
    for r in records:
        rest = r
        first = True
        while True:
            left = BLOCK - len(out) % BLOCK
            if left < HEADER:
                out.extend(b"\0" * left)
                continue
            n = min(len(rest), left - HEADER)
            last = n == len(rest)
            kind = {(True, True): 1, (True, False): 2, (False, False): 3, (False, True): 4}[(first, last)]
            body = bytes([kind]) + rest[:n]
            out.extend(struct.pack("<IH", masked(body), n))
            out.extend(body)
            rest = rest[n:]
            first = False
            if last:
                break
    return bytes(out)


def ikey(user, seq):
    return user + struct.pack("<Q", (seq << 8) | 1)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--base", default=os.path.join(here, "..", "sst", "tests", "corpus", "full_bloom_fv5_snappy_crc32c.sst"))
    a = ap.parse_args()
    if a.files < 1:
        sys.exit("doctor-synthetic: --files must be at least 1")
    os.makedirs(a.out, exist_ok=False)
    size = os.path.getsize(a.base)
    first_number = 10
    edit = bytearray()
    edit += varint(1) + lp(b"leveldb.BytewiseComparator")
    edit += varint(2) + varint(4)  # log number
    edit += varint(3) + varint(first_number + a.files + 10)  # next file number
    edit += varint(4) + varint(a.files + 1)  # last sequence
    files = bytearray()
    for i in range(a.files):
        number = first_number + i
        level = 1 + i % 6
        user = b"k%08d" % i
        files += varint(100)  # kNewFile2
        files += varint(level) + varint(number) + varint(size)
        files += lp(ikey(user + b"a", i + 1)) + lp(ikey(user + b"z", i + 1))
        files += varint(i + 1) + varint(i + 1)
        os.link(a.base, os.path.join(a.out, "%06d.sst" % number))
    manifest = write_log([bytes(edit), bytes(files)])
    with open(os.path.join(a.out, "MANIFEST-000003"), "wb") as f:
        f.write(manifest)
    with open(os.path.join(a.out, "CURRENT"), "w") as f:
        f.write("MANIFEST-000003\n")
    with open(os.path.join(a.out, "OPTIONS-000005"), "w") as f:
        f.write(
            "[Version]\n  rocksdb_version=11.8.1\n  options_file_version=1.1\n"
            "[DBOptions]\n[CFOptions \"default\"]\n  num_levels=7\n  prefix_extractor=nullptr\n"
            "  optimize_filters_for_hits=false\n  compaction_style=kCompactionStyleLevel\n"
            "[TableOptions/BlockBasedTable \"default\"]\n  filter_policy=bloomfilter\n"
            "  format_version=5\n  whole_key_filtering=true\n  cache_index_and_filter_blocks=false\n"
        )
    print(
        "%s: %d files of %d bytes (%.1f GB apparent), one inode"
        % (a.out, a.files, size, a.files * size / 1e9)
    )


if __name__ == "__main__":
    main()
