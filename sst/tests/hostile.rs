//! Crafted SST files that once exhausted memory or time (issue 13): each
//! shape goes through every entry point the `ribbon sst` commands use
//! (`SstFile::open` and `from_bytes`, the filter and its partitions as
//! `dump-filter` writes them, the key and prefix queries, `TableInfo`,
//! `verify_checksums`, `verify_filter`) in a child process under
//! `ulimit -v` and a time limit, and must give a one-line error or an
//! answer. Before the fix, each needed gigabytes (repeated handles, shared
//! keys) or minutes (repeated data handles).
//!
//! Legitimate tables of the same shapes (distinct partitions, a
//! maximally compressed ZSTD block) still open and verify.

mod support;

use ribbon::rocksdb::builder::FilterBuilder;
use ribbon::rocksdb::policy::{BuildContext, FilterPolicy};
use ribbon_sst::{BlockHandle, ChecksumType, Error, Filter, SstFile, TableInfo};
use std::time::Duration;
use support::child::{run_limited, Limits};
use support::sst_writer::{
    block, block_from_raw, handle_value, internal_key, varint_value, zstd_rle, RawEntry, SstWriter,
    NO_COMPRESSION, ZSTD,
};

/// Well under the bound of 2 GB and 10 s of CPU time (in release builds, as
/// `scripts/test.sh` runs them; unoptimized builds get more time).
const LIMITS: Limits = Limits {
    memory_kib: 1 << 20,
    time: Duration::from_secs(if cfg!(debug_assertions) { 120 } else { 10 }),
};

const PARTITIONED_FILTER: &str = "partitionedfilter.rocksdb.BuiltinBloomFilter";
const FULL_FILTER: &str = "fullfilter.rocksdb.BuiltinBloomFilter";
const PROPERTIES: &str = "rocksdb.properties";

fn user_key(i: usize) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn ribbon_filter(keys: &[Vec<u8>]) -> Vec<u8> {
    let policy: FilterPolicy = "ribbonfilter:10".parse().unwrap();
    let mut b = FilterBuilder::new(&policy, &BuildContext::sst_file_writer(5)).unwrap();
    for k in keys {
        b.add_key(k);
    }
    b.finish()
}

/// The properties of a table whose index separators are internal keys and
/// whose index values are plain handles.
fn index_properties() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("rocksdb.index.key.is.user.key", varint_value(0)),
        ("rocksdb.index.value.is.delta.encoded", varint_value(0)),
        ("rocksdb.filter.policy", b"ribbonfilter".to_vec()),
    ]
}

/// One data block holding `keys` (uncompressed), and its index block.
fn data_and_index(w: &mut SstWriter, keys: &[Vec<u8>]) -> BlockHandle {
    let entries: Vec<(Vec<u8>, Vec<u8>)> = keys.iter().map(|k| (internal_key(k), b"v".to_vec())).collect();
    let data = w.add_block(&block(&entries, 16), NO_COMPRESSION);
    let last = internal_key(keys.last().unwrap());
    w.add_block(&block(&[(last, handle_value(data))], 1), NO_COMPRESSION)
}

/// A table with a partitioned filter whose partition index lists
/// `partitions` (separator user key, handle).
fn partitioned_table(w: SstWriter, index: BlockHandle, partitions: &[(Vec<u8>, BlockHandle)]) -> Vec<u8> {
    let mut w = w;
    let entries: Vec<(Vec<u8>, Vec<u8>)> = partitions
        .iter()
        .map(|(sep, h)| (internal_key(sep), handle_value(*h)))
        .collect();
    let pindex = w.add_block(&block(&entries, 1), NO_COMPRESSION);
    let props = w.add_properties(&index_properties());
    w.finish(&[(PARTITIONED_FILTER, pindex), (PROPERTIES, props)], index)
}

