#!/usr/bin/env python3
"""Writes the cross-version corpus of sst/tests/fixtures-versions/.

Usage:
  generate.py write OUT_DIR rocksdb-7.8   (Debian's librocksdb-dev: compiles
                                          writer.cc with g++ -lrocksdb)
  generate.py write OUT_DIR rocksdict     (PyPI's rocksdict, RocksDB 9.x)
  generate.py check DB_DIR KEYS_FILE rocksdb-7.8|rocksdict
                                          (opens a DB written elsewhere, by
                                          the Rust policy, in that RocksDB)

Every case is written by both RocksDB builds from the same keys and the same
options strings (RocksDB's own parser: GetOptionsFromString in writer.cc;
for rocksdict, its OPTIONS file edited and loaded with Options.load_latest,
since rocksdict has no setter for Ribbon, whole_key_filtering or
optimize_filters_for_memory). For each SST file it writes:

  NAME.sst       the file
  NAME.probes    hex keys, one per line: some keys and absent keys inside
                 the file's key range (a Get outside it never reaches it)
  NAME.expected  per probe, that RocksDB's answer: 0 when its Get raised
                 rocksdb.bloom.filter.useful or .prefix.useful (the filter
                 said "definitely not"), else 1
  NAME.keys      (SstFileWriter files only) every key, hex, in order

and one line per file in index.tsv: name, RocksDB version, how it was
written (sst: SstFileWriter; flush; compaction), level, then the table and
column-family options strings. Keys, probes and answers are the same on
every run (fixed seeds); the SST bytes differ (creation time, session id).
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, mode, table options, cf options, groups). A group is (key prefix,
# number of keys, seed, compact); in "sst" mode there is one group.
# "FV" stands for the newest format_version the writer has (5 for 7.8, 6
# for 9.x). optimize_filters_for_memory is off: with it RocksDB sizes
# filters by malloc_usable_size, which no other process reproduces.
COMMON = "optimize_filters_for_memory=false;block_size=1024"
CASES = [
    ("sst_ribbon", "sst", "format_version=FV;filter_policy=ribbonfilter:10:-1;checksum=kCRC32c",
     "compression=kSnappyCompression", [(b"r", 300, 1, False)]),
    ("sst_ribbon_bits7", "sst", "format_version=FV;filter_policy=ribbonfilter:7.5:-1;checksum=kxxHash64",
     "compression=kLZ4Compression", [(b"r", 300, 2, False)]),
    ("sst_fastbloom", "sst", "format_version=FV;filter_policy=bloomfilter:10:false;checksum=kXXH3",
     "compression=kZSTD", [(b"f", 300, 3, False)]),
    ("sst_fastbloom_bits16", "sst", "format_version=FV;filter_policy=bloomfilter:16:false;checksum=kxxHash",
     "compression=kZlibCompression", [(b"f", 300, 4, False)]),
    ("sst_legacy_fv2", "sst", "format_version=2;filter_policy=bloomfilter:10:false;checksum=kCRC32c",
     "compression=kLZ4HCCompression", [(b"l", 300, 5, False)]),
    ("sst_legacy_fv3", "sst", "format_version=3;filter_policy=bloomfilter:6:false;checksum=kxxHash",
     "compression=kNoCompression", [(b"l", 300, 6, False)]),
    ("sst_legacy_fv4_bzip2", "sst", "format_version=4;filter_policy=bloomfilter:10:false;checksum=kxxHash64",
     "compression=kBZip2Compression", [(b"l", 300, 7, False)]),
    ("sst_partitioned", "sst",
     "format_version=FV;filter_policy=ribbonfilter:10:-1;index_type=kTwoLevelIndexSearch;"
     "partition_filters=true;metadata_block_size=512;checksum=kXXH3",
     "compression=kZSTD", [(b"p", 3000, 8, False)]),
    ("sst_prefix_only", "sst",
     "format_version=FV;filter_policy=ribbonfilter:10:-1;whole_key_filtering=false",
     "compression=kSnappyCompression;prefix_extractor=rocksdb.FixedPrefix.6", [(b"x", 300, 9, False)]),
    ("sst_prefix_capped_and_whole", "sst",
     "format_version=FV;filter_policy=bloomfilter:10:false;whole_key_filtering=true",
     "compression=kLZ4Compression;prefix_extractor=rocksdb.CappedPrefix.7", [(b"c", 300, 10, False)]),
    ("db_hybrid", "db", "format_version=FV;filter_policy=ribbonfilter:10:1;checksum=kXXH3",
     "compression=kLZ4Compression", [(b"a", 1000, 11, True), (b"b", 1000, 12, False)]),
    ("db_partitioned", "db",
     "format_version=FV;filter_policy=bloomfilter:10:false;index_type=kTwoLevelIndexSearch;"
     "partition_filters=true;metadata_block_size=512",
     "compression=kZSTD", [(b"a", 2000, 13, True), (b"b", 2000, 14, False)]),
    ("db_prefix_only", "db",
     "format_version=FV;filter_policy=ribbonfilter:10:-1;whole_key_filtering=false",
     "compression=kNoCompression;prefix_extractor=rocksdb.FixedPrefix.6", [(b"a", 1000, 15, True), (b"b", 1000, 16, False)]),
]


def keys_and_probes(prefix, n, seed):
    r = random.Random(seed)
    keys = set()
    while len(keys) < n:
        keys.add(b"%s%08d:%s" % (prefix, r.randrange(10**8), bytes(r.choice(b"abcdefghij") for _ in range(r.randrange(0, 9)))))
    keys = sorted(keys)
    absent = []
    while len(absent) < min(n, 600):
        k = b"%s%08d:%s" % (prefix, r.randrange(10**8), b"zz" * r.randrange(0, 3))
        if k not in keys and keys[0] < k < keys[-1]:
            absent.append(k)
    # Absent keys sharing a key's first 6 and 7 bytes (a prefix filter may
    # match them, a whole-key filter should not).
    for k in keys[1:-1:max(1, n // 50)]:
        for cut in (6, 7):
            a = k[:cut] + b"~absent"
            if a not in keys and keys[0] < a < keys[-1]:
                absent.append(a)
    probes = keys[:: max(1, len(keys) // 100)] + absent
    return keys, probes


def group_file(path, keys, probes):
    with open(path, "w") as f:
        f.writelines("k %s\n" % k.hex() for k in keys)
        f.writelines("p %s\n" % p.hex() for p in probes)


class Rocksdb78:
    """Debian's librocksdb-dev, through writer.cc."""

    def __init__(self):
        self.bin = os.path.join(tempfile.mkdtemp(), "writer")
        subprocess.check_call(["g++", "-std=c++17", "-O1", "-o", self.bin, os.path.join(HERE, "writer.cc"), "-lrocksdb"])
        self.max_fv = 5
        self.tag = "v7_8"

    def write(self, d, mode, table, cf, group_paths):
        out = subprocess.check_output([self.bin, "write", mode, d, cf, table] + group_paths, text=True)
        version, files, answers = None, [], {}
        for line in out.splitlines():
            w = line.split()
            if w[0] == "version":
                version = w[1]
            elif w[0] == "file":
                files.append((os.path.join(d, "db", w[1].lstrip("/")), int(w[2]), bytes.fromhex(w[3]), bytes.fromhex(w[4])))
            elif w[0] == "answer":
                answers.setdefault(int(w[1]), []).append(int(w[3]))
        return version, files, answers

    def check(self, db, keys_file, table):
        return subprocess.run([self.bin, "check", db, table, keys_file]).returncode


