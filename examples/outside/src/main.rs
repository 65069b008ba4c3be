//! A user's project: a database written and read with the Rust filter
//! policy, set up the two ways the README shows (the Options API and an
//! options string), with `rocks_bridge::counters()` proving that RocksDB
//! called into Rust. Exits non-zero if anything is off.

use rocksdb::{BlockBasedOptions, Options, ReadOptions, DB};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let before = rocks_bridge::counters();

    // 1. The Options API: table options first, then the Rust policy.
    let mut table = BlockBasedOptions::default();
    table.set_format_version(7);
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_block_based_table_factory(&table);
    let id = rocks_bridge::set_filter_policy(&mut opts, "rust.RibbonFilter:10:-1")?;
    if id.as_deref() != Some("rust.RibbonFilter:10:-1") {
        return Err(format!("RocksDB created the policy {id:?}").into());
    }
    let path = dir.path().join("db");
    {
        let db = DB::open(&opts, &path)?;
        for i in 0..20_000u32 {
            db.put(format!("key{i:06}"), i.to_le_bytes())?;
        }
        db.flush()?;
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
    }
    let built = rocks_bridge::counters().filters_built - before.filters_built;
    if built == 0 {
        return Err("RocksDB built no filter through the Rust policy".into());
    }

    // 2. An options string, as an OPTIONS file would name it.
    rocks_bridge::register();
    let mut opts = Options::default().get_options_from_string(
        "create_if_missing=true;block_based_table_factory={filter_policy=rust.RibbonFilter:10:-1}",
    )?;
    opts.create_if_missing(true);
    let readers_before = rocks_bridge::counters().readers_created;
    let db = DB::open(&opts, &path)?;
    let mut missing = 0;
    for i in 0..20_000u32 {
        if db.get(format!("key{i:06}"))?.is_none() {
            missing += 1;
        }
    }
    let mut absent_found = 0;
    let read = ReadOptions::default();
    for i in 20_000..40_000u32 {
        if db.get_opt(format!("key{i:06}"), &read)?.is_some() {
            absent_found += 1;
        }
    }
    let readers = rocks_bridge::counters().readers_created - readers_before;
    println!(
        "outside example: {built} filters built and {readers} filter readers created by Rust; \
         {missing} of 20000 keys missing, {absent_found} absent keys found"
    );
    if missing != 0 || absent_found != 0 || readers == 0 {
        return Err("wrong answers, or RocksDB did not read through the Rust policy".into());
    }
    Ok(())
}
