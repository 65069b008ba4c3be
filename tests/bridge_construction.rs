//! What RocksDB's built-in builders do around building a filter, matched by
//! the Rust policy (`cpp/rust_filter_policy.cc`):
//!
//! - `cache_usage_options` with `CacheEntryRole::kFilterConstruction`
//!   charged: the FastLocalBloom and Ribbon builders charge their hash
//!   entries (in buckets), Ribbon's banding and the finished filter to the
//!   block cache, and Ribbon falls back to Bloom when the cache refuses the
//!   banding. A recording block cache (`ribbon_compat::construction`) logs
//!   every charge with the cache's usage after it; the log and the filter
//!   bytes must be identical whichever policy builds.
//! - `detect_filter_construct_corruption`: a corrupted filter (injected by a
//!   policy wrapper, for both policies) and corrupted hash entries (injected
//!   in the Rust builder by `rocks_bridge::testing`; RocksDB's own injection
//!   point is a test sync point, compiled out of release builds) fail the
//!   write with RocksDB's statuses.

#[path = "util/round_trip.rs"]
mod round_trip;

use ribbon::rocksdb::trailer::{marker, Marker};
use ribbon_compat::construction::{
    install_recording_cache, wrap_filter_policy, ChargeEvent, ChargeEventKind,
};
use rocksdb::{BlockBasedIndexType, BlockBasedOptions, Options, SstFileWriter, DB};
use round_trip::key;
use std::path::Path;

const RIBBON: (&str, &str) = ("ribbonfilter:10:-1", "rust.RibbonFilter:10:-1");
const BLOOM: (&str, &str) = ("bloomfilter:10", "rust.BloomFilter:10");

/// RocksDB's dummy cache entry for reservations (`kSizeDummyEntry`).
const DUMMY: usize = 256 << 10;
/// The statuses of `XXPH3FilterBitsBuilder` (table/block_based/filter_policy.cc).
const ENTRIES_CORRUPTED: &str = "Corruption: Filter's hash entries checksum mismatched";
const FILTER_CORRUPTED: &str = "Corruption: Corrupted filter content";

/// How a table is written.
#[derive(Clone, Copy, Debug)]
struct Setup {
    format_version: i32,
    partitioned: bool,
    detect: bool,
    /// A recording block cache: (capacity, strict_capacity_limit, charge
    /// kFilterConstruction).
    cache: Option<(usize, bool, bool)>,
    tamper: bool,
    num_keys: u64,
}

impl Setup {
    fn new(num_keys: u64) -> Self {
        Self {
            format_version: 7,
            partitioned: false,
            detect: false,
            cache: None,
            tamper: false,
            num_keys,
        }
    }
}

/// What writing one table saw.
#[derive(Debug)]
struct Written {
    /// The result of `SstFileWriter::finish` or of the flush.
    result: Result<(), String>,
    /// The filter blocks of the table (when it was written).
    filters: Vec<Vec<u8>>,
    /// The kFilterConstruction charges, in order.
    events: Vec<ChargeEvent>,
    /// The cache's usage after the last key was added, before finishing.
    usage_before_finish: usize,
}

fn options(setup: &Setup, policy: &str) -> (Options, Option<ribbon_compat::construction::ChargeRecorder>) {
    let mut table = BlockBasedOptions::default();
    table.set_format_version(setup.format_version);
    if setup.partitioned {
        table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
        table.set_partition_filters(true);
        table.set_metadata_block_size(4096);
    }
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_write_buffer_size(256 << 20);
    opts.set_block_based_table_factory(&table);
    if setup.detect {
        opts = opts
            .get_options_from_string("block_based_table_factory={detect_filter_construct_corruption=true}")
            .unwrap();
    }
    rocks_bridge::set_filter_policy(&mut opts, policy).unwrap();
    let recorder = setup.cache.map(|(capacity, strict, charge)| {
        install_recording_cache(&mut opts, capacity, strict, charge).unwrap()
    });
    if setup.tamper || recorder.is_some() {
        wrap_filter_policy(&mut opts, setup.tamper).unwrap();
    }
    (opts, recorder)
}