/// What the `ribbon sst` commands ask of a table, through the library:
/// `info`, `query` (keys and prefixes), `dump-filter` (every partition's
/// contents) and `verify`. Every error is one line. Returns the errors.
fn exercise(bytes: &[u8], probes: &[Vec<u8>]) -> Vec<Error> {
    let dir = support::TempDir::new("hostile");
    let path = dir.0.join("t.sst");
    std::fs::write(&path, bytes).unwrap();
    let mut errors = Vec::new();
    for opened in [SstFile::open(&path), SstFile::from_bytes(bytes.to_vec())] {
        let sst = match opened {
            Ok(s) => s,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        let _ = TableInfo::new(&sst);
        let _ = sst.key_may_match_many(probes);
        for p in probes {
            let _ = sst.key_may_match(p);
            if let Err(e) = sst.prefix_may_match(p) {
                errors.push(e);
            }
        }
        if let Filter::Partitioned { partitions, .. } = sst.filter() {
            let dumped: usize = partitions.iter().map(|p| p.contents.len()).sum();
            assert!(dumped as u64 <= ribbon_sst::budget::BUDGET_FLOOR + 64 * bytes.len() as u64);
        }
        errors.extend(sst.verify_checksums().err());
        errors.extend(sst.verify_filter().err());
    }
    for e in &errors {
        let msg = e.to_string();
        assert!(!msg.is_empty() && !msg.contains('\n'), "{msg:?}");
    }
    errors
}

fn probes() -> Vec<Vec<u8>> {
    (0..50).map(user_key).collect()
}

/// The errors of `exercise` that are not "no prefix extractor".
fn structural(errors: Vec<Error>) -> Vec<String> {
    errors
        .into_iter()
        .filter(|e| !matches!(e, Error::Unsupported { .. }))
        .map(|e| e.to_string())
        .collect()
}

fn assert_all_mention(errors: &[String], what: &str) {
    assert!(!errors.is_empty(), "expected errors mentioning {what:?}");
    for e in errors {
        assert!(e.contains(what), "{e}");
    }
}

/// A table whose partition index lists one partition (`stored`, with
/// `compression`) `n` times; returns its length and the errors of every
/// entry point, which must all be about the handle order.
fn repeated_partitions(
    checksum: ChecksumType,
    stored: &[u8],
    compression: u8,
    n: usize,
) -> (usize, Vec<String>) {
    let mut w = SstWriter::new(checksum);
    let keys: Vec<Vec<u8>> = (0..10).map(user_key).collect();
    let index = data_and_index(&mut w, &keys);
    let p = w.add_block(stored, compression);
    let parts: Vec<_> = (0..n).map(|i| (user_key(i), p)).collect();
    let bytes = partitioned_table(w, index, &parts);
    let errors = structural(exercise(&bytes, &probes()));
    assert_all_mention(&errors, "corrupt filter partition index block");
    assert_all_mention(&errors, "handles must increase and not overlap");
    (bytes.len(), errors)
}

/// A partition index whose entries all point at the same 1 MB partition:
/// 3,000 entries once copied 3 GB.
#[test]
fn repeated_partition_handles_raw() {
    run_limited("repeated_partition_handles_raw", LIMITS, || {
        let mut filter = ribbon_filter(&(0..10).map(user_key).collect::<Vec<_>>());
        filter.resize(1 << 20, 0);
        repeated_partitions(ChecksumType::Crc32c, &filter, NO_COMPRESSION, 3000);
    });
}

/// The same through ZSTD: a 10 KB file whose 64 entries point at one block
/// of 256 MiB once asked for 16 GB.
#[test]
fn repeated_partition_handles_zstd() {
    run_limited("repeated_partition_handles_zstd", LIMITS, || {
        let (len, _) = repeated_partitions(ChecksumType::Xxh3, &zstd_rle(256 << 20, 0), ZSTD, 64);
        assert!(len < 16_000, "{len}");
    });
}

/// Entries that share all of the previous key and add nothing: 7 bytes on
/// disk each, a whole key copied each. `grow` adds one byte per entry
/// instead (keys all distinct, still quadratic).
fn shared_key_entries(first_len: usize, n: usize, grow: bool, value: &[u8]) -> Vec<RawEntry> {
    let mut entries = vec![RawEntry {
        shared: 0,
        non_shared: vec![b'a'; first_len],
        value: value.to_vec(),
    }];
    for i in 0..n {
        entries.push(RawEntry {
            shared: first_len + if grow { i } else { 0 },
            non_shared: if grow { vec![b'b'] } else { Vec::new() },
            value: value.to_vec(),
        });
    }
    entries
}

/// Puts shared-key entries (repeated keys, then growing keys) in the block
/// `place` makes of them, and checks that every entry point fails with
/// `repeated` (then a budget error) naming `block_name`. `value` gives
/// each entry's value, from the table written so far.
fn check_shared_keys(
    block_name: &str,
    repeated: &str,
    value: impl Fn(&mut SstWriter) -> Vec<u8>,
    place: impl Fn(SstWriter, BlockHandle, BlockHandle) -> Vec<u8>,
) {
    for (grow, what) in [(false, repeated), (true, "read budget exceeded")] {
        let mut w = SstWriter::new(ChecksumType::Crc32c);
        let keys: Vec<Vec<u8>> = (0..10).map(user_key).collect();
        let index = data_and_index(&mut w, &keys);
        let value = value(&mut w);
        let entries = shared_key_entries(512 << 10, 70_000, grow, &value);
        let crafted = w.add_block(&block_from_raw(&entries, usize::MAX), NO_COMPRESSION);
        let bytes = place(w, crafted, index);
        assert!(bytes.len() < 1_200_000);
        let errors = structural(exercise(&bytes, &probes()));
        assert_all_mention(&errors, what);
        assert_all_mention(&errors, block_name);
    }
}

/// A 1 MB metaindex of repeated long shared keys once asked for 35 GB.
#[test]
fn shared_keys_in_metaindex() {
    run_limited("shared_keys_in_metaindex", LIMITS, || {
        check_shared_keys(
            "metaindex block",
            "meta block name repeated",
            |w| handle_value(w.add_properties(&index_properties())),
            |w, metaindex, index| w.finish_with_metaindex(metaindex, index),
        );
    });
}

/// The same in the properties block once cost quadratic time.
#[test]
fn shared_keys_in_properties() {
    run_limited("shared_keys_in_properties", LIMITS, || {
        check_shared_keys(
            "properties block",
            "property name repeated",
            |_| b"1".to_vec(),
            |w, props, index| w.finish(&[(PROPERTIES, props)], index),
        );
    });
}

/// The same in a partition index (separators copied per partition; the
/// zero-size partitions are never read).
#[test]
fn shared_keys_in_partition_index() {
    run_limited("shared_keys_in_partition_index", LIMITS, || {
        let mut w = SstWriter::new(ChecksumType::Crc32c);
        let keys: Vec<Vec<u8>> = (0..10).map(user_key).collect();
        let index = data_and_index(&mut w, &keys);
        let n = 60_000;
        let mut entries = shared_key_entries(512 << 10, n, false, &[]);
        for (i, e) in entries.iter_mut().enumerate() {
            e.value = handle_value(BlockHandle::new(5 * i as u64, 0));
        }
        let pindex = w.add_block(&block_from_raw(&entries, usize::MAX), NO_COMPRESSION);
        let props = w.add_properties(&index_properties());
        let bytes = w.finish(&[(PARTITIONED_FILTER, pindex), (PROPERTIES, props)], index);
        assert!(bytes.len() as u64 > 5 * n as u64 + 5);
        let errors = structural(exercise(&bytes, &probes()));
        assert_all_mention(&errors, "read budget exceeded in filter partition index block");
    });
}

/// A table whose one 2 MB data block holds keys that each add one byte to
/// all of the previous key: 4 bytes an entry, 125 GB of key bytes for
/// `verify` to hash; `extra_props` join the table's properties. `verify`
/// must fail on the key budget, per open; `verify_checksums` passes.
fn check_shared_keys_in_data_block(extra_props: &[(&'static str, Vec<u8>)]) {
    let mut w = SstWriter::new(ChecksumType::Crc32c);
    let mut entries = shared_key_entries(8, 500_000, true, &[]);
    // Internal keys: the first one at least has the 8-byte footer.
    entries[0].non_shared = internal_key(b"");
    let data = w.add_block(&block_from_raw(&entries, usize::MAX), NO_COMPRESSION);
    let index = w.add_block(
        &block(&[(internal_key(b"~"), handle_value(data))], 1),
        NO_COMPRESSION,
    );
    // A filter that hashes every key it is asked about.
    let filter = w.add_block(&ribbon_filter(&probes()), NO_COMPRESSION);
    let mut props = index_properties();
    props.extend_from_slice(extra_props);
    let props = w.add_properties(&props);
    let bytes = w.finish(&[(FULL_FILTER, filter), (PROPERTIES, props)], index);
    let errors = structural(exercise(&bytes, &probes()));
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_all_mention(&errors, "read budget exceeded in data block at offset 0");
}

#[test]
fn shared_keys_in_data_block() {
    run_limited("shared_keys_in_data_block", LIMITS, || {
        check_shared_keys_in_data_block(&[]);
    });
}

/// The same shape, with `rocksdb.raw.key.size` claiming u64::MAX key
/// bytes: the recorded size is the file's word, not a bound, so it must not
/// lift the key budget (found in review: it made `verify` quadratic again).
#[test]
fn shared_keys_in_data_block_with_a_huge_raw_key_size() {
    run_limited(
        "shared_keys_in_data_block_with_a_huge_raw_key_size",
        LIMITS,
        || {
            check_shared_keys_in_data_block(&[("rocksdb.raw.key.size", varint_value(u64::MAX))]);
        },
    );
}

/// 128 distinct data blocks, each an 8 KB ZSTD frame of 256 MiB of zeros
/// (a valid empty block), in order: every handle is legal, but `verify`
/// decompressed all 32 GiB of a 1 MB file (found in review; about 30 s).
/// Data blocks now share a budget proportional to the file.
#[test]
fn many_data_blocks_of_the_densest_ratio() {
    run_limited("many_data_blocks_of_the_densest_ratio", LIMITS, || {
        let mut w = SstWriter::new(ChecksumType::Crc32c);
        let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..128)
            .map(|i| {
                let data = w.add_block(&zstd_rle(256 << 20, 0), ZSTD);
                (internal_key(&user_key(i)), handle_value(data))
            })
            .collect();
        let index = w.add_block(&block(&entries, 1), NO_COMPRESSION);
        let filter = w.add_block(&ribbon_filter(&[]), NO_COMPRESSION);
        let props = w.add_properties(&index_properties());
        let bytes = w.finish(&[(FULL_FILTER, filter), (PROPERTIES, props)], index);
        assert!(bytes.len() < 1_100_000, "{}", bytes.len());
        let errors = structural(exercise(&bytes, &probes()));
        // Opening and queries read no data block; verify_filter fails, per
        // open, once the data budget is spent.
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert_all_mention(&errors, "read budget exceeded in data block at offset");
    });
}

/// An index whose 200 entries all point at one 256 MiB ZSTD data block (a
/// 13 KB file): `verify` once decompressed it per entry, for minutes.
#[test]
fn repeated_data_handles() {
    run_limited("repeated_data_handles", LIMITS, || {
        let mut w = SstWriter::new(ChecksumType::Crc32c);
        // Zeros: a valid empty block, so each visit would go on to the next.
        let data = w.add_block(&zstd_rle(256 << 20, 0), ZSTD);
        let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..200)
            .map(|i| (internal_key(&user_key(i)), handle_value(data)))
            .collect();
        let index = w.add_block(&block(&entries, 1), NO_COMPRESSION);
        let filter = w.add_block(&ribbon_filter(&[]), NO_COMPRESSION);
        let props = w.add_properties(&index_properties());
        let bytes = w.finish(&[(FULL_FILTER, filter), (PROPERTIES, props)], index);
        assert!(bytes.len() < 16_000, "{}", bytes.len());
        let errors = structural(exercise(&bytes, &probes()));
        // Opening reads no data block; both verifications fail, per open.
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert_all_mention(&errors, "corrupt index block at offset");
        assert_all_mention(&errors, "handles must increase and not overlap");
    });
}

/// Legitimate tables of the same shapes: distinct partitions, several
/// data blocks, and a ZSTD block at the format's densest ratio.
#[test]
fn legitimate_tables_of_the_same_shapes_still_read() {
    run_limited("legitimate_tables_of_the_same_shapes_still_read", LIMITS, || {
        let keys: Vec<Vec<u8>> = (0..300).map(user_key).collect();
        let mut w = SstWriter::new(ChecksumType::Xxh3);
        // Three data blocks, then a maximally compressed (empty) one.
        let mut index_entries = Vec::new();
        for chunk in keys.chunks(100) {
            let entries: Vec<(Vec<u8>, Vec<u8>)> =
                chunk.iter().map(|k| (internal_key(k), b"v".to_vec())).collect();
            let h = w.add_block(&block(&entries, 16), NO_COMPRESSION);
            index_entries.push((internal_key(chunk.last().unwrap()), handle_value(h)));
        }
        let dense = w.add_block(&zstd_rle(64 << 20, 0), ZSTD);
        index_entries.push((internal_key(b"zzz"), handle_value(dense)));
        let index = w.add_block(&block(&index_entries, 1), NO_COMPRESSION);
        let parts: Vec<_> = keys
            .chunks(100)
            .map(|chunk| {
                let h = w.add_block(&ribbon_filter(chunk), NO_COMPRESSION);
                (chunk.last().unwrap().clone(), h)
            })
            .collect();
        let bytes = partitioned_table(w, index, &parts);
        let sst = SstFile::from_bytes(bytes.clone()).unwrap();
        let Filter::Partitioned { partitions, .. } = sst.filter() else {
            panic!("{:?}", sst.filter());
        };
        assert_eq!(partitions.len(), 3);
        assert!(sst.key_may_match_many(&keys).iter().all(|&m| m));
        let report = sst.verify_filter().unwrap();
        assert_eq!((report.keys, report.data_blocks, report.miss_count), (300, 4, 0));
        assert_eq!(sst.verify_checksums().unwrap(), 1 + 2 + 1 + 3 + 4);
        assert_eq!(structural(exercise(&bytes, &keys)), Vec::<String>::new());
    });
}

/// A partitioned filter whose partitions are ordered by a comparator this
/// reader does not know cannot be checked key by key: `verify` says so
/// (`unchecked`), and makes no checks it would then report as passed; the
/// same table with the bytewise comparator is checked.
#[test]
fn verify_says_when_it_could_not_check_the_filter() {
    let keys: Vec<Vec<u8>> = (0..200).map(user_key).collect();
    let table = |comparator: &str| {
        let mut w = SstWriter::new(ChecksumType::Crc32c);
        let mut index_entries = Vec::new();
        let mut parts = Vec::new();
        for chunk in keys.chunks(100) {
            let entries: Vec<(Vec<u8>, Vec<u8>)> =
                chunk.iter().map(|k| (internal_key(k), b"v".to_vec())).collect();
            let h = w.add_block(&block(&entries, 16), NO_COMPRESSION);
            index_entries.push((internal_key(chunk.last().unwrap()), handle_value(h)));
        }
        let index = w.add_block(&block(&index_entries, 1), NO_COMPRESSION);
        for chunk in keys.chunks(100) {
            let h = w.add_block(&ribbon_filter(chunk), NO_COMPRESSION);
            parts.push((internal_key(chunk.last().unwrap()), handle_value(h)));
        }
        let pindex = w.add_block(&block(&parts, 1), NO_COMPRESSION);
        let mut props = index_properties();
        props.push(("rocksdb.comparator", comparator.as_bytes().to_vec()));
        let props = w.add_properties(&props);
        SstFile::from_bytes(w.finish(&[(PARTITIONED_FILTER, pindex), (PROPERTIES, props)], index)).unwrap()
    };
    let known = table("leveldb.BytewiseComparator").verify_filter().unwrap();
    assert_eq!(
        (known.unchecked, known.whole_key_checks, known.miss_count),
        (None, 200, 0)
    );
    let unknown = table("my.ReverseComparator").verify_filter().unwrap();
    assert_eq!(
        (unknown.keys, unknown.whole_key_checks, unknown.prefix_checks),
        (200, 0, 0)
    );
    assert!(
        unknown.unchecked.is_some_and(|why| why.contains("comparator")),
        "{unknown:?}"
    );
}

/// `verify` streams the file: a table larger than the process's whole
/// memory limit is verified block by block (before, `verify` read the
/// whole file into memory).
#[test]
fn verify_streams_a_file_larger_than_the_memory_limit() {
    const BLOCKS: usize = 320;
    let limits = Limits {
        memory_kib: 256 << 10,
        ..LIMITS
    };
    run_limited(
        "verify_streams_a_file_larger_than_the_memory_limit",
        limits,
        || {
            let dir = support::TempDir::new("streaming");
            let path = dir.0.join("big.sst");
            let mut w = SstWriter::to_file(&path, ChecksumType::Crc32c);
            let mut keys = Vec::new();
            let mut index_entries = Vec::new();
            let value = vec![b'v'; 1000];
            for b in 0..BLOCKS {
                // A 1 MB data block of 1,000 keys.
                let chunk: Vec<Vec<u8>> = (b * 1000..(b + 1) * 1000).map(user_key).collect();
                let entries: Vec<(Vec<u8>, Vec<u8>)> =
                    chunk.iter().map(|k| (internal_key(k), value.clone())).collect();
                let h = w.add_block(&block(&entries, 16), NO_COMPRESSION);
                index_entries.push((internal_key(chunk.last().unwrap()), handle_value(h)));
                keys.extend(chunk);
            }
            let index = w.add_block(&block(&index_entries, 1), NO_COMPRESSION);
            let filter = w.add_block(&ribbon_filter(&keys), NO_COMPRESSION);
            drop(keys);
            let props = w.add_properties(&index_properties());
            w.finish(&[(FULL_FILTER, filter), (PROPERTIES, props)], index);
            let len = std::fs::metadata(&path).unwrap().len();
            assert!(len > 300 << 20, "{len}");
            let sst = SstFile::open(&path).unwrap();
            assert_eq!(sst.verify_checksums().unwrap(), 1 + 2 + 1 + BLOCKS);
            let report = sst.verify_filter().unwrap();
            assert_eq!(
                (report.keys, report.data_blocks, report.miss_count),
                (BLOCKS as u64 * 1000, BLOCKS as u64, 0)
            );
        },
    );
}

/// A block-based filter block (RocksDB before 7.0) whose offset array is
/// `filters` offsets then `array_offset` and `base_lg`, after `body`.
fn block_based_filter_table(body: &[u8], offsets: &[u32], array_offset: u32, base_lg: u8) -> Vec<u8> {
    let keys: Vec<Vec<u8>> = (0..20).map(user_key).collect();
    let mut w = SstWriter::new(ChecksumType::Crc32c);
    let index = data_and_index(&mut w, &keys);
    let mut filter = body.to_vec();
    for o in offsets {
        filter.extend(o.to_le_bytes());
    }
    filter.extend(array_offset.to_le_bytes());
    filter.push(base_lg);
    let f = w.add_block(&filter, NO_COMPRESSION);
    let props = w.add_properties(&index_properties());
    w.finish(
        &[("filter.rocksdb.BuiltinBloomFilter", f), (PROPERTIES, props)],
        index,
    )
}

#[test]
fn block_based_filter_offsets_outside_the_block() {
    run_limited("block_based_filter_offsets_outside_the_block", LIMITS, || {
        let body = [0xffu8; 9];
        for (offsets, array_offset, base_lg, what) in [
            (&[0u32][..], 0xffff_fff0u32, 11u8, "offset array at"),
            (&[0, 1_000_000][..], 9, 11, "starts at 1000000"),
            (&[5, 0][..], 9, 11, "starts at 0"),
            (&[0][..], 9, 200, "base_lg 200"),
            (&[0][..], 7, 11, "not whole 4-byte offsets"),
        ] {
            let errors = structural(exercise(
                &block_based_filter_table(&body, offsets, array_offset, base_lg),
                &probes(),
            ));
            assert_all_mention(&errors, what);
        }
        // The same shape, well formed, opens and answers.
        let bytes = block_based_filter_table(&body, &[0], 9, 11);
        let sst = SstFile::from_bytes(bytes).unwrap();
        assert!(matches!(sst.filter(), Filter::BlockBased { .. }));
        assert!(sst.key_may_match(user_key(3)));
        assert_eq!(sst.verify_filter().unwrap().miss_count, 0);
    });
}

/// A table of many tiny ZSTD data blocks and a large compression
/// dictionary: each block's decoder copies the dictionary, so a walk over
/// the data blocks must run out of budget rather than copy it per block
/// without bound (here 40 GB).
#[test]
fn a_large_dictionary_with_many_tiny_zstd_blocks() {
    run_limited("a_large_dictionary_with_many_tiny_zstd_blocks", LIMITS, || {
        let mut w = SstWriter::new(ChecksumType::Crc32c);
        let contents = block(&[(internal_key(b"k"), b"v".to_vec())], 16);
        let mut stored = Vec::new();
        ribbon_sst::coding::put_varint64(&mut stored, contents.len() as u64);
        stored.extend(ruzstd::encoding::compress_to_vec(
            &contents[..],
            ruzstd::encoding::CompressionLevel::Uncompressed,
        ));
        let mut index_entries = Vec::new();
        for i in 0..20_000 {
            let h = w.add_block(&stored, ZSTD);
            index_entries.push((internal_key(&user_key(i)), handle_value(h)));
        }
        let index = w.add_block(&block(&index_entries, 1), NO_COMPRESSION);
        let dict = w.add_block(&vec![b'd'; 2 << 20], NO_COMPRESSION);
        let props = w.add_properties(&index_properties());
        let bytes = w.finish(&[("rocksdb.compression_dict", dict), (PROPERTIES, props)], index);
        let errors = structural(exercise(&bytes, &probes()));
        assert_all_mention(&errors, "budget");
    });
}
