//! Writes the portable conformance vectors (`conformance/v1/`) straight from
//! native RocksDB 11.8.1, through the harness (`cpp/harness.cc`):
//!
//! ```text
//! CARGO_TARGET_DIR=/var/tmp/rocks-ribbon-target cargo run --release --bin conformance_vectors -- conformance/v1
//! ```
//!
//! Every filter block, every expected answer, every hash value and slot
//! count is RocksDB's own. The key sets are written out as hex files, so a
//! foreign implementation needs no generator. `conformance/v1/README.md`
//! (written by hand, kept) documents the layout; `manifest.tsv` lists the
//! sha256 of every other file. Where a case repeats a case of the golden
//! vectors (`ribbon/tests/golden/filters.txt`), the generator checks that
//! RocksDB wrote the same length, fingerprint and trailer, and records the
//! pairing in `golden-overlap.tsv`.

use ribbon::test_support::keys::{member_keys, KeyKind, Rng};
use ribbon_compat::harness::{self, NativeBuilder, NativeReader, Reason};
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const HEADER: &str = "# rocks-ribbon conformance vectors v1, captured from native RocksDB 11.8.1 by:\n\
# cargo run --release --bin conformance_vectors -- conformance/v1\n";

/// Non-member probes shared by every filter case.
const NUM_PROBES: usize = 2000;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hex_lines(keys: &[Vec<u8>]) -> String {
    let mut s = String::new();
    for k in keys {
        s.push_str(&hex(k));
        s.push('\n');
    }
    s
}

/// The table-file context of a case: `-1` (SstFileWriter, reason misc),
/// `flush`, or a compaction output level.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Misc,
    Flush,
    Level(i32),
}

impl Context {
    fn column(self) -> String {
        match self {
            Context::Misc => "-1".into(),
            Context::Flush => "flush".into(),
            Context::Level(l) => l.to_string(),
        }
    }
    fn native(self) -> (Reason, i32) {
        match self {
            Context::Misc => (Reason::Misc, -1),
            Context::Flush => (Reason::Flush, 0),
            Context::Level(l) => (Reason::Compaction, l),
        }
    }
    fn id(self) -> String {
        match self {
            Context::Misc => "sfw".into(),
            Context::Flush => "flush".into(),
            Context::Level(l) => format!("L{l}"),
        }
    }
}

struct Case {
    /// A feature forced by the case's purpose; otherwise derived from what
    /// RocksDB wrote.
    feature: Option<&'static str>,
    id_prefix: &'static str,
    policy: String,
    format_version: i32,
    context: Context,
    ofm: bool,
    keys: &'static str,
    count: usize,
    /// The golden-vector line (`POLICY FV REASON LEVEL KEYKIND N KEYSEED`)
    /// this case repeats.
    golden: Option<String>,
}

fn case(policy: &str, fv: i32, keys: &'static str, count: usize) -> Case {
    Case {
        feature: None,
        id_prefix: "",
        policy: policy.into(),
        format_version: fv,
        context: Context::Misc,
        ofm: true,
        keys,
        count,
        golden: None,
    }
}

fn is_ribbon_policy(policy: &str) -> bool {
    policy.starts_with("ribbonfilter") || policy.contains("Ribbon")
}

/// What a filter block is, from its trailer (docs/FORMAT.md, "Trailers").
fn kind_of(filter: &[u8]) -> &'static str {
    if filter.len() < 5 {
        return "empty";
    }
    match filter[filter.len() - 5] {
        0xff if filter[filter.len() - 4] == 0 => "fastbloom",
        0xfe => "ribbon",
        0xff | 0xfd => "reserved",
        _ => "legacy",
    }
}

/// The bits/key of a policy id, for the per-bits Ribbon features.
fn bits_of(policy: &str) -> &str {
    policy.split(':').nth(1).unwrap_or("?")
}

fn feature_of(c: &Case, filter: &[u8]) -> String {
    if let Some(f) = c.feature {
        return f.into();
    }
    match (is_ribbon_policy(&c.policy), kind_of(filter)) {
        (true, "ribbon") => format!("ribbon-{}", bits_of(&c.policy)),
        (true, _) | (false, "empty") => "fallback".into(),
        (false, "fastbloom") => "bloom".into(),
        (false, "legacy") => "legacy-bloom".into(),
        (_, other) => panic!("{}: RocksDB wrote a {other} filter", c.policy),
    }
}