fn filters_of(path: &Path) -> Vec<Vec<u8>> {
    let sst = ribbon_sst::SstFile::open(path).unwrap();
    sst.filter().blocks().into_iter().map(<[u8]>::to_vec).collect()
}

/// Writes the keys with an `SstFileWriter` (the builder runs on this
/// thread).
fn write_sst(setup: &Setup, policy: &str) -> Written {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sst");
    let (opts, recorder) = options(setup, policy);
    let mut w = SstFileWriter::create(&opts);
    w.open(&path).unwrap();
    let mut keys: Vec<Vec<u8>> = (0..setup.num_keys).map(key).collect();
    keys.sort();
    for k in &keys {
        w.put(k, b"v").unwrap();
    }
    let usage_before_finish = recorder.as_ref().map_or(0, |r| r.usage());
    let result = w.finish().map_err(|e| e.to_string());
    drop(w);
    let filters = if result.is_ok() {
        filters_of(&path)
    } else {
        Vec::new()
    };
    Written {
        result,
        filters,
        events: recorder.map_or_else(Vec::new, |r| r.events()),
        usage_before_finish,
    }
}

/// Writes the keys to a DB and flushes (the builder runs on a background
/// thread).
fn write_flush(setup: &Setup, policy: &str) -> Written {
    let dir = tempfile::tempdir().unwrap();
    let (opts, recorder) = options(setup, policy);
    let db = DB::open(&opts, dir.path()).unwrap();
    for i in 0..setup.num_keys {
        db.put(key(i), b"v").unwrap();
    }
    let usage_before_finish = recorder.as_ref().map_or(0, |r| r.usage());
    let result = db.flush().map_err(|e| e.to_string());
    let mut filters = Vec::new();
    if result.is_ok() {
        for f in db.live_files().unwrap() {
            filters.extend(filters_of(&dir.path().join(f.name.trim_start_matches('/'))));
        }
    }
    drop(db);
    Written {
        result,
        filters,
        events: recorder.map_or_else(Vec::new, |r| r.events()),
        usage_before_finish,
    }
}

/// Writes with both policies of a pair; both must write the same filters,
/// make the same charges in the same order, and end with the same result.
fn both(setup: &Setup, pair: (&str, &str), write: fn(&Setup, &str) -> Written) -> Written {
    let native = write(setup, pair.0);
    let rust = write(setup, pair.1);
    assert_eq!(native.result, rust.result, "{setup:?} {pair:?}: results differ");
    assert!(
        native.filters == rust.filters,
        "{setup:?} {pair:?}: filter bytes differ"
    );
    assert_eq!(
        native.events, rust.events,
        "{setup:?} {pair:?}: cache charges differ"
    );
    assert_eq!(
        native.usage_before_finish, rust.usage_before_finish,
        "{setup:?} {pair:?}: cache usage while adding keys differs"
    );
    native
}

fn kind(filter: &[u8]) -> Option<Marker> {
    marker(filter)
}

fn count(events: &[ChargeEvent], kind: ChargeEventKind) -> usize {
    events.iter().filter(|e| e.kind == kind).count()
}

/// The cache's usage at each moment of `kind`.
fn usage_at(events: &[ChargeEvent], kind: ChargeEventKind) -> Vec<usize> {
    events
        .iter()
        .filter(|e| e.kind == kind)
        .map(|e| e.usage)
        .collect()
}

/// Ribbon with a large strict cache: two buckets of hash entries are
/// charged while keys are added (at 16384 and 49152 entries), then the
/// banding and the filter; the cache is back to empty once the writer is
/// gone. Identical charges, identical Ribbon bytes.
#[test]
fn charged_ribbon_reserves_like_rocksdb() {
    let mut s = Setup::new(60_000);
    s.cache = Some((64 << 20, true, true));
    let w = both(&s, RIBBON, write_sst);
    assert_eq!(w.result, Ok(()));
    assert_eq!(kind(&w.filters[0]), Some(Marker::Standard128Ribbon));
    assert!(
        w.usage_before_finish >= 2 * DUMMY && w.usage_before_finish < 3 * DUMMY,
        "{}",
        w.usage_before_finish
    );
    assert!(w.events.iter().all(|e| e.ok));
    let inserts = count(&w.events, ChargeEventKind::Insert);
    // Two buckets, then banding (20 bytes a slot, ~60,000 slots: more than
    // one dummy entry) and the filter on top.
    assert!(inserts >= 5, "{:?}", w.events);
    let peak = w.events.iter().map(|e| e.usage).max().unwrap();
    assert!(peak >= 4 * DUMMY, "banding not charged: peak {peak}");
    assert_eq!(w.events.last().unwrap().usage, 0, "charges left behind");
    assert_eq!(
        inserts,
        count(&w.events, ChargeEventKind::Release),
        "every charge released"
    );
    assert_eq!(count(&w.events, ChargeEventKind::Finished), 1);
}

