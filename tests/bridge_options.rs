//! Every filter-related table option, honoured: round trips through a real
//! RocksDB (the machinery of `tests/util/round_trip.rs`) for the options
//! that change what RocksDB's filter builders and readers do: partitioned
//! filters decoupled from and coupled to the index partitions, and with
//! every index type; `whole_key_filtering` off with the fixed, capped and a
//! custom prefix extractor (and prefix seeks); user-defined timestamps;
//! `optimize_filters_for_hits`; `detect_filter_construct_corruption`; and
//! SetOptions changing the filter policy of a live DB. Each checks that the
//! filter blocks the Rust and native policies write are identical byte for
//! byte, in the same files at the same levels, that no key is lost, and
//! that RocksDB's statistics and perf counters are identical for every
//! writer/reader pair. The README's "Table options" table points here.

#[path = "util/round_trip.rs"]
mod round_trip;

use ribbon::rocksdb::format::FilterReader;
use rocksdb::DB;
use round_trip::*;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

const PAIRS: [(&str, &str); 2] = [
    ("ribbonfilter:10:-1", "rust.RibbonFilter:10:-1"),
    ("bloomfilter:10", "rust.BloomFilter:10"),
];

fn partitioned(layout: &FilterLayout) -> bool {
    layout.iter().all(|(_, name, n)| {
        name.as_deref()
            .is_some_and(|x| x.starts_with("partitionedfilter."))
            && *n > 1
    })
}

fn full(layout: &FilterLayout) -> bool {
    layout
        .iter()
        .all(|(_, name, n)| name.as_deref().is_some_and(|x| x.starts_with("fullfilter.")) && *n == 1)
}

/// `decouple_partitioned_filters` on (the default) and off, with two
/// `metadata_block_size`s: partitions cut by filter size or at the index
/// partitions' boundaries. The filter partitions are read through the
/// block cache, whose filter counters are compared too.
#[test]
fn partitioned_filters_decoupled_and_coupled() {
    let mut partitions = Vec::new();
    for decouple in [true, false] {
        for (i, (native, rust)) in PAIRS.iter().enumerate() {
            for metadata in [512, 4096] {
                if i == 1 && metadata == 4096 {
                    continue;
                }
                let mut s = Scenario::new(native, rust);
                s.partitioned = true;
                s.num_keys = 50_000;
                s.options = format!(
                    "block_based_table_factory={{decouple_partitioned_filters={decouple};metadata_block_size={metadata}}}"
                );
                let o = round_trip(&s);
                assert!(partitioned(&o.layout), "{s:?}: {:?}", o.layout, s = s.options);
                assert!(o.stats[USEFUL] > 0 && o.stats[PERF_SST_MISS] > 0, "{:?}", o.stats);
                // Partitions are read through the block cache.
                let cache_filter_misses = o.stats[10];
                assert!(cache_filter_misses > 1, "{:?}", o.stats);
                partitions.push(((decouple, i, metadata), o.layout[0].2));
            }
        }
    }
    // Coupling changes where the partitions are cut, so the test covers two
    // layouts, not one.
    let count = |d: bool| {
        partitions
            .iter()
            .find(|((x, i, m), _)| *x == d && *i == 0 && *m == 512)
            .unwrap()
            .1
    };
    assert_ne!(count(true), count(false), "{partitions:?}");
}

/// `partition_filters` needs `kTwoLevelIndexSearch`: with any other index
/// type RocksDB's table factory turns it off (`InitializeOptions`) and
/// writes a full filter. Both policies do the same with each index type.
/// The table options go through the table options API: a factory only
/// reconfigured by an options string is not sanitised, and RocksDB (with
/// any filter policy) then crashes building partitioned filters without
/// partitioned indexes; kBinarySearchWithFirstKey, which the API lacks,
/// is tested without partition_filters.
#[test]
fn partition_filters_with_every_index_type() {
    for (index, partitions) in [
        ("TwoLevelIndexSearch", true),
        ("BinarySearch", false),
        ("HashSearch", false),
    ] {
        let mut s = Scenario::new(PAIRS[0].0, PAIRS[0].1);
        // kHashSearch needs a prefix extractor.
        s.prefix = Some(Prefix::Fixed(7));
        s.partition_filters_with_index = Some(index);
        let o = round_trip(&s);
        if partitions {
            assert!(partitioned(&o.layout), "{index}: {:?}", o.layout);
        } else {
            assert!(full(&o.layout), "{index}: {:?}", o.layout);
        }
    }
    let mut s = Scenario::new(PAIRS[0].0, PAIRS[0].1);
    s.options = "block_based_table_factory={index_type=kBinarySearchWithFirstKey}".into();
    let o = round_trip(&s);
    assert!(full(&o.layout), "kBinarySearchWithFirstKey: {:?}", o.layout);
}

