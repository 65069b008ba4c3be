//! End to end: two RocksDB databases written through the Rust policy
//! (`rust.RibbonFilter`) that differ by known puts and deletes — some
//! flushed to L0 over a compacted last level, some left unflushed in the
//! WAL — are read by the pure-Rust DB reader (`ribbon_sst::db`), sketched
//! and diffed by the `ribbon` tool, which prints exactly that difference.
//! `ribbon db query` is checked against the layout the test built.

use rocksdb::{BlockBasedOptions, Options, DB};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn options() -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_block_based_table_factory(&BlockBasedOptions::default());
    rocks_bridge::set_filter_policy(&mut opts, "rust.RibbonFilter:10").unwrap();
    opts
}

fn key(i: u64) -> Vec<u8> {
    format!("key{:08}", i.wrapping_mul(0x9E37_79B9) % 100_000_000).into_bytes()
}

/// What one side did after the common part.
struct Side {
    flushed_puts: Vec<u64>,
    flushed_deletes: Vec<u64>,
    wal_puts: Vec<u64>,
    wal_deletes: Vec<u64>,
}

const COMMON: u64 = 20_000;

/// Writes a database; returns its live keys (the model), checked against
/// RocksDB's own iterator before the database is closed without a flush.
fn write(dir: &Path, side: &Side) -> BTreeSet<Vec<u8>> {
    let db = DB::open(&options(), dir).unwrap();
    let mut live = BTreeSet::new();
    for i in 0..COMMON {
        db.put(key(i), b"v").unwrap();
        live.insert(key(i));
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    for &i in &side.flushed_puts {
        db.put(key(i), b"v").unwrap();
        live.insert(key(i));
    }
    for &i in &side.flushed_deletes {
        db.delete(key(i)).unwrap();
        live.remove(&key(i));
    }
    db.flush().unwrap();
    for &i in &side.wal_puts {
        db.put(key(i), b"v").unwrap();
        live.insert(key(i));
    }
    for &i in &side.wal_deletes {
        db.delete(key(i)).unwrap();
        live.remove(&key(i));
    }
    let seen: BTreeSet<Vec<u8>> = db
        .iterator(rocksdb::IteratorMode::Start)
        .map(|r| r.unwrap().0.to_vec())
        .collect();
    assert_eq!(seen, live, "the model disagrees with RocksDB");
    assert!(
        rocks_bridge::counters().filters_built > 0,
        "the Rust policy built no filter"
    );
    live
}

#[path = "util/cli.rs"]
mod cli;

fn run(args: &[&str]) -> String {
    String::from_utf8(cli::run(args)).unwrap()
}

#[test]
fn two_databases_differ_by_exactly_the_keys_the_cli_prints() {
    let tmp = tempfile::tempdir().unwrap();
    let (a_dir, b_dir) = (tmp.path().join("a"), tmp.path().join("b"));
    let a = write(
        &a_dir,
        &Side {
            flushed_puts: (COMMON..COMMON + 40).collect(),
            flushed_deletes: (0..30).collect(),
            // Put then deleted in the WAL (gone), a re-put of a flushed delete.
            wal_puts: (COMMON + 100..COMMON + 120).chain([COMMON + 200, 5]).collect(),
            wal_deletes: (100..110).chain([COMMON + 200, COMMON + 1]).collect(),
        },
    );
    let b = write(
        &b_dir,
        &Side {
            flushed_puts: (COMMON + 300..COMMON + 325).collect(),
            flushed_deletes: (100..105).chain(1000..1003).collect(),
            wal_puts: vec![COMMON + 5, 7],
            wal_deletes: vec![2000],
        },
    );
    let only_a: BTreeSet<_> = a.difference(&b).cloned().collect();
    let only_b: BTreeSet<_> = b.difference(&a).cloned().collect();
    assert!(
        only_a.len() > 50 && only_b.len() > 30,
        "{} {}",
        only_a.len(),
        only_b.len()
    );

    // The pure-Rust reader sees RocksDB's live keys, unflushed WAL included.
    for (dir, live) in [(&a_dir, &a), (&b_dir, &b)] {
        let db = ribbon_sst::db::Db::open(dir).unwrap();
        assert!(db.memtable().writes > 0 && db.levels().len() > 1 && !db.levels()[0].is_empty());
        let mut got = Vec::new();
        db.for_each_live_key(|k| got.push(k.to_vec())).unwrap();
        assert_eq!(got, live.iter().cloned().collect::<Vec<_>>());
    }

    // The CLI: sketch each side, diff.
    let (sa, sb) = (tmp.path().join("a.sketch"), tmp.path().join("b.sketch"));
    run(&[
        "reconcile",
        "sketch",
        a_dir.to_str().unwrap(),
        "--out",
        sa.to_str().unwrap(),
    ]);
    run(&[
        "reconcile",
        "sketch",
        b_dir.to_str().unwrap(),
        "--out",
        sb.to_str().unwrap(),
    ]);
    let out = run(&["reconcile", "diff", sa.to_str().unwrap(), sb.to_str().unwrap()]);
    let mut expected = String::new();
    for k in &only_a {
        expected += &format!("< {}\n", String::from_utf8_lossy(k));
    }
    for k in &only_b {
        expected += &format!("> {}\n", String::from_utf8_lossy(k));
    }
    assert_eq!(out, expected);
    let est = run(&[
        "reconcile",
        "estimate",
        sa.to_str().unwrap(),
        sb.to_str().unwrap(),
    ]);
    assert_eq!(
        est.lines().next().unwrap(),
        format!("estimated difference: {} keys", only_a.len() + only_b.len())
    );

    // `ribbon db query`: a key deleted in A's flushed L0 file ends its Get
    // there (RocksDB's Get stops at the deletion: the bottom level's file is
    // not asked); a WAL-only key is in the memtable; every live key's
    // filters may hold it somewhere.
    let keys = tmp.path().join("keys");
    let probe = [key(0), key(COMMON + 100), key(5000)];
    std::fs::write(
        &keys,
        probe
            .iter()
            .map(|k| format!("{}\n", String::from_utf8_lossy(k)))
            .collect::<String>(),
    )
    .unwrap();
    let out = run(&[
        "db",
        "query",
        a_dir.to_str().unwrap(),
        "--keys",
        keys.to_str().unwrap(),
    ]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    let fields = |l: &str| l.split('\t').map(str::to_string).collect::<Vec<_>>();
    let deleted = fields(lines[0]);
    assert_eq!(deleted[1], "memtable:none");
    assert!(
        deleted[2].starts_with("L0:") && !deleted[2].contains(' '),
        "{out}"
    );
    assert_eq!(fields(lines[1])[1], "memtable:value");
    assert!(fields(lines[2])[2].contains("L6:"), "{out}");
}

/// Writes a database of `RECONCILE_BENCH_KEYS` (default 5,000,000) keys,
/// compacted, at `RECONCILE_BENCH_DB`, for the sketching throughput of
/// `cargo run --release -p ribbon-reconcile --example reconcile_report -- DIR`
/// (a documented command, not part of the suite).
#[test]
#[ignore]
fn write_bench_db() {
    let dir = PathBuf::from(std::env::var("RECONCILE_BENCH_DB").expect("set RECONCILE_BENCH_DB"));
    let n: u64 = std::env::var("RECONCILE_BENCH_KEYS").map_or(5_000_000, |v| v.parse().unwrap());
    let mut opts = options();
    opts.set_target_file_size_base(1 << 34);
    opts.set_write_buffer_size(256 << 20);
    let db = DB::open(&opts, &dir).unwrap();
    for i in 0..n {
        db.put(
            format!("{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            b"value",
        )
        .unwrap();
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
}
