//! `ribbon doctor` (issue 36) on databases written by RocksDB 11.8.1 itself
//! (through rust-rocksdb), one per cause: every finding appears exactly at
//! the level where it should and nowhere else; a healthy database has none;
//! sizes agree with RocksDB's own table properties (`rocksdb.filter.size`,
//! the live files' entry counts); and the FP rates measured on absent keys
//! are within 3 sigma of what the filters promise.
//!
//! Each database: a first batch flushed (as two overlapping files) and
//! compacted to the last level (L6, `level_compaction_dynamic_level_bytes`),
//! then, possibly under other
//! options, a second batch flushed to L0.

use ribbon_sst::doctor::{diagnose, Code, DoctorOptions, Report};
use rocksdb::{BlockBasedOptions, Options, SliceTransform, DB};
use std::collections::BTreeSet;
use std::path::Path;

const BIG: u64 = 20_000;

fn key(i: u64) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

/// Options with automatic compaction off and `table` as the table factory.
fn options(table: &BlockBasedOptions) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_disable_auto_compactions(true);
    o.set_block_based_table_factory(table);
    o
}

fn bloom(bits: f64) -> BlockBasedOptions {
    let mut t = BlockBasedOptions::default();
    t.set_bloom_filter(bits, false);
    t
}

/// Writes keys `range`, flushes, and compacts to the last level when
/// `compact`.
fn write(dir: &Path, opts: &Options, range: std::ops::Range<u64>, compact: bool) {
    let db = DB::open(opts, dir).unwrap();
    if compact {
        // Two overlapping L0 files, so that the compaction merges them
        // (one file alone would be moved down as it is, filter and all).
        for i in range.clone().step_by(2) {
            db.put(key(i), b"value").unwrap();
        }
        db.flush().unwrap();
    }
    for i in range {
        db.put(key(i), b"value").unwrap();
    }
    db.flush().unwrap();
    if compact {
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
    }
}

/// Diagnoses `dir` and checks what every diagnosis must satisfy against
/// RocksDB's own view of the files.
fn check(dir: &Path, opts: &Options, how: &DoctorOptions) -> Report {
    let report = diagnose(dir, how).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let db = DB::open(opts, dir).unwrap();
    let live = db.live_files().unwrap();
    drop(db);
    let cf = &report.column_families[0];
    assert_eq!(cf.files.len(), live.len(), "live files");
    for f in &cf.files {
        let theirs = live
            .iter()
            .find(|l| l.name.trim_start_matches('/') == format!("{:06}.sst", f.number))
            .unwrap_or_else(|| panic!("file {} is not live for RocksDB", f.number));
        assert_eq!(f.level as i32, theirs.level, "level of {}", f.number);
        assert_eq!(f.entries, Some(theirs.num_entries), "entries of {}", f.number);
        if f.filter_bytes > 0 && f.partitions == 0 {
            assert_eq!(
                f.filter_size_property,
                Some(f.filter_bytes),
                "filter bytes of {} against rocksdb.filter.size",
                f.number
            );
        }
    }
    for l in &cf.levels {
        let m = l.measured;
        if m.queries > 0 {
            let sd = m.variance.sqrt().max(1.0);
            assert!(
                (m.positives as f64 - m.expected).abs() <= 3.0 * sd,
                "L{}: {} positives of {} absent keys, promised {:.1} (3 sigma = {:.1})",
                l.level,
                m.positives,
                m.queries,
                m.expected,
                3.0 * sd
            );
        }
    }
    report
}

/// The findings as (code, level) pairs.
fn found(r: &Report) -> BTreeSet<(&'static str, Option<u32>)> {
    r.findings().map(|(_, f)| (f.code.as_str(), f.level)).collect()
}

fn expect(r: &Report, want: &[(Code, Option<u32>)]) {
    let want: BTreeSet<_> = want.iter().map(|(c, l)| (c.as_str(), *l)).collect();
    let got = found(r);
    assert_eq!(
        got,
        want,
        "findings of {}:\n{:#?}",
        r.dir.display(),
        r.findings().collect::<Vec<_>>()
    );
}

fn how() -> DoctorOptions {
    DoctorOptions {
        samples_per_file: 4000,
        ..DoctorOptions::default()
    }
}

