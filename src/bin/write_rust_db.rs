//! Writes a RocksDB database whose filters the Rust policy built, for the
//! cross-version check of `compat/versions/` (other RocksDB builds open it
//! and must find every key with the filters used):
//!
//! ```text
//! cargo run --release -p ribbon-compat --bin write_rust_db -- DIR FORMAT_VERSION
//! ```
//!
//! DIR gets the database; DIR.keys its keys (lines `k HEX`). Half the keys
//! are compacted to the last level, the other half flushed to level 0, both
//! with `rust.RibbonFilter:10:-1`.

use rocksdb::{BlockBasedOptions, Options, DB};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(fv)) = (args.get(1), args.get(2).and_then(|v| v.parse::<i32>().ok())) else {
        eprintln!("usage: write_rust_db DIR FORMAT_VERSION");
        std::process::exit(2);
    };
    if let Err(e) = write(dir, fv) {
        eprintln!("write_rust_db: {e}");
        std::process::exit(1);
    }
}

fn write(dir: &str, format_version: i32) -> Result<(), Box<dyn std::error::Error>> {
    let mut table = BlockBasedOptions::default();
    table.set_format_version(format_version);
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_block_based_table_factory(&table);
    rocks_bridge::set_filter_policy(&mut opts, "rust.RibbonFilter:10:-1")?;
    let db = DB::open(&opts, dir)?;
    let keys: Vec<Vec<u8>> = (0..20_000u64)
        .map(|i| format!("key{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).into_bytes())
        .collect();
    let (first, second) = keys.split_at(keys.len() / 2);
    for k in first {
        db.put(k, b"v")?;
    }
    db.flush()?;
    let mut co = rocksdb::CompactOptions::default();
    co.set_bottommost_level_compaction(rocksdb::BottommostLevelCompaction::Force);
    db.compact_range_opt::<&[u8], &[u8]>(None, None, &co);
    for k in second {
        db.put(k, b"v")?;
    }
    db.flush()?;
    let built = rocks_bridge::counters().filters_built;
    if built < 2 {
        return Err(format!("the Rust policy built {built} filters").into());
    }
    let lines: String = keys.iter().map(|k| format!("k {}\n", hex(k))).collect();
    std::fs::write(format!("{}.keys", dir.trim_end_matches('/')), lines)?;
    for f in db.live_files()? {
        println!("{} level {} ({} keys)", f.name, f.level, f.num_entries);
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
