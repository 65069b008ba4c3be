//! Database directories written by another RocksDB (rocksdict's 9.x build;
//! `tests/db_real.rs` covers the harness's 11.8.1 at test time), with the
//! everyday options of issue #30: a separate `wal_dir` with unflushed
//! writes and deletes, range deletions flushed and WAL-only, blob files
//! with garbage, wide-column entities and a second column family with a
//! WAL-only batch of deletes, and an L0-only database of four files.
//!
//! For each, the live keys equal that RocksDB's own iterator, and for each
//! probe the files the `Get` path asks equal the filter checks its
//! statistics counted (`rocksdb.bloom.filter.useful` for each "no",
//! `full.positive` for each "may match"), and whether the key is found
//! equals its `Get`. `tests/fixtures-db/generate.py` wrote the fixtures
//! and the `expected` files (what that RocksDB said); its docs say how to
//! regenerate them.

use ribbon_sst::db::get::FileCache;
use ribbon_sst::db::{Db, OpenOptions};
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

fn check(name: &str) {
    let dir = fixtures().join(name);
    let (version, cfs) = expected(&dir);
    assert!(version.starts_with("9."), "{name}: written by RocksDB {version}");
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
