//! `ribbon conformance`: the tool passes its own conformance vectors
//! (`conformance/v1/`, captured from native RocksDB), and deliberately wrong
//! implementations (the real tool wrapped in small shell scripts that
//! corrupt what it writes, print, or is asked) fail, naming the feature and
//! the first difference. Also: the vectors agree with the golden vectors
//! where they overlap, damaged vectors are refused, a hanging
//! implementation is killed, and docs/FORMAT.md names every vector file.

use ribbon::core::hash::hash64;
use ribbon::rocksdb::format::FilterReader;
use ribbon::test_support::keys::{match_summary, member_keys, non_member_keys, KeyKind};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const RIBBON: &str = env!("CARGO_BIN_EXE_ribbon");

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/v1")
}

fn conformance(args: &[&str]) -> Output {
    Command::new(RIBBON)
        .arg("conformance")
        .args(args)
        .output()
        .expect("run ribbon conformance")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The table row of `feature`: (checks, pass, fail, first difference).
fn row(stdout: &str, feature: &str) -> (usize, usize, usize, String) {
    let line = stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(feature))
        .unwrap_or_else(|| panic!("no row for {feature} in:\n{stdout}"));
    let f: Vec<&str> = line.split_whitespace().collect();
    let n = |i: usize| f[i].parse::<usize>().unwrap();
    (n(1), n(2), n(3), f[4..].join(" "))
}

/// Runs `ribbon conformance --impl 'sh SCRIPT' ARGS...` for a wrapper
/// implementation, a shell script `body` around the real tool (which it
/// finds in `$RIBBON`), and returns standard output and error after
/// checking that the run failed with exit code 1.
fn run_failing(body: &str, args: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("impl.sh");
    std::fs::write(&path, format!("#!/bin/sh\nRIBBON='{RIBBON}'\n{body}")).unwrap();
    let imp = format!("sh {}", path.display());
    let out = conformance(&[&["--impl", imp.as_str()][..], args].concat());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    (stdout, stderr)
}

/// A wrapper body that runs the real `build` (or any other command), then
/// runs `post` on the filter it wrote, named `$out`, with two helpers:
/// `byte_at OFFSET` prints that byte's value (nothing past the end) and
/// `set_byte OFFSET VALUE` overwrites it.
fn after_build(post: &str) -> String {
    format!(
        r#""$RIBBON" "$@" || exit $?
[ "$1" = build ] || exit 0
out=; prev=
for a in "$@"; do [ "$prev" = --out ] && out=$a; prev=$a; done
byte_at() {{ od -An -tu1 -j"$1" -N1 "$out" | tr -d ' '; }}
set_byte() {{ printf "$(printf '\\%03o' "$2")" | dd of="$out" bs=1 seek="$1" conv=notrunc 2>/dev/null; }}
{post}"#
    )
}

#[test]
fn ribbon_passes_every_vector_in_both_modes() {
    for mode in [&[][..], &["--reader-only"][..]] {
        let out = conformance(&[&["--impl", RIBBON][..], mode].concat());
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{mode:?}\n{stdout}\n{}", text(&out.stderr));
        for feature in [
            "hash",
            "bloom",
            "legacy-bloom",
            "ribbon-10",
            "ribbon-23.7",
            "fallback",
            "policy",
            "sst",
        ] {
            let (checks, pass, fail, first) = row(&stdout, feature);
            assert!(
                checks > 0 && pass == checks && fail == 0 && first == "-",
                "{feature}: {stdout}"
            );
        }
        let (checks, _, fail, _) = row(&stdout, "total");
        assert_eq!(fail, 0);
        // Build and query per filter case; query and SST only when reading.
        assert!(
            if mode.is_empty() {
                checks > 400
            } else {
                checks > 200
            },
            "{stdout}"
        );
    }
}

#[test]
fn a_flipped_bit_in_built_filters_fails_naming_the_feature_and_the_byte() {
    // Flip the lowest bit of byte 3 of every filter of 4 bytes or more.
    let (stdout, stderr) = run_failing(
        &after_build(
            r#"b=$(byte_at 3)
[ -n "$b" ] && set_byte 3 $((b ^ 1))
"#,
        ),
        &["--only", "bloom,legacy-bloom"],
    );
    for feature in ["bloom", "legacy-bloom"] {
        let (checks, pass, fail, first) = row(&stdout, feature);
        // Every build fails at byte 3; every query (of RocksDB's filter) passes.
        assert_eq!(fail * 2, checks, "{feature}: {stdout}");
        assert_eq!(pass, fail, "{feature}: {stdout}");
        assert!(
            first.contains(": build: first differing byte 3: expected "),
            "{feature}: {first}"
        );
        assert!(stdout.contains(&format!("FAIL {feature} ")), "{stdout}");
    }
    assert!(
        stderr.contains("conformance checks failed, in bloom, legacy-bloom"),
        "{stderr}"
    );
    assert!(!stdout.contains("\nribbon"), "--only selects: {stdout}");
}

