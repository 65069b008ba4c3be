//! SST files written by RocksDB 6.25.3 and 6.14.6 (the prebuilt libraries
//! of the PyPI wheels `lbry-rocksdb` 0.8.2 and `faust-streaming-rocksdb`
//! 0.9.3; `fixtures-wild/generate/README.md` says how they were made):
//! block-based filters at format_version 0 to 5, data blocks compressed
//! with a compression dictionary (ZSTD raw and trained, LZ4, zlib), and
//! every codec RocksDB has on Linux (BZip2 from 6.14.6). Each `.expected` line is that writer's own answer
//! to one `Get` of the `.probes` line: 0 when its
//! `rocksdb.bloom.filter.useful` ticker rose.

mod support;

use ribbon_sst::{Filter, ReaderVersion, TableInfo};
use std::path::PathBuf;
use support::recorded::Recorded as Fixture;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures-wild")
}

fn fixtures() -> Vec<Fixture> {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".sst").map(str::to_string)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 15, "fixtures missing in {}", dir().display());
    names.iter().map(|name| Fixture::open(&dir(), name)).collect()
}

#[test]
fn every_probe_answers_as_the_writer_did() {
    for f in fixtures() {
        f.check_answers();
    }
}

#[test]
fn every_file_verifies() {
    for f in fixtures() {
        let report = f.verify(40);
        assert_eq!(
            (report.keys, report.whole_key_checks, report.miss_count),
            (300, 300, 0),
            "{}",
            f.name
        );
        assert!(report.data_blocks > 30, "{}", f.name);
    }
}

#[test]
fn block_based_filters_are_described_and_current_rocksdb_ignores_them() {
    let mut seen = 0;
    for f in fixtures().into_iter().filter(|f| f.name.contains("blockbased")) {
        seen += 1;
        let Filter::BlockBased { data_blocks, .. } = f.sst.filter() else {
            panic!("{}: {:?}", f.name, f.sst.filter());
        };
        let b = f.sst.filter().block_based().unwrap();
        // One filter per 2 KiB of data blocks (kFilterBaseLg 11).
        assert_eq!(b.base_lg(), 11, "{}", f.name);
        let last = data_blocks.last().unwrap().1.offset;
        assert_eq!(b.len() as u64, (last >> 11) + 1, "{}", f.name);
        let info = TableInfo::new(&f.sst);
        assert_eq!(
            (info.filter_layout, info.filter_kind.as_str(), info.family()),
            ("block-based", "BlockBasedBloom", "BlockBasedBloom"),
            "{}",
            f.name
        );
        assert_eq!(info.block_filters, b.len());
        assert_eq!(Some(info.filter_bytes), info.filter_size_property, "{}", f.name);
        assert!(!info.probes.is_empty() && info.expected_fp_rate.is_some_and(|p| p > 0.0 && p < 0.5));
        // RocksDB 7 and later: every key may match.
        let current = f.sst.key_may_match_many_as(&f.probes, ReaderVersion::Current);
        assert!(current.iter().all(|&m| m), "{}", f.name);
        assert!(f.sst.prefix_may_match(b"user").is_err());
    }
    assert_eq!(seen, 10);
}

#[test]
fn dictionary_tables_need_their_dictionary() {
    let mut seen = Vec::new();
    for f in fixtures().into_iter().filter(|f| f.name.starts_with("dict_")) {
        let dict = f.sst.compression_dictionary();
        assert!(!dict.is_empty(), "{}", f.name);
        let trained = dict.starts_with(&0xEC30_A437u32.to_le_bytes());
        assert_eq!(
            trained,
            f.name.contains("trained") || f.name.contains("blockbased"),
            "{}",
            f.name
        );
        assert_eq!(TableInfo::new(&f.sst).compression_dict_bytes, dict.len() as u64);
        // Without the dictionary, some data block does not decompress to
        // what it does with it.
        let bytes = std::fs::read(dir().join(format!("{}.sst", f.name))).unwrap();
        let fv = f.sst.footer().format_version;
        let mut differ = 0;
        for h in f.sst.data_block_handles().unwrap() {
            let (start, end) = (h.offset as usize, (h.offset + h.size) as usize);
            let decompress = |dict: &[u8]| {
                ribbon_sst::compression::decompress_with_dict(
                    bytes[end],
                    &bytes[start..end],
                    fv,
                    &ribbon_sst::BlockKind::Data,
                    h.offset,
                    &mut ribbon_sst::budget::ReadBudget::unlimited(),
                    dict,
                )
            };
            let (with, without) = (decompress(dict), decompress(&[]));
            assert!(with.is_ok(), "{}", f.name);
            differ += usize::from(without.ok() != with.ok());
        }
        assert!(differ > 0, "{}: the dictionary was not needed", f.name);
        seen.push(ribbon_sst::compression::name(
            bytes[(f.sst.data_block_handles().unwrap()[0].offset
                + f.sst.data_block_handles().unwrap()[0].size) as usize],
        ));
    }
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen, ["LZ4", "ZSTD", "Zlib"]);
}

#[test]
fn every_codec_has_a_native_fixture() {
    let mut codecs: Vec<&str> = Vec::new();
    for f in fixtures() {
        let bytes = std::fs::read(dir().join(format!("{}.sst", f.name))).unwrap();
        for h in f.sst.data_block_handles().unwrap() {
            let name = ribbon_sst::compression::name(bytes[(h.offset + h.size) as usize]);
            if !codecs.contains(&name) {
                codecs.push(name);
            }
        }
    }
    codecs.sort_unstable();
    assert_eq!(
        codecs,
        ["BZip2", "LZ4", "LZ4HC", "NoCompression", "Snappy", "ZSTD", "Zlib"]
    );
}
