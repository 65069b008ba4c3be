//! Real databases, exactly (issue #30): databases written by RocksDB itself
//! (11.8.1, through rust-rocksdb) in the setups that are common in
//! production — a separate `wal_dir`, blob files with and without garbage,
//! range deletions flushed and WAL-only, merge operands, TTL, universal and
//! FIFO compaction, ingested SSTs, recycled WALs, several column families,
//! `db_paths`, L0-only databases of 1 to 5 files — are read by the pure-Rust
//! reader (`ribbon_sst::db`) while RocksDB holds them open (no background
//! work: automatic compaction is off and flushes are explicit). For each:
//!
//! * the live key set equals RocksDB's own iterator;
//! * for every probe key, the files of the reader's `Get` path are the
//!   filter checks RocksDB's statistics record for one `Get` of that key
//!   (`rocksdb.bloom.filter.useful` for each "no",
//!   `rocksdb.bloom.filter.full.positive` for each "may match"), and the
//!   path finds the key exactly when RocksDB's `Get` does.

use ribbon_sst::db::get::FileCache;
use ribbon_sst::db::{Db, OpenOptions};
use rocksdb::statistics::Ticker;
use rocksdb::{BlockBasedOptions, ColumnFamilyDescriptor, IteratorMode, Options, WriteBatch, DB};
use std::path::Path;

fn key(i: u64) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn options() -> Options {
    let mut table = BlockBasedOptions::default();
    table.set_bloom_filter(10.0, false);
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.create_missing_column_families(true);
    opts.enable_statistics();
    opts.set_disable_auto_compactions(true);
    opts.set_write_buffer_size(64 << 20);
    opts.set_block_based_table_factory(&table);
    opts
}

fn concat(_key: &[u8], existing: Option<&[u8]>, operands: &rocksdb::MergeOperands) -> Option<Vec<u8>> {
    let mut v = existing.map(<[u8]>::to_vec).unwrap_or_default();
    for op in operands {
        v.extend_from_slice(op);
    }
    Some(v)
}

/// Probe keys: every third key of `0..n`, and `absent` keys never written
/// (inside and outside the written range).
fn probes(n: u64, absent: u64) -> Vec<Vec<u8>> {
    let mut p: Vec<Vec<u8>> = (0..n).step_by(3).map(key).collect();
    p.extend((0..absent).map(|i| format!("key{:06}x", i * 7 % n.max(1)).into_bytes()));
    p.extend((0..absent / 4).map(|i| format!("zzz{i}").into_bytes()));
    p.extend((0..absent / 4).map(|i| format!("aaa{i}").into_bytes()));
    p
}

/// One row of a test's table of checks: a column family of the database,
/// where the reader finds its files, and the probes (`probes(n, absent)`).
struct Check<'a> {
    cf: &'a str,
    how: OpenOptions,
    probes: (u64, u64),
}

impl Check<'_> {
    /// The default column family, its files found as the OPTIONS file
    /// says, probed with `probes(n, absent)`.
    fn default_cf(n: u64, absent: u64) -> Self {
        Check {
            cf: "default",
            how: OpenOptions::default(),
            probes: (n, absent),
        }
    }
}

