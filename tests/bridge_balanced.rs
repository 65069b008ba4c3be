//! `rust.BalancedRibbon` inside RocksDB: RocksDB's builder for the id writes
//! exactly the library's bytes, RocksDB's own reader takes a Balanced block
//! for "always true", tables written through a real database carry Balanced
//! blocks under their own family that `ribbon-sst` reads and verifies, and
//! `bloom_before_level` changes on the live policy as on `ribbonfilter`.
//! (Get/MultiGet round trips, OPTIONS files, partitioned filters, readers
//! during compactions and the reopen by stock RocksDB are in
//! `tests/bridge_round_trip.rs`.)

use ribbon::plugin::balanced_policy::{BalancedBuilder, BalancedPolicy, COMPATIBILITY_NAME};
use ribbon::plugin::Family;
use ribbon::rocksdb::policy::{BuildContext, CompactionStyle, CreationReason};
use ribbon_compat::harness::{NativeBuilder, NativeReader, Reason};
use rocksdb::statistics::Ticker;
use rocksdb::{BlockBasedOptions, Options, DB};

#[path = "util/cli.rs"]
mod cli;
#[path = "util/round_trip.rs"]
mod round_trip;
use round_trip::policy::sst_files;

/// `n` keys spread over the whole key space (sets of different salts
/// interleave, so a table's key range never rules a lookup out).
fn keys(n: u64, salt: u64) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            format!(
                "{:016x}",
                ribbon::core::hash::get_slice_hash64(&[salt.to_le_bytes(), i.to_le_bytes()].concat())
            )
            .into_bytes()
        })
        .collect()
}

/// The library's block for `keys` under `id` for a compaction output at
/// `level`.
fn library_block(id: &str, level: i32, keys: &[Vec<u8>]) -> Vec<u8> {
    let ctx = BuildContext {
        reason: CreationReason::Compaction,
        compaction_style: CompactionStyle::Level,
        ..BuildContext::at_level(6, Some(level))
    };
    let mut b = BalancedBuilder::new(&BalancedPolicy::parse(id).unwrap(), &ctx).unwrap();
    for k in keys {
        b.add_key(k);
    }
    b.finish()
}

fn rocksdb_block(id: &str, level: i32, keys: &[Vec<u8>]) -> Vec<u8> {
    rocks_bridge::register();
    let mut b = NativeBuilder::new(id, 6, Reason::Compaction, level).unwrap();
    for k in keys {
        b.add_key(k);
    }
    b.finish()
}

#[test]
fn rocksdbs_builder_writes_the_librarys_bytes_smaller_than_ribbonfilter() {
    for n in [0u64, 30, 1000, 100_000] {
        let members = keys(n, 1);
        for (id, level) in [("rust.BalancedRibbon:10", 1), ("rust.BalancedRibbon:6.5:3", 1)] {
            let through_rocksdb = rocksdb_block(id, level, &members);
            assert_eq!(
                through_rocksdb,
                library_block(id, level, &members),
                "{id}, {n} keys"
            );
        }
        // Never larger than ribbonfilter's block; from 10^5 entries about
        // 3 % smaller (few entries get ribbonfilter's own block).
        let balanced = rocksdb_block("rust.BalancedRibbon:10", 1, &members).len();
        let ribbon = rocksdb_block("ribbonfilter:10", 1, &members).len();
        let bound = if n >= 100_000 {
            0.975 * ribbon as f64
        } else {
            ribbon as f64
        };
        assert!(
            balanced as f64 <= bound,
            "{n} keys: {balanced} bytes against ribbonfilter's {ribbon}"
        );
    }
}

#[test]
fn rocksdbs_own_reader_takes_a_balanced_block_for_always_true() {
    let block = rocksdb_block("rust.BalancedRibbon:10", 1, &keys(20_000, 2));
    assert_eq!(block[block.len() - 5..], ribbon::plugin::balanced_policy::TRAILER);
    let native = NativeReader::new(&block);
    let absent = keys(5000, 3);
    assert!(absent.iter().all(|k| native.may_match(k)));
    assert!(native.may_match_batch(&absent).into_iter().all(|m| m));
    // The policy's own reader filters them.
    let own = NativeReader::for_policy("rust.BalancedRibbon:10", &block).unwrap();
    let passed = absent.iter().filter(|k| own.may_match(k)).count();
    assert!(
        passed < absent.len() / 50,
        "{passed} of {} absent keys passed",
        absent.len()
    );
}