/// [`how`], judging a copy of the newest OPTIONS file of `dir` (written
/// next to it as `planned.ini`) whose `filter_policy` is `policy`: a
/// configuration about to be deployed, or the one deployed with what the
/// OPTIONS file leaves out (RocksDB 11.8.1 writes the policy's name only).
fn how_with_policy(dir: &Path, policy: &str) -> DoctorOptions {
    let options_file = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("OPTIONS-"))
        .max()
        .unwrap();
    let text = std::fs::read_to_string(&options_file).unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("filter_policy="))
        .unwrap()
        .to_string();
    let planned = dir.join("planned.ini");
    std::fs::write(
        &planned,
        text.replace(&line, &format!("  filter_policy={policy}")),
    )
    .unwrap();
    DoctorOptions {
        options_file: Some(planned),
        ..how()
    }
}

#[test]
fn healthy_database_has_no_finding() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options(&bloom(10.0));
    write(tmp.path(), &opts, 0..BIG, true);
    write(tmp.path(), &opts, BIG..BIG + 5000, false);
    let r = check(tmp.path(), &opts, &how());
    expect(&r, &[]);
    let cf = &r.column_families[0];
    assert_eq!(cf.levels.iter().map(|l| l.level).collect::<Vec<_>>(), vec![0, 6]);
    let total = cf.total();
    assert_eq!(total.families.get("Bloom"), Some(&2));
    // What-if: Ribbon at the same FP rate is smaller, and costs build time.
    assert!(total.ribbon_bytes < total.what_if_bytes_now * 8 / 10, "{total:?}");
    assert!(total.balanced_bytes <= total.ribbon_bytes);
    assert!(total.ribbon_build_extra_ms > 0.0);
    assert_eq!(total.placement.table_reader_bytes, total.filter_bytes);
}

#[test]
fn bloom_before_level_gives_flushes_bloom() {
    let tmp = tempfile::tempdir().unwrap();
    let mut t = BlockBasedOptions::default();
    t.set_hybrid_ribbon_filter(10.0, 2);
    let opts = options(&t);
    write(tmp.path(), &opts, 0..BIG, true);
    write(tmp.path(), &opts, BIG..2 * BIG, false);
    let r = check(tmp.path(), &opts, &how());
    expect(&r, &[(Code::BloomBeforeLevel, Some(0))]);
    let cf = &r.column_families[0];
    assert_eq!(cf.levels[1].families.get("Ribbon"), Some(&1));
}

#[test]
fn format_version_below_5_gives_the_legacy_bloom() {
    let tmp = tempfile::tempdir().unwrap();
    let mut t = bloom(10.0);
    t.set_format_version(4);
    let opts = options(&t);
    write(tmp.path(), &opts, 0..BIG, true);
    write(tmp.path(), &opts, BIG..BIG + 3000, false);
    let r = check(tmp.path(), &opts, &how());
    expect(
        &r,
        &[
            (Code::FormatVersionBelow5, Some(0)),
            (Code::FormatVersionBelow5, Some(6)),
        ],
    );
}

#[test]
fn few_keys_fall_back_to_bloom() {
    let tmp = tempfile::tempdir().unwrap();
    let mut t = BlockBasedOptions::default();
    t.set_hybrid_ribbon_filter(10.0, -1);
    let opts = options(&t);
    write(tmp.path(), &opts, 0..BIG, true);
    write(tmp.path(), &opts, BIG..BIG + 40, false);
    let r = check(tmp.path(), &opts, &how());
    expect(&r, &[(Code::BloomFallbackFewKeys, Some(0))]);
}

