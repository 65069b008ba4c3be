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

The bench report's doctor section (`bash scripts/bench.sh --only doctor`):

    python3 scripts/doctor-synthetic.py --report docs/benchmarks.md \
        --ribbon target/release/ribbon [--files 10000] --base SST [--base SST ...] \
        [--label TEXT ...]

generates the database once per base table in a temporary directory, runs
`ribbon doctor --json` on it pinned to one core (sched_setaffinity), takes
its wall time, CPU time and peak RSS from wait4, checks that the report
covers every file and key, and writes the table between the markers
<!-- doctor:begin --> and <!-- doctor:end --> of the report (appended when
they are absent), leaving the rest of the file as it is.
"""

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

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


def generate(out, files, base):
    """Writes the synthetic database of FILES links to BASE into OUT (new)."""
    os.makedirs(out, exist_ok=False)
    size = os.path.getsize(base)
    first_number = 10
    edit = bytearray()
    edit += varint(1) + lp(b"leveldb.BytewiseComparator")
    edit += varint(2) + varint(4)  # log number
    edit += varint(3) + varint(first_number + files + 10)  # next file number
    edit += varint(4) + varint(files + 1)  # last sequence
    records = bytearray()
    for i in range(files):
        number = first_number + i
        level = 1 + i % 6
        user = b"k%08d" % i
        records += varint(100)  # kNewFile2
        records += varint(level) + varint(number) + varint(size)
        records += lp(ikey(user + b"a", i + 1)) + lp(ikey(user + b"z", i + 1))
        records += varint(i + 1) + varint(i + 1)
        os.link(base, os.path.join(out, "%06d.sst" % number))
    manifest = write_log([bytes(edit), bytes(records)])
    with open(os.path.join(out, "MANIFEST-000003"), "wb") as f:
        f.write(manifest)
    with open(os.path.join(out, "CURRENT"), "w") as f:
        f.write("MANIFEST-000003\n")
    with open(os.path.join(out, "OPTIONS-000005"), "w") as f:
        f.write(
            "[Version]\n  rocksdb_version=11.8.1\n  options_file_version=1.1\n"
            "[DBOptions]\n[CFOptions \"default\"]\n  num_levels=7\n  prefix_extractor=nullptr\n"
            "  optimize_filters_for_hits=false\n  compaction_style=kCompactionStyleLevel\n"
            "[TableOptions/BlockBasedTable \"default\"]\n  filter_policy=bloomfilter\n"
            "  format_version=5\n  whole_key_filtering=true\n  cache_index_and_filter_blocks=false\n"
        )
    return size


def time_doctor(ribbon, db, cpu, json_out):
    """Runs `ribbon doctor --json DB` on CPU alone: (wall s, user s, sys s, peak RSS bytes)."""
    with open(json_out, "wb") as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        p = subprocess.Popen(
            [ribbon, "doctor", "--json", db],
            stdout=out,
            stderr=err,
            preexec_fn=lambda: os.sched_setaffinity(0, {cpu}),
        )
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.monotonic() - start
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            err.seek(0)
            sys.exit("doctor-synthetic: ribbon doctor failed (%d): %s" % (p.returncode, err.read().decode(errors="replace").strip()))
    return wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss * 1024


def bench(a):
    """The bench report's doctor section: one row per base table."""
    if not a.ribbon:
        sys.exit("doctor-synthetic: --report needs --ribbon BIN")
    bases = a.base or [DEFAULT_BASE]
    labels = a.label or []
    if len(labels) > len(bases):
        sys.exit("doctor-synthetic: more --label than --base")
    labels += [os.path.basename(b) for b in bases[len(labels) :]]
    cpu = min(os.sched_getaffinity(0))
    load = " ".join("%.2f" % x for x in os.getloadavg())
    rows = []
    for base, label in zip(bases, labels):
        work = tempfile.mkdtemp(prefix="doctor-synthetic-")
        try:
            db = os.path.join(work, "db")
            start = time.monotonic()
            size = generate(db, a.files, base)
            generation = time.monotonic() - start
            report_path = os.path.join(work, "report.json")
            wall, user, system, rss = time_doctor(a.ribbon, db, cpu, report_path)
            with open(report_path) as f:
                report = json.load(f)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        files, keys, filter_bytes, findings = 0, 0, 0, 0
        for cf in report["column_families"]:
            total = cf["total"]
            if total["unreadable_files"]:
                sys.exit("doctor-synthetic: %s: %d files unreadable" % (base, total["unreadable_files"]))
            files += total["files"]
            keys += total["entries"]
            filter_bytes += total["filter_bytes"]
            findings += len(cf["findings"])
            per_file = {f["entries"] for f in cf["files"]}
        if files != a.files or len(per_file) != 1 or keys != a.files * per_file.pop():
            sys.exit("doctor-synthetic: the report covers %d files and %d keys, not %d copies of the base" % (files, keys, a.files))
        rows.append((label, size, files, keys, filter_bytes, report["samples_per_file"], findings, generation, wall, user, system, rss))
        print("doctor-synthetic: %s: %d files, %d keys, %.2f s wall, %.1f MB peak RSS" % (base, files, keys, wall, rss / 1e6), file=sys.stderr)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from report_section import splice

    splice(a.report, "doctor", render(rows, cpu, load))
    print("doctor-synthetic: wrote the doctor section of %s" % a.report, file=sys.stderr)