/// Runs each check of `checks` against the open `db` (opened in `dir`
/// with `opts`, whose statistics count the filter checks): the reader's
/// live keys against RocksDB's iterator, and each probe's path against
/// RocksDB's counters and `Get`. Returns the reader of the last check.
fn exact(db: &DB, opts: &Options, dir: &Path, checks: &[Check<'_>]) -> Db {
    assert!(!checks.is_empty());
    let mut last = None;
    for c in checks {
        let probes = probes(c.probes.0, c.probes.1);
        let (ours, checks) = check(db, opts, dir, c.cf, &c.how, &probes);
        assert!(checks > 0, "{}: no filter was asked at all", c.cf);
        last = Some(ours);
    }
    last.unwrap()
}

/// Checks the reader against RocksDB for column family `cf` of the open
/// `db` (opened with `opts`, whose statistics count the filter checks);
/// returns the reader and how many whole-key filter checks RocksDB made.
fn check(db: &DB, opts: &Options, dir: &Path, cf: &str, how: &OpenOptions, probes: &[Vec<u8>]) -> (Db, u64) {
    let handle = db.cf_handle(cf).unwrap();
    let theirs: Vec<Vec<u8>> = db
        .iterator_cf(&handle, IteratorMode::Start)
        .map(|r| r.unwrap().0.to_vec())
        .collect();
    let ours_db = Db::open_with(dir, cf, how).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut ours = Vec::new();
    ours_db.for_each_live_key(|k| ours.push(k.to_vec())).unwrap();
    assert_eq!(ours.len(), theirs.len(), "live keys of {cf}");
    assert!(ours == theirs, "live keys of {cf} differ from RocksDB's iterator");
    let paths = ours_db.get_paths(probes, &mut FileCache::new()).unwrap();
    let mut checks = 0;
    for (p, path) in probes.iter().zip(&paths) {
        let useful = opts.get_ticker_count(Ticker::BloomFilterUseful);
        let positive = opts.get_ticker_count(Ticker::BloomFilterFullPositive);
        let got = db.get_cf(&handle, p).unwrap();
        let useful = opts.get_ticker_count(Ticker::BloomFilterUseful) - useful;
        let positive = opts.get_ticker_count(Ticker::BloomFilterFullPositive) - positive;
        let asked = path.steps.iter().filter(|s| s.has_filter);
        let ours_useful = asked.clone().filter(|s| !s.may_match).count() as u64;
        let ours_positive = asked.count() as u64 - ours_useful;
        assert_eq!(
            (useful, positive),
            (ours_useful, ours_positive),
            "{cf}: key {:?}: RocksDB's filter checks (useful, positive) differ from the path {path:?}",
            String::from_utf8_lossy(p)
        );
        assert_eq!(
            got.is_some(),
            path.found(),
            "{cf}: key {:?}: found by RocksDB: {}; path {path:?}",
            String::from_utf8_lossy(p),
            got.is_some()
        );
        checks += useful + positive;
    }
    (ours_db, checks)
}

/// Opens with the default column family named, so that `cf_handle` finds it.
fn open(opts: &Options, dir: &Path) -> DB {
    DB::open_cf_descriptors(opts, dir, [ColumnFamilyDescriptor::new("default", opts.clone())]).unwrap()
}

#[test]
fn levels_l0_and_memtable() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options();
    let db = open(&opts, tmp.path());
    for i in 0..3000 {
        db.put(key(i), b"base").unwrap();
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    for i in (0..3000).step_by(5) {
        db.put(key(i), b"newer").unwrap();
    }
    for i in (1..3000).step_by(11) {
        db.delete(key(i)).unwrap();
    }
    db.flush().unwrap();
    for i in 3000..3100 {
        db.put(key(i), b"l0").unwrap();
    }
    db.flush().unwrap();
    // Unflushed: puts, deletes, a re-put.
    for i in (2..3000).step_by(13) {
        db.delete(key(i)).unwrap();
    }
    for i in 3100..3150 {
        db.put(key(i), b"mem").unwrap();
    }
    db.put(key(1), b"back").unwrap();
    let ours = exact(&db, &opts, tmp.path(), &[Check::default_cf(3200, 400)]);
    assert!(ours.levels()[0].len() == 2 && ours.memtable().writes > 0);
}

#[test]
fn l0_only_databases_of_1_to_5_files() {
    // FilePicker asks every L0 file, whatever its key range, when L0 is
    // the only non-empty level and holds 3 files or fewer.
    for n in 1..=5u64 {
        let tmp = tempfile::tempdir().unwrap();
        let opts = options();
        let db = open(&opts, tmp.path());
        for f in 0..n {
            for i in f * 400..f * 400 + 500 {
                db.put(key(i), b"v").unwrap();
            }
            db.delete(key(f * 400 + 3)).unwrap();
            db.flush().unwrap();
        }
        let ours = exact(&db, &opts, tmp.path(), &[Check::default_cf(n * 400 + 200, 300)]);
        assert_eq!(ours.levels()[0].len(), n as usize);
    }
}

#[test]
fn range_deletions_flushed_compacted_and_in_the_wal() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options();
    let db = open(&opts, tmp.path());
    let cf = db.cf_handle("default").unwrap();
    for i in 0..2000 {
        db.put(key(i), b"base").unwrap();
    }
    db.delete_range_cf(&cf, key(100), key(150)).unwrap();
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    // Flushed to L0: a range deletion over bottom-level keys, then keys
    // put again inside it.
    db.delete_range_cf(&cf, key(500), key(700)).unwrap();
    for i in (500..700).step_by(10) {
        db.put(key(i), b"again").unwrap();
    }
    db.flush().unwrap();
    // Only in the WAL: a range deletion over both, and a put inside it after.
    db.delete_range_cf(&cf, key(600), key(1100)).unwrap();
    db.put(key(1000), b"mem").unwrap();
    db.delete_range_cf(&cf, key(1500), key(1500)).unwrap();
    let ours = exact(&db, &opts, tmp.path(), &[Check::default_cf(2100, 300)]);
    assert!(!ours.memtable().tombstones.is_empty());
}

