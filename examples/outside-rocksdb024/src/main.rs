//! A rust-rocksdb 0.24 project (RocksDB 10.4.2) using rocks-bridge through
//! its `rocksdb-0-24` feature, as `docs/rocks-bridge.md` ("rust-rocksdb
//! 0.24") shows: a database whose column families' filters are built by the
//! Rust policies (`rust.RibbonFilter:10`, `rust.BalancedRibbon:10`) beside
//! RocksDB's own `ribbonfilter:10`, set up with
//! `rocks_bridge::options_from_strings`; every key written is read back,
//! `rocks_bridge::counters()` shows that RocksDB called into Rust, the
//! database is reopened from its OPTIONS file with `Options::load_latest`,
//! and `ribbon-sst` reads each family's tables to check the filter written.
//! Exits non-zero if anything is off.

use ribbon_sst::SstFile;
use rocksdb::{BottommostLevelCompaction, Cache, CompactOptions, Env, LiveFile, Options, DB};
use std::error::Error;
use std::path::Path;
use std::process::ExitCode;

/// Column family, its filter policy, and the filter kinds its tables must
/// hold: after a flush (bloom_before_level 0 gives flushes Bloom filters, as
/// RocksDB's ribbonfilter does) and after a compaction. The first two are
/// built and read by Rust, the last by RocksDB.
const FAMILIES: [(&str, &str, &str, &str); 3] = [
    (
        "rust_ribbon",
        "rust.RibbonFilter:10",
        "FastLocalBloom",
        "Standard128Ribbon",
    ),
    (
        "rust_balanced",
        "rust.BalancedRibbon:10",
        "FastLocalBloom",
        "BalancedRibbon",
    ),
    (
        "native_ribbon",
        "ribbonfilter:10",
        "FastLocalBloom",
        "Standard128Ribbon",
    ),
];
const KEYS: u32 = 20_000;

fn key(i: u32) -> String {
    format!("key{i:08}")
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("outside-rocksdb024: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    println!(
        "rocks-bridge over RocksDB {} (rust-rocksdb 0.24)",
        rocks_bridge::ROCKSDB_VERSION
    );
    if !rocks_bridge::ROCKSDB_VERSION.starts_with("10.") {
        return Err(format!("expected RocksDB 10.x, linked {}", rocks_bridge::ROCKSDB_VERSION).into());
    }
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("db");
    let cache = Cache::new_lru_cache(32 << 20);

    // 1. Options from options strings (rust-rocksdb 0.24 has no
    //    set_filter_policy), one family per policy.
    let tables: Vec<(&str, String)> = FAMILIES
        .iter()
        .map(|(name, policy, ..)| {
            (
                *name,
                format!("block_based_table_factory={{filter_policy={policy}}}"),
            )
        })
        .collect();
    let families: Vec<(&str, &str)> = tables.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let (opts, descriptors) = rocks_bridge::options_from_strings(
        "create_if_missing=true;create_missing_column_families=true",
        &families,
        &cache,
    )?;
    let before = rocks_bridge::counters();
    {
        let db = DB::open_cf_descriptors(&opts, &path, descriptors)?;
        for (name, ..) in FAMILIES {
            let cf = db.cf_handle(name).ok_or(format!("no column family {name}"))?;
            for i in 0..KEYS {
                db.put_cf(cf, key(i), i.to_le_bytes())?;
            }
            db.flush_cf(cf)?;
        }
        check_reads(&db, "flushed")?;
        check_tables(&path, &db.live_files()?, "flushed", |f| f.2)?;
        // A compaction that rewrites the bottommost level: tables at a level
        // at or above bloom_before_level get Ribbon filters.
        let mut compact = CompactOptions::default();
        compact.set_bottommost_level_compaction(BottommostLevelCompaction::Force);
        for (name, ..) in FAMILIES {
            let cf = db.cf_handle(name).ok_or(format!("no column family {name}"))?;
            db.compact_range_cf_opt(cf, None::<&[u8]>, None::<&[u8]>, &compact);
        }
        check_reads(&db, "compacted")?;
        check_tables(&path, &db.live_files()?, "compacted", |f| f.3)?;
    }
    let after = rocks_bridge::counters();
    let built = after.filters_built - before.filters_built;
    let readers = after.readers_created - before.readers_created;
    println!("written: {built} filters built and {readers} filter readers created by Rust");
    // Two Rust families, each with a flushed and a compacted table.
    if built < 4 || readers < 4 {
        return Err("RocksDB did not build and read the Rust families' filters through Rust".into());
    }

    // 2. A reopen from the database's own OPTIONS file, the Rust policies
    //    registered first so that RocksDB finds them by their ids.
    rocks_bridge::register();
    let (opts, descriptors) = Options::load_latest(&path, Env::new()?, false, cache.clone())?;
    let names: Vec<String> = descriptors.iter().map(|d| d.name().to_string()).collect();
    let before = rocks_bridge::counters();
    {
        let db = DB::open_cf_descriptors(&opts, &path, descriptors)?;
        check_reads(&db, "reopened")?;
    }
    let readers = rocks_bridge::counters().readers_created - before.readers_created;
    println!(
        "reopened with Options::load_latest, families {names:?}: {readers} filter readers created by Rust"
    );
    if readers < 2 {
        return Err("the reopened database did not read the Rust families' filters through Rust".into());
    }
    println!("outside-rocksdb024: ok");
    Ok(())
}