def render(rows, cpu, load):
    out = [
        "## `ribbon doctor` on a synthetic database of %d SST files (issue 36)" % rows[0][2],
        "",
        "`scripts/doctor-synthetic.py` writes a MANIFEST, CURRENT and an OPTIONS file and links one real "
        "RocksDB 11.8.1 table (the base) under every file name: the doctor reads each file's footer, "
        "properties and filter as a distinct file. `ribbon doctor --json DB` (release build, JSON to a file) "
        "runs pinned to one core (CPU %d, `sched_setaffinity`), the page cache warm; wall time, CPU time and "
        "peak RSS from `wait4`. Target (issue 36): under 60 s on one core, memory independent of the number "
        "of keys. Load average at the start: %s." % (cpu, load),
        "",
        "| base table | base bytes | files | keys | apparent GB | filter GB | absent keys per file | findings | generation s | doctor wall s | user s | sys s | peak RSS MB | under 60 s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, size, files, keys, fbytes, samples, findings, gen, wall, user, system, rss in rows:
        out.append(
            "| %s | %d | %d | %.2e | %.1f | %.2f | %d | %d | %.1f | %.2f | %.2f | %.2f | %.1f | %s |"
            % (name, size, files, keys, files * size / 1e9, fbytes / 1e9, samples, findings, gen, wall, user, system, rss / 1e6, "yes" if wall < 60 else "**no**")
        )
    if len(rows) > 1:
        lo = min(rows, key=lambda r: r[3])
        hi = max(rows, key=lambda r: r[3])
        if hi[3] > lo[3]:
            out.append("")
            out.append(
                "Memory against keys: %.0f times the keys, %.2f times the peak RSS (%.1f MB against %.1f MB)."
                % (hi[3] / lo[3], hi[11] / lo[11], hi[11] / 1e6, lo[11] / 1e6)
            )
    out.append("")
    return "\n".join(out) + "\n"


DEFAULT_BASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sst", "tests", "corpus", "full_bloom_fv5_snappy_crc32c.sst")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", help="the database directory to write (not with --report)")
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--base", action="append", help="the SST every file links to (repeatable with --report)")
    ap.add_argument("--report", help="time the doctor and write its section of this bench report")
    ap.add_argument("--ribbon", help="the ribbon binary (with --report)")
    ap.add_argument("--label", action="append", help="what each --base is, in order, for the report (default: its file name)")
    a = ap.parse_args()
    if a.files < 1:
        sys.exit("doctor-synthetic: --files must be at least 1")
    if a.report:
        if a.out:
            sys.exit("doctor-synthetic: give OUT or --report, not both")
        return bench(a)
    if not a.out:
        sys.exit("doctor-synthetic: give the database directory to write")
    if a.base and len(a.base) > 1:
        sys.exit("doctor-synthetic: one --base without --report")
    base = a.base[0] if a.base else DEFAULT_BASE
    size = generate(a.out, a.files, base)
    print(
        "%s: %d files of %d bytes (%.1f GB apparent), one inode"
        % (a.out, a.files, size, a.files * size / 1e9)
    )


if __name__ == "__main__":
    main()
