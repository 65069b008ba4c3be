//! Round trips through a real RocksDB: files written with RocksDB's native
//! policy are read with the Rust policy and the other way round, over the
//! paths a RocksDB user takes (put/flush/compaction, MultiGet, SstFileWriter
//! and ingestion, partitioned filters, prefix extractors, format versions,
//! the Ribbon/Bloom hybrid, bits/key from 1 to 20). Every run checks that
//! no key is lost and that RocksDB's filter statistics are identical
//! whichever side wrote and whichever side read.

#[path = "util/round_trip.rs"]
mod round_trip;

use rocksdb::{Options, DB};
use round_trip::{counters_lock, key, open_with_default_cf, options, round_trip, Prefix, Scenario};
use std::path::Path;

#[test]
fn put_flush_compact_get_multiget() {
    for bits in ["1", "6.5", "10", "20"] {
        round_trip(&Scenario::new(
            &format!("ribbonfilter:{bits}:-1"),
            &format!("rust.RibbonFilter:{bits}:-1"),
        ));
        round_trip(&Scenario::new(
            &format!("bloomfilter:{bits}"),
            &format!("rust.BloomFilter:{bits}"),
        ));
    }
}

#[test]
fn format_versions() {
    for fv in [2, 3, 4, 5, 6, 7] {
        let mut s = Scenario::new("bloomfilter:10", "rust.BloomFilter:10");
        s.format_version = fv;
        round_trip(&s);
        let mut s = Scenario::new("ribbonfilter:10", "rust.RibbonFilter:10");
        s.format_version = fv;
        round_trip(&s);
    }
}

#[test]
fn sst_file_writer_and_ingest() {
    for n in [1, 1000, 100_000] {
        let mut s = Scenario::new("ribbonfilter:10", "rust.RibbonFilter:10");
        s.ingest = true;
        s.num_keys = n;
        round_trip(&s);
    }
}

#[test]
fn partitioned_filters() {
    for (native, rust) in [
        ("ribbonfilter:10:-1", "rust.RibbonFilter:10:-1"),
        ("bloomfilter:10", "rust.BloomFilter:10"),
    ] {
        let mut s = Scenario::new(native, rust);
        s.partitioned = true;
        s.num_keys = 100_000;
        round_trip(&s);
    }
}

#[test]
fn prefix_extractor_with_and_without_whole_keys() {
    for whole in [true, false] {
        for (native, rust) in [
            ("ribbonfilter:10:-1", "rust.RibbonFilter:10:-1"),
            ("bloomfilter:10", "rust.BloomFilter:10"),
        ] {
            let mut s = Scenario::new(native, rust);
            s.prefix = Some(Prefix::Fixed(7));
            s.whole_key_filtering = whole;
            round_trip(&s);
        }
    }
}

#[test]
fn hybrid_across_levels() {
    for bbl in [0, 1, 3] {
        round_trip(&Scenario::new(
            &format!("ribbonfilter:10:{bbl}"),
            &format!("rust.RibbonFilter:10:{bbl}"),
        ));
    }
}

#[test]
fn a_million_keys_in_one_file() {
    let mut s = Scenario::new("ribbonfilter:10:-1", "rust.RibbonFilter:10:-1");
    s.num_keys = 1_000_000;
    round_trip(&s);
}

