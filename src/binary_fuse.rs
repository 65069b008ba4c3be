//! xorf's [`BinaryFuse8`] as a RocksDB filter policy, through
//! [`rocks_bridge::custom`]: a filter from a well-kept crate, with a file
//! format of its own, next to the `ribbon` crate's.
//!
//! [`register`] makes the id `example.BinaryFuse8` (no arguments) known to
//! RocksDB: options strings
//! (`block_based_table_factory={filter_policy=example.BinaryFuse8}`),
//! OPTIONS files and [`rocks_bridge::set_filter_policy`] then select it. Its
//! filter blocks are stored under the compatibility name
//! `example.BinaryFuse8`, so RocksDB's native policies ignore them (a
//! database written with it reads correctly, unfiltered, without it).
//!
//! Keys are hashed with [`ribbon::core::hash::get_slice_hash64`] (RocksDB's
//! 64-bit XXH3 of the key); the builder sorts and deduplicates the hashes
//! (xorf needs distinct keys) and builds `BinaryFuse8::try_from(&hashes)`:
//! about 9 bits per key, false-positive rate about 2^-8.
//!
//! The bytes are a function of the keys: the workspace builds xorf without
//! its `uniform-random` feature, which would fill the fingerprint slots no
//! key determines from a random generator.
//!
//! # Filter block format, version 1
//!
//! All integers little-endian:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `XBF8` |
//! | 4 | 4 | format version, 1 |
//! | 8 | 8 | `seed` |
//! | 16 | 4 | `segment_length` (a power of two) |
//! | 20 | 4 | `segment_length_mask` (`segment_length - 1`) |
//! | 24 | 4 | `segment_count_length` (a multiple of `segment_length`) |
//! | 28 | 4 | number of fingerprints, `segment_count_length + 2 * segment_length` |
//! | 32 | n | the fingerprints, one byte each |
//!
//! The first five fields after the version are xorf 0.13's
//! [`xorf::Descriptor`] and `BinaryFuse8::fingerprints`. A block that does
//! not satisfy every constraint above, or whose length is not exactly
//! `32 + n`, is malformed: its reader answers "may match" for every key
//! (never a false negative, never a panic). A builder whose construction
//! fails writes [`rocks_bridge::custom::ALWAYS_TRUE_FILTER`], which the
//! bridge reads as "may match" for every key.

use ribbon::rocksdb::policy::BuildContext;
use rocks_bridge::custom::{self, Builder, FilterBlock, Policy, Reader};
use std::sync::{Arc, Once};
use xorf::{BinaryFuse8, Descriptor, Filter};

/// The policy's registered name, id and compatibility name.
pub const NAME: &str = "example.BinaryFuse8";
/// The first 4 bytes of every filter block this policy writes.
pub const MAGIC: [u8; 4] = *b"XBF8";
/// The format version written (and the only one read).
pub const VERSION: u32 = 1;
/// Bytes before the fingerprints.
pub const HEADER_LEN: usize = 32;

/// Registers [`NAME`] with RocksDB. Idempotent and thread-safe; call it
/// before RocksDB parses options (or an OPTIONS file) that name the policy.
///
/// # Panics
/// If another registration already took the name (a bug in the program).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        custom::register_policy(NAME, |args| match args {
            None => Ok(Arc::new(BinaryFuse8Policy) as Arc<dyn Policy>),
            Some(a) => Err(format!(
                "{NAME} takes no arguments (use the id {NAME:?}), got {a:?}"
            )),
        })
        .expect("example.BinaryFuse8 registers once");
    });
}

/// The `example.BinaryFuse8` policy (see the [module](self) docs).
#[derive(Debug, Clone, Copy, Default)]
pub struct BinaryFuse8Policy;

/// Collects key hashes for one filter block.
#[derive(Debug, Default)]
pub struct BinaryFuse8Builder {
    hashes: Vec<u64>,
}

/// Answers queries over one filter block; `None`: a malformed block, every
/// key may match.
#[derive(Debug)]
pub struct BinaryFuse8Reader(Option<BinaryFuse8>);

