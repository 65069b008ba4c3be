//! Deterministic key generators shared by the golden-vector generator, the
//! `ribbon` crate tests, the benchmarks and the compatibility suite.

use crate::core::prelude::*;

/// SplitMix64 ([`crate::core::hash::split_mix64`]): a small deterministic
/// generator for test data; the field is its state.

#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        crate::core::hash::split_mix64(&mut self.0)
    }
    /// A value in `0..n` (fast range; 0 for `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
    /// `len` random bytes.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }
}

/// How keys are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// Random bytes, random length in 0..=300.
    RandomBinary,
    /// Sorted printable keys of length 0..=300 (a numbered prefix keeps them
    /// distinct), as an SST would hold them.
    SortedAscii,
    /// Random bytes, 16 to 24 long (the benchmark keys).
    Binary16To24,
}

/// `n` distinct member keys of `kind`, from `seed`.
pub fn member_keys(kind: KeyKind, n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed);
    let mut keys: Vec<Vec<u8>> = match kind {
        KeyKind::RandomBinary => (0..n)
            .map(|i| {
                let len = rng.below(301) as usize;
                let mut k = rng.bytes(len);
                // Keep keys distinct: short keys get their index appended.
                if len < 12 {
                    k.extend_from_slice(&(i as u64).to_le_bytes());
                }
                k
            })
            .collect(),
        KeyKind::SortedAscii => (0..n)
            .map(|i| {
                let len = rng.below(301) as usize;
                let mut k = format!("{i:012}").into_bytes();
                k.extend((0..len.saturating_sub(12)).map(|_| b'a' + rng.below(26) as u8));
                k.truncate(len.max(12));
                k
            })
            .collect(),
        KeyKind::Binary16To24 => (0..n)
            .map(|i| {
                let len = 16 + rng.below(9) as usize;
                let mut k = rng.bytes(len);
                k[..8].copy_from_slice(&(i as u64).to_le_bytes());
                k
            })
            .collect(),
    };
    if kind == KeyKind::SortedAscii {
        keys.sort();
    }
    keys
}

/// `n` keys that are not members of any `member_keys` set: a distinct
/// leading marker byte plus random bytes (lengths 1..=300).
pub fn non_member_keys(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed ^ 0xDEAD_BEEF);
    (0..n)
        .map(|i| {
            let len = 9 + rng.below(292) as usize;
            let mut k = rng.bytes(len);
            k[0] = 0xFF;
            k[1..9].copy_from_slice(&(i as u64).to_be_bytes());
            k
        })
        .collect()
}

/// The golden vectors' summary of which probes matched: the number of
/// matches and the indexes of the first 8 (`-` when none), comma-separated.
pub fn match_summary(matches: impl IntoIterator<Item = bool>) -> (usize, String) {
    let hits: Vec<usize> = matches
        .into_iter()
        .enumerate()
        .filter(|&(_, m)| m)
        .map(|(i, _)| i)
        .collect();
    let first: Vec<String> = hits.iter().take(8).map(|i| i.to_string()).collect();
    (
        hits.len(),
        if first.is_empty() {
            "-".to_string()
        } else {
            first.join(",")
        },
    )
}