/// Ribbon everywhere (`ribbonfilter:10:-1`), and filter-construction cache
/// charging (`cache_usage_options`, kFilterConstruction) on a strict
/// one-shard block cache too small for the banding: RocksDB's Standard128
/// Ribbon builder falls back to FastLocalBloom
/// (`table/block_based/filter_policy.cc`,
/// `Standard128RibbonBitsBuilder::Finish`: `MakeCacheReservation` of the
/// banding bytes fails with MemoryLimit). Judged against the deployed
/// `ribbonfilter:10:-1` (the OPTIONS file records the name only), the level
/// written under the small cache, and no other, has the finding; the twin
/// written without it has none. Judged by the OPTIONS file alone
/// (`bloom_before_level` unknown, RocksDB's default 0 assumed for flushes),
/// the same file is a `bloom_before_level` finding whose message also names
/// the cache-charging fall-back: the doctor cannot tell them apart.
#[test]
fn cache_charging_falls_back_to_bloom() {
    use ribbon_compat::construction::{install_recording_cache, ChargeEventKind, ChargeRecorder};
    let mut t = BlockBasedOptions::default();
    t.set_hybrid_ribbon_filter(10.0, -1);
    let plain = options(&t);
    // 20,000 keys: a 256 KiB bucket of hashes is charged, then the banding
    // (about 20 bytes a slot) does not fit in 600 KiB.
    let small_cache = || {
        let mut o = options(&t);
        let recorder = install_recording_cache(&mut o, 600 << 10, true, true).unwrap();
        (o, recorder)
    };
    let assert_refused = |r: &ChargeRecorder| {
        let events = r.events();
        assert!(
            events.iter().any(|e| e.kind == ChargeEventKind::Insert && !e.ok),
            "the cache refused no charge: {events:?}"
        );
    };
    // The filter kind of each file by level, read by ribbon-sst's own
    // reader, and the report's view of it.
    let kinds = |dir: &Path, r: &Report| -> Vec<(u32, String)> {
        let mut v: Vec<(u32, String)> = r.column_families[0]
            .files
            .iter()
            .map(|f| {
                let path = dir.join(format!("{:06}.sst", f.number));
                let read = ribbon_sst::SstFile::open(&path)
                    .unwrap()
                    .filter()
                    .summary()
                    .kind_label();
                assert_eq!(f.kind_detail, read, "file {}", f.number);
                let family = if read == "FastLocalBloom" {
                    "Bloom"
                } else {
                    "Ribbon"
                };
                assert_eq!(f.family, family, "file {}", f.number);
                (f.level, read)
            })
            .collect();
        v.sort();
        v
    };
    let deployed = |dir: &Path| how_with_policy(dir, "ribbonfilter:10:-1");
    let (ribbon, bloom) = ("Standard128Ribbon".to_string(), "FastLocalBloom".to_string());

    // The last level compacted under the small cache, the flush without.
    let tmp = tempfile::tempdir().unwrap();
    let (charged, recorder) = small_cache();
    write(tmp.path(), &charged, 0..BIG, true);
    assert_refused(&recorder);
    write(tmp.path(), &plain, BIG..2 * BIG, false);
    let r = check(tmp.path(), &plain, &deployed(tmp.path()));
    assert_eq!(kinds(tmp.path(), &r), [(0, ribbon.clone()), (6, bloom.clone())]);
    expect(&r, &[(Code::CacheChargingFallback, Some(6))]);
    let r = check(tmp.path(), &plain, &how());
    expect(&r, &[(Code::BloomBeforeLevel, Some(6))]);
    let (_, f) = r.findings().next().unwrap();
    assert!(f.message.contains("cache charging"), "{}", f.message);
    assert_eq!(f.file_numbers.len(), 1);

    // The flush under the small cache, the last level without.
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), &plain, 0..BIG, true);
    let (charged, recorder) = small_cache();
    write(tmp.path(), &charged, BIG..2 * BIG, false);
    assert_refused(&recorder);
    let r = check(tmp.path(), &plain, &deployed(tmp.path()));
    assert_eq!(kinds(tmp.path(), &r), [(0, bloom), (6, ribbon.clone())]);
    expect(&r, &[(Code::CacheChargingFallback, Some(0))]);
    let r = check(tmp.path(), &plain, &how());
    expect(&r, &[(Code::BloomBeforeLevel, Some(0))]);

    // The healthy twin: the same writes without the small cache.
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), &plain, 0..BIG, true);
    write(tmp.path(), &plain, BIG..2 * BIG, false);
    let r = check(tmp.path(), &plain, &deployed(tmp.path()));
    assert_eq!(kinds(tmp.path(), &r), [(0, ribbon.clone()), (6, ribbon)]);
    expect(&r, &[]);
    expect(&check(tmp.path(), &plain, &how()), &[]);
}

#[test]
fn optimize_filters_for_hits_leaves_the_last_level_without_filter() {
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = options(&bloom(10.0));
    opts.set_optimize_filters_for_hits(true);
    write(tmp.path(), &opts, 0..BIG, true);
    write(tmp.path(), &opts, BIG..BIG + 3000, false);
    let r = check(tmp.path(), &opts, &how());
    expect(&r, &[(Code::OptimizeFiltersForHits, Some(6))]);
    assert_eq!(r.column_families[0].levels[1].filter_bytes, 0);
}