#[test]
fn tables_carry_balanced_blocks_that_ribbon_sst_reads_and_verifies() {
    rocks_bridge::register();
    for partitioned in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut table = BlockBasedOptions::default();
        if partitioned {
            table.set_partition_filters(true);
            table.set_index_type(rocksdb::BlockBasedIndexType::TwoLevelIndexSearch);
            // Partitions of about 18,000 entries: under about 10^4 entries
            // a block is ribbonfilter's own (it is smaller there).
            table.set_metadata_block_size(16 * 1024);
        }
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.enable_statistics();
        opts.set_disable_auto_compactions(true);
        opts.set_block_based_table_factory(&table);
        // bloom_before_level -1: Balanced for flushes too (the compaction
        // of one flushed file is a trivial move).
        rocks_bridge::set_filter_policy(&mut opts, "rust.BalancedRibbon:10:-1").unwrap();
        let members = keys(60_000, 4);
        let db = DB::open(&opts, dir.path()).unwrap();
        for (i, k) in members.iter().enumerate() {
            db.put(k, (i as u64).to_le_bytes()).unwrap();
        }
        db.flush().unwrap();
        db.compact_range::<&[u8], &[u8]>(None, None);
        // Filters in use: absent keys are ruled out.
        let absent = keys(10_000, 5);
        let before = opts.get_ticker_count(Ticker::BloomFilterUseful);
        assert!(absent.iter().all(|k| db.get(k).unwrap().is_none()));
        let useful = opts.get_ticker_count(Ticker::BloomFilterUseful) - before;
        assert!(useful > 9_700, "partitioned {partitioned}: useful {useful}");
        assert!(members.iter().all(|k| db.get(k).unwrap().is_some()));
        drop(db);

        let files = sst_files(dir.path());
        assert_eq!(files.len(), 1, "one compacted file");
        let sst = ribbon_sst::SstFile::open(&files[0]).unwrap();
        assert_eq!(sst.filter().family(), Family::BalancedRibbon);
        let name = sst.filter_block_name().unwrap();
        assert!(name.ends_with(COMPATIBILITY_NAME), "{name}");
        let summary = sst.filter().summary();
        assert!(
            summary.kinds.iter().any(|(k, _)| *k == "BalancedRibbon"),
            "partitioned {partitioned}: {:?}",
            summary.kinds
        );
        assert_eq!(
            sst.properties().filter_policy().as_deref(),
            Some("rust.BalancedRibbon")
        );
        // No false negative, one by one and batched; absent keys filtered.
        assert!(members.iter().all(|k| sst.key_may_match(k)));
        assert!(sst.key_may_match_many(&members).into_iter().all(|m| m));
        let passed = sst.key_may_match_many(&absent).into_iter().filter(|&m| m).count();
        assert!(
            passed < 300,
            "partitioned {partitioned}: {passed} absent keys passed"
        );
        let report = sst.verify_filter().unwrap();
        assert_eq!((report.miss_count, report.unchecked), (0, None));
        assert_eq!(report.whole_key_checks, members.len() as u64);

        // The `ribbon sst` commands read the family too.
        let path = files[0].to_str().unwrap();
        let info = String::from_utf8(cli::run(&["sst", "info", "--json", path])).unwrap();
        assert!(info.contains("BalancedRibbon"), "{info}");
        cli::run(&["sst", "verify", path]);
        let keys_file = dir.path().join("probe-keys.txt");
        let probe: Vec<&Vec<u8>> = members.iter().take(500).chain(absent.iter().take(500)).collect();
        let text: Vec<u8> = probe
            .iter()
            .flat_map(|k| k.iter().copied().chain([b'\n']))
            .collect();
        std::fs::write(&keys_file, text).unwrap();
        let answers = String::from_utf8(cli::run(&[
            "sst",
            "query",
            path,
            "--keys",
            keys_file.to_str().unwrap(),
        ]))
        .unwrap();
        let ones: Vec<bool> = answers.lines().map(|l| l.ends_with('1')).collect();
        assert_eq!(ones.len(), 1000, "{answers}");
        assert!(ones[..500].iter().all(|&m| m), "a member answered 0");
        assert!(ones[500..].iter().filter(|&&m| m).count() < 30);
    }
}

#[test]
fn bloom_before_level_changes_on_the_live_policy() {
    rocks_bridge::register();
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_disable_auto_compactions(true);
    opts.set_block_based_table_factory(&BlockBasedOptions::default());
    rocks_bridge::set_filter_policy(&mut opts, "rust.BalancedRibbon:10:0").unwrap();
    let db = DB::open(&opts, dir.path()).unwrap();
    let mut kinds = Vec::new();
    for (round, level) in ["0", "-1"].into_iter().enumerate() {
        db.set_options(&[("table_factory.filter_policy.bloom_before_level", level)])
            .unwrap();
        for k in keys(20_000, 10 + round as u64) {
            db.put(k, b"v").unwrap();
        }
        db.flush().unwrap();
        let newest = sst_files(dir.path()).pop().unwrap();
        let sst = ribbon_sst::SstFile::open(&newest).unwrap();
        kinds.push(sst.filter().summary().kind_label());
    }
    // bloom_before_level 0: a flush counts as level -1, so it gets Bloom;
    // -1: Balanced everywhere.
    assert_eq!(kinds, ["FastLocalBloom", "BalancedRibbon"]);
    let options_file = ribbon_sst::db::OptionsFile::newest(dir.path()).unwrap().unwrap();
    let text = std::fs::read_to_string(options_file).unwrap();
    assert!(text.contains("rust.BalancedRibbon:10:-1"), "{text}");
}