#[test]
fn merge_operands_continue_the_search() {
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = options();
    opts.set_merge_operator_associative("concat", concat);
    let db = open(&opts, tmp.path());
    for i in 0..1500 {
        db.put(key(i), b"base").unwrap();
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    for i in (0..1500).step_by(4) {
        db.merge(key(i), b"+l0").unwrap();
    }
    for i in 2000..2050 {
        db.merge(key(i), b"+new").unwrap();
    }
    db.flush().unwrap();
    for i in (0..1500).step_by(6) {
        db.merge(key(i), b"+mem").unwrap();
    }
    db.merge(key(1600), b"+mem-only").unwrap();
    exact(&db, &opts, tmp.path(), &[Check::default_cf(2100, 300)]);
}

#[test]
fn a_separate_wal_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let wal = tempfile::tempdir().unwrap();
    let mut opts = options();
    opts.set_wal_dir(wal.path());
    let db = open(&opts, tmp.path());
    for i in 0..1000 {
        db.put(key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    for i in (0..1000).step_by(3) {
        db.delete(key(i)).unwrap();
    }
    for i in 1000..1100 {
        db.put(key(i), b"wal").unwrap();
    }
    let ours = exact(&db, &opts, tmp.path(), &[Check::default_cf(1200, 200)]);
    assert_eq!(ours.recovery().wal_dir, wal.path());
    assert!(ours.memtable().writes >= 434);
}

#[test]
fn blob_files_with_and_without_garbage() {
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = options();
    opts.set_enable_blob_files(true);
    opts.set_min_blob_size(0);
    opts.set_enable_blob_gc(true);
    opts.set_blob_gc_age_cutoff(1.0);
    let db = open(&opts, tmp.path());
    for i in 0..1000 {
        db.put(key(i), format!("value-{i}-{}", "x".repeat(40))).unwrap();
    }
    db.flush().unwrap();
    for i in (0..1000).step_by(2) {
        db.put(key(i), b"overwritten-blob-value-long-enough").unwrap();
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    for i in (0..1000).step_by(7) {
        db.delete(key(i)).unwrap();
    }
    db.flush().unwrap();
    exact(&db, &opts, tmp.path(), &[Check::default_cf(1100, 200)]);
}

#[test]
fn universal_and_fifo_compaction() {
    for style in [
        rocksdb::DBCompactionStyle::Universal,
        rocksdb::DBCompactionStyle::Fifo,
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let mut opts = options();
        opts.set_compaction_style(style);
        let db = open(&opts, tmp.path());
        for round in 0..4u64 {
            for i in round * 300..round * 300 + 600 {
                db.put(key(i), b"v").unwrap();
            }
            db.delete(key(round * 300 + 1)).unwrap();
            db.flush().unwrap();
        }
        if style == rocksdb::DBCompactionStyle::Universal {
            db.compact_range::<&[u8], &[u8]>(None, None);
            for i in 0..50 {
                db.put(key(i * 9), b"again").unwrap();
            }
            db.flush().unwrap();
        }
        db.put(key(5000), b"mem").unwrap();
        exact(&db, &opts, tmp.path(), &[Check::default_cf(1600, 300)]);
    }
}

#[test]
fn ingested_files_take_their_global_sequence_number() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options();
    let db = open(&opts, tmp.path());
    for i in 0..1000 {
        db.put(key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    // Overlapping the memtable and L0: ingested with a global seqno.
    db.delete_range_cf(&db.cf_handle("default").unwrap(), key(800), key(900))
        .unwrap();
    let sst = tmp.path().join("ingest.sst");
    let mut w = rocksdb::SstFileWriter::create(&opts);
    w.open(&sst).unwrap();
    for i in (850..1200).step_by(2) {
        w.put(key(i), b"ingested").unwrap();
    }
    w.finish().unwrap();
    db.ingest_external_file(vec![&sst]).unwrap();
    db.delete(key(1000)).unwrap();
    exact(&db, &opts, tmp.path(), &[Check::default_cf(1300, 200)]);
}

#[test]
fn recycled_and_stale_wals() {
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = options();
    opts.set_recycle_log_file_num(2);
    let db = open(&opts, tmp.path());
    for round in 0..4u64 {
        for i in round * 200..round * 200 + 300 {
            db.put(key(i), b"v").unwrap();
        }
        db.flush().unwrap();
    }
    for i in (0..800).step_by(5) {
        db.delete(key(i)).unwrap();
    }
    exact(&db, &opts, tmp.path(), &[Check::default_cf(1200, 200)]);
}

#[test]
fn several_column_families_and_a_range_deletion_in_another() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options();
    let db = DB::open_cf_descriptors(
        &opts,
        tmp.path(),
        ["default", "b"].map(|n| ColumnFamilyDescriptor::new(n, opts.clone())),
    )
    .unwrap();
    let b = db.cf_handle("b").unwrap();
    for i in 0..800 {
        db.put(key(i), b"d").unwrap();
        db.put_cf(&b, key(i + 400), b"b").unwrap();
    }
    db.flush().unwrap();
    db.flush_cf(&b).unwrap();
    let mut batch = WriteBatch::default();
    batch.delete_range_cf(&b, key(500), key(600));
    batch.put(key(2000), b"d");
    batch.delete(key(3));
    db.write(batch).unwrap();
    exact(
        &db,
        &opts,
        tmp.path(),
        &[
            Check::default_cf(1300, 200),
            Check {
                cf: "b",
                ..Check::default_cf(1300, 200)
            },
        ],
    );
}

#[test]
fn db_paths_are_given() {
    let tmp = tempfile::tempdir().unwrap();
    let (p0, p1) = (tmp.path().join("p0"), tmp.path().join("p1"));
    let dir = tmp.path().join("db");
    let mut opts = options();
    opts.set_db_paths(&[
        rocksdb::DBPath::new(&p0, 1).unwrap(),
        rocksdb::DBPath::new(&p1, 1 << 30).unwrap(),
    ]);
    let db = open(&opts, &dir);
    // Two overlapping L0 files: the compaction rewrites them (a trivial
    // move would keep path 0).
    for i in 0..1000 {
        db.put(key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    for i in (0..1000).step_by(2) {
        db.put(key(i), b"w").unwrap();
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    for i in 1000..1100 {
        db.put(key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    let how = OpenOptions {
        wal_dir: None,
        db_paths: vec![p0.clone(), p1.clone()],
    };
    let ours = exact(
        &db,
        &opts,
        &dir,
        &[Check {
            how,
            ..Check::default_cf(1200, 200)
        }],
    );
    // RocksDB placed the files in db_paths[0], which is not the DB directory.
    assert!(ours.files().all(|f| f.path.starts_with(&p0)));
    // Without the paths: one line naming the missing path, never fewer keys.
    let e = Db::open(&dir)
        .and_then(|db| db.for_each_live_key(|_| {}))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains(".sst") && e.contains("--db-path"), "{e}");
}

#[test]
fn ttl_databases() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options();
    let db = DB::open_cf_descriptors_with_ttl(
        &opts,
        tmp.path(),
        [ColumnFamilyDescriptor::new("default", opts.clone())],
        std::time::Duration::from_secs(3600),
    )
    .unwrap();
    for i in 0..1000 {
        db.put(key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    for i in (0..1000).step_by(4) {
        db.delete(key(i)).unwrap();
    }
    db.flush().unwrap();
    db.put(key(2), b"mem").unwrap();
    exact(&db, &opts, tmp.path(), &[Check::default_cf(1100, 200)]);
}

/// A MANIFEST of one edit: comparator `comparator`, file 9 on level 1 of
/// `size` bytes holding keys `lo..=hi`.
fn manifest(comparator: &str, size: u64, lo: &[u8], hi: &[u8]) -> Vec<u8> {
    use ribbon_sst::coding::put_varint64;
    let lp = |out: &mut Vec<u8>, b: &[u8]| {
        put_varint64(out, b.len() as u64);
        out.extend_from_slice(b);
    };
    let ikey = |u: &[u8]| [u, &(1u64 << 8 | 1).to_le_bytes()].concat();
    let mut e = Vec::new();
    put_varint64(&mut e, 1);
    lp(&mut e, comparator.as_bytes());
    for tag in [2u64, 3, 4] {
        put_varint64(&mut e, tag);
        put_varint64(&mut e, 10);
    }
    for (tag, v) in [(103u64, 1u64), (0, 9), (0, size)] {
        if tag != 0 {
            put_varint64(&mut e, tag);
        }
        put_varint64(&mut e, v);
    }
    lp(&mut e, &ikey(lo));
    lp(&mut e, &ikey(hi));
    put_varint64(&mut e, 1);
    put_varint64(&mut e, 1);
    put_varint64(&mut e, 1);
    ribbon_sst::db::log::write_log(&[&e])
}

#[test]
fn files_that_disagree_with_the_manifest_are_refused() {
    // Issue #31: a MANIFEST whose comparator disagrees with the files, and
    // a swapped SST of another size, were read as the MANIFEST said.
    let tmp = tempfile::tempdir().unwrap();
    let opts = options();
    {
        let db = open(&opts, tmp.path());
        for i in 0..500 {
            db.put(key(i), b"v").unwrap();
        }
        db.flush().unwrap();
    }
    let sst = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .unwrap();
    let bytes = std::fs::read(&sst).unwrap();
    let size = bytes.len() as u64;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("CURRENT"), "MANIFEST-000003\n").unwrap();
    std::fs::write(dir.path().join("000009.sst"), &bytes).unwrap();
    let write = |comparator: &str, size: u64| {
        std::fs::write(
            dir.path().join("MANIFEST-000003"),
            manifest(comparator, size, &key(0), &key(499)),
        )
        .unwrap();
        Db::open(dir.path()).unwrap()
    };
    // As RocksDB wrote it: read.
    let db = write("leveldb.BytewiseComparator", size);
    let paths = db.get_paths(&[key(7)], &mut FileCache::new()).unwrap();
    assert!(paths[0].found());
    let mut n = 0;
    db.for_each_live_key(|_| n += 1).unwrap();
    assert_eq!(n, 500);
    // Another comparator in the MANIFEST: refused when opened (its key
    // range is upside down), not 179 "memtable:none -".
    std::fs::write(
        dir.path().join("MANIFEST-000003"),
        manifest("rocksdb.ReverseBytewiseComparator", size, &key(0), &key(499)),
    )
    .unwrap();
    let e = Db::open(dir.path()).unwrap_err().to_string();
    assert!(e.contains("comparator"), "{e}");
    // A one-key range passes that check: the file's own comparator refuses it.
    std::fs::write(
        dir.path().join("MANIFEST-000003"),
        manifest("rocksdb.ReverseBytewiseComparator", size, &key(7), &key(7)),
    )
    .unwrap();
    let db = Db::open(dir.path()).unwrap();
    let e = db
        .get_paths(&[key(7)], &mut FileCache::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("comparator"), "{e}");
    let e = db.for_each_live_key(|_| {}).unwrap_err().to_string();
    assert!(e.contains("comparator"), "{e}");
    // Another size: refused.
    let db = write("leveldb.BytewiseComparator", size + 1);
    let e = db.for_each_live_key(|_| {}).unwrap_err().to_string();
    assert!(e.contains("MANIFEST says"), "{e}");
}

#[test]
fn a_file_deleted_by_a_compaction_under_the_reader_is_named_in_one_line() {
    // Issue #30: "NNNNNN.sst: No such file or directory" with no hint while
    // the database was being written.
    let tmp = tempfile::tempdir().unwrap();
    let opts = options();
    let db = open(&opts, tmp.path());
    for round in 0..3u64 {
        for i in round * 100..round * 100 + 200 {
            db.put(key(i), b"v").unwrap();
        }
        db.flush().unwrap();
    }
    let ours = Db::open(tmp.path()).unwrap();
    assert_eq!(ours.levels()[0].len(), 3);
    // RocksDB compacts the L0 files away (and deletes them) under the reader.
    db.compact_range::<&[u8], &[u8]>(None, None);
    let e = ours.for_each_live_key(|_| {}).unwrap_err().to_string();
    assert!(e.contains("deleted by a compaction") && !e.contains('\n'), "{e}");
    // Read again: the new version is read, exactly.
    exact(&db, &opts, tmp.path(), &[Check::default_cf(500, 100)]);
}

#[path = "util/cli.rs"]
mod cli;

#[test]
fn sst_info_on_a_database_directory_shows_levels_column_families_and_leftovers() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options();
    let db = open(&opts, tmp.path());
    for i in 0..300 {
        db.put(key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    db.put(key(1), b"w").unwrap();
    db.flush().unwrap();
    let live = Db::open(tmp.path()).unwrap();
    let l0 = live.levels()[0][0].path.clone();
    // A file the MANIFEST does not list (left over from a crash).
    std::fs::copy(&l0, tmp.path().join("000999.sst")).unwrap();
    let out = String::from_utf8(cli::run(&["sst", "info", tmp.path().to_str().unwrap()])).unwrap();
    let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(&rows[0][..3], ["FILE", "LEVEL", "CF"], "{out}");
    let row = |name: &str| {
        rows.iter()
            .find(|r| r[0] == name)
            .unwrap_or_else(|| panic!("{name}: {out}"))
    };
    assert_eq!(
        &row(&live.levels()[0][0].name())[1..3],
        ["L0", "default"],
        "{out}"
    );
    let bottom = live.files().find(|f| f.level > 0).unwrap();
    assert_eq!(row(&bottom.name())[1], format!("L{}", bottom.level), "{out}");
    assert_eq!(&row("000999.sst")[1..3], ["unref", "-"], "{out}");
    assert!(
        out.contains("1 files (LEVEL unref) are not referenced by the MANIFEST"),
        "{out}"
    );
}

#[test]
fn prefix_filters_count_as_rocksdb_counts_them() {
    // Whole-key filtering off, a fixed 7-byte prefix extractor: `Get` asks
    // each file's filter for the key's prefix (keys shorter than 7 bytes
    // are outside its domain: no filter is asked), and RocksDB counts
    // `bloom.filter.prefix.checked` / `prefix.useful`, not the whole-key
    // counters.
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = options();
    let mut table = BlockBasedOptions::default();
    table.set_bloom_filter(10.0, false);
    table.set_whole_key_filtering(false);
    opts.set_block_based_table_factory(&table);
    opts.set_prefix_extractor(rocksdb::SliceTransform::create_fixed_prefix(7));
    let db = open(&opts, tmp.path());
    for i in 0..2000 {
        db.put(key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    for i in (1000..3000).step_by(3) {
        db.put(key(i), b"newer").unwrap();
    }
    db.delete(key(1003)).unwrap();
    db.flush().unwrap();
    // Keys present, keys of present prefixes, of absent prefixes, and
    // outside the domain (shorter than the prefix).
    let mut probes = probes(3000, 200);
    // "key001~..." sorts between key001999 and key002000: inside both
    // files' key ranges, of a prefix no key has.
    probes.extend((0..300).map(|i| format!("key{:03}~{i}", i % 30).into_bytes()));
    probes.extend((0..20).map(|i| format!("k{i}").into_bytes()));
    let (ours, whole_key_checks) = check(
        &db,
        &opts,
        tmp.path(),
        "default",
        &OpenOptions::default(),
        &probes,
    );
    assert_eq!(
        whole_key_checks, 0,
        "whole-key filter checks with whole_key_filtering off"
    );
    let handle = db.cf_handle("default").unwrap();
    let files: Vec<_> = ours.files().collect();
    let ssts: Vec<_> = files.iter().map(|f| ours.open_file(f).unwrap()).collect();
    assert!(ssts
        .iter()
        .all(|s| !s.whole_key_filtering() && s.prefix_extractor().is_some()));
    let paths = ours.get_paths(&probes, &mut FileCache::new()).unwrap();
    let (mut all_checked, mut all_useful) = (0, 0);
    for (p, path) in probes.iter().zip(&paths) {
        let checked = opts.get_ticker_count(Ticker::BloomFilterPrefixChecked);
        let useful = opts.get_ticker_count(Ticker::BloomFilterPrefixUseful);
        db.get_cf(&handle, p).unwrap();
        let checked = opts.get_ticker_count(Ticker::BloomFilterPrefixChecked) - checked;
        let useful = opts.get_ticker_count(Ticker::BloomFilterPrefixUseful) - useful;
        // Each file asked whose prefix extractor takes the key.
        let asked: Vec<_> = path
            .steps
            .iter()
            .filter(|s| {
                ssts[s.file]
                    .prefix_extractor()
                    .and_then(|e| e.transform(p))
                    .is_some()
            })
            .collect();
        let ours_useful = asked.iter().filter(|s| !s.may_match).count() as u64;
        assert_eq!(
            (checked, useful),
            (asked.len() as u64, ours_useful),
            "key {:?}: RocksDB's prefix checks (checked, useful) differ from the path {path:?}",
            String::from_utf8_lossy(p)
        );
        all_checked += checked;
        all_useful += useful;
    }
    assert!(
        all_useful > 0 && all_checked > all_useful,
        "{all_checked} {all_useful}"
    );
}