class Rocksdict:
    """PyPI's rocksdict: its OPTIONS file edited, then Options.load_latest."""

    def __init__(self):
        import rocksdict
        self.rd = rocksdict
        self.max_fv = 6
        self.tag = "v9_8"

    def options(self, d, table, cf):
        rd = self.rd
        o = rd.Options(raw_mode=True)
        o.create_if_missing(True)
        rd.Rdict(os.path.join(d, "db"), o).close()
        db = os.path.join(d, "db")
        name = sorted(f for f in os.listdir(db) if f.startswith("OPTIONS-"))[-1]
        text = open(os.path.join(db, name)).read()
        edits = [("[CFOptions \"default\"]", cf), ("[TableOptions/BlockBasedTable \"default\"]", table),
                 ("[CFOptions \"default\"]", "disable_auto_compactions=true;write_buffer_size=67108864;"
                  "target_file_size_base=67108864")]
        for section, options in edits:
            for kv in filter(None, options.split(";")):
                key, value = kv.split("=", 1)
                i = text.index(section)
                j = text.find("\n[", i + 1)
                j = len(text) if j < 0 else j
                sec, n = re.subn(r"(?m)^(\s+)%s=.*$" % re.escape(key), lambda m: m.group(1) + key + "=" + value, text[i:j])
                assert n == 1, (key, n)
                text = text[:i] + sec + text[j:]
        open(os.path.join(db, name), "w").write(text)
        opts, cfs = rd.Options.load_latest(db)
        opts.enable_statistics()
        return opts, cfs

    def useful(self, opts):
        s = opts.get_statistics()
        return sum(int(m) for m in re.findall(r"^rocksdb\.bloom\.filter\.(?:prefix\.)?useful COUNT : (\d+)$", s, re.M))

    def write(self, d, mode, table, cf, group_paths):
        rd = self.rd
        opts, cfs = self.options(d, table, cf)
        groups = []
        for p in group_paths:
            keys, probes = [], []
            for line in open(p):
                tag, h = line.split()
                (keys if tag == "k" else probes).append(bytes.fromhex(h))
            groups.append((p, keys, probes))
        if mode == "sst":
            sst = os.path.join(d, "out.sst")
            w = rd.SstFileWriter(cfs["default"])
            w.open(sst)
            for k in groups[0][1]:
                w[k] = b"v" + k
            w.finish()
            db = rd.Rdict(os.path.join(d, "db"), opts, column_families=cfs)
            ingest = rd.IngestExternalFileOptions()
            ingest.set_move_files(False)
            db.ingest_external_file([sst], ingest)
        else:
            db = rd.Rdict(os.path.join(d, "db"), opts, column_families=cfs)
            for p, keys, _ in groups:
                for k in keys:
                    db[k] = b"v" + k
                db.flush()
                if p.endswith(".compact"):
                    c = rd.CompactOptions()
                    c.set_bottommost_level_compaction(rd.BottommostLevelCompaction.force())
                    db.compact_range(keys[0], keys[-1], c)
        files = [(os.path.join(d, "db", f["name"].lstrip("/")), f["level"], f["start_key"], f["end_key"])
                 for f in db.live_files()]
        answers = {}
        for gi, (_, keys, probes) in enumerate(groups):
            for p in probes:
                before = self.useful(opts)
                got = db.get(p)
                assert (got is not None) == (p in keys)
                answers.setdefault(gi, []).append(0 if self.useful(opts) > before else 1)
        db.close()
        name = sorted(f for f in os.listdir(os.path.join(d, "db")) if f.startswith("OPTIONS-"))[-1]
        version = re.search(r"rocksdb_version=([0-9.]+)", open(os.path.join(d, "db", name)).read()).group(1)
        return version, files, answers

    def check(self, db_dir, keys_file, table):
        rd = self.rd
        d = tempfile.mkdtemp()
        opts, cfs = self.options(d, table, "")
        keys = [bytes.fromhex(line.split()[1]) for line in open(keys_file)]
        db = rd.Rdict(db_dir, opts, column_families=cfs)
        found = sum(db.get(k) is not None for k in keys)
        before = self.useful(opts)
        assert all(db.get(k + b"~absent") is None for k in keys)
        useful = self.useful(opts) - before
        db.close()
        print("rocksdict RocksDB: found %d/%d useful %d" % (found, len(keys), useful))
        return 0 if found == len(keys) and useful > 0 else 1


