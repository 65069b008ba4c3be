//! Corrupt, truncated and random filter blocks: the reader never panics and
//! never reads out of bounds, whatever the bytes; an intact filter never
//! gives a false negative.

use ribbon::rocksdb::builder::build_filter;
use ribbon::rocksdb::format::FilterReader;
use ribbon::rocksdb::policy::{BuildContext, FilterPolicy};
use ribbon::test_support::keys::{member_keys, KeyKind, Rng};

fn query_all(filter: &[u8], keys: &[Vec<u8>]) -> usize {
    let reader = FilterReader::new(filter);
    let _ = reader.describe().to_string();
    let single: Vec<bool> = keys.iter().map(|k| reader.may_match(k)).collect();
    let batch = reader.may_match_many(keys);
    for (i, (s, b)) in single.iter().zip(&batch).enumerate() {
        assert_eq!(s, b, "key {i}: batched and single answers differ");
    }
    assert_eq!(batch.len(), keys.len());
    // The hash query answers as the key query wherever the format hashes
    // keys with GetSliceHash64 (legacy Bloom answers "may match").
    let hashes: Vec<u64> = keys
        .iter()
        .map(|k| ribbon::core::hash::get_slice_hash64(k))
        .collect();
    let by_hash = reader.may_match_many_hashes(&hashes);
    for (i, (&h, &b)) in hashes.iter().zip(&by_hash).enumerate() {
        assert_eq!(
            reader.may_match_hash(h),
            b,
            "key {i}: batched and single hash answers differ"
        );
        let want = matches!(reader, FilterReader::LegacyBloom(_)) || single[i];
        assert_eq!(b, want, "key {i}: the hash answer differs from the key answer");
    }
    single.iter().filter(|&&m| m).count()
}

#[test]
fn random_bytes_with_every_trailer_marker() {
    let mut rng = Rng(5);
    let keys = member_keys(KeyKind::RandomBinary, 64, 6);
    for len in (0..300).chain([511, 512, 1024, 4096, 4101]) {
        for marker in [0u8, 1, 2, 30, 127, 0x80, 0xF0, 0xFD, 0xFE, 0xFF] {
            let mut f = rng.bytes(len);
            if len >= 5 {
                f[len - 5] = marker;
                // Plausible trailers too: small block counts and zero
                // reserved bytes.
                if rng.below(2) == 0 {
                    f[len - 2] = 0;
                    f[len - 1] = 0;
                }
            }
            query_all(&f, &keys);
        }
    }
}

#[test]
fn mutated_real_filters() {
    let mut rng = Rng(7);
    let keys = member_keys(KeyKind::RandomBinary, 3000, 8);
    for (policy, fv) in [
        ("ribbonfilter:10", 7),
        ("bloomfilter:10", 7),
        ("bloomfilter:10", 4),
        ("ribbonfilter:2", 7),
    ] {
        let p: FilterPolicy = policy.parse().unwrap();
        let good = build_filter(&p, &BuildContext::sst_file_writer(fv), &keys).unwrap();
        assert_eq!(
            query_all(&good, &keys),
            keys.len(),
            "{policy}: false negative in an intact filter"
        );
        for _ in 0..300 {
            let mut f = good.clone();
            match rng.below(4) {
                0 => {
                    let keep = rng.below(f.len() as u64 + 1) as usize;
                    f.truncate(keep);
                }
                1 => {
                    let at = f.len() - 1 - rng.below(5.min(f.len() as u64)) as usize;
                    let v = rng.next_u64() as u8;
                    f[at] = v;
                }
                2 => {
                    let at = rng.below(f.len() as u64) as usize;
                    let bit = rng.below(8);
                    f[at] ^= 1 << bit;
                }
                _ => {
                    let extra = 1 + rng.below(40) as usize;
                    f.extend(rng.bytes(extra));
                }
            }
            query_all(&f, &keys[..200]);
        }
    }
}
