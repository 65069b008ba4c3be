//! Any Rust filter as a RocksDB filter policy (`rocks_bridge::custom`): a
//! filter with its own format (the standalone Ribbon) registered under an id
//! of the test's choosing, selected by an options string, saved to and
//! reloaded from the OPTIONS file, used by Get and MultiGet; ids RocksDB
//! must reject; and panics that cost filtering but never a key.

use ribbon::rocksdb::policy::BuildContext;
use ribbon::standalone::{Config, Ribbon};
use rocks_bridge::custom::{self, Builder, FilterBlock, Policy, Reader, ALWAYS_TRUE_FILTER};
use rocksdb::statistics::Ticker;
use rocksdb::{BlockBasedOptions, Options, DB};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Once};

#[path = "util/round_trip.rs"]
mod round_trip;
use round_trip::policy::{options_file, reopen_from_options_file};

/// The standalone Ribbon filter (its own versioned file format) as a
/// RocksDB policy: `test.StandaloneRibbon[:RESULT_BITS]`.
struct StandaloneRibbon {
    result_bits: u32,
}

static FILTERS_FINISHED: AtomicU64 = AtomicU64::new(0);
static READERS_MADE: AtomicU64 = AtomicU64::new(0);

struct StandaloneBuilder {
    config: Config,
    result_bits: u32,
    hashes: Vec<u64>,
}

struct StandaloneReader(Ribbon);

impl Policy for StandaloneRibbon {
    fn id(&self) -> String {
        format!("test.StandaloneRibbon:{}", self.result_bits)
    }
    fn compatibility_name(&self) -> String {
        "test.StandaloneRibbon".into()
    }
    fn builder(&self, _: &BuildContext) -> Option<Box<dyn Builder>> {
        Some(Box::new(StandaloneBuilder {
            config: Config::standard(128, f64::from(self.result_bits)),
            result_bits: self.result_bits,
            hashes: Vec::new(),
        }))
    }
    fn reader(&self, filter: FilterBlock) -> Box<dyn Reader> {
        READERS_MADE.fetch_add(1, Relaxed);
        Box::new(StandaloneReader(
            Ribbon::from_bytes(&filter).expect("a filter this policy wrote"),
        ))
    }
}

impl Builder for StandaloneBuilder {
    fn add_key(&mut self, key: &[u8]) {
        self.hashes.push(ribbon::core::hash::get_slice_hash64(key));
    }
    fn estimate_entries_added(&self) -> usize {
        self.hashes.len()
    }
    fn finish(&mut self) -> Vec<u8> {
        FILTERS_FINISHED.fetch_add(1, Relaxed);
        let hashes = std::mem::take(&mut self.hashes);
        Ribbon::from_hashes(&hashes, &self.config)
            .expect("builds")
            .into_bytes()
    }
    fn calculate_space(&self, num_entries: usize) -> usize {
        // The file's fixed parts plus the solution: an upper bound is enough
        // for RocksDB's partition cutting.
        200 + num_entries * (self.result_bits as usize + 2) / 8
    }
    fn estimated_fp_rate(&self, _: usize, _: usize) -> f64 {
        0.5f64.powi(self.result_bits as i32)
    }
}

impl Reader for StandaloneReader {
    fn may_match(&self, key: &[u8]) -> bool {
        self.0.contains(key)
    }
    fn may_match_many(&self, keys: &[&[u8]], out: &mut [bool]) {
        out.copy_from_slice(&self.0.contains_many(keys));
    }
}

/// Where a test policy panics.
#[derive(Clone, Copy, PartialEq, Debug)]
enum PanicAt {
    Finish,
    MakeReader,
    Query,
}

/// `test.Panicky:finish|make-reader|query`: the standalone Ribbon, with a
/// panic at one place.
struct Panicky(PanicAt);
struct PanickyBuilder(StandaloneBuilder, PanicAt);
struct PanickyReader;