impl Policy for BinaryFuse8Policy {
    fn id(&self) -> String {
        NAME.into()
    }
    fn compatibility_name(&self) -> String {
        NAME.into()
    }
    fn builder(&self, _: &BuildContext) -> Option<Box<dyn Builder>> {
        Some(Box::<BinaryFuse8Builder>::default())
    }
    fn reader(&self, filter: FilterBlock) -> Box<dyn Reader> {
        Box::new(BinaryFuse8Reader::new(&filter))
    }
}

/// The serialised block of `filter` (the module's format).
pub fn to_bytes(filter: &BinaryFuse8) -> Vec<u8> {
    let d = &filter.descriptor;
    let mut out = Vec::with_capacity(HEADER_LEN + filter.fingerprints.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&d.seed.to_le_bytes());
    out.extend_from_slice(&d.segment_length.to_le_bytes());
    out.extend_from_slice(&d.segment_length_mask.to_le_bytes());
    out.extend_from_slice(&d.segment_count_length.to_le_bytes());
    let n = u32::try_from(filter.fingerprints.len()).expect("xorf indexes fingerprints with u32");
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&filter.fingerprints);
    out
}

/// Parses a block of the module's format; `None` when it is malformed (any
/// constraint of the format broken), so that queries could index out of
/// the fingerprints.
pub fn from_bytes(bytes: &[u8]) -> Option<BinaryFuse8> {
    let u32_at = |o: usize| Some(u32::from_le_bytes(bytes.get(o..o + 4)?.try_into().ok()?));
    if bytes.get(..4)? != MAGIC || u32_at(4)? != VERSION {
        return None;
    }
    let seed = u64::from_le_bytes(bytes.get(8..16)?.try_into().ok()?);
    let (segment_length, segment_length_mask, segment_count_length, n) =
        (u32_at(16)?, u32_at(20)?, u32_at(24)?, u32_at(28)?);
    // xorf's `hash_of_hash`: h0 < segment_count_length; h1 and h2 are h0 plus
    // one and two segment lengths with bits of the mask flipped, so they stay
    // inside the segment-aligned block they fall in: below
    // segment_count_length + 2 * segment_length, computed in u32 without
    // overflow.
    let needed = u64::from(segment_count_length) + 2 * u64::from(segment_length);
    let well_formed = segment_length.is_power_of_two()
        && segment_length_mask == segment_length - 1
        && segment_count_length % segment_length == 0
        && needed <= u64::from(u32::MAX)
        && u64::from(n) == needed
        && bytes.len() - HEADER_LEN == n as usize;
    well_formed.then(|| BinaryFuse8 {
        descriptor: Descriptor {
            seed,
            segment_length,
            segment_length_mask,
            segment_count_length,
        },
        fingerprints: bytes[HEADER_LEN..].into(),
    })
}

/// The number of fingerprints xorf 0.13's `BinaryFuse8::try_from` makes
/// for `n` distinct keys (the sizing of its `bfuse_from_impl`, arity 3).
fn fingerprint_count(n: usize) -> usize {
    let size = n.min(u32::MAX as usize) as u32;
    let segment_length: u32 = if size == 0 {
        4
    } else {
        (1u32 << ((f64::from(size).ln() / 3.33f64.ln() + 2.25).floor() as u32).min(31)).min(262_144)
    };
    let size_factor = 1.125f64.max(0.875 + 0.25 * 1_000_000f64.ln() / f64::from(size).ln());
    let capacity = if size > 1 {
        (f64::from(size) * size_factor).round() as u64
    } else {
        0
    };
    let segments = capacity.div_ceil(u64::from(segment_length));
    let segment_count = if segments < 3 { 1 } else { segments - 2 };
    ((segment_count + 2) * u64::from(segment_length)) as usize
}

impl Builder for BinaryFuse8Builder {
    fn add_key(&mut self, key: &[u8]) {
        self.hashes.push(ribbon::core::hash::get_slice_hash64(key));
    }
    fn estimate_entries_added(&self) -> usize {
        self.hashes.len()
    }
    fn finish(&mut self) -> Vec<u8> {
        let mut hashes = std::mem::take(&mut self.hashes);
        hashes.sort_unstable();
        hashes.dedup();
        match BinaryFuse8::try_from(&hashes) {
            Ok(filter) => to_bytes(&filter),
            // xorf gave up (1,000 seeds): a block every reader answers "may
            // match" for.
            Err(_) => custom::ALWAYS_TRUE_FILTER.to_vec(),
        }
    }
    fn calculate_space(&self, num_entries: usize) -> usize {
        HEADER_LEN + fingerprint_count(num_entries)
    }
    fn estimated_fp_rate(&self, _: usize, _: usize) -> f64 {
        1.0 / 256.0
    }
}

