//! Writes the golden vectors the `ribbon` crate tests against, captured from
//! native RocksDB through the harness:
//!
//! ```text
//! cargo run --release --bin golden -- ribbon/tests/golden
//! ```
//!
//! The `ribbon` tests regenerate the same keys (`ribbon::test_support::keys`)
//! and check hash values, filter sizes, a fingerprint of the filter bytes,
//! the trailer, and the first false positives, without any C++.

use ribbon::test_support::keys::{match_summary, member_keys, non_member_keys, KeyKind, Rng};
use ribbon_compat::harness::{self, NativeBuilder, NativeReader, Reason};
use std::fmt::Write as _;

const HEADER: &str =
    "# Captured from native RocksDB 11.8.1 by: cargo run --release --bin golden -- ribbon/tests/golden\n";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hashes() -> String {
    let mut out = String::from(HEADER);
    out.push_str("# hash64 LEN SEED VALUE | bloom_hash LEN VALUE; key = data[len % 61 ..][..len], data = Rng(0x601DE).bytes(4160)\n");
    let data = Rng(0x601DE).bytes(4160);
    for len in 0..=4096usize {
        let key = &data[len % 61..len % 61 + len];
        let seed = Rng(len as u64).next_u64();
        writeln!(out, "hash64 {len} 0 {:x}", harness::hash64(key, 0)).unwrap();
        writeln!(out, "hash64 {len} {seed:x} {:x}", harness::hash64(key, seed)).unwrap();
        if len <= 600 {
            writeln!(out, "bloom_hash {len} {:x}", harness::bloom_hash(key)).unwrap();
        }
    }
    out
}

fn kind_name(kind: KeyKind) -> &'static str {
    match kind {
        KeyKind::RandomBinary => "RandomBinary",
        KeyKind::SortedAscii => "SortedAscii",
        KeyKind::Binary16To24 => "Binary16To24",
    }
}

fn reason_name(reason: Reason) -> &'static str {
    match reason {
        Reason::Misc => "misc",
        Reason::Flush => "flush",
        Reason::Compaction => "compaction",
    }
}

fn filters() -> String {
    let mut out = String::from(HEADER);
    out.push_str(
        "# filter POLICY FV REASON LEVEL KEYKIND N KEYSEED | LEN FINGERPRINT TRAILER FP_COUNT FIRST_FPS\n\
         # keys = member_keys(KEYKIND, N, KEYSEED); probes = non_member_keys(10000, 99);\n\
         # FINGERPRINT = hash64(filter, 0); FIRST_FPS = indexes of the first 8 probes that match\n",
    );
    let probes = non_member_keys(10_000, 99);
    let mut cases: Vec<(String, i32, Reason, i32, KeyKind, usize, u64)> = Vec::new();
    for kind in [KeyKind::RandomBinary, KeyKind::SortedAscii] {
        for n in [0usize, 1, 2, 10, 1000, 1023, 10_000] {
            for bits in ["1", "3.5", "6.5", "10", "15.5", "23.7"] {
                for (policy, format_version) in [("ribbonfilter", 7), ("bloomfilter", 7), ("bloomfilter", 4)]
                {
                    cases.push((
                        format!("{policy}:{bits}"),
                        format_version,
                        Reason::Misc,
                        -1,
                        kind,
                        n,
                        1000 + n as u64,
                    ));
                }
            }
        }
    }
    for (bbl, reason, level) in [
        (0, Reason::Flush, 0),
        (1, Reason::Compaction, 0),
        (1, Reason::Compaction, 1),
        (3, Reason::Compaction, 5),
    ] {
        cases.push((
            format!("ribbonfilter:9.9:{bbl}"),
            6,
            reason,
            level,
            KeyKind::RandomBinary,
            500,
            7,
        ));
    }
    cases.push((
        "ribbonfilter:10".into(),
        7,
        Reason::Misc,
        -1,
        KeyKind::Binary16To24,
        200_000,
        8,
    ));
    cases.push((
        "rocksdb.internal.LegacyBloomFilter:10".into(),
        7,
        Reason::Misc,
        -1,
        KeyKind::Binary16To24,
        200_000,
        8,
    ));
    for (policy, fv, reason, level, kind, n, seed) in cases {
        let keys = member_keys(kind, n, seed);
        let mut b = NativeBuilder::new(&policy, fv, reason, level).expect("valid policy");
        for k in &keys {
            b.add_key(k);
        }
        let filter = b.finish();
        let reader = NativeReader::new(&filter);
        let (count, first) = match_summary(probes.iter().map(|p| reader.may_match(p)));
        writeln!(
            out,
            "filter {policy} {fv} {} {level} {} {n} {seed} | {} {:x} {} {} {}",
            reason_name(reason),
            kind_name(kind),
            filter.len(),
            harness::hash64(&filter, 0),
            if filter.len() >= 5 {
                hex(&filter[filter.len() - 5..])
            } else {
                "-".into()
            },
            count,
            first,
        )
        .unwrap();
    }
    out
}

fn slots() -> String {
    let mut out = String::from(HEADER);
    out.push_str("# slots CFC BITS SMASH HOMOG N NUM_SLOTS NUM_TO_ADD(N as slots); CFC 0=OneIn2 1=OneIn20 2=OneIn1000\n");
    let mut ns: Vec<u32> = (0..300).collect();
    let mut x = 300u64;
    while x < u64::from(u32::MAX) {
        ns.push(x as u32);
        x = x * 5 / 4 + 3;
    }
    for cfc in 0..3 {
        for bits in [64u32, 128] {
            for smash in [false, true] {
                for homog in [false, true] {
                    for &n in &ns {
                        let s = harness::ribbon_num_slots(cfc, bits, smash, homog, n).unwrap();
                        let a = harness::ribbon_num_to_add(cfc, bits, smash, homog, n).unwrap();
                        writeln!(
                            out,
                            "slots {cfc} {bits} {} {} {n} {s} {a}",
                            u8::from(smash),
                            u8::from(homog)
                        )
                        .unwrap();
                    }
                }
            }
        }
    }
    out
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "ribbon/tests/golden".into());
    std::fs::create_dir_all(&dir).expect("create output directory");
    for (name, text) in [
        ("hashes.txt", hashes()),
        ("filters.txt", filters()),
        ("slots.txt", slots()),
    ] {
        let path = format!("{dir}/{name}");
        std::fs::write(&path, text).expect("write golden file");
        eprintln!("wrote {path}");
    }
}