/// A small strict cache accepts the hash-entry bucket but refuses Ribbon's
/// banding: both builders fall back to Bloom, and write the same Bloom
/// filter. The same cache without the strict limit lets Ribbon through.
#[test]
fn charged_ribbon_falls_back_to_bloom_when_the_cache_refuses_banding() {
    let mut s = Setup::new(20_000);
    s.cache = Some((600 << 10, true, true));
    let w = both(&s, RIBBON, write_sst);
    assert_eq!(w.result, Ok(()));
    assert_eq!(kind(&w.filters[0]), Some(Marker::NewerBloom), "no fall-back");
    assert!(
        w.events
            .iter()
            .any(|e| e.kind == ChargeEventKind::Insert && !e.ok),
        "{:?}",
        w.events
    );
    assert!(w.usage_before_finish >= DUMMY, "bucket not charged");

    s.cache = Some((600 << 10, false, true));
    let w = both(&s, RIBBON, write_sst);
    assert_eq!(kind(&w.filters[0]), Some(Marker::Standard128Ribbon));
    assert!(w.events.iter().all(|e| e.ok));
    // The bytes differ from a build without any cache only by... nothing:
    // charging never changes a filter that was not refused.
    let plain = both(&Setup::new(20_000), RIBBON, write_sst);
    assert!(plain.filters == w.filters);
}

/// The same through a flush on RocksDB's background thread.
#[test]
fn charged_flush_reserves_and_falls_back_like_rocksdb() {
    let mut s = Setup::new(20_000);
    s.cache = Some((600 << 10, true, true));
    let w = both(&s, RIBBON, write_flush);
    assert_eq!(w.result, Ok(()));
    assert_eq!(kind(&w.filters[0]), Some(Marker::NewerBloom));
    s.cache = Some((64 << 20, true, true));
    let w = both(&s, RIBBON, write_flush);
    assert_eq!(kind(&w.filters[0]), Some(Marker::Standard128Ribbon));
    assert!(!w.events.is_empty());
}

/// FastLocalBloom charges buckets and the filter (no banding); partitioned
/// Ribbon charges per partition and keeps every partition's filter charged
/// until the table is done; with `detect_filter_construct_corruption` the
/// buckets stay charged until the post-verification. The legacy Bloom
/// (format_version 4) and a disabled role charge nothing.
#[test]
fn charges_for_bloom_partitions_detection_and_none() {
    let mut s = Setup::new(60_000);
    s.cache = Some((64 << 20, true, true));
    let w = both(&s, BLOOM, write_sst);
    assert_eq!(kind(&w.filters[0]), Some(Marker::NewerBloom));
    assert!(w.events.len() >= 6, "{:?}", w.events);

    let mut p = s;
    p.partitioned = true;
    let plain = both(&p, RIBBON, write_sst);
    assert!(plain.filters.len() > 2);
    p.detect = true;
    let detected = both(&p, RIBBON, write_sst);
    assert!(plain.filters == detected.filters);
    assert!(!detected.events.is_empty());

    // The moments: without detection the buckets are gone when the filter
    // is returned; with it, they are held until the post-verification.
    let undetected = both(&s, RIBBON, write_sst);
    let mut d = s;
    d.detect = true;
    let w = both(&d, RIBBON, write_sst);
    assert_eq!(w.result, Ok(()));
    let (finished, verified) = (
        usage_at(&w.events, ChargeEventKind::Finished),
        usage_at(&w.events, ChargeEventKind::PostVerify),
    );
    assert_eq!((finished.len(), verified.len()), (1, 1), "{:?}", w.events);
    assert!(
        finished[0] >= usage_at(&undetected.events, ChargeEventKind::Finished)[0] + 2 * DUMMY,
        "buckets released before the post-verification: {:?} / {:?}",
        w.events,
        undetected.events
    );

    let mut legacy = s;
    legacy.format_version = 4;
    let w = both(&legacy, BLOOM, write_sst);
    assert_eq!(kind(&w.filters[0]), Some(Marker::LegacyBloom { num_probes: 6 }));
    assert_eq!(count(&w.events, ChargeEventKind::Insert), 0, "{:?}", w.events);
    assert_eq!(count(&w.events, ChargeEventKind::Finished), 1, "{:?}", w.events);

    let mut off = s;
    off.cache = Some((64 << 20, true, false));
    let w = both(&off, RIBBON, write_sst);
    assert_eq!(count(&w.events, ChargeEventKind::Insert), 0, "{:?}", w.events);
    assert_eq!(w.usage_before_finish, 0);
}