#[test]
fn a_flipped_answer_fails_naming_the_feature_and_the_key() {
    // Flip the 7th answer printed by query and sst query.
    let (stdout, stderr) = run_failing(
        r#"if [ "$1" = query ] || [ "$1" = sst ]; then
  "$RIBBON" "$@" | awk 'NR == 7 { print ($0 == "1") ? "0" : "1"; next } { print }'
else
  exec "$RIBBON" "$@"
fi
"#,
        &["--reader-only", "--only", "ribbon-10,sst"],
    );
    let (checks, pass, fail, first) = row(&stdout, "ribbon-10");
    assert!(checks > 5 && pass == 0 && fail == checks, "{stdout}");
    // The first ribbon-10 case has 1000 members: key 6 is a member, which
    // RocksDB's filter always matches.
    assert!(
        first.contains(": query: first differing answer: member 6 (key ")
            && first.ends_with("expected 1, got 0"),
        "{first}"
    );
    let (checks, _, fail, first) = row(&stdout, "sst");
    assert!(checks == 6 && fail == 6, "{stdout}");
    assert!(
        first.contains(": sst query: first differing answer: probe 6 (key "),
        "{first}"
    );
    assert!(stderr.contains("in ribbon-10, sst"), "{stderr}");
}

#[test]
fn a_wrong_ribbon_seed_fails_at_the_seed_byte() {
    // Add one to the seed byte of every Ribbon filter built (the trailer
    // is [0xFE, seed, num_blocks: u24]); Bloom filters are left alone.
    let (stdout, _) = run_failing(
        &after_build(
            r#"size=$(wc -c < "$out" | tr -d ' ')
if [ "$size" -ge 5 ] && [ "$(byte_at $((size - 5)))" = 254 ]; then
  set_byte $((size - 4)) $((($(byte_at $((size - 4))) + 1) % 256))
fi
"#,
        ),
        &["--only", "ribbon-10,bloom", "--no-sst"],
    );
    // The first ribbon-10 case: RocksDB's filter and where its seed is.
    let id = "ribbonfilter_10-fv7-sfw-bin-n1000";
    let filter = std::fs::read(vectors().join(format!("filters/{id}.bin"))).unwrap();
    let at = filter.len() - 4;
    let (seed, wrong) = (filter[at], filter[at].wrapping_add(1));
    let (checks, pass, fail, first) = row(&stdout, "ribbon-10");
    assert!(fail * 2 == checks && pass == fail, "{stdout}");
    assert!(
        first.starts_with(&format!(
            "{id}: build: first differing byte {at}: expected {seed:02x}, got {wrong:02x}"
        )),
        "{first}"
    );
    let (checks, pass, _, _) = row(&stdout, "bloom");
    assert!(checks > 0 && pass == checks, "{stdout}");
}

#[test]
fn a_wrong_policy_fails_only_the_features_it_touches() {
    // Asked for ribbonfilter:10, build ribbonfilter:9 (another FP target,
    // so other result columns); every other policy is passed through.
    let (stdout, stderr) = run_failing(
        r#"first=1
for a in "$@"; do
  if [ -n "$first" ]; then set --; first=; fi
  [ "$a" = ribbonfilter:10 ] && a=ribbonfilter:9
  set -- "$@" "$a"
done
exec "$RIBBON" "$@"
"#,
        &["--only", "ribbon-10,ribbon-12", "--no-sst"],
    );
    let (_, _, fail, first) = row(&stdout, "ribbon-10");
    assert!(fail > 0, "{stdout}");
    assert!(
        first.contains("ribbonfilter_10-") && first.contains(": build: first differing byte "),
        "{first}"
    );
    let (checks, pass, fail, _) = row(&stdout, "ribbon-12");
    assert!(checks > 0 && pass == checks && fail == 0, "{stdout}");
    assert!(
        stderr.contains("failed, in ribbon-10") && !stderr.contains("ribbon-12"),
        "{stderr}"
    );
}

#[test]
fn a_hanging_implementation_is_killed_and_fails() {
    let start = std::time::Instant::now();
    let (stdout, _) = run_failing(
        "sleep 30\n",
        &["--reader-only", "--only", "sst", "--timeout", "1"],
    );
    assert!(start.elapsed().as_secs() < 20, "took {:?}", start.elapsed());
    let (_, _, fail, first) = row(&stdout, "sst");
    assert_eq!(fail, 6);
    assert!(first.contains("timed out after 1 s"), "{first}");
}

/// An implementation that prints far more than any answer file is cut off
/// at the runner's limit (its output is never read into memory) and fails.
#[test]
fn an_implementation_that_prints_too_much_fails_without_being_read() {
    let (stdout, _) = run_failing(
        "head -c 20000000 /dev/zero | tr '\\0' '1'\n",
        &["--reader-only", "--only", "sst"],
    );
    let (_, _, fail, first) = row(&stdout, "sst");
    assert_eq!(fail, 6);
    assert!(first.contains("more than the 16777216"), "{first}");
}

/// Whatever an implementation leaves running in the background is killed
/// with it, after every call, not only on a time-out.
#[test]
fn background_processes_of_an_implementation_are_killed() {
    let marker = format!("97{}", std::process::id());
    let body = format!("sleep {marker} &\nexec \"$RIBBON\" \"$@\"\n");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("impl.sh");
    std::fs::write(&path, format!("#!/bin/sh\nRIBBON='{RIBBON}'\n{body}")).unwrap();
    let imp = format!("sh {}", path.display());
    let out = conformance(&["--impl", &imp, "--reader-only", "--only", "sst"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&format!("sleep {marker}")))
        .collect();
    assert!(left.is_empty(), "left running: {left:?}");
}

