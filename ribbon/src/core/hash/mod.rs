//! Ported from RocksDB's util/hash.h and util/hash.cc.
//!
//! The hash functions RocksDB's filters hash keys with, bit for bit:
//!
//! * **64-bit** ([`hash64`], [`hash64_unseeded`], [`get_slice_hash64`]):
//!   RocksDB's `Hash64`, which is [`xxph3_64_with_seed`], the frozen *preview*
//!   of XXH3 from xxHash 0.7.2 (see [`xxph3`]). `GetSliceHash64(key)` (seed 0)
//!   is the key hash of the format-version-5 filters: FastLocalBloom uses its
//!   lower 32 bits to pick a cache line and its upper 32 bits for the probes;
//!   Standard128 Ribbon remixes it with a per-filter seed.
//! * **Non-persistent 64-bit** ([`np_hash64`], [`np_hash64_unseeded`]):
//!   RocksDB's `NPHash64`, for in-memory structures only. In the RocksDB build
//!   this crate matches (no `ROCKSDB_MODIFY_NPHASH`) it equals `Hash64`.
//! * **32-bit** ([`hash32`], [`bloom_hash`], [`get_slice_hash`]): RocksDB's
//!   legacy MurmurHash1-style `Hash` (see [`legacy`]). `BloomHash(key)`
//!   (seed `0xbc9f1d34`) is the key hash of the legacy Bloom filter;
//!   `GetSliceHash` (seed 397) is RocksDB's in-memory 32-bit slice hash.
//!
//! All functions are pure, total (no panics on any input), allocation-free
//! and independent of the platform's endianness.

pub mod legacy;
pub mod xxph3;

pub use legacy::{bloom_hash, hash32};
pub use xxph3::xxph3_64_with_seed;

/// RocksDB's `Hash64(data, n, seed)`: the persistent 64-bit hash
/// ([`xxph3_64_with_seed`]).
#[inline]
#[must_use]
pub fn hash64(data: &[u8], seed: u64) -> u64 {
    xxph3_64_with_seed(data, seed)
}

/// RocksDB's unseeded `Hash64(data, n)`: identical to [`hash64`] with seed 0.
#[inline]
#[must_use]
pub fn hash64_unseeded(data: &[u8]) -> u64 {
    xxph3_64_with_seed(data, 0)
}

/// RocksDB's `GetSliceHash64(key)`: [`hash64_unseeded`], the key hash of
/// FastLocalBloom and Ribbon filters.
#[inline]
#[must_use]
pub fn get_slice_hash64(key: &[u8]) -> u64 {
    xxph3_64_with_seed(key, 0)
}

/// RocksDB's non-persistent `NPHash64(data, n, seed)`. In the RocksDB build
/// this crate reproduces (without `ROCKSDB_MODIFY_NPHASH`) it equals
/// [`hash64`]; only in-memory structures may depend on it.
#[inline]
#[must_use]
pub fn np_hash64(data: &[u8], seed: u64) -> u64 {
    hash64(data, seed)
}

/// RocksDB's unseeded `NPHash64(data, n)`: [`np_hash64`] with seed 0 (and so
/// equal to [`hash64_unseeded`]).
#[inline]
#[must_use]
pub fn np_hash64_unseeded(data: &[u8]) -> u64 {
    hash64_unseeded(data)
}

/// RocksDB's `GetSliceHash(key)`: [`hash32`] with seed 397.
#[inline]
#[must_use]
pub fn get_slice_hash(key: &[u8]) -> u32 {
    hash32(key, legacy::SLICE_HASH_SEED)
}

