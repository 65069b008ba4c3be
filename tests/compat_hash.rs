//! The pure-Rust hashes against RocksDB's, compiled in this process.

mod util;

use ribbon_compat::harness;
use util::Rng;

#[test]
fn xxph3_matches_rocksdb_at_every_length_to_4096() {
    let mut rng = Rng(42);
    let data = rng.bytes(4096 + 64);
    for len in 0..=4096 {
        // Vary the alignment too.
        let off = len % 61;
        let key = &data[off..off + len];
        assert_eq!(
            ribbon::core::hash::get_slice_hash64(key),
            harness::slice_hash64(key),
            "len {len}"
        );
        let seed = rng.next_u64();
        assert_eq!(
            ribbon::core::hash::hash64(key, seed),
            harness::hash64(key, seed),
            "len {len} seed {seed:#x}"
        );
    }
}

#[test]
fn legacy_hashes_match_rocksdb() {
    let mut rng = Rng(7);
    for len in 0..=600 {
        let key = rng.bytes(len);
        assert_eq!(
            ribbon::core::hash::bloom_hash(&key),
            harness::bloom_hash(&key),
            "len {len}"
        );
        let seed = rng.next_u64() as u32;
        assert_eq!(
            ribbon::core::hash::hash32(&key, seed),
            harness::hash32(&key, seed),
            "len {len}"
        );
    }
}