#[test]
fn an_implementation_that_cannot_run_fails_every_check() {
    let out = conformance(&["--impl", "/nonexistent/impl", "--only", "hash"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let (checks, pass, fail, first) = row(&stdout, "hash");
    assert!(checks == 6 && pass == 0 && fail == 6, "{stdout}");
    assert!(first.contains("exit status: 127"), "{first}");
}

#[test]
fn bad_arguments_and_damaged_vectors_are_refused_in_one_line() {
    let out = conformance(&["--impl", RIBBON, "--timeout", "18446744073709551615"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a time limit past a day is a usage error, never a panic"
    );
    assert!(!text(&out.stderr).contains("panicked"));
    let out = conformance(&["--impl", RIBBON, "--only", "cuckoo"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("unknown feature \"cuckoo\"") && stderr.lines().count() == 1,
        "{stderr}"
    );

    let dir = tempfile::tempdir().unwrap();
    let out = conformance(&["--impl", RIBBON, "--vectors", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no manifest.tsv"),
        "{}",
        text(&out.stderr)
    );

    // A copy of the vectors with one byte of one filter changed.
    let copy = dir.path().join("v1");
    copy_dir(&vectors(), &copy);
    let victim = copy.join("filters/bloomfilter_10-fv7-sfw-bin-n1000.bin");
    let mut bytes = std::fs::read(&victim).unwrap();
    bytes[10] ^= 0x40;
    std::fs::write(&victim, bytes).unwrap();
    let out = conformance(&["--impl", RIBBON, "--vectors", copy.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("filters/bloomfilter_10-fv7-sfw-bin-n1000.bin: sha256 ")
            && stderr.contains("differs from the manifest"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn tsv_rows(text: &str) -> Vec<Vec<&str>> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .map(|l| l.split('\t').collect())
        .collect()
}

/// The vectors repeat some golden cases (captured separately, from native
/// RocksDB, with the key generator): same keys, same filter length,
/// fingerprint and trailer, and the same false positives.
#[test]
fn vectors_agree_with_the_golden_vectors_where_they_overlap() {
    let dir = vectors();
    let golden = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../ribbon/tests/golden/filters.txt"),
    )
    .unwrap();
    let cases = std::fs::read_to_string(dir.join("cases.tsv")).unwrap();
    let overlap = std::fs::read_to_string(dir.join("golden-overlap.tsv")).unwrap();
    let probes = non_member_keys(10_000, 99);
    let mut checked = 0;
    for o in tsv_rows(&overlap) {
        let (id, key) = (o[0], o[1]);
        let g: Vec<&str> = golden
            .lines()
            .find(|l| {
                l.strip_prefix("filter ")
                    .is_some_and(|r| r.starts_with(&format!("{key} |")))
            })
            .unwrap_or_else(|| panic!("{id}: no golden line {key}"))
            .split_whitespace()
            .collect();
        let c = tsv_rows(&cases).into_iter().find(|c| c[0] == id).expect("case");
        assert_eq!(g[5], "RandomBinary");
        let n: usize = g[6].parse().unwrap();
        let keys = member_keys(KeyKind::RandomBinary, n, g[7].parse().unwrap());
        let lines: Vec<String> = std::fs::read_to_string(dir.join("keys").join(c[6]))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        let count: usize = c[7].parse().unwrap();
        assert_eq!(count, n, "{id}");
        for (k, l) in keys.iter().zip(&lines[..count]) {
            assert_eq!(
                &k.iter().map(|b| format!("{b:02x}")).collect::<String>(),
                l,
                "{id}: keys"
            );
        }
        let filter = std::fs::read(dir.join(c[8])).unwrap();
        assert_eq!(filter.len().to_string(), g[9], "{id}: length");
        assert_eq!(format!("{:x}", hash64(&filter, 0)), g[10], "{id}: fingerprint");
        assert_eq!(c[11], g[11], "{id}: trailer");
        let reader = FilterReader::new(&filter);
        let (fp, first) = match_summary(probes.iter().map(|p| reader.may_match(p)));
        assert_eq!(
            (fp.to_string().as_str(), first.as_str()),
            (g[12], g[13]),
            "{id}: false positives"
        );
        checked += 1;
    }
    assert!(checked >= 50, "only {checked} overlapping cases");
}

/// docs/FORMAT.md references every vector file from the section it pins
/// (filter files by their cases' features), and every file is in the
/// manifest.
#[test]
fn format_spec_references_every_vector_file_and_feature() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let spec = std::fs::read_to_string(root.join("docs/FORMAT.md")).unwrap();
    let dir = vectors();
    let manifest = std::fs::read_to_string(dir.join("manifest.tsv")).unwrap();
    let listed: Vec<&str> = tsv_rows(&manifest).iter().map(|r| r[0]).collect();
    let mut named = 0;
    for rel in &listed {
        if rel.starts_with("filters/") || rel.starts_with("answers/") {
            continue;
        }
        // sst/NAME.sst and its .probes.hex/.answers.txt are named by NAME.
        let name = rel
            .strip_prefix("sst/")
            .map_or(*rel, |s| s.split('.').next().unwrap());
        assert!(spec.contains(name), "docs/FORMAT.md does not reference {rel}");
        named += 1;
    }
    assert!(named > 15);
    let cases = std::fs::read_to_string(dir.join("cases.tsv")).unwrap();
    for c in tsv_rows(&cases) {
        assert!(
            spec.contains(&format!("`{}`", c[1])),
            "docs/FORMAT.md does not name feature {}",
            c[1]
        );
    }
    for golden in ["hashes.txt", "slots.txt", "filters.txt"] {
        assert!(
            spec.contains(&format!("ribbon/tests/golden/{golden}")),
            "{golden}"
        );
    }
    // Every file on disk is listed (no stale or unlisted vectors).
    let mut on_disk = Vec::new();
    walk(&dir, &dir, &mut on_disk);
    on_disk.retain(|p| p != "manifest.tsv" && p != "README.md");
    on_disk.sort();
    let mut listed: Vec<String> = listed.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
}

fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(base, &p, out);
        } else {
            out.push(p.strip_prefix(base).unwrap().to_string_lossy().into_owned());
        }
    }
}

/// An implementation of the readers written from docs/FORMAT.md alone (not
/// from the `ribbon` crate), checked against every vector: the hash values
/// of `hashes.tsv`, and RocksDB's answers for every filter case. If the
/// document's pseudo-code were wrong, these would disagree with RocksDB.
mod spec {
    const P32_1: u64 = 0x9E37_79B1;
    const P32_2: u64 = 0x85EB_CA77;
    const P32_3: u64 = 0xC2B2_AE3D;
    const P64_1: u64 = 0x9E37_79B1_85EB_CA87;
    const P64_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
    const P64_3: u64 = 0x1656_67B1_9E37_79F9;
    const P64_4: u64 = 0x85EB_CA77_C2B2_AE63;
    const P64_5: u64 = 0x27D4_EB2F_1656_67C5;
    const SECRET_HEX: &str = "b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f\
cb79e64eccc0e578825ad07dccff7221b8084674f743248ee03590e6813a264c\
3c2852bb91c300cb88d0658b1b532ea371644897a20df94e3819ef46a9deacd8\
a8fa763fe39c343ff9dcbbc7c70b4f1d8a51e04bcdb45931c89f7ec9d9787364\
eac5ac8334d3ebc3c581a0fffa1363eb170ddd51b7f0da49d316552629d4689e\
2b16be587d47a1fc8ff8b8d17ad031ce45cb3a8f95160428afd7fbcabb4b407e";

    pub fn unhex(s: &str) -> Vec<u8> {
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    }

    fn r64(b: &[u8], i: usize) -> u64 {
        u64::from_le_bytes(b[i..i + 8].try_into().unwrap())
    }

    fn r32(b: &[u8], i: usize) -> u64 {
        u64::from(u32::from_le_bytes(b[i..i + 4].try_into().unwrap()))
    }

    fn fold(a: u64, b: u64) -> u64 {
        let p = u128::from(a) * u128::from(b);
        (p as u64) ^ ((p >> 64) as u64)
    }

    fn avalanche(mut h: u64) -> u64 {
        h ^= h >> 37;
        h = h.wrapping_mul(P64_3);
        h ^ (h >> 32)
    }

    /// Section 2.1.
    pub fn hash64(d: &[u8], seed: u64) -> u64 {
        let s = unhex(SECRET_HEX);
        let len = d.len();
        let n = len as u64;
        let mix16 = |i: usize, j: usize| {
            fold(
                r64(d, i) ^ r64(&s, j).wrapping_add(seed),
                r64(d, i + 8) ^ r64(&s, j + 8).wrapping_sub(seed),
            )
        };
        match len {
            0 => fold(seed.wrapping_add(r64(&s, 0)), P64_2),
            1..=3 => {
                let combined =
                    u64::from(d[0]) | u64::from(d[len / 2]) << 8 | u64::from(d[len - 1]) << 16 | n << 24;
                avalanche((combined ^ r32(&s, 0).wrapping_add(seed)).wrapping_mul(P64_1))
            }
            4..=8 => {
                let keyed = (r32(d, 0) | r32(d, len - 4) << 32) ^ r64(&s, 0).wrapping_add(seed);
                let mix = n.wrapping_add((keyed ^ (keyed >> 51)).wrapping_mul(P32_1));
                avalanche((mix ^ (mix >> 47)).wrapping_mul(P64_2))
            }
            9..=16 => {
                let lo = r64(d, 0) ^ r64(&s, 0).wrapping_add(seed);
                let hi = r64(d, len - 8) ^ r64(&s, 8).wrapping_sub(seed);
                avalanche(n.wrapping_add(lo).wrapping_add(hi).wrapping_add(fold(lo, hi)))
            }
            17..=128 => {
                let mut acc = n.wrapping_mul(P64_1);
                if len > 32 {
                    if len > 64 {
                        if len > 96 {
                            acc = acc.wrapping_add(mix16(48, 96)).wrapping_add(mix16(len - 64, 112));
                        }
                        acc = acc.wrapping_add(mix16(32, 64)).wrapping_add(mix16(len - 48, 80));
                    }
                    acc = acc.wrapping_add(mix16(16, 32)).wrapping_add(mix16(len - 32, 48));
                }
                acc = acc.wrapping_add(mix16(0, 0)).wrapping_add(mix16(len - 16, 16));
                avalanche(acc)
            }
            129..=240 => {
                let mut acc = n.wrapping_mul(P64_1);
                for i in 0..8 {
                    acc = acc.wrapping_add(mix16(16 * i, 16 * i));
                }
                acc = avalanche(acc);
                for i in 8..len / 16 {
                    acc = acc.wrapping_add(mix16(16 * i, 16 * (i - 8) + 3));
                }
                avalanche(acc.wrapping_add(mix16(len - 16, 119)))
            }
            _ => {
                let mut k = s.clone();
                if seed != 0 {
                    for c in k.chunks_exact_mut(16) {
                        let (lo, hi) = (r64(c, 0).wrapping_add(seed), r64(c, 8).wrapping_sub(seed));
                        c[..8].copy_from_slice(&lo.to_le_bytes());
                        c[8..].copy_from_slice(&hi.to_le_bytes());
                    }
                }
                let mut acc = [P32_3, P64_1, P64_2, P64_3, P64_4, P32_2, P64_5, P32_1];
                let accumulate = |acc: &mut [u64; 8], stripe: &[u8], at: usize| {
                    for (i, a) in acc.iter_mut().enumerate() {
                        let v = r64(stripe, 8 * i);
                        let x = v ^ r64(&k, at + 8 * i);
                        *a = a.wrapping_add(v).wrapping_add((x & 0xffff_ffff) * (x >> 32));
                    }
                };
                let blocks = len / 1024;
                for b in 0..blocks {
                    for st in 0..16 {
                        accumulate(&mut acc, &d[1024 * b + 64 * st..], 8 * st);
                    }
                    for (i, a) in acc.iter_mut().enumerate() {
                        let mut v = *a;
                        v ^= v >> 47;
                        v ^= r64(&k, 128 + 8 * i);
                        *a = v.wrapping_mul(P32_1);
                    }
                }
                let rest = &d[1024 * blocks..];
                for st in 0..rest.len() / 64 {
                    accumulate(&mut acc, &rest[64 * st..], 8 * st);
                }
                if !len.is_multiple_of(64) {
                    accumulate(&mut acc, &d[len - 64..], 121);
                }
                let mut result = n.wrapping_mul(P64_1);
                for i in 0..4 {
                    result = result.wrapping_add(fold(
                        acc[2 * i] ^ r64(&k, 11 + 16 * i),
                        acc[2 * i + 1] ^ r64(&k, 19 + 16 * i),
                    ));
                }
                avalanche(result)
            }
        }
    }

    /// Section 2.2.
    pub fn bloom_hash(d: &[u8]) -> u32 {
        const M: u32 = 0xc6a4_a793;
        let mut h = 0xbc9f_1d34u32 ^ (d.len() as u32).wrapping_mul(M);
        let words = d.len() / 4;
        for i in 0..words {
            h = h.wrapping_add(r32(d, 4 * i) as u32).wrapping_mul(M);
            h ^= h >> 16;
        }
        let t = &d[4 * words..];
        let sext = |b: u8| b as i8 as i32 as u32;
        if !t.is_empty() {
            if t.len() == 3 {
                h = h.wrapping_add(sext(t[2]) << 16);
            }
            if t.len() >= 2 {
                h = h.wrapping_add(sext(t[1]) << 8);
            }
            h = h.wrapping_add(sext(t[0])).wrapping_mul(M);
            h ^= h >> 24;
        }
        h
    }

    fn bit(data: &[u8], p: usize) -> bool {
        data[p / 8] >> (p % 8) & 1 == 1
    }

    fn parity(x: u128) -> u32 {
        x.count_ones() & 1
    }

    /// Sections 3 to 6: whether `key` may match the filter block `f`.
    pub fn may_match(f: &[u8], key: &[u8]) -> bool {
        if f.len() <= 5 {
            return false;
        }
        let (data, t) = f.split_at(f.len() - 5);
        match t[0] as i8 {
            -1 => {
                let probes = u32::from(t[2] & 31);
                if t[1] != 0 || t[2] >> 5 != 0 || !(1..=30).contains(&probes) || t[3] != 0 || t[4] != 0 {
                    return true;
                }
                let h = hash64(key, 0);
                let line = ((h & 0xffff_ffff) * (data.len() as u64 / 64)) >> 32;
                let line = &data[64 * line as usize..][..64];
                let mut h2 = (h >> 32) as u32;
                (0..probes).all(|_| {
                    let b = bit(line, (h2 >> 23) as usize);
                    h2 = h2.wrapping_mul(0x9e37_79b9);
                    b
                })
            }
            -2 => {
                let num_blocks = u32::from_le_bytes([t[2], t[3], t[4], 0]);
                if num_blocks < 2 {
                    return true;
                }
                ribbon_may_match(data, num_blocks, t[1], hash64(key, 0))
            }
            1..=127 => {
                let probes = u32::from(t[0]);
                let num_lines = u32::from_le_bytes([t[1], t[2], t[3], t[4]]);
                assert_eq!(num_lines as usize * 64, data.len(), "64-byte lines");
                let mut h = bloom_hash(key);
                let line = &data[64 * (h % num_lines) as usize..][..64];
                let delta = h.rotate_right(17);
                (0..probes).all(|_| {
                    let b = bit(line, (h % 512) as usize);
                    h = h.wrapping_add(delta);
                    b
                })
            }
            _ => true,
        }
    }

    /// Section 4.2's probe table (4.3).
    fn num_probes(m: i64) -> u32 {
        match m {
            ..=2080 => 1,
            2081..=3580 => 2,
            3581..=5100 => 3,
            5101..=6640 => 4,
            6641..=8300 => 5,
            8301..=10070 => 6,
            10071..=11720 => 7,
            11721..=14001 => 8,
            14002..=16050 => 9,
            16051..=18300 => 10,
            18301..=22001 => 11,
            22002..=25501 => 12,
            25502..=50000 => ((m - 1) / 2000 - 1) as u32,
            _ => 24,
        }
    }

    /// Section 4.3: the data length of a FastLocalBloom for `n` keys.
    fn bloom_len(n: u64, millibits: u64) -> u64 {
        (n * millibits).div_ceil(8000).min(0xffff_ffc0).div_ceil(64) * 64
    }

    /// Sections 4.3 and 4.4.
    fn fast_bloom(hs: &[u64], millibits: u64, ofm: bool) -> Vec<u8> {
        let n = hs.len() as u64;
        let len = bloom_len(n, millibits);
        let probes = num_probes(if ofm {
            (len * 8000 / n) as i32 as i64
        } else {
            millibits as i64
        });
        let mut f = vec![0u8; len as usize];
        for &h in hs {
            let line = 64 * (((h & 0xffff_ffff) * (len / 64)) >> 32) as usize;
            let mut h2 = (h >> 32) as u32;
            for _ in 0..probes {
                let p = line * 8 + (h2 >> 23) as usize;
                f[p / 8] |= 1 << (p % 8);
                h2 = h2.wrapping_mul(0x9e37_79b9);
            }
        }
        f.extend_from_slice(&[0xff, 0, probes as u8, 0, 0]);
        f
    }

    /// Section 5.2.
    fn legacy_bloom(hs: &[u32], bits: u64) -> Vec<u8> {
        let probes = ((bits as f64 * 0.69) as u32).clamp(1, 30);
        let total = (hs.len() as u64 * bits).min(0xffff_0000);
        let mut lines = total.div_ceil(512) as u32;
        lines += u32::from(lines.is_multiple_of(2));
        let mut f = vec![0u8; 64 * lines as usize];
        for &h0 in hs {
            let (mut h, delta) = (h0, h0.rotate_right(17));
            let line = 64 * (h0 % lines) as usize;
            for _ in 0..probes {
                let p = line * 8 + (h % 512) as usize;
                f[p / 8] |= 1 << (p % 8);
                h = h.wrapping_add(delta);
            }
        }
        f.push(probes as u8);
        f.extend_from_slice(&lines.to_le_bytes());
        f
    }

    const T: [f64; 18] = [
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 248.851, 499.532, 1001.26, 2003.97, 4005.59, 8000.39,
        15966.6, 31828.1, 63447.3, 126506.0,
    ];

    /// Section 6.4: keys that fit in 2^l slots.
    fn keys_for_pow2(l: u32) -> f64 {
        match T.get(l as usize) {
            Some(&k) => k,
            None => {
                let factor = (131072.0 / T[17] - 17.0 * 0.0038) + f64::from(l) * 0.0038;
                (1u64 << l) as f64 / factor
            }
        }
    }

    /// Section 6.4: GetNumSlots, then rounded to blocks.
    fn num_slots(n: u32) -> u32 {
        (get_num_slots(n).div_ceil(128) * 128).max(256)
    }

    /// Section 6.4: GetNumSlots (`n > 0`).
    pub fn get_num_slots(n: u32) -> u32 {
        let wanted = f64::from(n);
        // RocksDB's truncated 1/ln(2), not LOG2_E: the exact constant would
        // change results.
        #[allow(clippy::approx_constant)]
        let mut l = ((wanted.ln() * 1.4426950409) + 0.5) as u32;
        let mut lower = keys_for_pow2(l);
        if l == 0 || lower == 0.0 {
            256
        } else {
            let upper;
            if wanted < lower {
                upper = lower;
                l -= 1;
                lower = keys_for_pow2(l);
            } else {
                upper = keys_for_pow2(l + 1);
            }
            let portion = (wanted - lower) / (upper - lower);
            let pow = (1u64 << l) as f64;
            (portion * pow + pow + 0.999999999) as u32
        }
    }

    /// Section 6.5: the FP target of a bits/key setting.
    fn one_in(bits: f64, millibits: i64) -> f64 {
        let k = f64::from(num_probes(millibits));
        let std = |b: f64| (1.0 - (-k / b).exp()).powf(k);
        let kpl = 512.0 / bits;
        let sd = kpl.sqrt();
        1.0 / ((std(512.0 / (kpl + sd)) + std(512.0 / (kpl - sd))) / 2.0)
    }

    /// Section 6.5: solution bytes.
    fn ribbon_bytes(num_slots: u32, one_in: f64, entropy: u32) -> usize {
        let fp = 1.0 / one_in;
        let lower = 31 - (one_in as u32).leading_zeros();
        let (lo_rate, up_rate) = (2f64.powi(-(lower as i32)), 2f64.powi(-(lower as i32 + 1)));
        let portion = (fp - up_rate) / (lo_rate - up_rate);
        let bias = (f64::from(entropy) + 0.5) / 4_294_967_296.0;
        let usb = ((portion * f64::from(num_slots - 127) + bias) / 128.0) as u32;
        let blocks = num_slots / 128;
        16 * (blocks * lower + blocks - usb) as usize
    }

    /// Sections 6.2, 6.3, 6.7: bands the keys under one seed.
    fn band(hs: &[u64], num_slots: u32, seed: u32) -> Option<(Vec<u128>, Vec<u32>)> {
        let (mut cs, mut rs) = (vec![0u128; num_slots as usize], vec![0u32; num_slots as usize]);
        let mut t = u64::from(seed).wrapping_mul(0xc782_19a2_3eea_dd03);
        t ^= (t & 0xf0f0_f0f0_f0f0_f0f0) >> 4;
        for &k in hs {
            let h = (k ^ (t & 0xffff_ffff)).wrapping_mul(0x6193_d459_236a_3a0d);
            let mut i = ((u128::from(h) * u128::from(num_slots - 127)) >> 64) as usize;
            let a = h.wrapping_mul(0xc28f_8282_2b65_0bed);
            let mut c = (u128::from(a) << 64) | u128::from(a ^ 0xc367_844a_6e52_731d) | 1;
            let mut r = a.swap_bytes() as u32;
            loop {
                if cs[i] == 0 {
                    (cs[i], rs[i]) = (c, r);
                    break;
                }
                c ^= cs[i];
                r ^= rs[i];
                if c == 0 {
                    if r == 0 {
                        break;
                    }
                    return None;
                }
                let tz = c.trailing_zeros();
                i += tz as usize;
                c >>= tz;
            }
        }
        Some((cs, rs))
    }

    /// Sections 6.6 to 6.9.
    fn ribbon(hs: &[u64], bits: f64, millibits: u64, ofm: bool) -> Vec<u8> {
        let n = hs.len();
        let slots = num_slots(n as u32);
        let size = ribbon_bytes(slots, one_in(bits, millibits as i64), (hs[0] >> 32) as u32) + 5;
        if slots < 1024 && bloom_len(n as u64, millibits) as usize + 5 < size {
            return fast_bloom(hs, millibits, ofm);
        }
        let start = (hs[0] & 255) as u32;
        let Some((seed, (cs, rs))) = (0..256).find_map(|i| {
            let seed = (start + i) & 255;
            band(hs, slots, seed).map(|b| (seed, b))
        }) else {
            return fast_bloom(hs, millibits, ofm);
        };
        let blocks = slots / 128;
        let segments = (size / 16) as u32;
        let u = segments.div_ceil(blocks);
        let usb = u * blocks - segments;
        assert!(u <= 32);
        let mut f = vec![0u8; size];
        let mut windows = [0u128; 32];
        for b in (0..blocks).rev() {
            let cols = u - u32::from(b < usb);
            for i in (128 * b as usize..128 * (b as usize + 1)).rev() {
                for (j, w) in windows[..cols as usize].iter_mut().enumerate() {
                    let shifted = *w << 1;
                    *w = shifted | u128::from(parity(shifted & cs[i]) ^ (rs[i] >> j & 1));
                }
            }
            for j in 0..cols {
                let at = 16 * (b * u - b.min(usb) + j) as usize;
                f[at..at + 16].copy_from_slice(&windows[j as usize].to_le_bytes());
            }
        }
        let nb = blocks.to_le_bytes();
        f[size - 5..].copy_from_slice(&[0xfe, seed as u8, nb[0], nb[1], nb[2]]);
        f
    }

    /// Section 7: the filter block for `keys` under a policy and context
    /// (`level`: -1 misc, `None` a flush), `None` for "no filter".
    pub fn build(policy: &str, fv: i32, level: Option<i32>, ofm: bool, keys: &[Vec<u8>]) -> Option<Vec<u8>> {
        let parts: Vec<&str> = policy.split(':').collect();
        let requested: f64 = parts[1].parse().unwrap();
        let bits = match requested {
            b if b < 0.5 => return None,
            b if b < 1.0 => 1.0,
            b if b >= 100.0 => 100.0,
            b => b,
        };
        let millibits = (bits * 1000.0 + 0.500001) as u64;
        let whole = (millibits + 500) / 1000;
        let levelish = match level {
            None => -1,
            Some(-1) => i32::MAX - 1,
            Some(l) => l,
        };
        enum Kind {
            Legacy,
            Fast,
            Ribbon,
        }
        let kind = match parts[0] {
            "bloomfilter" if fv < 5 => Kind::Legacy,
            "bloomfilter" | "rocksdb.internal.FastLocalBloomFilter" => Kind::Fast,
            "rocksdb.internal.LegacyBloomFilter" => Kind::Legacy,
            "rocksdb.internal.Standard128RibbonFilter" => Kind::Ribbon,
            "ribbonfilter" => {
                let bbl: i32 = parts.get(2).map_or(0, |l| l.parse().unwrap());
                let levelish = if bbl < i32::MAX { levelish } else { i32::MAX - 1 };
                if levelish < bbl {
                    Kind::Fast
                } else {
                    Kind::Ribbon
                }
            }
            other => panic!("policy {other}"),
        };
        if keys.is_empty() {
            return Some(Vec::new());
        }
        fn dedup<H: PartialEq + Copy>(hs: impl Iterator<Item = H>) -> Vec<H> {
            let mut out: Vec<H> = Vec::new();
            for h in hs {
                if out.last() != Some(&h) {
                    out.push(h);
                }
            }
            out
        }
        Some(match kind {
            Kind::Legacy => legacy_bloom(&dedup(keys.iter().map(|k| bloom_hash(k))), whole.max(1)),
            Kind::Fast => fast_bloom(
                &dedup(keys.iter().map(|k| hash64(k, 0))),
                millibits.max(1000),
                ofm,
            ),
            Kind::Ribbon => ribbon(&dedup(keys.iter().map(|k| hash64(k, 0))), bits, millibits, ofm),
        })
    }

    /// Sections 6.2, 6.3, 6.9 and 6.10.
    fn ribbon_may_match(data: &[u8], num_blocks: u32, seed: u8, k: u64) -> bool {
        let mut t = u64::from(seed).wrapping_mul(0xc782_19a2_3eea_dd03);
        t ^= (t & 0xf0f0_f0f0_f0f0_f0f0) >> 4;
        let raw_seed = t & 0xffff_ffff;
        let h = (k ^ raw_seed).wrapping_mul(0x6193_d459_236a_3a0d);
        let num_starts = num_blocks * 128 - 127;
        let start = ((u128::from(h) * u128::from(num_starts)) >> 64) as u32;
        let a = h.wrapping_mul(0xc28f_8282_2b65_0bed);
        let c = (u128::from(a) << 64) | u128::from(a ^ 0xc367_844a_6e52_731d) | 1;
        let r = a.swap_bytes() as u32;
        let num_segments = (data.len() / 16) as u32;
        let mut u = num_segments.div_ceil(num_blocks);
        let mut usb = u * num_blocks - num_segments;
        if u > 32 {
            u = 32;
            usb = 0;
        }
        let segment = |i: u32| u128::from_le_bytes(data[16 * i as usize..][..16].try_into().unwrap());
        let (b, bit) = (start / 128, start % 128);
        let cols = u - u32::from(b < usb);
        let seg = b * u - b.min(usb);
        (0..cols).all(|j| {
            let v = if bit == 0 {
                parity(segment(seg + j) & c)
            } else {
                parity(segment(seg + j) & (c << bit)) ^ parity(segment(seg + cols + j) & (c >> (128 - bit)))
            };
            v == (r >> j) & 1
        })
    }
}

/// The keys of a hex keys file (one per line, an empty line the empty key).
fn spec_lines(path: &Path) -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string(path).unwrap();
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(&text);
    body.split('\n').map(spec::unhex).collect()
}

/// A builder written from docs/FORMAT.md alone writes RocksDB's bytes for
/// every filter case.
#[test]
fn a_builder_written_from_the_spec_writes_rocksdbs_bytes() {
    let dir = vectors();
    let cases = std::fs::read_to_string(dir.join("cases.tsv")).unwrap();
    let mut sets = std::collections::HashMap::new();
    let mut built = 0;
    for c in tsv_rows(&cases) {
        let keys = sets
            .entry(c[6].to_string())
            .or_insert_with(|| spec_lines(&dir.join("keys").join(c[6])));
        let count: usize = c[7].parse().unwrap();
        let level = match c[4] {
            "flush" => None,
            l => Some(l.parse().unwrap()),
        };
        let filter = spec::build(c[2], c[3].parse().unwrap(), level, c[5] == "true", &keys[..count]);
        let want = std::fs::read(dir.join(c[8])).unwrap();
        assert!(
            filter.as_deref() == Some(want.as_slice()),
            "{}: bytes differ",
            c[0]
        );
        built += 1;
    }
    assert!(built > 200, "{built} filters");
    let slots = std::fs::read_to_string(dir.join("slots.tsv")).unwrap();
    let mut rows = 0;
    for r in tsv_rows(&slots).iter().filter(|r| r[0] != "0") {
        let n: u32 = r[0].parse().unwrap();
        assert_eq!(spec::get_num_slots(n).to_string(), r[1], "GetNumSlots({n})");
        rows += 1;
    }
    assert!(rows > 300, "{rows} slot rows");
}

#[test]
fn a_reader_written_from_the_spec_gives_rocksdbs_hashes_and_answers() {
    let dir = vectors();
    let data = std::fs::read(dir.join("data.bin")).unwrap();
    let hashes = std::fs::read_to_string(dir.join("hashes.tsv")).unwrap();
    let mut checked = 0;
    for f in tsv_rows(&hashes) {
        let (len, off): (usize, usize) = (f[1].parse().unwrap(), f[2].parse().unwrap());
        let key = &data[off..off + len];
        let got = match f[0] {
            "hash64" => format!(
                "{:016x}",
                spec::hash64(key, u64::from_str_radix(f[3], 16).unwrap())
            ),
            _ => format!("{:08x}", spec::bloom_hash(key)),
        };
        assert_eq!(got, f[4], "{f:?}");
        checked += 1;
    }
    assert!(checked > 1800, "{checked} hash values");

    let lines = |rel: &str| spec_lines(&dir.join(rel));
    let probes = lines("probes.hex");
    let cases = std::fs::read_to_string(dir.join("cases.tsv")).unwrap();
    let mut filters = 0;
    for c in tsv_rows(&cases) {
        if c[9] == "-" {
            continue;
        }
        let filter = std::fs::read(dir.join(c[8])).unwrap();
        let members = lines(&format!("keys/{}", c[6]));
        let count: usize = c[7].parse().unwrap();
        for (i, k) in members[..count].iter().enumerate() {
            assert!(spec::may_match(&filter, k), "{}: member {i}", c[0]);
        }
        let answers = std::fs::read_to_string(dir.join(c[9])).unwrap();
        for (i, (p, a)) in probes.iter().zip(answers.lines()).enumerate() {
            assert_eq!(spec::may_match(&filter, p), a == "1", "{}: probe {i}", c[0]);
        }
        filters += 1;
    }
    assert!(filters > 200, "{filters} filters");
}
