//! The main job: a real RocksDB database built with the pure-Rust filter
//! policy and reopened with RocksDB's native one, and the other way round.
//! For each, it prints what was written (filter policy, filter bytes, bits
//! per key) and what each reader measures (keys found, FP rate on keys that
//! are not in the database). Then it shows the same filters built directly
//! by the `ribbon` crate and by RocksDB's C++, byte for byte.

use ribbon::rocksdb::builder::build_filter;
use ribbon::rocksdb::format::FilterReader;
use ribbon::rocksdb::policy::{BuildContext, FilterPolicy};
use ribbon_compat::harness::{NativeBuilder, NativeReader};
use rocksdb::statistics::Ticker;
use rocksdb::{BlockBasedOptions, ColumnFamilyDescriptor, Options, DB};
use std::path::Path;

const KEYS: u64 = 200_000;
const PROBES: u64 = 100_000;

fn key(i: u64) -> Vec<u8> {
    format!("user{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).into_bytes()
}

/// Not a member, but inside the key range, so RocksDB consults the filter.
fn absent(i: u64) -> Vec<u8> {
    format!("user{:016x}~", i.wrapping_mul(0xD1B5_4A32_D192_ED03)).into_bytes()
}

fn options(policy: &str) -> Result<Options, Box<dyn std::error::Error>> {
    let mut table = BlockBasedOptions::default();
    table.set_format_version(7);
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.enable_statistics();
    opts.set_block_based_table_factory(&table);
    rocks_bridge::set_filter_policy(&mut opts, policy)?;
    Ok(opts)
}

fn open(opts: &Options, dir: &Path) -> Result<DB, rocksdb::Error> {
    let cf = ColumnFamilyDescriptor::new(rocksdb::DEFAULT_COLUMN_FAMILY_NAME, opts.clone());
    DB::open_cf_descriptors(opts, dir, vec![cf])
}

fn write(dir: &Path, policy: &str) -> Result<(), Box<dyn std::error::Error>> {
    let built = rocks_bridge::counters().filters_built;
    {
        let db = open(&options(policy)?, dir)?;
        for i in 0..KEYS {
            db.put(key(i), i.to_le_bytes())?;
        }
        db.flush()?;
        db.compact_range::<&[u8], &[u8]>(None, None);
    }
    // What was written, read back from the SST files by the pure-Rust reader.
    for file in std::fs::read_dir(dir)?.filter_map(Result::ok).map(|e| e.path()) {
        if file.extension().is_none_or(|e| e != "sst") {
            continue;
        }
        let sst = ribbon_sst::SstFile::open(&file)?;
        let summary = sst.filter().summary();
        let entries = sst.properties().num_entries().unwrap_or(0);
        println!(
            "   {}: {} filter written by {}, {entries} keys, {} filter bytes = {:.2} bits/key",
            file.file_name().unwrap_or_default().to_string_lossy(),
            summary.kind_label(),
            sst.properties().filter_policy().unwrap_or_default(),
            summary.bytes,
            summary.bytes as f64 * 8.0 / entries.max(1) as f64
        );
    }
    if policy.starts_with("rust.") {
        println!(
            "   filters built in Rust: {}",
            rocks_bridge::counters().filters_built - built
        );
    }
    Ok(())
}

fn read(dir: &Path, policy: &str) -> Result<(), Box<dyn std::error::Error>> {
    let opts = options(policy)?;
    let db = open(&opts, dir)?;
    let found = (0..KEYS)
        .filter(|&i| matches!(db.get(key(i)), Ok(Some(_))))
        .count();
    let useful_before = opts.get_ticker_count(Ticker::BloomFilterUseful);
    for i in 0..PROBES {
        db.get(absent(i))?;
    }
    let useful = opts.get_ticker_count(Ticker::BloomFilterUseful) - useful_before;
    println!(
        "   read with {policy:<26} keys found {found}/{KEYS}, FP rate {:.3}% ({} of {PROBES} absent keys passed the filter)",
        100.0 * (PROBES - useful) as f64 / PROBES as f64,
        PROBES - useful
    );
    if found as u64 != KEYS {
        return Err(format!("{policy} lost keys").into());
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for (writer, other) in [
        ("rust.RibbonFilter:10:-1", "ribbonfilter:10:-1"),
        ("ribbonfilter:10:-1", "rust.RibbonFilter:10:-1"),
        ("rust.BloomFilter:10", "bloomfilter:10"),
    ] {
        let dir = std::env::temp_dir().join(format!("ribbon-demo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        println!("== A RocksDB database written with {writer}");
        write(&dir, writer)?;
        read(&dir, writer)?;
        read(&dir, other)?;
        let _ = std::fs::remove_dir_all(&dir);
    }

    println!("\n== The same keys through the pure-Rust crate and RocksDB's C++");
    println!(
        "{:<22} {:>3} {:<18} {:>9} {:>8} {:>9} {:>10}",
        "policy", "fv", "filter", "bytes", "bits/key", "FP rate", "identical"
    );
    let keys: Vec<Vec<u8>> = (0..KEYS).map(key).collect();
    let probes: Vec<Vec<u8>> = (0..PROBES).map(absent).collect();
    for (policy, fv) in [
        ("ribbonfilter:10", 7),
        ("bloomfilter:10", 7),
        ("bloomfilter:10", 4),
        ("ribbonfilter:6.5", 7),
    ] {
        let parsed: FilterPolicy = policy.parse()?;
        let rust = build_filter(&parsed, &BuildContext::sst_file_writer(fv), &keys).unwrap_or_default();
        let native = NativeBuilder::build(policy, fv, &keys);
        let reader = FilterReader::new(&rust);
        let native_reader = NativeReader::new(&native);
        let fps = probes.iter().filter(|p| reader.may_match(p)).count();
        let same_answers = probes
            .iter()
            .all(|p| reader.may_match(p) == native_reader.may_match(p));
        println!(
            "{:<22} {:>3} {:<18} {:>9} {:>8.2} {:>8.3}% {:>10}",
            policy,
            fv,
            reader.describe().kind_name(),
            rust.len(),
            rust.len() as f64 * 8.0 / KEYS as f64,
            100.0 * fps as f64 / PROBES as f64,
            if rust == native && same_answers {
                "yes"
            } else {
                "NO"
            }
        );
        if rust != native || !same_answers {
            return Err(format!("{policy}: the Rust filter differs from RocksDB's").into());
        }
    }
    Ok(())
}