/// One step of SplitMix64 (Steele, Lea and Flood): advances `state` by the
/// 64-bit golden ratio and returns the mixed value. Not a key hash: the
/// deterministic generator [`crate::standalone::Ribbon::measure_fp_rate`]
/// samples non-member hashes with, and the one the tests, examples and
/// golden vectors draw their data from.
#[inline]
pub fn split_mix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::math::{lower32of64, upper32of64};
    use crate::core::prelude::*;

    /// RocksDB's `HashTest.Hash64Misc`.
    #[test]
    fn hash64_misc() {
        for fill in [0u8, b'a', b'1', 0xff] {
            let max_size = 1000;
            let s = vec![fill; max_size];
            for size in 0..=max_size {
                let here = hash64(&s[..size], 0);
                // Same as unseeded Hash64, GetSliceHash64 and NPHash64.
                assert_eq!(here, hash64_unseeded(&s[..size]));
                assert_eq!(here, get_slice_hash64(&s[..size]));
                assert_eq!(here, np_hash64(&s[..size], 0));
                assert_eq!(here, np_hash64_unseeded(&s[..size]));
                // Upper and Lower reconstruct the hash.
                let (u, l) = (u64::from(upper32of64(here)), u64::from(lower32of64(here)));
                assert_eq!(here, (u << 32) | l);
                assert_eq!(here, (u << 32) + l);
                assert_eq!(here, (u << 32) ^ l);
                // Seed changes the value.
                let mut var_seed = 1u64;
                while var_seed != 0 {
                    assert_ne!(here, hash64(&s[..size], var_seed), "size {size} seed {var_seed}");
                    var_seed <<= 1;
                }
                // Size changes the value.
                for smaller_by in 1..=size.min(30) {
                    assert_ne!(here, hash64(&s[..size - smaller_by], 0));
                }
            }
        }
    }

    /// RocksDB's `HashTest.Hash64Trivial` (non-thorough settings).
    #[test]
    fn hash64_trivial() {
        for seed in 0..0x10000u64 {
            let here = hash64(b"", seed);
            assert_ne!(lower32of64(here), 0);
            assert_ne!(upper32of64(here), 0);
        }
        for len in 1..=2usize {
            let mut i = 0u32;
            while (i >> (len * 8)) == 0 {
                let input = i.to_le_bytes();
                let here = hash64(&input[..len], 0);
                assert_ne!(lower32of64(here), 0);
                assert_ne!(upper32of64(here), 0);
                i += 1;
            }
        }
    }

    /// RocksDB's `HashTest.Hash64SmallValueSchema`.
    #[test]
    fn hash64_small_value_schema() {
        let cases: &[(&[u8], u64)] = &[
            (b"", 5999572062939766020),
            (b"\x08", 583283813901344696),
            (b"\x17", 16175549975585474943),
            (b"\x9a", 16322991629225003903),
            (b"\x1c", 13269285487706833447),
            (b"\x4d\x76", 6859542833406258115),
            (b"\x52\xd5", 4919611532550636959),
            (b"\x91\xf7", 14199427467559720719),
            (b"\xd6\x27", 12292689282614532691),
            (b"\x30\x46\x0b", 11404699285340020889),
            (b"\x56\xdc\xd6", 12404347133785524237),
            (b"\xd4\x52\x33", 15853805298481534034),
            (b"\x6a\xb5\xf4", 16863488758399383382),
            (b"\x67\x53\x81\x1c", 9010661983527562386),
            (b"\x69\xb8\xc0\x88", 6611781377647041447),
            (b"\x1e\x84\xaf\x2d", 15290969111616346501),
            (b"\x46\xdc\x54\xbe", 7063754590279313623),
            (b"\xd0\x7a\x6e\xea\x56", 6384167718754869899),
            (b"\x86\x83\xd5\xa4\xd8", 16874407254108011067),
            (b"\xb7\x46\xbb\x77\xce", 16809880630149135206),
            (b"\x6c\xa8\xbc\xe5\x99", 1249038833153141148),
            (b"\x5c\x5e\xe1\xa0\x73\x81", 17358142495308219330),
            (b"\x08\x5d\x73\x1c\xe5\x2e", 4237646583134806322),
            (b"\x42\xfb\xf2\x52\xb4\x10", 4373664924115234051),
            (b"\x73\xe1\xff\x56\x9c\xce", 12012981210634596029),
            (b"\x5c\xbe\x97\x75\x54\x9a\x52", 5716522398211028826),
            (b"\x16\x82\x39\x49\x88\x2b\x36", 15604531309862565013),
            (b"\x59\x77\xf0\xa7\x24\xf4\x78", 8601330687345614172),
            (b"\xd3\xa5\x7c\x0e\xc0\x02\x07", 8088079329364056942),
            (b"\x31\x1b\x98\x75\x96\x22\xd3\x9a", 9844314944338447628),
            (b"\x38\xd6\xf7\x28\x20\xb4\x8a\xe9", 10973293517982163143),
            (b"\xbb\x18\x5d\xf4\x12\x03\xf7\x99", 9986007080564743219),
            (b"\x80\xd4\x3b\x3b\xae\x22\xa2\x78", 1729303145008254458),
            (b"\x1a\xb5\xd0\xfe\xab\xc3\x61\xb2\x99", 13253403748084181481),
            (b"\x8e\x4a\xc3\x18\x20\x2f\x06\xe6\x3c", 7768754303876232188),
            (b"\xb6\xc0\xdd\x05\x3f\xc4\x86\x4c\xef", 12439346786701492),
            (b"\x9a\x5f\x78\x0d\xaf\x50\xe1\x1f\x55", 10841838338450144690),
            (b"\x22\x6f\x39\x1f\xf8\xdd\x4f\x52\x17\x94", 12883919702069153152),
            (b"\x32\x89\x2a\x75\x48\x3a\x4a\x02\x69\xdd", 12692903507676842188),
            (b"\x06\x92\x5c\xf4\x88\x0e\x7e\x68\x38\x3e", 6540985900674032620),
            (b"\xbd\x2c\x63\x38\xbf\xe9\x78\xb7\xbf\x15", 10551812464348219044),
        ];
        for &(data, expected) in cases {
            assert_eq!(hash64(data, 0), expected, "input {data:02x?}");
            assert_eq!(get_slice_hash64(data), expected, "input {data:02x?}");
        }
    }

    /// RocksDB's `Hash64TestDescriptor`: the input is `repeat` appended until
    /// it holds at least `limit` bytes; character `i` of the result encodes
    /// `GetSliceHash64(input[..i]) % 61`.
    fn hash64_descriptor(repeat: &[u8], limit: usize) -> String {
        const MOD61_ENCODE: &[u8; 61] = b"abcdefghijklmnopqrstuvwxyz123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        let mut input = Vec::new();
        while input.len() < limit {
            input.extend_from_slice(repeat);
        }
        (0..limit)
            .map(|i| char::from(MOD61_ENCODE[(get_slice_hash64(&input[..i]) % 61) as usize]))
            .collect()
    }

    /// RocksDB's `HashTest.Hash64LargeValueSchema`.
    #[test]
    fn hash64_large_value_schema() {
        assert_eq!(
            hash64_descriptor(b"foo", 430),
            concat!(
                "cRhyWsY67B6klRA1udmOuiYuX7IthyGBKqbeosz2hzVglWCmQx8nEdnpkvPfYX56Up2OWOTV",
                "lTzfAoYwvtqKzjD8E9xttR2unelbXbIV67NUe6bOO23BxaSFRcA3njGu5cUWfgwOqNoTsszp",
                "uPvKRP6qaUR5VdoBkJUCFIefd7edlNK5mv6JYWaGdwxehg65hTkTmjZoPKxTZo4PLyzbL9U4",
                "xt12ITSfeP2MfBHuLI2z2pDlBb44UQKVMx27LEoAHsdLp3WfWfgH3sdRBRCHm33UxCM4QmE2",
                "xJ7gqSvNwTeH7v9GlC8zWbGroyD3UVNeShMLx29O7tH1biemLULwAHyIw8zdtLMDpEJ8m2ic",
                "l6Lb4fDuuFNAs1GCVUthjK8CV8SWI8Rsz5THSwn5CGhpqUwSZcFknjwWIl5rNCvDxXJqYr",
            )
        );
        assert_eq!(
            hash64_descriptor(b"Rocks", 430),
            concat!(
                "c1EeRkrzgOYWLA8PuhJrwTePJewoB44WdXYDfhbk3ZxTqqg25WlPExDl7IKIQLJvnA6gJxxn",
                "9TCSLkFGfJeXehaSS1GBqWSzfhEH4VXiXIUCuxJXxtKXcSC6FrNIQGTZbYDiUOLD6Y5inzrF",
                "9etwQhXUBanw55xAUdNMFQAm2GjJ6UDWp2mISLiMMkLjANWMKLaZMqaFLX37qB4MRO1ooVRv",
                "zSvaNRSCLxlggQCasQq8icWjzf3HjBlZtU6pd4rkaUxSzHqmo9oM5MghbU5Rtxg8wEfO7lVN",
                "5wdMONYecslQTwjZUpO1K3LDf3K3XK6sUXM6ShQQ3RHmMn2acB4YtTZ3QQcHYJSOHn2DuWpa",
                "Q8RqzX5lab92YmOLaCdOHq1BPsM7SIBzMdLgePNsJ1vvMALxAaoDUHPxoFLO2wx18IXnyX",
            )
        );
        assert_eq!(
            hash64_descriptor(b"RocksDB", 430),
            concat!(
                "c1EeRkukbkb28wLTahwD2sfUhZzaBEnF8SVrxnPVB6A7b8CaAl3UKsDZISF92GSq2wDCukOq",
                "Jgrsp7A3KZhDiLW8dFXp8UPqPxMCRlMdZeVeJ2dJxrmA6cyt99zkQFj7ELbut6jAeVqARFnw",
                "fnWVXOsaLrq7bDCbMcns2DKvTaaqTCLMYxI7nhtLpFN1jR755FRQFcOzrrDbh7QhypjdvlYw",
                "cdAMSZgp9JMHxbM23wPSuH6BOFgxejz35PScZfhDPvTOxIy1jc3MZsWrMC3P324zNolO7JdW",
                "CX2I5UDKjjaEJfxbgVgJIXxtQGlmj2xkO5sPpjULQV4X2HlY7FQleJ4QRaJIB4buhCA4vUTF",
                "eMFlxCIYUpTCsal2qsmnGOWa8WCcefrohMjDj1fjzSvSaQwlpyR1GZHF2uPOoQagiCpHpm",
            )
        );
    }

    /// The 32-bit slice hash uses seed 397; BloomHash uses 0xbc9f1d34.
    #[test]
    fn hash32_wrappers() {
        for key in [&b""[..], b"a", b"RocksDB", b"0123456789abcdef0"] {
            assert_eq!(get_slice_hash(key), hash32(key, 397));
            assert_eq!(bloom_hash(key), hash32(key, 0xbc9f1d34));
        }
        // HashTest.Values, first case (seed as BloomHash).
        assert_eq!(bloom_hash(b""), 3164544308);
    }

    /// Every length 0..=4096 hashes without panicking, through every length
    /// class (including several 1024-byte blocks), and the seeded paths
    /// (including the seed-derived secret of long inputs) differ from the
    /// unseeded ones.
    #[test]
    fn all_lengths_and_seeds() {
        let data: Vec<u8> = (0..=4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for len in 0..=data.len() {
            let input = &data[..len];
            let unseeded = hash64_unseeded(input);
            assert_eq!(unseeded, hash64(input, 0));
            for seed in [1u64, 0x9E37_79B9_7F4A_7C15, u64::MAX] {
                assert_ne!(unseeded, hash64(input, seed), "len {len} seed {seed:#x}");
                assert_eq!(np_hash64(input, seed), hash64(input, seed));
            }
            let _ = hash32(input, 0);
            let _ = bloom_hash(input);
        }
    }
}
