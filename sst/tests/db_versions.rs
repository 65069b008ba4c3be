//! Database directories written by other RocksDB builds than the harness's
//! 11.8.1 (which `tests/db_real.rs` covers at test time), with the everyday
//! options of issue #30:
//!
//! * rocksdict's 9.x (`tests/fixtures-db/generate.py`): a separate
//!   `wal_dir` with unflushed writes and deletes, range deletions flushed
//!   and WAL-only, blob files with garbage, wide-column entities and a
//!   second column family with a WAL-only batch of deletes, and an L0-only
//!   database of four files;
//! * Debian 12's 7.8 (`tests/fixtures-db/rocksdb78/generate.cc`, a C++
//!   generator linked with `-lrocksdb`): a separate `wal_dir`, range
//!   deletions flushed and WAL-only, three column families with merge
//!   operands (over values, alone, over deletions; flushed and in the
//!   WAL), and a TTL database (`DBWithTTL`) compacted, with WAL-only writes.
//!
//! For each, the live keys equal that RocksDB's own iterator, and for each
//! probe the files the `Get` path asks equal the filter checks its
//! statistics counted (`rocksdb.bloom.filter.useful` for each "no",
//! `full.positive` for each "may match"), and whether the key is found
//! equals its `Get`. The generators wrote the fixtures and the `expected`
//! files (what that RocksDB said); their docs say how to regenerate them.

use ribbon_sst::db::get::FileCache;
use ribbon_sst::db::{Db, Detail, FileAnswer, GetPath, OpenOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures-db")
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// One column family's facts in an `expected` file.
#[derive(Default)]
struct Expected {
    live: Vec<Vec<u8>>,
    /// Probe key, filter checks answered "no", answered "may match", found.
    probes: Vec<(Vec<u8>, u64, u64, bool)>,
}

fn expected(dir: &Path) -> (String, BTreeMap<String, Expected>) {
    let text = std::fs::read_to_string(dir.join("expected")).unwrap();
    let mut version = String::new();
    let mut cfs: BTreeMap<String, Expected> = BTreeMap::new();
    let mut cf = String::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        match f[0] {
            "rocksdb" => version = f[1].to_string(),
            "cf" => {
                cf = f[1].to_string();
                cfs.entry(cf.clone()).or_default();
            }
            "live" => cfs.get_mut(&cf).unwrap().live.push(unhex(f[1])),
            "probe" => cfs.get_mut(&cf).unwrap().probes.push((
                unhex(f[1]),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
                f[4] == "1",
            )),
            other => panic!("{}: unknown line {other:?}", dir.display()),
        }
    }
    (version, cfs)
}

/// Checks fixture `name` (a directory under `tests/fixtures-db`) of rocksdict's RocksDB 9.x.
fn check(name: &str) {
    check_written_by(name, "9.");
}

/// Checks fixture `name`, whose `expected` file must say it was written by
/// a RocksDB whose version starts with `version_prefix`.
fn check_written_by(name: &str, version_prefix: &str) {
    let dir = fixtures().join(name);
    let (version, cfs) = expected(&dir);
    assert!(
        version.starts_with(version_prefix),
        "{name}: written by RocksDB {version}, not {version_prefix}x"
    );
    let wal = dir.join("wal");
    let how = OpenOptions {
        // The OPTIONS file names the generator's temporary wal_dir.
        wal_dir: wal.is_dir().then_some(wal),
        db_paths: Vec::new(),
    };
    assert!(!cfs.is_empty());
    let mut checks = 0;
    for (cf, want) in &cfs {
        let db = Db::open_with(dir.join("db"), cf, &how).unwrap_or_else(|e| panic!("{name} {cf}: {e}"));
        let mut live = Vec::new();
        db.for_each_live_key(|k| live.push(k.to_vec())).unwrap();
        assert_eq!(live.len(), want.live.len(), "{name} {cf}: live keys");
        assert!(
            live == want.live,
            "{name} {cf}: live keys differ from RocksDB {version}'s iterator"
        );
        let keys: Vec<&[u8]> = want.probes.iter().map(|p| p.0.as_slice()).collect();
        let paths = db.get_paths(&keys, &mut FileCache::new()).unwrap();
        // Detail::Filters (the text of `db query`) asks the same files with
        // the same answers, and leaves unread only a last file.
        let filters = db
            .get_paths_with(&keys, &mut FileCache::new(), Detail::Filters)
            .unwrap();
        for (full, quick) in paths.iter().zip(&filters) {
            let asked = |p: &GetPath| p.steps.iter().map(|s| (s.file, s.may_match)).collect::<Vec<_>>();
            assert_eq!(asked(full), asked(quick), "{name} {cf}: Detail::Filters differs");
            assert_eq!(full.memtable, quick.memtable);
            match quick.outcome() {
                Some(found) => assert_eq!(found, full.found(), "{name} {cf}: {quick:?}"),
                None => assert_eq!(quick.steps.last().unwrap().answer, FileAnswer::NotRead),
            }
        }
        for ((key, useful, positive, found), path) in want.probes.iter().zip(&paths) {
            let asked = path.steps.iter().filter(|s| s.has_filter);
            let ours_useful = asked.clone().filter(|s| !s.may_match).count() as u64;
            let ours_positive = asked.count() as u64 - ours_useful;
            let shown = String::from_utf8_lossy(key);
            assert_eq!(
                (*useful, *positive),
                (ours_useful, ours_positive),
                "{name} {cf}: key {shown}: RocksDB {version}'s filter checks (useful, positive) differ from {path:?}"
            );
            assert_eq!(
                *found,
                path.found(),
                "{name} {cf}: key {shown}: found; path {path:?}"
            );
            checks += useful + positive;
        }
    }
    assert!(checks > 0, "{name}: no filter was asked at all");
}

