//! The `ribbon` tool end to end: `ribbon build` on a keys file writes the
//! filter native RocksDB writes (checked against the golden vectors captured
//! from RocksDB), and `ribbon query` gives RocksDB's answers.

use ribbon::test_support::keys::{match_summary, member_keys, non_member_keys, KeyKind};
use std::path::Path;
use std::process::Command;

const GOLDEN: &str = include_str!("../../ribbon/tests/golden/filters.txt");

fn ribbon(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ribbon"))
        .args(args)
        .output()
        .expect("run ribbon")
}

fn hex(k: &[u8]) -> String {
    k.iter().map(|b| format!("{b:02x}")).collect()
}

fn write_keys(path: &Path, keys: &[Vec<u8>]) {
    let text: String = keys.iter().map(|k| hex(k) + "\n").collect();
    std::fs::write(path, text).unwrap();
}

#[test]
fn build_and_query_reproduce_native_rocksdb() {
    let dir = tempfile::tempdir().unwrap();
    let probes = non_member_keys(10_000, 99);
    let probe_file = dir.path().join("probes.hex");
    write_keys(&probe_file, &probes);
    let mut checked = 0;
    for line in GOLDEN.lines().filter(|l| l.starts_with("filter ")) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (policy, fv, reason, level, kind, n, seed) = (f[1], f[2], f[3], f[4], f[5], f[6], f[7]);
        let n: usize = n.parse().unwrap();
        if reason == "compaction" || n > 20_000 || n == 0 {
            continue; // compaction contexts and big sets: covered by the library tests
        }
        let kind = match kind {
            "RandomBinary" => KeyKind::RandomBinary,
            "SortedAscii" => KeyKind::SortedAscii,
            _ => KeyKind::Binary16To24,
        };
        let keys = member_keys(kind, n, seed.parse().unwrap());
        let key_file = dir.path().join("keys.hex");
        write_keys(&key_file, &keys);
        let out = dir.path().join("filter");
        let mut args = vec!["build", "--policy", policy, "--format-version", fv, "--hex"];
        args.extend([
            "--keys",
            key_file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        if reason == "flush" {
            args.push("--flush");
        } else if level != "-1" {
            args.extend(["--level", level]);
        }
        let o = ribbon(&args);
        assert!(
            o.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let filter = std::fs::read(&out).unwrap();
        assert_eq!(filter.len(), f[9].parse::<usize>().unwrap(), "{line}: length");
        assert_eq!(
            format!("{:x}", ribbon::core::hash::hash64(&filter, 0)),
            f[10],
            "{line}: fingerprint"
        );
        let o = ribbon(&[
            "query",
            "--filter",
            out.to_str().unwrap(),
            "--keys",
            probe_file.to_str().unwrap(),
            "--hex",
        ]);
        assert!(o.status.success());
        let answers: Vec<&str> = std::str::from_utf8(&o.stdout).unwrap().lines().collect();
        assert_eq!(answers.len(), probes.len());
        let (count, first) = match_summary(answers.iter().map(|a| *a == "1"));
        assert_eq!(count, f[12].parse::<usize>().unwrap(), "{line}: FP count");
        assert_eq!(first, f[13], "{line}: first false positives");
        // The batched path answers the same.
        let o = ribbon(&[
            "query",
            "--filter",
            out.to_str().unwrap(),
            "--keys",
            probe_file.to_str().unwrap(),
            "--hex",
            "--batch",
        ]);
        assert_eq!(
            std::str::from_utf8(&o.stdout)
                .unwrap()
                .lines()
                .collect::<Vec<_>>(),
            answers
        );
        checked += 1;
    }
    assert!(checked > 100, "only {checked} golden filters checked");
}

#[test]
fn raw_keys_and_empty_lines() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys.txt");
    std::fs::write(&keys, b"apple\n\nbanana\ncherry\n").unwrap();
    let out = dir.path().join("f");
    let o = ribbon(&[
        "build",
        "--policy",
        "ribbonfilter:10",
        "--keys",
        keys.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let filter = std::fs::read(&out).unwrap();
    let reader = ribbon::rocksdb::format::FilterReader::new(&filter);
    for k in [&b"apple"[..], b"", b"banana", b"cherry"] {
        assert!(reader.may_match(k));
    }
    let o = ribbon(&[
        "query",
        "--filter",
        out.to_str().unwrap(),
        "--keys",
        keys.to_str().unwrap(),
    ]);
    assert_eq!(String::from_utf8(o.stdout).unwrap(), "1\n1\n1\n1\n");
}

#[test]
fn bad_input_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys.hex");
    std::fs::write(&keys, b"00ff\nzz\n").unwrap();
    let out = dir.path().join("f");
    let (k, o) = (keys.to_str().unwrap(), out.to_str().unwrap());
    for (args, code, needle) in [
        (
            vec![
                "build",
                "--policy",
                "ribbonfilter:10",
                "--keys",
                k,
                "--hex",
                "--out",
                o,
            ],
            1,
            "invalid hex",
        ),
        (
            vec!["build", "--policy", "nope:10", "--keys", k, "--out", o],
            2,
            "invalid filter policy",
        ),
        (
            vec![
                "build",
                "--policy",
                "ribbonfilter:10",
                "--keys",
                "/nonexistent",
                "--out",
                o,
            ],
            1,
            "cannot read",
        ),
        (
            vec!["build", "--policy", "ribbonfilter:10", "--keys", k],
            2,
            "--out <FILE>",
        ),
        (
            vec!["build", "--policy", "ribbonfilter:0.1", "--keys", k, "--out", o],
            1,
            "builds no filter",
        ),
        (
            vec![
                "build",
                "--policy",
                "ribbonfilter:10",
                "--format-version",
                "x",
                "--keys",
                k,
                "--out",
                o,
            ],
            2,
            "--format-version",
        ),
        (
            vec!["query", "--filter", "/nonexistent", "--keys", k],
            1,
            "cannot read",
        ),
        (vec!["frobnicate"], 2, "unrecognized subcommand"),
        (vec![], 2, "missing subcommand"),
    ] {
        let r = ribbon(&args);
        assert_eq!(r.status.code(), Some(code), "{args:?}");
        let err = String::from_utf8_lossy(&r.stderr);
        let first = err.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("ribbon: ") && first.contains(needle),
            "{args:?}: {err}"
        );
    }
    // A filter file RocksDB never writes (a Ribbon trailer with one block)
    // is refused rather than answering "may match" for every key.
    std::fs::write(&out, [0xFEu8, 1, 2, 3, 4, 0xFE, 0, 1, 0, 0]).unwrap();
    let r = ribbon(&["query", "--filter", o, "--keys", k]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("fewer than 2 blocks"));
}
