//! `ribbon reconcile` and `ribbon db` end to end on files this test writes
//! (the databases RocksDB writes are in the root package's
//! `tests/reconcile_db.rs`): keys files and SST files from the corpus are
//! sketched and diffed, a too small sketch says how large one is needed,
//! and bad sketches are one-line errors.

use std::path::Path;
use std::process::{Command, Output};

fn ribbon(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ribbon"))
        .args(args)
        .output()
        .expect("run ribbon")
}

fn ok(args: &[&str]) -> String {
    let o = ribbon(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn err(args: &[&str]) -> String {
    let o = ribbon(args);
    assert_eq!(o.status.code(), Some(1), "{args:?}");
    let e = String::from_utf8(o.stderr).unwrap();
    assert_eq!(e.lines().count(), 1, "{e}");
    e
}

fn write_keys(dir: &Path, name: &str, keys: impl Iterator<Item = String>) -> String {
    let p = dir.join(name);
    std::fs::write(&p, keys.map(|k| k + "\n").collect::<String>()).unwrap();
    p.display().to_string()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn keys_files_diff_exactly_and_too_small_sketches_say_what_is_needed() {
    let tmp = tempfile::tempdir().unwrap();
    let a = write_keys(
        tmp.path(),
        "a",
        (0..5000)
            .map(|i| format!("k{i}"))
            .chain(["dup".into(), "dup".into()]),
    );
    let b = write_keys(
        tmp.path(),
        "b",
        (40..5030).map(|i| format!("k{i}")).chain(["dup".into()]),
    );
    let (sa, sb) = (tmp.path().join("a.sk"), tmp.path().join("b.sk"));
    ok(&["reconcile", "sketch", &a, "--out", s(&sa)]);
    ok(&["reconcile", "sketch", &b, "--out", s(&sb)]);
    let out = ok(&["reconcile", "diff", s(&sa), s(&sb)]);
    let mut expected: Vec<String> = (0..40).map(|i| format!("< k{i}")).collect();
    expected.sort();
    let mut only_b: Vec<String> = (5000..5030).map(|i| format!("> k{i}")).collect();
    only_b.sort();
    expected.extend(only_b);
    assert_eq!(out.lines().collect::<Vec<_>>(), expected);
    // Hex output.
    let hex = ok(&["reconcile", "diff", s(&sa), s(&sb), "--hex"]);
    assert!(hex.starts_with("< 6b30\n"), "{hex}");
    // Tiny sketches: the difference is too large, and the message says
    // how large a sketch to make.
    let (ta, tb) = (tmp.path().join("ta.sk"), tmp.path().join("tb.sk"));
    ok(&["reconcile", "sketch", &a, "--out", s(&ta), "--cells", "30"]);
    ok(&["reconcile", "sketch", &b, "--out", s(&tb), "--cells", "30"]);
    let e = err(&["reconcile", "diff", s(&ta), s(&tb)]);
    assert!(
        e.contains("larger than 30-cell sketches") && e.contains("--cells "),
        "{e}"
    );
    // The two-step protocol: estimator-only sketches, then the estimate.
    let (ea, eb) = (tmp.path().join("ea.sk"), tmp.path().join("eb.sk"));
    ok(&["reconcile", "sketch", &a, "--out", s(&ea), "--cells", "0"]);
    ok(&["reconcile", "sketch", &b, "--out", s(&eb), "--cells", "0"]);
    let est = ok(&["reconcile", "estimate", s(&ea), s(&eb)]);
    assert!(
        est.starts_with("estimated difference: 70 keys\nsketch both sides with: --cells "),
        "{est}"
    );
    let e = err(&["reconcile", "diff", s(&ea), s(&eb)]);
    assert!(e.contains("only an estimator"), "{e}");
    // Different sizes, a corrupt file, a file that is no sketch.
    let e = err(&["reconcile", "diff", s(&sa), s(&tb)]);
    assert!(e.contains("different sizes"), "{e}");
    let mut bytes = std::fs::read(&sa).unwrap();
    bytes[100] ^= 1;
    std::fs::write(&ta, &bytes).unwrap();
    let e = err(&["reconcile", "diff", s(&ta), s(&sb)]);
    assert!(e.contains("checksum mismatch"), "{e}");
    let e = err(&["reconcile", "diff", &a, s(&sb)]);
    assert!(e.contains("not a sketch file"), "{e}");
}

#[test]
fn sst_files_sketch_their_keys() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sst/tests/corpus");
    let sst = corpus.join("full_ribbon_fv7_zstd_xxh3.sst");
    let tmp = tempfile::tempdir().unwrap();
    let (sa, sb) = (tmp.path().join("a.sk"), tmp.path().join("b.sk"));
    ok(&["reconcile", "sketch", s(&sst), "--out", s(&sa), "--cells", "0"]);
    // The same file against an empty keys file: the estimate is its key count.
    let empty = write_keys(tmp.path(), "empty", std::iter::empty());
    ok(&["reconcile", "sketch", &empty, "--out", s(&sb), "--cells", "0"]);
    let est = ok(&["reconcile", "estimate", s(&sa), s(&sb)]);
    let n: u64 = est.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(n > 0, "{est}");
    // A directory that is no database.
    let e = err(&[
        "reconcile",
        "sketch",
        tmp.path().to_str().unwrap(),
        "--out",
        s(&sa),
    ]);
    assert!(e.contains("CURRENT"), "{e}");
    let e = err(&["db", "query", tmp.path().to_str().unwrap(), "--keys", &empty]);
    assert!(e.contains("CURRENT"), "{e}");
}

#[path = "../../sst/tests/support/child.rs"]
#[allow(dead_code)]
mod child;

/// A sketch of `a.sketch`'s shape (3 cells of 1-byte chunks) whose cells
/// all hold one element that claims a key of 2^32 - 1 bytes: pure cells
/// that peel, then a key of 4 GiB to assemble from one chunk.
fn forged_sketch(honest: &[u8]) -> Vec<u8> {
    let cells = 3;
    let w = 1;
    let mut bytes = honest.to_vec();
    let body_end = bytes.len() - 8;
    let ibf_at = body_end - cells * (28 + w);
    let h = 0x0123_4567_89ab_cdefu64;
    let meta = 0xffff_ffffu64 << 32;
    // hashing::ELEMENT and the element hash of `ibf.rs`.
    let check = ribbon_reconcile::hashing::mix(h ^ meta.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    for c in 0..cells {
        let at = ibf_at + c * (28 + w);
        bytes[at..at + 4].copy_from_slice(&1i32.to_le_bytes());
        bytes[at + 4..at + 12].copy_from_slice(&h.to_le_bytes());
        bytes[at + 12..at + 20].copy_from_slice(&meta.to_le_bytes());
        bytes[at + 20..at + 28].copy_from_slice(&check.to_le_bytes());
        bytes[at + 28] = 0x41;
    }
    let sum = ribbon_reconcile::hashing::key_hash(&bytes[..body_end], 0);
    bytes[body_end..].copy_from_slice(&sum.to_le_bytes());
    bytes
}

/// Issue 31: `sketch --cells 805306368` (the CLI's maximum, and what
/// `estimate` recommends for a forged estimate) allocated 51.5 GB, 3.3 TB
/// with `--chunk-bytes 4096`; a forged 3-cell sketch made `diff` allocate
/// 103 GB; `diff - -` pointed to `ribbon query --help`. Under a 1 GiB
/// address-space limit and 10 s of CPU: one-line errors, saying what to do.
#[test]
fn sketch_sizes_and_forged_sketches_stay_within_memory() {
    child::run_limited(
        "sketch_sizes_and_forged_sketches_stay_within_memory",
        child::Limits {
            memory_kib: 1 << 20,
            time: std::time::Duration::from_secs(10),
        },
        || {
            let dir = tempfile::tempdir().unwrap();
            let keys = write_keys(dir.path(), "k.txt", (0..100).map(|i| format!("k{i}")));
            let out = dir.path().join("s.sketch").display().to_string();
            for chunk in ["32", "4096"] {
                let e = err(&[
                    "reconcile",
                    "sketch",
                    &keys,
                    "--out",
                    &out,
                    "--cells",
                    "805306368",
                    "--chunk-bytes",
                    chunk,
                ]);
                assert!(
                    e.contains("over --max-memory 1024 MiB") && e.contains("raise --max-memory"),
                    "{e}"
                );
            }
            // Within --max-memory but beyond what the process may map: the
            // allocation fails as an error, not an abort.
            let e = err(&[
                "reconcile",
                "sketch",
                &keys,
                "--out",
                &out,
                "--cells",
                "60000000",
                "--max-memory",
                "8G",
            ]);
            assert!(e.contains("cannot allocate a sketch of 60000000 cells"), "{e}");
            assert!(!Path::new(&out).exists());
            // What estimate recommends for a forged estimate says what it costs.
            let empty = write_keys(dir.path(), "none.txt", std::iter::empty());
            ok(&[
                "reconcile",
                "sketch",
                &empty,
                "--out",
                &out,
                "--cells",
                "3",
                "--chunk-bytes",
                "1",
            ]);
            let honest = std::fs::read(&out).unwrap();
            let forged = dir.path().join("forged.sketch");
            std::fs::write(&forged, forged_sketch(&honest)).unwrap();
            let e = err(&["reconcile", "diff", &out, forged.to_str().unwrap()]);
            assert!(
                e.contains("do not decode to a set difference: a key with chunks missing"),
                "{e}"
            );
            // A forged estimator (a top stratum that never peels) makes
            // `estimate` recommend the largest sketch: it now says what that
            // costs, and `sketch` refuses it (above).
            let mut forged_estimate = honest.clone();
            let strata = u32::from_le_bytes(honest[28..32].try_into().unwrap()) as usize;
            let stratum_cells = u32::from_le_bytes(honest[32..36].try_into().unwrap()) as usize;
            let top = 36 + (strata - 1) * stratum_cells * 20;
            forged_estimate[top..top + 4].copy_from_slice(&2i32.to_le_bytes());
            let end = forged_estimate.len() - 8;
            let sum = ribbon_reconcile::hashing::key_hash(&forged_estimate[..end], 0);
            forged_estimate[end..].copy_from_slice(&sum.to_le_bytes());
            let fe = dir.path().join("forged-estimate.sketch");
            std::fs::write(&fe, &forged_estimate).unwrap();
            let printed = ok(&["reconcile", "estimate", &out, fe.to_str().unwrap()]);
            assert!(
                printed.contains("--cells 805306368")
                    && printed.contains("over the default --max-memory of 1024 MiB"),
                "{printed}"
            );
            let o = ribbon(&["reconcile", "diff", "-", "-"]);
            assert_eq!(o.status.code(), Some(2));
            let e = String::from_utf8(o.stderr).unwrap();
            assert!(e.contains("try 'ribbon reconcile diff --help'"), "{e}");
        },
    );
}

/// A database whose WALs are in a separate directory (written by
/// rocksdict's RocksDB 9.8.4, `sst/tests/fixtures-db/wal_dir`): with
/// `--wal-dir` its sketch holds exactly RocksDB's live keys, unflushed
/// writes and deletes included; without it, the WAL directory the OPTIONS
/// file names (the generator's, gone) is named in one line, never read as
/// a database without unflushed writes (issue #30).
#[test]
fn a_database_with_a_separate_wal_dir_sketches_its_live_keys() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sst/tests/fixtures-db/wal_dir");
    let expected = std::fs::read_to_string(fixture.join("expected")).unwrap();
    let live = expected
        .lines()
        .filter_map(|l| l.strip_prefix("live ").map(str::to_string));
    let tmp = tempfile::tempdir().unwrap();
    let keys = write_keys(tmp.path(), "live.hex", live);
    let (db, wal) = (fixture.join("db"), fixture.join("wal"));
    let (sd, sk) = (tmp.path().join("db.sk"), tmp.path().join("keys.sk"));
    ok(&[
        "reconcile",
        "sketch",
        s(&db),
        "--wal-dir",
        s(&wal),
        "--out",
        s(&sd),
    ]);
    ok(&["reconcile", "sketch", &keys, "--hex", "--out", s(&sk)]);
    assert_eq!(ok(&["reconcile", "diff", s(&sd), s(&sk)]), "", "no difference");
    let e = err(&["reconcile", "sketch", s(&db), "--out", s(&sd)]);
    assert!(e.contains("wal"), "{e}");
}

/// docs/cli.md said range deletions were refused; the reader applies them
/// (issue 44 made the doc true): the live keys of a database with range
/// deletions flushed and in its WAL (written by RocksDB 9.8) are exactly
/// the keys RocksDB recorded as live.
#[test]
fn range_deletions_are_applied_not_refused() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sst/tests/fixtures-db/range_deletes");
    let tmp = tempfile::tempdir().unwrap();
    let expected = std::fs::read_to_string(fixture.join("expected")).unwrap();
    let live = write_keys(
        tmp.path(),
        "live.hex",
        expected
            .lines()
            .filter_map(|l| l.strip_prefix("live "))
            .map(str::to_string),
    );
    let (sa, sb) = (tmp.path().join("db.sk"), tmp.path().join("live.sk"));
    let o = ribbon(&["reconcile", "sketch", s(&fixture.join("db")), "--out", s(&sa)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let said = String::from_utf8(o.stderr).unwrap();
    assert!(said.contains("800 live keys (200 deleted keys skipped"), "{said}");
    ok(&["reconcile", "sketch", &live, "--hex", "--out", s(&sb)]);
    let o = ribbon(&["reconcile", "diff", s(&sa), s(&sb)]);
    assert!(o.status.success());
    assert!(o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stderr).contains("0 keys only in A, 0 only in B"));
}