impl Policy for Panicky {
    fn id(&self) -> String {
        let at = match self.0 {
            PanicAt::Finish => "finish",
            PanicAt::MakeReader => "make-reader",
            PanicAt::Query => "query",
        };
        format!("test.Panicky:{at}")
    }
    fn compatibility_name(&self) -> String {
        self.id()
    }
    fn builder(&self, _: &BuildContext) -> Option<Box<dyn Builder>> {
        Some(Box::new(PanickyBuilder(
            StandaloneBuilder {
                config: Config::standard(128, 7.0),
                result_bits: 7,
                hashes: Vec::new(),
            },
            self.0,
        )))
    }
    fn reader(&self, filter: FilterBlock) -> Box<dyn Reader> {
        assert_ne!(self.0, PanicAt::MakeReader, "a reader that cannot be made");
        assert!(!filter.is_empty());
        Box::new(PanickyReader)
    }
}

impl Builder for PanickyBuilder {
    fn add_key(&mut self, key: &[u8]) {
        self.0.add_key(key)
    }
    fn estimate_entries_added(&self) -> usize {
        self.0.estimate_entries_added()
    }
    fn finish(&mut self) -> Vec<u8> {
        assert_ne!(self.1, PanicAt::Finish, "a builder that fails");
        self.0.finish()
    }
    fn calculate_space(&self, n: usize) -> usize {
        self.0.calculate_space(n)
    }
    fn estimated_fp_rate(&self, n: usize, b: usize) -> f64 {
        self.0.estimated_fp_rate(n, b)
    }
}

impl Reader for PanickyReader {
    fn may_match(&self, _: &[u8]) -> bool {
        panic!("a reader that fails")
    }
}

fn register_test_policies() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        custom::register_policy("test.StandaloneRibbon", |args| {
            let result_bits = match args {
                None => 7,
                Some(a) => a
                    .parse::<u32>()
                    .ok()
                    .filter(|r| (1..=16).contains(r))
                    .ok_or_else(|| format!("result bits must be 1 to 16, not {a:?}"))?,
            };
            Ok(Arc::new(StandaloneRibbon { result_bits }) as Arc<dyn Policy>)
        })
        .unwrap();
        custom::register_policy("test.Panicky", |args| {
            let at = match args {
                Some("finish") => PanicAt::Finish,
                Some("make-reader") => PanicAt::MakeReader,
                Some("query") => PanicAt::Query,
                _ => return Err("test.Panicky:finish|make-reader|query".into()),
            };
            Ok(Arc::new(Panicky(at)) as Arc<dyn Policy>)
        })
        .unwrap();
        // An id that would not bring the policy back from an OPTIONS file.
        custom::register_policy("test.Misnamed", |_| {
            Ok(Arc::new(StandaloneRibbon { result_bits: 7 }) as Arc<dyn Policy>)
        })
        .unwrap();
        // Panics don't leave the factory.
        custom::register_policy("test.PanickyFactory", |_| panic!("a factory that fails")).unwrap();
    });
}

fn options(policy: &str) -> Options {
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.enable_statistics();
    opts.set_disable_auto_compactions(true);
    opts.set_block_based_table_factory(&BlockBasedOptions::default());
    rocks_bridge::set_filter_policy(&mut opts, policy).unwrap();
    opts
}

fn key(i: u64) -> Vec<u8> {
    format!(
        "key{:012}",
        i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % 1_000_000_000_000
    )
    .into_bytes()
}

const N: u64 = 20_000;

/// Writes keys 0..N, flushes, compacts; returns the database.
fn fill(dir: &std::path::Path, opts: &Options) -> DB {
    let db = DB::open(opts, dir).unwrap();
    for i in 0..N {
        db.put(key(i), i.to_le_bytes()).unwrap();
        if i == N / 2 {
            db.flush().unwrap();
        }
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], &[u8]>(None, None);
    db
}

/// Every key is found by Get and MultiGet; returns how many of `N` absent
/// keys the filters ruled out (statistics' BloomFilterUseful), through Get
/// and through MultiGet.
fn check(db: &DB, opts: &Options) -> (u64, u64) {
    for i in 0..N {
        assert!(db.get(key(i)).unwrap().is_some(), "key {i} lost");
    }
    let present: Vec<Vec<u8>> = (0..N).map(key).collect();
    assert!(db.multi_get(&present).into_iter().all(|r| r.unwrap().is_some()));
    let before = opts.get_ticker_count(Ticker::BloomFilterUseful);
    for i in N..2 * N {
        assert!(db.get(key(i)).unwrap().is_none());
    }
    let by_get = opts.get_ticker_count(Ticker::BloomFilterUseful) - before;
    let absent: Vec<Vec<u8>> = (2 * N..3 * N).map(key).collect();
    assert!(db.multi_get(&absent).into_iter().all(|r| r.unwrap().is_none()));
    let by_multi_get = opts.get_ticker_count(Ticker::BloomFilterUseful) - before - by_get;
    (by_get, by_multi_get)
}