#[test]
fn files_written_before_the_policy_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let before = options(&bloom(10.0));
    write(tmp.path(), &before, 0..BIG, true);
    let mut t = BlockBasedOptions::default();
    t.set_hybrid_ribbon_filter(10.0, -1);
    let after = options(&t);
    write(tmp.path(), &after, BIG..2 * BIG, false);
    let r = check(tmp.path(), &after, &how());
    expect(&r, &[(Code::PolicyChanged, Some(6))]);
    // The bits per key changed, same policy: also "policy changed".
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), &before, 0..BIG, true);
    let after = options(&bloom(16.0));
    write(tmp.path(), &after, BIG..2 * BIG, false);
    let r = check(tmp.path(), &after, &how());
    expect(&r, &[(Code::PolicyChanged, Some(6))]);
}

#[test]
fn filters_of_an_incompatible_policy_are_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options(&bloom(10.0));
    write(tmp.path(), &opts, 0..BIG, true);
    // Judged against a configuration about to be deployed: Balanced Ribbon
    // filters are stored under another compatibility name.
    let how_planned = how_with_policy(tmp.path(), "rust.BalancedRibbon:10:1");
    let r = check(tmp.path(), &opts, &how_planned);
    expect(&r, &[(Code::IncompatiblePolicy, Some(6))]);
    // No policy at all: RocksDB reads no filter, and the new file has none.
    let none = options(&BlockBasedOptions::default());
    write(tmp.path(), &none, BIG..BIG + 3000, false);
    let r = check(tmp.path(), &none, &how());
    expect(
        &r,
        &[(Code::IncompatiblePolicy, Some(6)), (Code::NoFilter, Some(0))],
    );
}

#[test]
fn filters_of_another_prefix_extractor_are_skipped_by_prefix_seeks() {
    let tmp = tempfile::tempdir().unwrap();
    let mut before = options(&bloom(10.0));
    before.set_prefix_extractor(SliceTransform::create_fixed_prefix(3));
    write(tmp.path(), &before, 0..BIG, true);
    let mut after = options(&bloom(10.0));
    after.set_prefix_extractor(SliceTransform::create_fixed_prefix(5));
    write(tmp.path(), &after, BIG..BIG + 3000, false);
    let r = check(tmp.path(), &after, &how());
    expect(&r, &[(Code::OtherPrefixExtractor, Some(6))]);
}

/// Keys `key{i*100:08}`: with a 10-byte fixed prefix every key has its
/// own prefix, and `key{i*100+50:08}` is an absent key inside the files'
/// key range whose prefix is absent too.
fn write_spread(dir: &Path, opts: &Options, range: std::ops::Range<u64>, compact: bool) {
    let db = DB::open(opts, dir).unwrap();
    if compact {
        for i in range.clone().step_by(2) {
            db.put(key(i * 100), b"value").unwrap();
        }
        db.flush().unwrap();
    }
    for i in range {
        db.put(key(i * 100), b"value").unwrap();
    }
    db.flush().unwrap();
    if compact {
        db.compact_range(None::<&[u8]>, None::<&[u8]>);
    }
}

/// RocksDB's filter tickers after Gets of `keys`: (useful, prefix
/// checked, prefix useful), and how many keys were found.
fn gets(dir: &Path, opts: &Options, keys: impl Iterator<Item = Vec<u8>>) -> (u64, u64, u64, usize) {
    use rocksdb::statistics::Ticker;
    let mut opts = opts.clone();
    opts.enable_statistics();
    let db = DB::open(&opts, dir).unwrap();
    let found = keys.filter(|k| db.get(k).unwrap().is_some()).count();
    drop(db);
    (
        opts.get_ticker_count(Ticker::BloomFilterUseful),
        opts.get_ticker_count(Ticker::BloomFilterPrefixChecked),
        opts.get_ticker_count(Ticker::BloomFilterPrefixUseful),
        found,
    )
}