/// Every key written is found in every family, and keys never written are not.
fn check_reads(db: &DB, when: &str) -> Result<(), Box<dyn Error>> {
    for (name, ..) in FAMILIES {
        let cf = db.cf_handle(name).ok_or(format!("no column family {name}"))?;
        let mut missing = 0;
        for i in 0..KEYS {
            if db.get_cf(cf, key(i))?.as_deref() != Some(&i.to_le_bytes()[..]) {
                missing += 1;
            }
        }
        let mut found_absent = 0;
        for i in KEYS..2 * KEYS {
            if db.get_cf(cf, key(i))?.is_some() {
                found_absent += 1;
            }
        }
        if missing != 0 || found_absent != 0 {
            return Err(
                format!("{when}: {name}: {missing} keys missing, {found_absent} absent keys found").into(),
            );
        }
    }
    Ok(())
}

/// Each family's one table, read by ribbon-sst: the filter kind `expected`
/// picks, no key lost, and false positives near 1 % at 10 bits/key.
fn check_tables(
    path: &Path,
    files: &[LiveFile],
    when: &str,
    expected: impl Fn(&(&str, &str, &'static str, &'static str)) -> &'static str,
) -> Result<(), Box<dyn Error>> {
    for family in &FAMILIES {
        let (name, policy, ..) = *family;
        let kind = expected(family);
        let tables: Vec<&LiveFile> = files.iter().filter(|f| f.column_family_name == name).collect();
        let [file] = tables[..] else {
            return Err(format!("{when}: {name} has {} tables, expected one", tables.len()).into());
        };
        let name_in_dir = file.name.trim_start_matches('/');
        let sst = SstFile::open(path.join(name_in_dir))?;
        let summary = sst.filter().summary();
        let written = summary.kind_label();
        let lost = (0..KEYS)
            .filter(|&i| !sst.key_may_match(key(i).as_bytes()))
            .count();
        let fp = (KEYS..2 * KEYS)
            .filter(|&i| sst.key_may_match(key(i).as_bytes()))
            .count();
        let fp_rate = fp as f64 / KEYS as f64;
        println!(
            "{when}: {name} ({policy}): {name_in_dir} at level {}, a {written} filter of {} bytes: {lost} keys lost, FP rate {:.2} %",
            file.level,
            summary.bytes,
            100.0 * fp_rate
        );
        if written != kind || lost != 0 || !(0.002..0.03).contains(&fp_rate) {
            return Err(format!(
                "{when}: {name}: expected a {kind} filter holding every key with about 1 % FP"
            )
            .into());
        }
    }
    Ok(())
}