fn case_id(c: &Case, count: usize) -> String {
    let policy: String = c
        .policy
        .replace("rocksdb.internal.", "")
        .chars()
        .map(|ch| if ch == ':' { '_' } else { ch })
        .collect();
    let mut id = format!(
        "{}{policy}-fv{}-{}-{}-n{}",
        c.id_prefix,
        c.format_version,
        c.context.id(),
        c.keys.trim_end_matches(".hex"),
        count
    );
    if !c.ofm {
        id.push_str("-ofm0");
    }
    id
}

/// Keys of every length a hash branch distinguishes: 0 to 300, then
/// sparser up to 4096 (XXPH3's 1024-byte blocks). key = data[len % 61..][..len].
fn length_keys(data: &[u8]) -> Vec<Vec<u8>> {
    let mut lens: Vec<usize> = (0..=300).collect();
    lens.extend((301..=1100).step_by(41));
    lens.extend([1023, 1024, 1025, 1535, 2047, 2048, 2049, 3071, 4095, 4096]);
    lens.sort_unstable();
    lens.dedup();
    lens.iter().map(|&l| data[l % 61..l % 61 + l].to_vec()).collect()
}

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    const BITS: [&str; 6] = ["1", "3.5", "6.5", "10", "15.5", "23.7"];
    // Hashes: every key length through the 64-bit (XXPH3) and 32-bit paths.
    for (policy, fv) in [
        ("bloomfilter:10", 7),
        ("ribbonfilter:10", 7),
        ("bloomfilter:10", 4),
    ] {
        let keys = "lengths.hex";
        v.push(Case {
            feature: Some("hash"),
            id_prefix: "hash-",
            ..case(policy, fv, keys, usize::MAX)
        });
    }
    // FastLocalBloom and legacy Bloom at every bits/key of the golden set.
    for bits in BITS {
        for n in [1, 10, 1000, 10_000] {
            v.push(case(&format!("bloomfilter:{bits}"), 7, "bin.hex", n));
            v.push(case(&format!("bloomfilter:{bits}"), 4, "bin.hex", n));
        }
    }
    for fv in [5, 6] {
        v.push(case("bloomfilter:10", fv, "bin.hex", 1000));
    }
    for fv in [2, 3] {
        v.push(case("bloomfilter:10", fv, "bin.hex", 1000));
    }
    for n in [10, 1000, 10_000] {
        v.push(Case {
            ofm: false,
            ..case("bloomfilter:10", 7, "bin.hex", n)
        });
        v.push(Case {
            ofm: false,
            ..case("bloomfilter:6.5", 7, "bin.hex", n)
        });
    }
    v.push(case("bloomfilter:10", 7, "ascii.hex", 5000));
    v.push(case("bloomfilter:10", 4, "ascii.hex", 5000));
    // Standard128 Ribbon by bits/key and key count.
    for bits in ["1", "3.5", "6.5", "7", "8", "10", "12", "15.5", "20", "23.7"] {
        for n in [100, 1000, 1023, 2000, 10_000, 20_000] {
            v.push(case(&format!("ribbonfilter:{bits}"), 7, "bin.hex", n));
        }
    }
    v.push(case("ribbonfilter:10", 7, "ascii.hex", 5000));
    v.push(case("ribbonfilter:10", 5, "bin.hex", 10_000));
    v.push(case("ribbonfilter:10", 6, "bin.hex", 10_000));
    // Fall-backs: no keys, few keys, bloom_before_level, old format_version.
    for n in [0, 1, 2, 5, 10, 20, 30, 50, 64, 128, 150, 200, 250] {
        v.push(case("ribbonfilter:10", 7, "bin.hex", n));
    }
    v.push(case("bloomfilter:10", 7, "bin.hex", 0));
    v.push(case("bloomfilter:10", 4, "bin.hex", 0));
    for (bbl, ctx) in [
        (0, Context::Flush),
        (0, Context::Level(0)),
        (1, Context::Flush),
        (1, Context::Level(0)),
        (1, Context::Level(1)),
        (3, Context::Level(2)),
        (3, Context::Level(3)),
        (3, Context::Misc),
        (-1, Context::Flush),
        (-1, Context::Level(0)),
    ] {
        v.push(Case {
            context: ctx,
            ..case(&format!("ribbonfilter:10:{bbl}"), 7, "bin.hex", 1000)
        });
    }
    v.push(Case {
        context: Context::Flush,
        ..case("ribbonfilter:10", 4, "bin.hex", 1000)
    });
    for fv in [2, 4] {
        v.push(case("ribbonfilter:10", fv, "bin.hex", 1000));
    }
    // Policy rules: bits/key sanitising and the internal ids.
    for policy in [
        "bloomfilter:0.5",
        "bloomfilter:0.9",
        "bloomfilter:100",
        "bloomfilter:250",
        "bloomfilter:9.9999",
        "ribbonfilter:0.7",
        "ribbonfilter:100",
        "ribbonfilter:9.9999",
    ] {
        v.push(Case {
            feature: Some("policy"),
            ..case(policy, 7, "bin.hex", 1000)
        });
    }
    v.push(Case {
        feature: Some("policy"),
        ..case("bloomfilter:0.9", 4, "bin.hex", 1000)
    });
    v.push(Case {
        feature: Some("policy"),
        ..case("bloomfilter:250", 4, "bin.hex", 1000)
    });
    for (policy, fv, ctx) in [
        ("rocksdb.internal.FastLocalBloomFilter:10", 4, Context::Misc),
        ("rocksdb.internal.LegacyBloomFilter:10", 7, Context::Misc),
        ("rocksdb.internal.Standard128RibbonFilter:10", 4, Context::Misc),
        ("rocksdb.internal.Standard128RibbonFilter:10", 7, Context::Flush),
    ] {
        v.push(Case {
            feature: Some("policy"),
            context: ctx,
            ..case(policy, fv, "bin.hex", 1000)
        });
    }
    // The golden vectors' own key sets, for the overlap check.
    for n in [1usize, 10, 1000] {
        let keys = match n {
            1 => "golden-RandomBinary-1.hex",
            10 => "golden-RandomBinary-10.hex",
            _ => "golden-RandomBinary-1000.hex",
        };
        for bits in BITS {
            for (policy, fv) in [
                (format!("ribbonfilter:{bits}"), 7),
                (format!("bloomfilter:{bits}"), 7),
                (format!("bloomfilter:{bits}"), 4),
            ] {
                let golden = format!("{policy} {fv} misc -1 RandomBinary {n} {}", 1000 + n);
                v.push(Case {
                    id_prefix: "golden-",
                    golden: Some(golden),
                    ..case(&policy, fv, keys, n)
                });
            }
        }
    }
    v
}