#[test]
fn prefix_only_filters_serve_point_gets_under_their_extractor() {
    let tmp = tempfile::tempdir().unwrap();
    let mut t = bloom(10.0);
    t.set_whole_key_filtering(false);
    let mut opts = options(&t);
    opts.set_prefix_extractor(SliceTransform::create_fixed_prefix(10));
    write_spread(tmp.path(), &opts, 0..BIG, true);
    write_spread(tmp.path(), &opts, BIG..BIG + 3000, false);
    let absent = || (0..BIG + 3000).step_by(7).map(|i| key(i * 100 + 50));
    // RocksDB's Get asks the prefix-only filter for the key's prefix under
    // the extractor the files were built with, and it answers "no".
    let (useful, checked, prefix_useful, found) = gets(tmp.path(), &opts, absent());
    assert_eq!(found, 0);
    assert_eq!(useful, 0, "whole keys are not in the filter");
    assert!(
        checked > 0 && prefix_useful * 10 > checked * 9,
        "{prefix_useful} of {checked}"
    );
    // So the doctor finds nothing to say: the filters are used.
    let r = check(tmp.path(), &opts, &how());
    expect(&r, &[]);
    assert_eq!(r.column_families[0].total().prefix_only_files, 2);
    // With no prefix extractor configured (this open writes it to the
    // OPTIONS file), RocksDB's Get skips them, and so says the doctor.
    let mut none = options(&t);
    let (useful, checked, _, found) = gets(tmp.path(), &none, absent());
    assert_eq!((useful, checked, found), (0, 0, 0));
    let r = check(tmp.path(), &none, &how());
    expect(
        &r,
        &[
            (Code::WholeKeyFilteringFalse, Some(0)),
            (Code::WholeKeyFilteringFalse, Some(6)),
        ],
    );
    // Under another extractor: skipped by Gets too, said as such.
    none.set_prefix_extractor(SliceTransform::create_fixed_prefix(5));
    let (useful, checked, _, _) = gets(tmp.path(), &none, absent());
    assert_eq!((useful, checked), (0, 0));
    let r = check(tmp.path(), &none, &how());
    expect(
        &r,
        &[
            (Code::OtherPrefixExtractor, Some(0)),
            (Code::OtherPrefixExtractor, Some(6)),
        ],
    );
    assert!(r
        .findings()
        .all(|(_, f)| f.message.contains("point Gets and prefix seeks skip")));
}

/// RocksDB 6.29.5's database with a built-in Bloom configured in code
/// (`sst/tests/fixtures-db/rocksdb629/generate.py`), copied to `to`.
fn rocksdb_629_db(to: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("sst/tests/fixtures-db/rocksdb629/bloom_in_code/db");
    for e in std::fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
    }
}

#[test]
fn a_6x_options_file_reads_builtin_filters_and_builds_none() {
    use rocksdb::statistics::Ticker;
    // RocksDB 6.x writes filter_policy=rocksdb.BuiltinBloomFilter for any
    // built-in Bloom set in code: the doctor finds nothing wrong...
    let tmp = tempfile::tempdir().unwrap();
    rocksdb_629_db(tmp.path());
    let r = diagnose(tmp.path(), &how()).unwrap();
    expect(&r, &[]);
    assert!(r.column_families[0]
        .notes
        .iter()
        .any(|n| n.contains("rocksdb.BuiltinBloomFilter")));
    // ...because RocksDB 11.8.1, loading that OPTIONS file as it is (its
    // column family options: LoadLatestOptions' db options carry none),
    // reads the filters 6.29 wrote...
    let cache = rocksdb::Cache::new_lru_cache(8 << 20);
    let (mut opts, cfs) =
        Options::load_latest(tmp.path(), rocksdb::Env::new().unwrap(), false, cache).unwrap();
    opts.enable_statistics();
    let db = DB::open_cf_descriptors(&opts, tmp.path(), cfs).unwrap();
    let absent = (0..2300).map(|i| format!("key{i:08}x").into_bytes());
    assert_eq!(absent.filter(|k| db.get(k).unwrap().is_some()).count(), 0);
    let useful = opts.get_ticker_count(Ticker::BloomFilterUseful);
    assert!(
        useful > 2000,
        "RocksDB read the 6.29 filters: {useful} of 2300 absent keys"
    );
    // ...and writes new tables without one.
    for i in 5000..5300 {
        db.put(key(i), b"value").unwrap();
    }
    db.flush().unwrap();
    let newest = db
        .live_files()
        .unwrap()
        .into_iter()
        .max_by_key(|f| f.name.clone())
        .unwrap();
    drop(db);
    let sst = ribbon_sst::SstFile::open(tmp.path().join(newest.name.trim_start_matches('/'))).unwrap();
    assert_eq!(*sst.filter(), ribbon_sst::Filter::None);
    // The doctor, on the OPTIONS file 11.8.1 wrote back: the new file only.
    let r = diagnose(tmp.path(), &how()).unwrap();
    expect(&r, &[(Code::NoFilter, Some(0))]);
    assert!(r
        .findings()
        .all(|(_, f)| f.message.contains("reads filters but builds none")));
}