#[test]
fn options_string_and_options_file_keep_the_policy() {
    let _counters = counters_lock();
    rocks_bridge::register();
    let base = Options::default();
    let opts = base
        .clone()
        .get_options_from_string("block_based_table_factory={filter_policy=rust.RibbonFilter:6.5:2}")
        .unwrap();
    // Written to OPTIONS, read back by RocksDB's own loader.
    let dir = tempfile::tempdir().unwrap();
    {
        let mut opts = opts;
        opts.create_if_missing(true);
        let db = DB::open(&opts, dir.path()).unwrap();
        db.put(b"a", b"1").unwrap();
        db.flush().unwrap();
    }
    assert_eq!(
        round_trip::options_file_filter_policy(dir.path()).as_deref(),
        Some("rust.RibbonFilter:6.5:2")
    );
    // Reopen from the OPTIONS file alone: the Rust policy builds and reads.
    let (loaded, cfs) = Options::load_latest(
        dir.path(),
        rocksdb::Env::new().unwrap(),
        false,
        rocksdb::Cache::new_lru_cache(1 << 20),
    )
    .unwrap();
    {
        let before = rocks_bridge::counters();
        let db = DB::open_cf_descriptors(&loaded, dir.path(), cfs).unwrap();
        assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
        db.put(b"b", b"2").unwrap();
        db.flush().unwrap();
        assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
        let after = rocks_bridge::counters();
        assert!(
            after.readers_created > before.readers_created,
            "reopened DB did not read with Rust"
        );
        assert!(
            after.filters_built > before.filters_built,
            "reopened DB did not build with Rust"
        );
    }
    let text = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("OPTIONS-"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .next()
        .unwrap();
    // As RocksDB writes its own ribbonfilter: the id, and the mutable
    // bloom_before_level as an option of the policy.
    assert!(
        text.contains("filter_policy={id=rust.RibbonFilter:6.5:2;bloom_before_level=2;}"),
        "OPTIONS file: {text}"
    );
}

#[test]
fn concurrent_reads_during_compaction() {
    let s = Scenario::new("ribbonfilter:10:1", "rust.RibbonFilter:10:1");
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(&s, &s.rust);
    opts.set_write_buffer_size(1 << 20);
    let db = std::sync::Arc::new(open_with_default_cf(&opts, dir.path()));
    const BASE: u64 = 50_000;
    for i in 0..BASE {
        db.put(key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..8)
        .map(|t| {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut rounds = 0u64;
                let cf = db.cf_handle("default").unwrap();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) || rounds < 3 {
                    let start = (t * 7919 + rounds * 104_729) % BASE;
                    for i in start..start + 500 {
                        assert!(db.get(key(i % BASE)).unwrap().is_some(), "thread {t}: key lost");
                    }
                    let batch: Vec<Vec<u8>> = (start..start + 64).map(|i| key(i % BASE)).collect();
                    for r in db.batched_multi_get_cf(cf, &batch, false) {
                        assert!(r.unwrap().is_some(), "thread {t}: MultiGet lost a key");
                    }
                    rounds += 1;
                }
                rounds
            })
        })
        .collect();
    for round in 0..4u64 {
        for i in 0..20_000u64 {
            db.put(key(BASE + round * 20_000 + i), b"w").unwrap();
        }
        db.flush().unwrap();
        db.compact_range::<&[u8], &[u8]>(None, None);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        assert!(r.join().expect("reader thread panicked") >= 3);
    }
}

/// The filter kinds of the SST files in `dir` that are not in `seen`.
fn new_filter_kinds(dir: &Path, seen: &mut std::collections::HashSet<std::path::PathBuf>) -> Vec<String> {
    let mut kinds = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "sst") && seen.insert(path.clone()) {
            kinds.push(
                ribbon_sst::SstFile::open(&path)
                    .unwrap()
                    .filter()
                    .summary()
                    .kind_label(),
            );
        }
    }
    kinds
}

#[test]
fn set_options_switches_policy_and_bloom_before_level() {
    let _counters = counters_lock();
    let dir = tempfile::tempdir().unwrap();
    let s = Scenario::new("ribbonfilter:10", "rust.RibbonFilter:10");
    let mut opts = options(&s, "bloomfilter:10");
    // Only flushes: an automatic compaction would add files of its own.
    opts.set_disable_auto_compactions(true);
    let db = DB::open(&opts, dir.path()).unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut flush = |db: &DB, round: u64| {
        for i in 0..1000 {
            db.put(key(round * 1000 + i), b"v").unwrap();
        }
        db.flush().unwrap();
        new_filter_kinds(dir.path(), &mut seen)
    };
    assert_eq!(flush(&db, 0), ["FastLocalBloom"]);
    // SetOptions selects the Rust policy by its id...
    db.set_options(&[(
        "block_based_table_factory",
        "{filter_policy=rust.RibbonFilter:10:-1}",
    )])
    .unwrap();
    let built = rocks_bridge::counters().filters_built;
    assert_eq!(flush(&db, 1), ["Standard128Ribbon"]);
    assert!(
        rocks_bridge::counters().filters_built > built,
        "the flush did not build in Rust"
    );
    // ...and changes its bloom_before_level, as with RocksDB's ribbonfilter:
    // flushes are level -1, so 0 makes them Bloom.
    db.set_options(&[("table_factory.filter_policy.bloom_before_level", "0")])
        .unwrap();
    assert_eq!(flush(&db, 2), ["FastLocalBloom"]);
    db.set_options(&[("table_factory.filter_policy.bloom_before_level", "-1")])
        .unwrap();
    assert_eq!(flush(&db, 3), ["Standard128Ribbon"]);
    for i in 0..4000 {
        assert!(db.get(key(i)).unwrap().is_some());
    }
}
