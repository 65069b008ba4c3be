//! `ribbon build --standalone` (Standard, Homogeneous and `--balanced`) and
//! `ribbon query`/`info` on standalone filter files (format versions 1 and
//! 2), and the round trip from a RocksDB filter block.

use std::path::{Path, PathBuf};
use std::process::Command;

fn ribbon(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ribbon"))
        .args(args)
        .output()
        .expect("run ribbon")
}

/// `keys.txt` with `members` keys and `probes.txt` with `absent` keys that
/// are not among them, in `dir`.
fn key_files(dir: &Path, members: usize, absent: usize) -> (PathBuf, PathBuf) {
    let keys = dir.join("keys.txt");
    let text: String = (0..members).map(|i| format!("key-{i}\n")).collect();
    std::fs::write(&keys, text).unwrap();
    let probes = dir.join("probes.txt");
    let text: String = (0..absent).map(|i| format!("absent-{i}\n")).collect();
    std::fs::write(&probes, text).unwrap();
    (keys, probes)
}

#[test]
fn standalone_build_query_info() {
    let dir = tempfile::tempdir().unwrap();
    let (keys, probes) = key_files(dir.path(), 5000, 20_000);
    let (k, p) = (keys.to_str().unwrap(), probes.to_str().unwrap());
    for (extra, max_fp) in [
        (vec!["--width", "64", "--bits", "8"], 0.0045),
        (vec!["--homogeneous", "--bits", "6.5"], 0.02),
    ] {
        let out = dir.path().join("f.rbn");
        let o = out.to_str().unwrap();
        let mut args = vec!["build", "--standalone", "--keys", k, "--out", o];
        args.extend(extra.iter().copied());
        let r = ribbon(&args);
        assert!(
            r.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let r = ribbon(&["query", "--filter", o, "--keys", k]);
        assert!(r.status.success());
        assert!(
            String::from_utf8(r.stdout).unwrap().lines().all(|l| l == "1"),
            "{extra:?}: false negative"
        );
        let r = ribbon(&["query", "--filter", o, "--keys", p]);
        let fps = String::from_utf8(r.stdout)
            .unwrap()
            .lines()
            .filter(|l| *l == "1")
            .count();
        assert!(
            (fps as f64) < max_fp * 20_000.0 * 1.5 + 20.0,
            "{extra:?}: {fps} false positives"
        );
        let r = ribbon(&["info", "--filter", o]);
        assert!(r.status.success() && !r.stdout.is_empty());
    }
    // A RocksDB filter block converts to the standalone format and answers the same.
    let block = dir.path().join("block");
    let r = ribbon(&[
        "build",
        "--policy",
        "ribbonfilter:10",
        "--keys",
        k,
        "--out",
        block.to_str().unwrap(),
    ]);
    assert!(r.status.success());
    let converted = dir.path().join("converted.rbn");
    let r = ribbon(&[
        "build",
        "--standalone",
        "--from-rocksdb",
        block.to_str().unwrap(),
        "--num-keys",
        "5000",
        "--out",
        converted.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let a = ribbon(&["query", "--filter", block.to_str().unwrap(), "--keys", p]).stdout;
    let b = ribbon(&["query", "--filter", converted.to_str().unwrap(), "--keys", p]).stdout;
    assert_eq!(a, b);
    // A damaged standalone file is a one-line error.
    let mut bytes = std::fs::read(&converted).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&converted, bytes).unwrap();
    let r = ribbon(&["query", "--filter", converted.to_str().unwrap(), "--keys", p]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).starts_with("ribbon: "));
}

/// `--balanced`: `query`/`info` on the Balanced Ribbon files (format
/// version 2) it writes.
#[test]
fn balanced_build_query_info() {
    let dir = tempfile::tempdir().unwrap();
    let (keys, probes) = key_files(dir.path(), 30_000, 40_000);
    let (k, p) = (keys.to_str().unwrap(), probes.to_str().unwrap());
    for width in ["32", "64", "128"] {
        let out = dir.path().join(format!("b{width}.rbn"));
        let o = out.to_str().unwrap();
        let r = ribbon(&[
            "build",
            "--standalone",
            "--balanced",
            "--width",
            width,
            "--bits",
            "7",
            "--keys",
            k,
            "--out",
            o,
        ]);
        assert!(
            r.status.success(),
            "{width}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert!(String::from_utf8_lossy(&r.stderr).contains("Balanced"));
        let r = ribbon(&["query", "--filter", o, "--keys", k]);
        assert!(r.status.success());
        assert!(
            String::from_utf8(r.stdout).unwrap().lines().all(|l| l == "1"),
            "{width}: false negative"
        );
        let r = ribbon(&["query", "--filter", o, "--keys", p]);
        let fps = String::from_utf8(r.stdout)
            .unwrap()
            .lines()
            .filter(|l| *l == "1")
            .count();
        // 2^-7 of 40 000 is 312.5; 5 standard deviations is 88.
        assert!((224..=401).contains(&fps), "{width}: {fps} false positives");
        let r = ribbon(&["info", "--filter", o]);
        let text = String::from_utf8(r.stdout).unwrap();
        assert!(text.contains("standalone Ribbon v2: Balanced Standard"), "{text}");
        let r = ribbon(&["info", "--json", "--filter", o]);
        let json: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
        assert_eq!(json["version"], 2);
        assert_eq!(json["balanced"], true);
        assert!(json["num_shards"].as_u64().unwrap() >= 16);
        // Solution and metadata: within 3% of 7 bits per key.
        let bits = json["bits_per_key"].as_f64().unwrap();
        assert!(bits > 7.0 && bits < 7.21, "{width}: {bits}");
    }
    // A version 1 file still reads as version 1.
    let v1 = dir.path().join("v1.rbn");
    let r = ribbon(&[
        "build",
        "--standalone",
        "--keys",
        k,
        "--out",
        v1.to_str().unwrap(),
    ]);
    assert!(r.status.success());
    let r = ribbon(&["info", "--json", "--filter", v1.to_str().unwrap()]);
    let json: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(json["version"], 1);
    assert_eq!(json["balanced"], false);
    // Options Balanced Ribbon does not take are usage errors (exit 2).
    for extra in [&["--homogeneous"][..], &["--smash"]] {
        let mut args = vec![
            "build",
            "--standalone",
            "--balanced",
            "--keys",
            k,
            "--out",
            "x.rbn",
        ];
        args.extend_from_slice(extra);
        let r = ribbon(&args);
        assert_eq!(r.status.code(), Some(2), "{extra:?}");
    }
    // RocksDB cannot hold a Balanced filter: a one-line error.
    let r = ribbon(&[
        "build",
        "--standalone",
        "--balanced",
        "--rocksdb",
        "--keys",
        k,
        "--out",
        dir.path().join("r").to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).starts_with("ribbon: "));
    // A damaged Balanced file is a one-line error.
    let out = dir.path().join("b64.rbn");
    let mut bytes = std::fs::read(&out).unwrap();
    let at = bytes.len() - 20;
    bytes[at] ^= 1;
    std::fs::write(&out, bytes).unwrap();
    let r = ribbon(&["query", "--filter", out.to_str().unwrap(), "--keys", p]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).starts_with("ribbon: "));
}