/// `whole_key_filtering` off: the filter holds only prefixes, and Get,
/// MultiGet and prefix seeks ask it for the key's prefix. Fixed, capped,
/// no-op (every extractor RocksDB ships) and a custom extractor (which RocksDB hands the bridge's reader already
/// extracted), on full and partitioned filters; the prefix counters
/// (`bloom.filter.prefix.checked`/`.useful`), the seek counters and the
/// perf counters must be identical for every writer/reader pair.
#[test]
fn whole_key_filtering_off_with_every_prefix_extractor() {
    for prefix in [Prefix::Fixed(7), Prefix::Capped(16), Prefix::Noop, Prefix::Custom] {
        for (native, rust) in PAIRS {
            for partitioned in [false, true] {
                if partitioned && native.starts_with("bloom") {
                    continue;
                }
                let mut s = Scenario::new(native, rust);
                s.prefix = Some(prefix);
                s.whole_key_filtering = false;
                s.partitioned = partitioned;
                let o = round_trip(&s);
                let st = o.stats;
                assert!(
                    st[PREFIX_CHECKED] > 0 && st[PREFIX_USEFUL] > 0,
                    "{prefix:?}: {st:?}"
                );
                assert_eq!(
                    st[USEFUL] + st[FULL_POSITIVE],
                    0,
                    "{prefix:?}: whole keys checked: {st:?}"
                );
                let seeks_filtered: u64 = SEEK_FILTERED.iter().map(|&i| st[i]).sum();
                let seeks_matched: u64 = SEEK_FILTER_MATCH.iter().map(|&i| st[i]).sum();
                assert!(seeks_filtered > 0 && seeks_matched > 0, "{prefix:?}: {st:?}");
                if !partitioned {
                    // The filter holds the prefixes, not the keys.
                    let reader = FilterReader::new(&o.blocks[0]);
                    for i in 0..2000 {
                        let k = key(i);
                        let p: &[u8] = match prefix {
                            Prefix::Fixed(n) | Prefix::Capped(n) => &k[..n.min(k.len())],
                            Prefix::Noop => &k,
                            Prefix::Custom => match custom_prefix(&k) {
                                Some(p) => p,
                                None => continue,
                            },
                        };
                        assert!(
                            reader.may_match(p),
                            "{prefix:?}: prefix of key {i} not in the filter"
                        );
                    }
                }
            }
        }
    }
}

/// The pure-Rust SST reader cannot reproduce a custom prefix extractor: it
/// answers "may match" for every Get of a table whose filter holds such
/// prefixes (never a false negative), and refuses prefix queries.
#[test]
fn sst_reader_answers_may_match_for_a_custom_prefix_extractor() {
    let mut s = Scenario::new(PAIRS[0].0, PAIRS[0].1);
    s.prefix = Some(Prefix::Custom);
    s.whole_key_filtering = false;
    let dir = tempfile::tempdir().unwrap();
    let layout = write(&s, dir.path(), &s.rust);
    assert!(!layout.is_empty());
    for (_, name) in &layout {
        let sst = ribbon_sst::SstFile::open(dir.path().join(name)).unwrap();
        assert_eq!(
            sst.prefix_extractor().map(|p| p.to_string()).as_deref(),
            Some(CUSTOM_PREFIX_NAME)
        );
        assert!(!sst.prefix_extractor().unwrap().is_known());
        assert!(!sst.whole_key_filtering());
        assert!(sst.filter().blocks().len() == 1, "the table has its filter");
        for i in 0..2000 {
            assert!(sst.key_may_match(key(i)));
            assert!(sst.key_may_match(absent(i)), "a guess at a custom prefix");
        }
        assert!(sst.prefix_may_match(&key(0)).is_err());
    }
}