#[test]
fn a_rust_filter_of_its_own_format_serves_a_database() {
    register_test_policies();
    let dir = tempfile::tempdir().unwrap();
    let opts = options("test.StandaloneRibbon:7");
    let finished = FILTERS_FINISHED.load(Relaxed);
    let db = fill(dir.path(), &opts);
    assert!(
        FILTERS_FINISHED.load(Relaxed) > finished,
        "RocksDB built no filter through the Rust policy"
    );
    let (by_get, by_multi_get) = check(&db, &opts);
    // FP rate 2^-7 per file (one file after compaction): about 99.2 % of the
    // absent keys are ruled out; 97 % is a loose bound for 20,000 probes.
    for useful in [by_get, by_multi_get] {
        assert!(
            useful > N * 97 / 100,
            "filters ruled out only {useful} of {N} absent keys"
        );
    }
    drop(db);

    // The OPTIONS file names the policy with its arguments; the options
    // loaded from it alone give the same policy, which reads the files
    // written above.
    let text = options_file(dir.path());
    assert!(
        text.contains("filter_policy=test.StandaloneRibbon:7\n"),
        "OPTIONS file: {text}"
    );
    let readers = READERS_MADE.load(Relaxed);
    let (db, loaded) = reopen_from_options_file(dir.path());
    let (by_get, _) = check(&db, &loaded);
    assert!(by_get > N * 97 / 100);
    assert!(READERS_MADE.load(Relaxed) > readers);
}

#[test]
fn ids_rocksdb_must_reject() {
    register_test_policies();
    let mut opts = Options::default();
    opts.set_block_based_table_factory(&BlockBasedOptions::default());
    for bad in [
        "test.StandaloneRibbon:0",
        "test.StandaloneRibbon:x",
        "test.StandaloneRibbon:",
        "test.Misnamed",
        "test.PanickyFactory",
        "test.PanickyFactory:1",
        "test.NotRegistered:1",
    ] {
        assert!(
            rocks_bridge::set_filter_policy(&mut opts, bad).is_err(),
            "{bad} was accepted"
        );
    }
    let ids: Vec<Option<String>> = ["test.StandaloneRibbon", "test.StandaloneRibbon:11"]
        .into_iter()
        .map(|good| rocks_bridge::set_filter_policy(&mut opts, good).unwrap())
        .collect();
    // The id RocksDB writes to OPTIONS: the policy's own, with its defaults.
    assert_eq!(
        ids,
        [
            Some("test.StandaloneRibbon:7".to_string()),
            Some("test.StandaloneRibbon:11".to_string())
        ]
    );

    let factory = |_: Option<&str>| -> Result<Arc<dyn Policy>, String> { Err("unused".into()) };
    for name in [
        "",
        "has space",
        "has:colon",
        "bloomfilter",
        "RibbonFilter",
        "rocksdb.BuiltinBloomFilter",
        "rust.RibbonFilter",
        "nullptr",
        "test.StandaloneRibbon",
    ] {
        assert!(
            custom::register_policy(name, factory).is_err(),
            "{name:?} was registered"
        );
    }
}

#[test]
fn panics_cost_filtering_never_a_key() {
    register_test_policies();
    for at in ["finish", "make-reader", "query"] {
        let dir = tempfile::tempdir().unwrap();
        let opts = options(&format!("test.Panicky:{at}"));
        let db = fill(dir.path(), &opts);
        let (by_get, by_multi_get) = check(&db, &opts);
        assert_eq!((by_get, by_multi_get), (0, 0), "test.Panicky:{at}");
    }
    // The filter a failed builder writes, as RocksDB stored it.
    let dir = tempfile::tempdir().unwrap();
    let opts = options("test.Panicky:finish");
    drop(fill(dir.path(), &opts));
    let sst = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .unwrap();
    let bytes = std::fs::read(sst).unwrap();
    assert!(bytes
        .windows(ALWAYS_TRUE_FILTER.len())
        .any(|w| w == ALWAYS_TRUE_FILTER));
}
