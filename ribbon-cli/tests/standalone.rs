//! `ribbon build --standalone` and `ribbon query`/`info` on standalone
//! filter files, and the round trip from a RocksDB filter block.

use std::process::Command;

fn ribbon(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ribbon"))
        .args(args)
        .output()
        .expect("run ribbon")
}

#[test]
fn standalone_build_query_info() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys.txt");
    let text: String = (0..5000).map(|i| format!("key-{i}\n")).collect();
    std::fs::write(&keys, text).unwrap();
    let probes = dir.path().join("probes.txt");
    let text: String = (0..20_000).map(|i| format!("absent-{i}\n")).collect();
    std::fs::write(&probes, text).unwrap();
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