/// User-defined timestamps (`leveldb.BytewiseComparator.u64ts`): RocksDB's
/// builders strip the timestamp, so the filter holds the keys without it;
/// Get and MultiGet at a read timestamp ask for the key without it.
#[test]
fn user_defined_timestamps_filter_keys_without_the_timestamp() {
    let mut cases = Vec::new();
    for (native, rust) in PAIRS {
        cases.push(Scenario::new(native, rust));
    }
    let mut s = Scenario::new(PAIRS[0].0, PAIRS[0].1);
    s.partitioned = true;
    cases.push(s);
    let mut s = Scenario::new(PAIRS[0].0, PAIRS[0].1);
    s.ingest = true;
    cases.push(s);
    let mut s = Scenario::new(PAIRS[0].0, PAIRS[0].1);
    s.prefix = Some(Prefix::Fixed(7));
    s.whole_key_filtering = false;
    cases.push(s);
    for mut s in cases {
        s.timestamps = true;
        let o = round_trip(&s);
        if s.partitioned || s.prefix.is_some() {
            continue;
        }
        let reader = FilterReader::new(&o.blocks[0]);
        let mut with_ts_matches = 0;
        for i in 0..2000 {
            let mut k = key(i);
            assert!(
                reader.may_match(&k),
                "key {i} without its timestamp not in the filter"
            );
            k.extend_from_slice(&ts(1));
            with_ts_matches += usize::from(reader.may_match(&k));
        }
        assert!(
            with_ts_matches < 100,
            "the filter holds keys with timestamps: {with_ts_matches}"
        );
    }
}

/// `optimize_filters_for_hits`: RocksDB writes no filter for files of the
/// bottommost level (and skips the filter when reading the last level);
/// other levels keep theirs. Both policies give the same files the filters.
#[test]
fn optimize_filters_for_hits_skips_the_last_level() {
    for (optimize, (native, rust)) in [(true, PAIRS[0]), (true, PAIRS[1]), (false, PAIRS[0])] {
        let mut s = Scenario::new(native, rust);
        s.two_levels = true;
        s.options = format!("optimize_filters_for_hits={optimize}");
        let o = round_trip(&s);
        let l0: Vec<_> = o.layout.iter().filter(|(l, _, _)| *l == 0).collect();
        let last: Vec<_> = o.layout.iter().filter(|(l, _, _)| *l == 6).collect();
        assert!(!l0.is_empty() && !last.is_empty(), "{:?}", o.layout);
        assert!(l0.iter().all(|(_, f, _)| f.is_some()), "{:?}", o.layout);
        assert!(
            last.iter().all(|(_, f, _)| f.is_some() != optimize),
            "optimize_filters_for_hits={optimize}: {:?}",
            o.layout
        );
    }
}

/// `detect_filter_construct_corruption`: with no corruption, RocksDB's
/// builders checksum the hash entries and re-read the filter they wrote,
/// and succeed; the Rust policy writes the same bytes and succeeds.
#[test]
fn detect_filter_construct_corruption_writes_identical_filters() {
    let option = "block_based_table_factory={detect_filter_construct_corruption=true}";
    for (native, rust) in PAIRS {
        for partitioned in [false, true] {
            if partitioned && native.starts_with("bloom") {
                continue;
            }
            let mut s = Scenario::new(native, rust);
            s.partitioned = partitioned;
            s.options = option.into();
            round_trip(&s);
        }
    }
    // The option reached RocksDB: its OPTIONS file records it.
    let mut s = Scenario::new(PAIRS[0].0, PAIRS[0].1);
    s.options = option.into();
    s.num_keys = 100;
    let dir = tempfile::tempdir().unwrap();
    write(&s, dir.path(), &s.rust);
    let text: String = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("OPTIONS-"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(text.contains("detect_filter_construct_corruption=true"), "{text}");
    assert!(
        text.contains("filter_policy={id=rust.RibbonFilter:10:-1;"),
        "{text}"
    );
}

/// The filter policy name (`rocksdb.filter.policy`) and filter blocks of
/// the SST files in `dir` not in `seen`.
fn new_files(dir: &Path, seen: &mut HashSet<PathBuf>) -> Vec<(Option<String>, Vec<Vec<u8>>)> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "sst") && seen.insert(path.clone()) {
            let sst = ribbon_sst::SstFile::open(&path).unwrap();
            files.push((
                sst.properties().filter_policy(),
                sst.filter().blocks().into_iter().map(<[u8]>::to_vec).collect(),
            ));
        }
    }
    files
}