#[test]
fn filters_of_the_applications_own_policy_are_read_under_it() {
    // xorf's BinaryFuse8 as `example.BinaryFuse8`, stored under its own
    // compatibility name: RocksDB reads it under that policy.
    ribbon_compat::binary_fuse::register();
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = options(&BlockBasedOptions::default());
    rocks_bridge::set_filter_policy(&mut opts, ribbon_compat::binary_fuse::NAME).unwrap();
    write(tmp.path(), &opts, 0..BIG, true);
    let absent = || (0..BIG).step_by(3).map(|i| format!("key{i:08}x").into_bytes());
    let (useful, _, _, found) = gets(tmp.path(), &opts, absent());
    assert_eq!(found, 0);
    assert!(useful as usize > absent().count() * 9 / 10, "{useful}");
    let r = check(tmp.path(), &opts, &how());
    expect(&r, &[]);
    let f = &r.column_families[0].files[0];
    assert_eq!(f.family, "unknown");
    assert_eq!(
        f.compatibility_name.as_deref(),
        Some(ribbon_compat::binary_fuse::NAME)
    );
    assert_eq!(
        Some(f.filter_bytes),
        f.filter_size_property,
        "its bytes are counted"
    );
    // Its table info names the policy's family instead of "none".
    let sst = ribbon_sst::SstFile::open(tmp.path().join(format!("{:06}.sst", f.number))).unwrap();
    assert_eq!(
        ribbon_sst::TableInfo::new(&sst).filter_kind,
        ribbon_compat::binary_fuse::NAME
    );
    // Judged against a built-in policy about to be deployed: ignored.
    let r = check(tmp.path(), &opts, &how_with_policy(tmp.path(), "ribbonfilter:10"));
    expect(&r, &[(Code::IncompatiblePolicy, Some(6))]);
}

#[test]
fn files_without_filter() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options(&BlockBasedOptions::default());
    write(tmp.path(), &opts, 0..BIG, true);
    write(tmp.path(), &opts, BIG..BIG + 3000, false);
    let r = check(tmp.path(), &opts, &how());
    expect(&r, &[(Code::NoFilter, Some(0)), (Code::NoFilter, Some(6))]);
}

#[test]
fn an_unreadable_file_is_reported_not_guessed() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = options(&bloom(10.0));
    write(tmp.path(), &opts, 0..BIG, true);
    write(tmp.path(), &opts, BIG..BIG + 3000, false);
    let db = DB::open(&opts, tmp.path()).unwrap();
    let l0 = db
        .live_files()
        .unwrap()
        .into_iter()
        .find(|f| f.level == 0)
        .unwrap();
    drop(db);
    let path = tmp.path().join(l0.name.trim_start_matches('/'));
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 20] ^= 0xff; // the footer
    std::fs::write(&path, bytes).unwrap();
    let r = diagnose(tmp.path(), &how()).unwrap();
    expect(&r, &[(Code::Unreadable, Some(0))]);
    let cf = &r.column_families[0];
    assert_eq!(cf.levels[0].files, 0);
    assert_eq!(cf.levels[0].unreadable_files, 1);
}

/// Writes one table of about 10 MB (250,000 keys, incompressible 32-byte
/// values, bloomfilter:10, compacted to L6) into the database directory
/// `$DOCTOR_BASE_OUT`: the base table of `scripts/doctor-synthetic.py
/// --base` for a 100 GB-class database of 10^4 files (docs/doctor.md).
#[test]
#[ignore = "writes a 10 MB table for the synthetic-database timing; run by hand"]
fn synthetic_base_table() {
    let Ok(out) = std::env::var("DOCTOR_BASE_OUT") else {
        panic!("set DOCTOR_BASE_OUT to the directory to write");
    };
    let opts = options(&bloom(10.0));
    let db = DB::open(&opts, &out).unwrap();
    let mut x = 0x1234_5678_9abc_def0u64;
    for i in 0..250_000u64 {
        let mut v = Vec::with_capacity(32);
        for _ in 0..4 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.extend_from_slice(&x.to_le_bytes());
        }
        db.put(key(i), v).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>);
}
