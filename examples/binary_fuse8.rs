//! xorf's BinaryFuse8 as RocksDB's filter, selected by id in an options
//! string: `cargo run --release --example binary_fuse8`.

use rocksdb::statistics::Ticker;
use rocksdb::{Options, DB};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    ribbon_compat::binary_fuse::register();
    let mut opts = Options::default().get_options_from_string(
        "create_if_missing=true;block_based_table_factory={filter_policy=example.BinaryFuse8}",
    )?;
    opts.enable_statistics();
    let dir = tempfile::tempdir()?;
    let db = DB::open(&opts, dir.path())?;
    const N: u32 = 100_000;
    for i in 0..N {
        db.put(format!("key{i:08}"), i.to_le_bytes())?;
    }
    db.flush()?;
    db.compact_range::<&[u8], &[u8]>(None, None);
    let found = (0..N)
        .filter(|i| db.get(format!("key{i:08}")).unwrap().is_some())
        .count();
    let absent = (0..N)
        .filter(|i| db.get(format!("key{i:08}!")).unwrap().is_some())
        .count();
    let useful = opts.get_ticker_count(Ticker::BloomFilterUseful);
    println!("present keys found: {found} of {N}; absent keys found: {absent} of {N}");
    println!(
        "rocksdb.bloom.filter.useful: {useful} ({:.2} % of the absent-key reads)",
        100.0 * useful as f64 / f64::from(N)
    );
    println!(
        "rocksdb.bloom.filter.full.positive: {}, full.true.positive: {}",
        opts.get_ticker_count(Ticker::BloomFilterFullPositive),
        opts.get_ticker_count(Ticker::BloomFilterFullTruePositive)
    );
    Ok(())
}