/// SetOptions replacing the filter policy itself on a live DB, native to
/// Rust and back, by both option names: each later flush builds with the
/// new policy (the same key set gives the same filter bytes whoever built
/// it), and reads stay correct, with identical statistics whichever policy
/// reopens the result.
#[test]
fn set_options_replaces_the_filter_policy_both_ways() {
    let _counters = counters_lock();
    for (native, rust) in PAIRS {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Scenario::new(native, rust);
        s.num_keys = 5000;
        let mut opts = options(&s, native);
        opts.set_disable_auto_compactions(true);
        let db = DB::open(&opts, dir.path()).unwrap();
        let mut seen = HashSet::new();
        let mut filters = Vec::new();
        let phases = [
            (native, None),
            (rust, Some("block_based_table_factory")),
            (native, Some("table_factory.filter_policy")),
            (rust, Some("table_factory.filter_policy")),
            (native, Some("block_based_table_factory")),
        ];
        for (round, (policy, how)) in phases.into_iter().enumerate() {
            match how {
                Some("block_based_table_factory") => db
                    .set_options(&[(
                        "block_based_table_factory",
                        &format!("{{filter_policy={policy}}}"),
                    )])
                    .unwrap(),
                Some(name) => db.set_options(&[(name, policy)]).unwrap(),
                None => {}
            }
            let built = rocks_bridge::counters().filters_built;
            for i in 0..s.num_keys {
                db.put(key(i), (round as u64).to_le_bytes()).unwrap();
            }
            db.flush().unwrap();
            let rust_built = rocks_bridge::counters().filters_built - built;
            // Other tests build Rust filters at the same time: only a Rust
            // phase needs a count here.
            if policy == rust {
                assert!(rust_built > 0, "round {round}: {policy} did not build in Rust");
            }
            let files = new_files(dir.path(), &mut seen);
            assert_eq!(files.len(), 1, "round {round}: one flush, one file");
            let (name, blocks) = &files[0];
            // The file names the policy that built it: RocksDB's Name() is
            // the id's family ("bloomfilter", "ribbonfilter"), the Rust
            // policy's its own ("rust.BloomFilter", "rust.RibbonFilter").
            let family = policy.split(':').next().unwrap();
            assert_eq!(
                name.as_deref(),
                Some(family),
                "round {round}: built by the wrong policy"
            );
            assert_eq!(blocks.len(), 1, "round {round}: one filter");
            filters.push(blocks[0].clone());
            for i in 0..s.num_keys {
                assert_eq!(
                    db.get(key(i)).unwrap().as_deref(),
                    Some(&(round as u64).to_le_bytes()[..])
                );
            }
        }
        assert!(
            filters.iter().all(|f| *f == filters[0]),
            "{native}/{rust}: the same keys gave different filters across the switches"
        );
        let useful = opts.get_ticker_count(rocksdb::statistics::Ticker::BloomFilterUseful);
        for i in 0..20_000 {
            assert!(db.get(absent(i)).unwrap().is_none());
        }
        assert!(
            opts.get_ticker_count(rocksdb::statistics::Ticker::BloomFilterUseful) > useful,
            "filters unused"
        );
        drop(db);
        let a = read(&s, dir.path(), native);
        let b = read(&s, dir.path(), rust);
        assert_eq!(a, b, "{native} and {rust} read the switched DB differently");
        assert!(a[USEFUL] > 0, "{a:?}");
    }
}
