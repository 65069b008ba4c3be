//! Faults on disk: a DB whose filter blocks were corrupted (garbage
//! trailers that no filter format uses, under a recomputed block checksum;
//! bytes flipped under the original checksum) still returns every key, under
//! RocksDB's native policy and under the Rust one, and nothing crashes.
//!
//! (A trailer rewritten into a *different valid* filter, say another Ribbon
//! block count, is indistinguishable from a real filter to any reader,
//! RocksDB's included; the block checksum is what guards against it.)

use ribbon_sst::{checksum, BlockKind, SstFile};
use rocksdb::{BlockBasedOptions, ColumnFamilyDescriptor, Options, DB};
use std::path::{Path, PathBuf};

const KEYS: u64 = 20_000;

fn key(i: u64) -> Vec<u8> {
    format!("{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).into_bytes()
}

fn options(policy: &str, fv: i32) -> Options {
    let mut table = BlockBasedOptions::default();
    table.set_format_version(fv);
    let mut opts = Options::default();
    opts.create_if_missing(true);
    opts.set_block_based_table_factory(&table);
    rocks_bridge::set_filter_policy(&mut opts, policy).unwrap();
    opts
}

fn open(opts: &Options, dir: &Path) -> DB {
    let cf = ColumnFamilyDescriptor::new(rocksdb::DEFAULT_COLUMN_FAMILY_NAME, opts.clone());
    DB::open_cf_descriptors(opts, dir, vec![cf]).unwrap()
}

fn sst_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect()
}

/// How the filter block's contents are damaged.
#[derive(Debug, Clone, Copy)]
enum Damage {
    /// The 5-byte filter trailer replaced; the block checksum recomputed, so
    /// RocksDB hands the damaged contents to the filter reader.
    Trailer([u8; 5]),
    /// A byte flipped without fixing the checksum: RocksDB's checksum
    /// verification rejects the block.
    Flip,
}

/// Applies `damage` to every filter block of the SST at `path`.
fn damage_filters(path: &Path, damage: Damage) {
    let sst = SstFile::open(path).unwrap();
    let footer = sst.footer().clone();
    let mut bytes = std::fs::read(path).unwrap();
    for (kind, handle) in sst.blocks().unwrap() {
        if kind != BlockKind::Filter {
            continue;
        }
        let (start, size) = (handle.offset as usize, handle.size as usize);
        let contents = &mut bytes[start..start + size];
        let t = size - 5;
        match damage {
            Damage::Trailer(trailer) => contents[t..].copy_from_slice(&trailer),
            Damage::Flip => {
                contents[size / 2] ^= 0x40;
                continue;
            }
        }
        // Block trailer: compression type, then the checksum of contents
        // plus that byte (with the format_version 6+ context modifier).
        let body_and_type = &bytes[start..start + size + 1];
        let sum = checksum::compute(footer.checksum_type, body_and_type).wrapping_add(
            checksum::context_modifier(footer.base_context_checksum, handle.offset),
        );
        bytes[start + size + 1..start + size + 5].copy_from_slice(&sum.to_le_bytes());
    }
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn damaged_filters_never_lose_keys() {
    let damages = [
        Damage::Trailer([0x80, 1, 2, 3, 4]),
        Damage::Trailer([0, 0, 0, 0, 0]),
        Damage::Trailer([0xFE, 7, 1, 0, 0]),
        Damage::Trailer([0xFF, 0, 0xE5, 0, 0]),
        Damage::Trailer([0xFF, 0, 31, 0, 0]),
        Damage::Trailer([0x05, 0xFF, 0xFF, 0xFF, 0x0F]),
        Damage::Trailer([0xFE, 3, 0, 0, 0]),
        Damage::Trailer([0xFC, 0xFF, 0xFF, 0xFF, 0xFF]),
        Damage::Flip,
    ];
    for (writer, fv) in [
        ("ribbonfilter:10:-1", 7),
        ("bloomfilter:10", 7),
        ("bloomfilter:10", 4),
        ("rust.RibbonFilter:10:-1", 6),
    ] {
        for damage in damages {
            let dir = tempfile::tempdir().unwrap();
            {
                let db = open(&options(writer, fv), dir.path());
                for i in 0..KEYS {
                    db.put(key(i), b"v").unwrap();
                }
                db.flush().unwrap();
                db.compact_range::<&[u8], &[u8]>(None, None);
            }
            let files = sst_files(dir.path());
            assert!(!files.is_empty());
            for f in &files {
                damage_filters(f, damage);
            }
            for reader in [
                "ribbonfilter:10:-1",
                "rust.RibbonFilter:10:-1",
                "rust.BloomFilter:10",
            ] {
                let db = open(&options(reader, fv), dir.path());
                for i in 0..KEYS {
                    let v = db
                        .get(key(i))
                        .unwrap_or_else(|e| panic!("{writer} {damage:?} read by {reader}: {e}"));
                    assert!(
                        v.is_some(),
                        "{writer} fv={fv} {damage:?} read by {reader}: key {i} lost"
                    );
                }
            }
        }
    }
}