/// The golden filters, by their key fields: (len, fingerprint, trailer).
fn golden_filters(root: &Path) -> BTreeMap<String, (usize, String, String)> {
    let text = std::fs::read_to_string(root.join("ribbon/tests/golden/filters.txt"))
        .expect("read ribbon/tests/golden/filters.txt");
    text.lines()
        .filter(|l| l.starts_with("filter "))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[1..8].join(" "),
                (f[9].parse().unwrap(), f[10].to_string(), f[11].to_string()),
            )
        })
        .collect()
}

fn hashes(data: &[u8], lengths: &[Vec<u8>]) -> String {
    let mut out = String::from(HEADER);
    out.push_str(
        "# hash64(key, seed) (XXPH3 64-bit, RocksDB's Hash64) and bloom_hash(key) (the legacy 32-bit Hash(key, 0xbc9f1d34)).\n\
         # key = data.bin[offset .. offset + len]; seed and value in hex; '-' where no seed applies.\n\
         function\tlen\toffset\tseed\tvalue\n",
    );
    let mut lens: Vec<usize> = (0..=600).collect();
    lens.extend(lengths.iter().map(Vec::len).filter(|&l| l > 600));
    for len in lens {
        let off = len % 61;
        let key = &data[off..off + len];
        let seed = Rng(len as u64).next_u64();
        writeln!(out, "hash64\t{len}\t{off}\t0\t{:016x}", harness::hash64(key, 0)).unwrap();
        writeln!(
            out,
            "hash64\t{len}\t{off}\t{seed:016x}\t{:016x}",
            harness::hash64(key, seed)
        )
        .unwrap();
        writeln!(
            out,
            "bloom_hash\t{len}\t{off}\t-\t{:08x}",
            harness::bloom_hash(key)
        )
        .unwrap();
    }
    out
}

fn slots() -> String {
    let mut out = String::from(HEADER);
    out.push_str(
        "# RocksDB's slot tables for the Standard128 Ribbon filter (width 128, ConstructionFailureChance one in 20,\n\
         # no smash, not homogeneous): num_slots = GetNumSlots(num_to_add); num_to_add = GetNumToAdd(num_slots).\n\
         num_to_add\tnum_slots\tnum_to_add_for_those_slots\n",
    );
    let mut ns: Vec<u32> = (0..300).collect();
    let mut x = 300u64;
    while x < u64::from(u32::MAX) {
        ns.push(x as u32);
        x = x * 5 / 4 + 3;
    }
    for n in ns {
        let s = harness::ribbon_num_slots(1, 128, false, false, n).expect("slots");
        let a = harness::ribbon_num_to_add(1, 128, false, false, s).expect("to add");
        writeln!(out, "{n}\t{s}\t{a}").unwrap();
    }
    out
}

