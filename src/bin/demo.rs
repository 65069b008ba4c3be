//! The main job: build a small RocksDB database with Ribbon filters, then
//! show that the pure-Rust `ribbon` crate writes the same filter bytes as
//! RocksDB and reads them with the same answers.

use ribbon::builder::build_filter;
use ribbon::format::FilterReader;
use ribbon::policy::{BuildContext, FilterPolicy};
use ribbon_compat::harness::{NativeBuilder, NativeReader};
use rocksdb::statistics::Ticker;
use rocksdb::{BlockBasedOptions, Options, DB};

const KEYS: u64 = 100_000;
const PROBES: u64 = 100_000;

fn key(i: u64) -> Vec<u8> {
    format!("user{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).into_bytes()
}

/// Not a member, but inside the key range, so RocksDB consults the filter.
fn absent(i: u64) -> Vec<u8> {
    format!("user{:016x}~", i.wrapping_mul(0xD1B5_4A32_D192_ED03)).into_bytes()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("ribbon-demo-{}", std::process::id()));
    println!(
        "== A RocksDB database with ribbonfilter:10 ({KEYS} keys) in {}",
        dir.display()
    );
    {
        let mut table = BlockBasedOptions::default();
        table.set_ribbon_filter(10.0);
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.enable_statistics();
        opts.set_block_based_table_factory(&table);
        let db = DB::open(&opts, &dir)?;
        for i in 0..KEYS {
            db.put(key(i), i.to_le_bytes())?;
        }
        db.flush()?;
        db.compact_range::<&[u8], &[u8]>(None, None);
        let found = (0..KEYS)
            .filter(|&i| matches!(db.get(key(i)), Ok(Some(_))))
            .count();
        let before = opts.get_ticker_count(Ticker::BloomFilterUseful);
        for i in 0..PROBES {
            db.get(absent(i))?;
        }
        let useful = opts.get_ticker_count(Ticker::BloomFilterUseful) - before;
        println!("   present keys found: {found}/{KEYS}");
        println!(
            "   absent-key Gets answered by the filter alone: {useful}/{PROBES} ({:.3}% passed it)",
            100.0 * (PROBES - useful) as f64 / PROBES as f64
        );
    }
    let _ = std::fs::remove_dir_all(&dir);

    println!("\n== The same keys through the pure-Rust crate and RocksDB's C++");
    println!(
        "{:<24} {:>3} {:<18} {:>9} {:>8} {:>9} {:>10}",
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
            "{:<24} {:>3} {:<18} {:>9} {:>8.2} {:>8.3}% {:>10}",
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