/// A filter corrupted after it was built (its first 8 bytes zeroed, as
/// RocksDB's `TamperFilter` sync point does): with detection, both policies
/// fail the table with `Corruption: Corrupted filter content`, full and
/// partitioned, through an SstFileWriter and a flush; without, both write
/// the corrupted filter. The legacy Bloom never post-verifies.
#[test]
fn detect_corrupted_filter_content_like_rocksdb() {
    for pair in [RIBBON, BLOOM] {
        for partitioned in [false, true] {
            let mut s = Setup::new(20_000);
            s.tamper = true;
            s.partitioned = partitioned;
            s.detect = true;
            let w = both(&s, pair, write_sst);
            let err = w.result.unwrap_err();
            assert!(err.contains(FILTER_CORRUPTED), "{err}");
            if !partitioned {
                let w = both(&s, pair, write_flush);
                let err = w.result.unwrap_err();
                assert!(err.contains(FILTER_CORRUPTED), "{err}");
            }
            s.detect = false;
            let w = both(&s, pair, write_sst);
            assert_eq!(w.result, Ok(()));
            assert!(w.filters.iter().all(|f| f[..8] == [0; 8]));
        }
    }
    let mut s = Setup::new(20_000);
    s.tamper = true;
    s.detect = true;
    s.format_version = 4;
    assert_eq!(both(&s, BLOOM, write_sst).result, Ok(()));
}

/// Hash entries corrupted between their checksum and the build, injected in
/// the Rust builder (RocksDB's injection point is compiled out of release
/// builds, so its status is RocksDB's source string): with detection the
/// table fails with `Corruption: Filter's hash entries checksum
/// mismatched`; without, nothing is checked and the write succeeds. With
/// charging on, every charge is still released.
#[test]
fn detect_corrupted_hash_entries_like_rocksdb() {
    struct Off;
    impl Drop for Off {
        fn drop(&mut self) {
            rocks_bridge::testing::corrupt_hash_entries_on_this_thread(false);
        }
    }
    let _off = Off;
    for policy in [RIBBON.1, BLOOM.1] {
        for partitioned in [false, true] {
            let mut s = Setup::new(20_000);
            s.partitioned = partitioned;
            s.detect = true;
            s.cache = Some((64 << 20, true, true));
            rocks_bridge::testing::corrupt_hash_entries_on_this_thread(true);
            let w = write_sst(&s, policy);
            rocks_bridge::testing::corrupt_hash_entries_on_this_thread(false);
            let err = w.result.unwrap_err();
            assert!(err.contains(ENTRIES_CORRUPTED), "{policy}: {err}");
            assert_eq!(w.events.last().map(|e| e.usage), Some(0), "{:?}", w.events);
            // The same table without the injection is fine.
            assert_eq!(write_sst(&s, policy).result, Ok(()));
            s.detect = false;
            rocks_bridge::testing::corrupt_hash_entries_on_this_thread(true);
            let w = write_sst(&s, policy);
            rocks_bridge::testing::corrupt_hash_entries_on_this_thread(false);
            assert_eq!(w.result, Ok(()), "{policy}: checked without detection");
        }
    }
}