struct Writer {
    dir: PathBuf,
    files: Vec<String>,
}

impl Writer {
    fn write(&mut self, rel: &str, bytes: &[u8]) {
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create directory");
        }
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        self.files.push(rel.to_string());
    }
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| root.join("conformance/v1"), PathBuf::from);
    for sub in ["keys", "filters", "answers", "sst"] {
        let _ = std::fs::remove_dir_all(dir.join(sub));
    }
    let mut w = Writer {
        dir: dir.clone(),
        files: Vec::new(),
    };

    // Key sets.
    let data = Rng(0x601DE).bytes(4160);
    let mut sets: BTreeMap<&'static str, Vec<Vec<u8>>> = BTreeMap::new();
    sets.insert("lengths.hex", length_keys(&data));
    sets.insert("bin.hex", member_keys(KeyKind::Binary16To24, 20_000, 8));
    sets.insert(
        "ascii.hex",
        (0..5000)
            .map(|i| format!("user{:08}", i * 3).into_bytes())
            .collect(),
    );
    for n in [1usize, 10, 1000] {
        let name: &'static str = match n {
            1 => "golden-RandomBinary-1.hex",
            10 => "golden-RandomBinary-10.hex",
            _ => "golden-RandomBinary-1000.hex",
        };
        sets.insert(name, member_keys(KeyKind::RandomBinary, n, 1000 + n as u64));
    }
    let members: HashSet<&[u8]> = sets.values().flatten().map(Vec::as_slice).collect();
    let mut rng = Rng(0xC0FF_EE00);
    let mut probes: Vec<Vec<u8>> = Vec::with_capacity(NUM_PROBES);
    while probes.len() < NUM_PROBES {
        let i = probes.len();
        let len = if i % 50 == 49 {
            41 + rng.below(1060) as usize
        } else {
            1 + i % 40
        };
        let p = rng.bytes(len);
        if !members.contains(p.as_slice()) && !probes.contains(&p) {
            probes.push(p);
        }
    }
    for (name, keys) in &sets {
        w.write(&format!("keys/{name}"), hex_lines(keys).as_bytes());
    }
    w.write("probes.hex", hex_lines(&probes).as_bytes());
    w.write("data.bin", &data);
    w.write("hashes.tsv", hashes(&data, &sets["lengths.hex"]).as_bytes());
    w.write("slots.tsv", slots().as_bytes());

    // Filter cases.
    let golden = golden_filters(&root);
    let mut table = String::from(HEADER);
    table.push_str(
        "# One filter case per row; see README.md. The member keys are the first COUNT lines of keys/KEYS.\n\
         id\tfeature\tpolicy\tformat_version\tcontext\toptimize_filters_for_memory\tkeys\tcount\tfilter\tanswers\tfilter_len\ttrailer\n",
    );
    let mut overlap = String::from(HEADER);
    overlap.push_str(
        "# Cases that repeat a golden vector of ribbon/tests/golden/filters.txt (POLICY FV REASON LEVEL KEYKIND N KEYSEED).\n\
         # The generator checked that RocksDB wrote the length, fingerprint and trailer recorded there.\n\
         id\tgolden\n",
    );
    let mut ids = HashSet::new();
    for c in cases() {
        let all = &sets[c.keys];
        let keys = &all[..c.count.min(all.len())];
        let (reason, level) = c.context.native();
        let mut b = NativeBuilder::with_optimize_filters_for_memory(
            &c.policy,
            c.format_version,
            reason,
            level,
            c.ofm,
        )
        .unwrap_or_else(|e| panic!("{}: {e}", c.policy));
        assert!(b.has_builder(), "{}: RocksDB builds no filter", c.policy);
        for k in keys {
            b.add_key(k);
        }
        let filter = b.finish();
        let id = case_id(&c, keys.len());
        assert!(ids.insert(id.clone()), "duplicate case id {id}");
        let feature = feature_of(&c, &filter);
        let answers_rel = if filter.is_empty() {
            "-".to_string()
        } else {
            let reader = NativeReader::new(&filter);
            for k in keys {
                assert!(reader.may_match(k), "{id}: RocksDB's reader misses a member");
            }
            let mut answers = String::new();
            for p in &probes {
                answers.push_str(if reader.may_match(p) { "1\n" } else { "0\n" });
            }
            let rel = format!("answers/{id}.txt");
            w.write(&rel, answers.as_bytes());
            rel
        };
        let filter_rel = format!("filters/{id}.bin");
        w.write(&filter_rel, &filter);
        let trailer = if filter.len() >= 5 {
            hex(&filter[filter.len() - 5..])
        } else {
            "-".into()
        };
        if let Some(g) = &c.golden {
            let (len, fingerprint, want_trailer) = golden
                .get(g)
                .unwrap_or_else(|| panic!("{id}: no golden vector {g}"));
            assert_eq!(filter.len(), *len, "{id}: golden length");
            assert_eq!(
                format!("{:x}", harness::hash64(&filter, 0)),
                *fingerprint,
                "{id}: golden fingerprint"
            );
            assert_eq!(&trailer, want_trailer, "{id}: golden trailer");
            writeln!(overlap, "{id}\t{g}").unwrap();
        }
        writeln!(
            table,
            "{id}\t{feature}\t{}\t{}\t{}\t{}\t{}\t{}\t{filter_rel}\t{answers_rel}\t{}\t{trailer}",
            c.policy,
            c.format_version,
            c.context.column(),
            c.ofm,
            c.keys,
            keys.len(),
            filter.len(),
        )
        .unwrap();
    }
    w.write("cases.tsv", table.as_bytes());
    w.write("golden-overlap.tsv", overlap.as_bytes());

    // SST files with the answers their writer's Get gave: the corpus
    // RocksDB 11.8.1 wrote (feature `sst`), and the files RocksDB 6.x wrote
    // (feature `sst-rocksdb6`: block-based filters, compression
    // dictionaries, BZip2), each answered as the version that wrote it.
    let mut sst = String::from(HEADER);
    sst.push_str(
        "# SST files with the answers their writer's Get gave for each probe (whether the filter let the\n\
         # lookup reach the data blocks): sst = RocksDB 11.8.1 (sst/tests/corpus), sst-rocksdb6 = RocksDB\n\
         # 6.25.3 and 6.14.6 (sst/tests/fixtures-wild). See README.md.\n\
         id\tfeature\tfile\tkeys\tanswers\n",
    );
    for (dir, feature) in [
        ("sst/tests/corpus", "sst"),
        ("sst/tests/fixtures-wild", "sst-rocksdb6"),
    ] {
        copy_ssts(&mut w, &mut sst, &root.join(dir), feature);
    }
    w.write("sst.tsv", sst.as_bytes());

    // The manifest: every file but itself and the hand-written README.
    let mut files = w.files.clone();
    files.sort();
    let mut manifest = String::from(HEADER);
    manifest.push_str("# Every vector file (not this one, not README.md): its size in bytes and sha256.\npath\tbytes\tsha256\n");
    for rel in &files {
        let bytes = std::fs::read(dir.join(rel)).expect("reread");
        writeln!(manifest, "{rel}\t{}\t{}", bytes.len(), sha256_hex(&bytes)).unwrap();
    }
    std::fs::write(dir.join("manifest.tsv"), manifest).expect("write manifest");
    eprintln!(
        "wrote {} files and manifest.tsv to {}",
        files.len(),
        dir.display()
    );
}

/// The lowercase hex SHA-256 of `bytes`, as the manifest records it (the
/// runner, `ribbon conformance`, checks it with the same crate).
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Copies every `NAME.sst` of `dir` with its `NAME.probes` and
/// `NAME.expected` into the vectors' `sst/`, and lists it in `sst_tsv`
/// under `feature`.
fn copy_ssts(w: &mut Writer, sst_tsv: &mut String, dir: &Path, feature: &str) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".sst").map(str::to_string)
        })
        .collect();
    names.sort();
    for name in names {
        let read = |ext: &str| std::fs::read(dir.join(format!("{name}.{ext}"))).expect("SST fixture file");
        w.write(&format!("sst/{name}.sst"), &read("sst"));
        w.write(&format!("sst/{name}.probes.hex"), &read("probes"));
        w.write(&format!("sst/{name}.answers.txt"), &read("expected"));
        writeln!(
            sst_tsv,
            "{name}\t{feature}\tsst/{name}.sst\tsst/{name}.probes.hex\tsst/{name}.answers.txt"
        )
        .unwrap();
    }
}