#[test]
fn wal_dir_with_unflushed_writes_and_deletes() {
    check("wal_dir");
}

#[test]
fn range_deletions_flushed_and_in_the_wal() {
    check("range_deletes");
}

#[test]
fn blob_files_with_garbage() {
    check("blob_files");
}

#[test]
fn wide_columns_and_a_second_column_family() {
    check("wide_columns_cfs");
}

#[test]
fn four_l0_files_and_deletes_in_the_wal() {
    check("l0_only");
}

#[test]
fn rocksdb_7_8_wal_dir_with_unflushed_writes_and_deletes() {
    check_written_by("rocksdb78/wal_dir", "7.8.");
}

#[test]
fn rocksdb_7_8_range_deletions_flushed_and_in_the_wal() {
    check_written_by("rocksdb78/range_deletes", "7.8.");
}

#[test]
fn rocksdb_7_8_merge_operands_in_three_column_families() {
    check_written_by("rocksdb78/merge_cfs", "7.8.");
}

#[test]
fn rocksdb_7_8_ttl_compacted_with_writes_in_the_wal() {
    check_written_by("rocksdb78/ttl", "7.8.");
}

/// RocksDB 6.29.5 (aimrocks), a built-in Bloom configured in code
/// (`tests/fixtures-db/rocksdb629/generate.py`): its live keys and its
/// `Get`s, with the filters 6.29 wrote asked on the way (aimrocks has no
/// statistics, so the probes record what was found only).
#[test]
fn rocksdb_6_29_bloom_configured_in_code() {
    let dir = fixtures().join("rocksdb629/bloom_in_code");
    let text = std::fs::read_to_string(dir.join("expected")).unwrap();
    let (mut version, mut live, mut probes) = (String::new(), Vec::new(), Vec::new());
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        match f[0] {
            "rocksdb" => version = f[1].to_string(),
            "live" => live.push(unhex(f[1])),
            "probe" => probes.push((unhex(f[1]), f[2] == "1")),
            other => panic!("unknown line {other:?}"),
        }
    }
    assert_eq!(version, "6.29.5");
    let db = Db::open_with(dir.join("db"), "default", &OpenOptions::default()).unwrap();
    let mut ours = Vec::new();
    db.for_each_live_key(|k| ours.push(k.to_vec())).unwrap();
    assert!(ours == live, "live keys differ from RocksDB 6.29.5's iterator");
    let keys: Vec<&[u8]> = probes.iter().map(|p| p.0.as_slice()).collect();
    let paths = db.get_paths(&keys, &mut FileCache::new()).unwrap();
    let mut said_no = 0;
    for ((key, found), path) in probes.iter().zip(&paths) {
        assert_eq!(*found, path.found(), "{}: {path:?}", String::from_utf8_lossy(key));
        said_no += path.steps.iter().filter(|s| s.has_filter && !s.may_match).count();
    }
    assert!(said_no > 0, "the 6.29 filters were not asked");
}
