//! Sharded filters: one file of many standalone Ribbon filters, for key
//! sets too large to build (or even hold) at once.
//!
//! A key's 64-bit hash ([`crate::core::hash::get_slice_hash64`]) picks its shard
//! by its top `b` bits ([`shard_of`]); the shard, an ordinary standalone
//! [`Ribbon`](crate::standalone::Ribbon) filter of any configuration
//! (Balanced Ribbon for the least space), holds a remix of the hash
//! ([`shard_hash`]). The [container file](mod@format) is a header, an index
//! of shard offsets and the shards, each still a complete, checksummed
//! standalone file.
//!
//! Shards are independent, so they can be built anywhere, in any order, on
//! any number of threads or machines, and assembled at the end:
//!
//! 1. partition the key hashes by [`shard_of`] (for example into one file
//!    per shard);
//! 2. build each shard with [`build_shard_file`] and save its bytes — one
//!    job per shard for any batch runner (`make -j`, GNU parallel, a
//!    cluster's array jobs): the result depends only on the shard's hashes,
//!    never on which job or thread built it, and it records which shard of
//!    how many it is ([shard files](mod@format#shard-files));
//! 3. describe every shard with [`ShardEntry::of_file`] (which checks that
//!    the file is that shard of that many and verifies it), write
//!    [`Layout::head`], then each shard's standalone bytes followed by
//!    [`Layout::padding_after`] zero bytes ([`assemble`] does all of this
//!    in memory).
//!
//! Queries ([`ShardedRef`]) borrow the file's bytes zero-copy (for example
//! a memory map): opening one checks the header, the index and every
//! shard's header; a shard's body checksum is verified the first time a
//! query uses it ([`ShardedRef::from_bytes_unverified`] opts out); a point
//! query then reads the shard's query state, held by the view, and the one
//! or two cache lines of its shard that any standalone query reads.

mod build;
pub mod format;
mod view;

pub use build::{assemble, build_shard, build_shard_file, shard_file, Layout, ShardEntry};
pub use format::{has_magic, Error, ShardFileHeader, MAX_SHARD_BITS};
pub use view::ShardedRef;

/// The shard of a key with 64-bit hash `hash` among `2^shard_bits` shards:
/// the hash's top `shard_bits` bits (0 for `shard_bits == 0`).
#[inline]
#[must_use]
pub fn shard_of(hash: u64, shard_bits: u32) -> usize {
    if shard_bits == 0 {
        0
    } else {
        (hash >> (64 - shard_bits)) as usize
    }
}

/// The hash a shard stores for a key with 64-bit hash `hash`: a bijective
/// mix (murmur3's 64-bit finalizer) of the whole hash, so the shard sees
/// well-spread hashes although all of its keys share their top bits.
#[inline]
#[must_use]
pub fn shard_hash(hash: u64) -> u64 {
    let mut x = hash;
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_of_takes_the_top_bits() {
        assert_eq!(shard_of(u64::MAX, 0), 0);
        assert_eq!(shard_of(u64::MAX, 8), 255);
        assert_eq!(shard_of(0x8000_0000_0000_0000, 1), 1);
        assert_eq!(shard_of(0x7fff_ffff_ffff_ffff, 1), 0);
        assert_eq!(shard_of(0x0123_4567_89ab_cdef, 12), 0x012);
    }

    #[test]
    fn shard_hash_spreads_hashes_with_equal_top_bits() {
        // Hashes of one shard (top 8 bits zero) remix to all top bytes.
        let mut seen = [false; 256];
        for i in 0..4096u64 {
            seen[(shard_hash(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 8) >> 56) as usize] = true;
        }
        assert!(seen.iter().filter(|&&s| s).count() > 250);
        assert_ne!(shard_hash(1), shard_hash(2));
    }
}
