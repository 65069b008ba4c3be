//! The sharded container (`ribbon::standalone::sharded`): any bytes are
//! rejected or read without a panic, within the view's written memory
//! budget; queries on a damaged shard are errors (`try_contains_hash`) or
//! "may match" (`contains_hash`), never a panic. The header and index
//! checksums are repaired first (as a forger would), so that mutations
//! reach the index and shard checks behind them; shard files
//! (`ShardFileHeader`, `ShardEntry::of_file`) get the same bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ribbon::core::hash::hash64;
use ribbon::standalone::sharded::{ShardEntry, ShardFileHeader, ShardedRef};

/// The container's checksum seeds (`sharded/format.rs`).
const HEADER_SEED: u64 = 0x5242_5348_4452_0001;
const INDEX_SEED: u64 = 0x5242_5349_4458_0001;
const SHARD_FILE_SEED: u64 = 0x5242_5350_4152_0001;

fn check(bytes: &[u8]) {
    let Ok(view) = ShardedRef::from_bytes(bytes) else {
        return;
    };
    // The budget the docs state: per-shard state, bounded by the file.
    assert!(
        (view.num_shards() as u64) * 88 <= bytes.len() as u64,
        "{} shards in {} bytes",
        view.num_shards(),
        bytes.len()
    );
    let mut h = bytes.len() as u64;
    for _ in 0..32 {
        h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(1);
        let tried = view.try_contains_hash(h);
        let plain = view.contains_hash(h);
        if let Ok(answer) = tried {
            assert_eq!(answer, plain);
        } else {
            assert!(plain, "a damaged shard answered no");
        }
    }
    let _ = view.verify();
    let _ = (view.expected_fp_rate(), view.bits_per_key(), view.clone().num_keys());
    if let Ok(trusted) = ShardedRef::from_bytes_unverified(bytes) {
        let _ = trusted.contains_hash(h);
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    let mut fixed = data.to_vec();
    if fixed.len() >= 64 {
        let bits = u32::from(fixed[12]).min(20);
        let index_end = 64 + (16usize << bits);
        if fixed.len() >= index_end {
            let sum = hash64(&fixed[64..index_end], INDEX_SEED);
            fixed[32..40].copy_from_slice(&sum.to_le_bytes());
        }
        let len = fixed.len() as u64;
        fixed[24..32].copy_from_slice(&len.to_le_bytes());
        let sum = hash64(&fixed[..56], HEADER_SEED);
        fixed[56..64].copy_from_slice(&sum.to_le_bytes());
        check(&fixed);
        // The same bytes as a shard file.
        let mut shard = data.to_vec();
        let sum = hash64(&shard[..56], SHARD_FILE_SEED);
        shard[56..64].copy_from_slice(&sum.to_le_bytes());
        if let Ok((header, body)) = ShardFileHeader::decode(&shard) {
            assert_eq!(body.len() as u64, header.shard_len);
            let _ = ShardEntry::of_file(header.index as usize, header.shard_bits, &shard);
        }
    }
});