def write_all(out, writer):
    os.makedirs(out, exist_ok=True)
    index = []
    for name, mode, table, cf, groups in CASES:
        table = COMMON + ";" + table.replace("FV", str(writer.max_fv))
        d = tempfile.mkdtemp()
        paths, data = [], []
        for gi, (prefix, n, seed, compact) in enumerate(groups):
            keys, probes = keys_and_probes(prefix, n, seed)
            p = os.path.join(d, "group%d%s" % (gi, ".compact" if compact else ""))
            group_file(p, keys, probes)
            paths.append(p)
            data.append((keys, probes))
        version, files, answers = writer.write(d, mode, table, cf, paths)
        assert len(files) == len(groups), files
        for gi, (keys, probes) in enumerate(data):
            # The file holding this group's keys (groups' ranges are disjoint).
            (path, level, lo, hi), = [f for f in files if f[2] == keys[0] and f[3] == keys[-1]]
            how = "sst" if mode == "sst" else ("compaction" if paths[gi].endswith(".compact") else "flush")
            fname = "%s_%s%s" % (writer.tag, name, "" if len(groups) == 1 else "_" + how)
            src = os.path.join(d, "out.sst") if mode == "sst" else path
            shutil.copy(src, os.path.join(out, fname + ".sst"))
            with open(os.path.join(out, fname + ".probes"), "w") as f:
                f.writelines(p.hex() + "\n" for p in probes)
            with open(os.path.join(out, fname + ".expected"), "w") as f:
                f.writelines("%d\n" % a for a in answers[gi])
            if mode == "sst":
                with open(os.path.join(out, fname + ".keys"), "w") as f:
                    f.writelines(k.hex() + "\n" for k in keys)
            assert answers[gi].count(0) > len(probes) // 4, (fname, answers[gi].count(0))
            index.append("\t".join([fname, version, how, str(level), table, cf]))
            print(fname, "RocksDB", version, how, "level", level, "probes", len(probes), "negatives", answers[gi].count(0))
        shutil.rmtree(d)
    path = os.path.join(out, "index.tsv")
    old = [l for l in open(path).read().splitlines() if not l.startswith(writer.tag + "_")] if os.path.exists(path) else []
    with open(path, "w") as f:
        f.writelines(l + "\n" for l in sorted(old + index))


def make_writer(which):
    return {"rocksdb-7.8": Rocksdb78, "rocksdict": Rocksdict}[which]()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "write":
        write_all(sys.argv[2], make_writer(sys.argv[3]))
    elif len(sys.argv) == 5 and sys.argv[1] == "check":
        w = make_writer(sys.argv[4])
        sys.exit(w.check(sys.argv[2], sys.argv[3], "filter_policy=ribbonfilter:10:-1"))
    else:
        sys.exit(__doc__)