impl BinaryFuse8Reader {
    /// A reader over `block` (a one-time copy of its fingerprints).
    pub fn new(block: &[u8]) -> Self {
        Self(from_bytes(block))
    }
    /// Whether the block was well-formed (the reader filters at all).
    pub fn is_well_formed(&self) -> bool {
        self.0.is_some()
    }
}

impl Reader for BinaryFuse8Reader {
    fn may_match(&self, key: &[u8]) -> bool {
        match &self.0 {
            Some(f) => f.contains(&ribbon::core::hash::get_slice_hash64(key)),
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u64) -> Vec<u8> {
        format!("k{i:08}").into_bytes()
    }

    fn build(keys: impl IntoIterator<Item = Vec<u8>>) -> Vec<u8> {
        let mut b = BinaryFuse8Builder::default();
        for k in keys {
            b.add_key(&k);
        }
        b.finish()
    }

    #[test]
    fn no_false_negatives_and_about_one_in_256_false_positives() {
        for n in [0u64, 1, 2, 3, 5, 100, 1000, 20_000] {
            // Duplicates as RocksDB may add them.
            let block = build((0..n).chain(0..n / 2).map(key));
            let r = BinaryFuse8Reader::new(&block);
            assert!(r.is_well_formed(), "{n} keys");
            assert!((0..n).all(|i| r.may_match(&key(i))), "{n} keys");
            assert_eq!(
                block.len(),
                BinaryFuse8Builder::default().calculate_space(n as usize),
                "{n} keys"
            );
            let fp = (1_000_000..1_100_000).filter(|&i| r.may_match(&key(i))).count();
            assert!(fp < 100_000 / 256 * 3 / 2 + 20, "{n} keys: {fp} false positives");
        }
    }

    #[test]
    fn the_bytes_are_a_function_of_the_keys() {
        let a = build((0..5000).map(key));
        assert_eq!(a, build((0..5000).map(key)));
        assert_ne!(a, build((1..5001).map(key)));
    }

    #[test]
    fn malformed_blocks_match_everything() {
        let good = build((0..1000).map(key));
        assert!(BinaryFuse8Reader::new(&good).is_well_formed());
        let mut bad: Vec<Vec<u8>> = vec![
            Vec::new(),
            good[..HEADER_LEN].to_vec(),
            good[..good.len() - 1].to_vec(),
        ];
        let mut longer = good.clone();
        longer.push(0);
        bad.push(longer);
        // Each header byte changed (the seed excepted: any seed is valid).
        for i in (0..HEADER_LEN).filter(|i| !(8..16).contains(i)) {
            for delta in [1u8, 0x80] {
                let mut b = good.clone();
                b[i] = b[i].wrapping_add(delta);
                bad.push(b);
            }
        }
        for b in &bad {
            let r = BinaryFuse8Reader::new(b);
            assert!(!r.is_well_formed());
            assert!((0..2000).all(|i| r.may_match(&key(i))));
        }
        // Huge segment fields whose sum would overflow u32.
        let mut b = good.clone();
        b[16..20].copy_from_slice(&(1u32 << 31).to_le_bytes());
        b[20..24].copy_from_slice(&((1u32 << 31) - 1).to_le_bytes());
        assert!(!BinaryFuse8Reader::new(&b).is_well_formed());
    }

    #[test]
    fn the_id_takes_no_arguments() {
        register();
        register();
        let mut opts = rocksdb::Options::default();
        opts.set_block_based_table_factory(&rocksdb::BlockBasedOptions::default());
        let id = rocks_bridge::set_filter_policy(&mut opts, NAME).unwrap();
        assert_eq!(id.as_deref(), Some(NAME));
        for bad in ["example.BinaryFuse8:1", "example.BinaryFuse8:"] {
            assert!(rocks_bridge::set_filter_policy(&mut opts, bad).is_err(), "{bad}");
        }
    }
}
