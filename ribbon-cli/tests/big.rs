//! `ribbon big`: the external-memory build at 10^6 keys with a small memory
//! budget (bucketing, parallel shards, restart, determinism) and the
//! memory-mapped queries, as the report runs them at 10^7 and more.

use std::path::Path;
use std::process::{Command, Output, Stdio};

fn ribbon(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ribbon"))
        .args(args)
        .output()
        .expect("run ribbon")
}

fn ok(args: &[&str]) -> Output {
    let r = ribbon(args);
    assert!(
        r.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&r.stderr)
    );
    r
}

fn failure(args: &[&str]) -> String {
    let r = ribbon(args);
    assert_eq!(r.status.code(), Some(1), "{args:?} should fail");
    let e = String::from_utf8(r.stderr).unwrap();
    assert_eq!(e.lines().count(), 1, "{e}");
    e
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap()
}

const N: u64 = 1_000_000;

#[test]
fn a_million_keys_in_a_small_budget_restart_and_determinism() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys.bin");
    ok(&["big", "gen", "--count", &N.to_string(), "--out", s(&keys)]);
    assert_eq!(std::fs::metadata(&keys).unwrap().len(), N * 20);
    let build = |out: &Path, extra: &[&str]| -> Output {
        let mut args = vec![
            "big",
            "build",
            "--keys",
            s(&keys),
            "--record-bytes",
            "20",
            "--out",
            s(out),
            "--memory",
            "32M",
            "--shard-bits",
            "4",
            "--json",
            "-q",
        ];
        args.extend_from_slice(extra);
        ribbon(&args)
    };

    // Fresh, two threads.
    let a = dir.path().join("a.rbs");
    let r = build(&a, &["--threads", "2"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let summary = json(&r);
    assert_eq!(summary["num_keys"], N);
    assert_eq!(summary["shard_bits"], 4);
    assert_eq!(summary["shards_reused"], 0);
    let bpk = summary["bits_per_key"].as_f64().unwrap();
    assert!((7.0..7.15).contains(&bpk), "{bpk}");
    // The budget holds: 32 MiB for the work plus the program and a 16 MiB read block.
    let peak = summary["peak_rss"].as_u64().unwrap();
    assert!(peak < 96 << 20, "peak {peak}");
    assert!(
        !dir.path().join("a.rbs.work").exists(),
        "work directory left behind"
    );

    // Interrupted after 5 shards (one thread), then rerun: the finished
    // bucketing and shards are reused, and the bytes are the same.
    let b = dir.path().join("b.rbs");
    let r = build(&b, &["--threads", "1", "--fail-after-shards", "5"]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("stopped after 5 shards"));
    assert!(!b.exists());
    let shards = std::fs::read_dir(dir.path().join("b.rbs.work/shards"))
        .unwrap()
        .count();
    assert_eq!(shards, 5);
    let r = build(&b, &["--threads", "1"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let summary = json(&r);
    assert_eq!(summary["shards_reused"], 5);
    assert_eq!(summary["buckets_reused"], true);
    let bytes = std::fs::read(&a).unwrap();
    assert!(
        bytes == std::fs::read(&b).unwrap(),
        "thread count or restart changed the bytes"
    );

    // Spread over machines: bucketing only, one `big shard` per bucket,
    // then `big assemble`: the same bytes.
    let c = dir.path().join("c.rbs");
    let work = dir.path().join("spread");
    let r = build(&c, &["--stop-after", "bucketing", "--work", s(&work)]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(json(&r)["stopped_after"], "bucketing");
    assert!(!c.exists());
    // (Outside the work directory: the build removes only its own files
    // and keeps a directory that holds others.)
    std::fs::create_dir_all(dir.path().join("parts")).unwrap();
    let mut parts = Vec::new();
    for i in 0..16 {
        let bucket = work.join(format!("buckets/b{i:06}.u64"));
        let part = dir.path().join(format!("parts/{i}.rbn"));
        ok(&[
            "big",
            "shard",
            "--bucket",
            s(&bucket),
            "--index",
            &i.to_string(),
            "--shard-bits",
            "4",
            "--out",
            s(&part),
        ]);
        parts.push(part);
    }
    let mut args = vec!["big", "assemble", "--shard-bits", "4", "--out", s(&c)];
    args.extend(parts.iter().map(|p| s(p)));
    ok(&args);
    assert!(
        bytes == std::fs::read(&c).unwrap(),
        "assembled shards differ from the build"
    );
    // A bucket given the wrong index, and shards in the wrong number, are refused.
    let e = failure(&[
        "big",
        "shard",
        "--bucket",
        s(&work.join("buckets/b000003.u64")),
        "--index",
        "2",
        "--shard-bits",
        "4",
        "--out",
        s(&dir.path().join("x.rbn")),
    ]);
    assert!(e.contains("does not belong to shard 2"), "{e}");
    let e = failure(&[
        "big",
        "assemble",
        "--shard-bits",
        "4",
        "--out",
        s(&c),
        s(&parts[0]),
    ]);
    assert!(e.contains("1 shards given for 4 shard bits"), "{e}");

    // Bucketing interrupted (no `done`, a partial bucket file): the rerun
    // buckets again from scratch.
    std::fs::remove_file(work.join("buckets/done")).unwrap();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(work.join("buckets/b000000.u64"))
        .unwrap();
    std::io::Write::write_all(&mut f, &[7; 12]).unwrap();
    drop(f);
    let r = build(&c, &["--work", s(&work)]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(json(&r)["buckets_reused"], false);
    assert!(bytes == std::fs::read(&c).unwrap());
    assert!(!work.exists());

    // Every member is found through the memory map; non-members at the FP rate.
    let r = ok(&[
        "big",
        "query",
        "--filter",
        s(&a),
        "--keys",
        s(&keys),
        "--record-bytes",
        "20",
    ]);
    assert_eq!(r.stdout.len() as u64, 2 * N);
    assert!(r.stdout.chunks(2).all(|l| l == b"1\n"));
    let bench = json(&ok(&[
        "big",
        "bench",
        "--filter",
        s(&a),
        "--members",
        &N.to_string(),
        "--sample",
        "200000",
        "--non-members",
        "1000000",
    ]));
    assert_eq!(bench["false_negatives"], 0);
    assert_eq!(bench["fp_within_3_sigma"], true, "{bench}");
    let info = json(&ok(&["big", "info", "--filter", s(&a), "--verify", "--json"]));
    assert_eq!(info["num_shards"], 16);
    assert_eq!(info["shard_balanced"], true);
    assert_eq!(info["num_keys"], N);

    // A shard too large for the budget is refused with what to do.
    let e = failure(&[
        "big",
        "build",
        "--keys",
        s(&keys),
        "--record-bytes",
        "20",
        "--out",
        s(&dir.path().join("c")),
        "--memory",
        "8M",
        "--shard-bits",
        "0",
        "-q",
    ]);
    assert!(
        e.contains("over the memory budget") && e.contains("--shard-bits"),
        "{e}"
    );

    // Damage anywhere is found: at open, or by info --verify.
    let mut bad = bytes.clone();
    let at = bad.len() / 2;
    bad[at] ^= 1;
    let badf = dir.path().join("bad.rbs");
    std::fs::write(&badf, &bad).unwrap();
    let e = failure(&["big", "info", "--filter", s(&badf), "--verify"]);
    assert!(e.contains("checksum"), "{e}");
    std::fs::write(&badf, &bytes[..bytes.len() - 8]).unwrap();
    let e = failure(&[
        "big",
        "query",
        "--filter",
        s(&badf),
        "--keys",
        s(&keys),
        "--record-bytes",
        "20",
    ]);
    assert!(e.contains("truncated"), "{e}");
    let e = failure(&["big", "info", "--filter", s(&keys)]);
    assert!(e.contains("bad magic"), "{e}");
}

#[test]
fn text_hex_and_stdin_give_the_same_filter() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..30_000).map(|i| format!("key-{i}\n")).collect();
    let hex: String = (0..30_000)
        .map(|i| {
            format!("key-{i}")
                .bytes()
                .map(|b| format!("{b:02X}"))
                .collect::<String>()
                + "\r\n"
        })
        .collect();
    let (t, h) = (dir.path().join("k.txt"), dir.path().join("k.hex"));
    std::fs::write(&t, &text).unwrap();
    std::fs::write(&h, &hex).unwrap();
    let common = ["--shard-bits", "3", "--memory", "16M", "-q"];
    let out = |name: &str| dir.path().join(name);
    let (tf, hf) = (out("t.rbs"), out("h.rbs"));
    let mut a = vec!["big", "build", "--keys", s(&t), "--out", s(&tf)];
    a.extend(common);
    ok(&a);
    let mut a = vec!["big", "build", "--keys", s(&h), "--hex", "--out", s(&hf)];
    a.extend(common);
    ok(&a);
    let mut child = Command::new(env!("CARGO_BIN_EXE_ribbon"))
        .args(["big", "build", "--keys", "-", "--out", s(&out("i.rbs"))])
        .args(common)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
    let bytes = std::fs::read(out("t.rbs")).unwrap();
    assert!(bytes == std::fs::read(out("h.rbs")).unwrap());
    assert!(bytes == std::fs::read(out("i.rbs")).unwrap());
    let r = ok(&["big", "query", "--filter", s(&out("t.rbs")), "--keys", s(&t)]);
    assert!(String::from_utf8(r.stdout).unwrap().lines().all(|l| l == "1"));
    // The single-filter commands point to `ribbon big`.
    for cmd in [
        &["query", "--filter", s(&tf), "--keys", s(&t)][..],
        &["info", "--filter", s(&tf)][..],
    ] {
        let e = failure(cmd);
        assert!(
            e.contains("sharded Ribbon filter file: use 'ribbon big query'"),
            "{e}"
        );
    }

    // Bad input: one line, exit 1.
    std::fs::write(out("odd.bin"), [0u8; 41]).unwrap();
    let e = failure(&[
        "big",
        "build",
        "--keys",
        s(&out("odd.bin")),
        "--record-bytes",
        "20",
        "--out",
        s(&out("o.rbs")),
        "-q",
    ]);
    assert!(e.contains("1 bytes after the last whole 20-byte record"), "{e}");
    std::fs::write(out("bad.hex"), "00\nxy\n").unwrap();
    let e = failure(&[
        "big",
        "build",
        "--keys",
        s(&out("bad.hex")),
        "--hex",
        "--out",
        s(&out("o.rbs")),
        "-q",
    ]);
    assert!(e.contains("bad.hex:2: invalid hex"), "{e}");
    let r = ribbon(&[
        "big",
        "build",
        "--keys",
        s(&t),
        "--out",
        s(&out("o.rbs")),
        "--memory",
        "lots",
    ]);
    assert_eq!(r.status.code(), Some(2));
}

#[path = "../../sst/tests/support/child.rs"]
#[allow(dead_code)]
mod child;

/// Issue 31: shard files in the wrong order or built with other shard bits
/// were assembled (exit 0, `info --verify` happy, half the members "no");
/// a flipped bit in a shard body gave false negatives from `big query`;
/// `--expected-keys 2^64-1` picked 2^20 shards. Each now ends in a one-line
/// error (or, with `--no-verify`, the documented opt-out).
#[test]
fn misplaced_shards_damaged_bodies_and_absurd_key_counts_are_refused() {
    child::run_limited(
        "misplaced_shards_damaged_bodies_and_absurd_key_counts_are_refused",
        child::Limits {
            memory_kib: 2 << 20,
            time: std::time::Duration::from_secs(10),
        },
        || {
            let dir = tempfile::tempdir().unwrap();
            let keys = dir.path().join("keys.txt");
            let text: String = (0..20_000).map(|i| format!("key-{i}\n")).collect();
            std::fs::write(&keys, &text).unwrap();
            let work = dir.path().join("w");
            let out = dir.path().join("f.rbs");
            let common = ["--keys", s(&keys), "--memory", "16M", "-q", "--work", s(&work)];
            let mut a = vec![
                "big",
                "build",
                "--out",
                s(&out),
                "--shard-bits",
                "2",
                "--stop-after",
                "bucketing",
            ];
            a.extend(common);
            ok(&a);
            let work3 = dir.path().join("w3");
            let mut a = vec![
                "big",
                "build",
                "--out",
                s(&out),
                "--shard-bits",
                "3",
                "--stop-after",
                "bucketing",
            ];
            a.extend(common);
            *a.last_mut().unwrap() = s(&work3);
            ok(&a);
            let shard = |i: usize, bits: u32, bucket: usize| -> std::path::PathBuf {
                let part = dir.path().join(format!("s{i}-{bits}-{bucket}.rbn"));
                let w = if bits == 3 { &work3 } else { &work };
                ok(&[
                    "big",
                    "shard",
                    "--bucket",
                    s(&w.join(format!("buckets/b{bucket:06}.u64"))),
                    "--index",
                    &i.to_string(),
                    "--shard-bits",
                    &bits.to_string(),
                    "--out",
                    s(&part),
                ]);
                part
            };
            let parts: Vec<_> = (0..4).map(|i| shard(i, 2, i)).collect();
            let assemble = |files: &[&std::path::PathBuf]| {
                let mut args = vec!["big", "assemble", "--shard-bits", "2", "--out", s(&out)];
                args.extend(files.iter().map(|p| s(p)));
                args.iter().map(|a| a.to_string()).collect::<Vec<String>>()
            };
            let run = |args: Vec<String>| ribbon(&args.iter().map(String::as_str).collect::<Vec<_>>());
            // The wrong order: refused, nothing written.
            let r = run(assemble(&[&parts[1], &parts[0], &parts[2], &parts[3]]));
            assert_eq!(r.status.code(), Some(1));
            let e = String::from_utf8(r.stderr).unwrap();
            assert_eq!(e.lines().count(), 1, "{e}");
            assert!(e.contains("given as shard 0, but it is shard 1 of 4"), "{e}");
            assert!(!out.exists());
            // A shard built for 8 shards (index 0 of bits 3): refused.
            let other = shard(0, 3, 0);
            let r = run(assemble(&[&other, &parts[1], &parts[2], &parts[3]]));
            let e = String::from_utf8(r.stderr).unwrap();
            assert!(
                e.contains("shard 0 of 8 (shard bits 3), not of 4 (shard bits 2)"),
                "{e}"
            );
            assert!(!out.exists());
            // In order: every key found.
            let r = run(assemble(&[&parts[0], &parts[1], &parts[2], &parts[3]]));
            assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
            let q = ok(&["big", "query", "--filter", s(&out), "--keys", s(&keys)]);
            assert!(q.stdout.chunks(2).all(|l| l == b"1\n"));

            // A bit flipped in a shard's body: `big query` says so (one line, exit
            // 1) instead of answering; `--no-verify` is the explicit opt-out.
            let bytes = std::fs::read(&out).unwrap();
            let shard_len = std::fs::metadata(&parts[2]).unwrap().len() as usize - 64;
            let index = |i: usize| {
                let at = 64 + 16 * i;
                u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize
            };
            let mut bad = bytes.clone();
            bad[index(2) + shard_len / 2] ^= 0x20;
            let badf = dir.path().join("bad.rbs");
            std::fs::write(&badf, &bad).unwrap();
            let e = failure(&["big", "query", "--filter", s(&badf), "--keys", s(&keys)]);
            assert!(e.contains("shard 2") && e.contains("checksum"), "{e}");
            let r = ok(&[
                "big",
                "query",
                "--filter",
                s(&badf),
                "--keys",
                s(&keys),
                "--no-verify",
            ]);
            assert_eq!(r.stdout.len(), 2 * 20_000);

            // An absurd --expected-keys: a usage error, no work directory made.
            let r = ribbon(&[
                "big",
                "build",
                "--keys",
                "-",
                "--expected-keys",
                "18446744073709551615",
                "--out",
                s(&dir.path().join("x.rbs")),
                "--work",
                s(&dir.path().join("xw")),
            ]);
            assert_eq!(r.status.code(), Some(2));
            let e = String::from_utf8(r.stderr).unwrap();
            assert!(
                e.contains("--expected-keys 18446744073709551615 is more than"),
                "{e}"
            );
            assert!(!dir.path().join("xw").exists());
        },
    );
}

/// Issue 31: outputs went to a predictable `OUT.tmp` (symbolic links
/// followed) renamed over anything, a device node included; a FIFO as an
/// input hung the command. Under a 10 s CPU limit (a wall-clock backstop
/// of 100 s): every case a one-line error.
#[test]
fn outputs_replace_only_regular_files_and_fifos_are_refused_as_inputs() {
    child::run_limited(
        "outputs_replace_only_regular_files_and_fifos_are_refused_as_inputs",
        child::Limits {
            memory_kib: 2 << 20,
            time: std::time::Duration::from_secs(10),
        },
        || {
            let dir = tempfile::tempdir().unwrap();
            let keys = dir.path().join("k.txt");
            std::fs::write(&keys, "a\nb\nc\n").unwrap();
            let build = |out: &Path| {
                ribbon(&[
                    "big",
                    "build",
                    "--keys",
                    s(&keys),
                    "--out",
                    s(out),
                    "--shard-bits",
                    "1",
                    "--memory",
                    "8M",
                    "-q",
                ])
            };
            // A predictable temporary name that is a link elsewhere is not
            // followed (and left alone).
            let victim = dir.path().join("victim");
            std::fs::write(&victim, "precious").unwrap();
            let out = dir.path().join("f.rbs");
            std::os::unix::fs::symlink(&victim, dir.path().join("f.rbs.tmp")).unwrap();
            let r = build(&out);
            assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
            assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
            // A link or a FIFO as the output: refused, not replaced.
            let link = dir.path().join("link.rbs");
            std::os::unix::fs::symlink(&victim, &link).unwrap();
            let fifo = dir.path().join("fifo");
            assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
            // (No device node here: a bug would replace it, as root.)
            for target in [&link, &fifo] {
                let r = build(target);
                assert_eq!(r.status.code(), Some(1), "{target:?}");
                let e = String::from_utf8(r.stderr).unwrap();
                assert_eq!(e.lines().count(), 1, "{e}");
                assert!(e.contains("not a regular file"), "{e}");
            }
            // Every other writer too (gen streams; sketch writes whole).
            for args in [
                vec!["big", "gen", "--count", "10", "--out", s(&fifo)],
                vec!["reconcile", "sketch", s(&keys), "--out", s(&link)],
            ] {
                let r = ribbon(&args);
                assert_eq!(r.status.code(), Some(1), "{args:?}");
                let e = String::from_utf8(r.stderr).unwrap();
                assert!(e.contains("not a regular file"), "{args:?}: {e}");
            }
            assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
            assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
            // A FIFO (no writer) as an input: refused at once.
            for args in [
                vec!["big", "query", "--filter", s(&out), "--keys", s(&fifo)],
                vec!["big", "query", "--filter", s(&fifo), "--keys", s(&keys)],
                vec![
                    "big",
                    "build",
                    "--keys",
                    s(&fifo),
                    "--out",
                    s(&dir.path().join("g.rbs")),
                    "-q",
                ],
                vec!["query", "--filter", s(&fifo), "--keys", s(&keys)],
                vec!["reconcile", "diff", s(&fifo), s(&fifo)],
            ] {
                let r = ribbon(&args);
                assert_eq!(r.status.code(), Some(1), "{args:?}");
                let e = String::from_utf8(r.stderr).unwrap();
                assert!(e.contains("not a regular file"), "{args:?}: {e}");
            }
        },
    );
}

/// Issue 37: bucketing runs on every core (pieces of each block hashed and
/// routed in parallel, the next block read meanwhile) and `big gen` fills
/// its blocks in parallel; the bytes must not move. The digests were
/// computed with the binary of commit c42c488, before either change (one
/// thread for routing), for binary records, hex lines and text lines, each
/// input spanning two read blocks of 16 MiB.
#[test]
fn bytes_are_those_of_the_serial_bucketing_whatever_the_threads() {
    use sha2::{Digest, Sha256};
    let digest = |p: &Path| -> String {
        Sha256::digest(std::fs::read(p).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let (bin, hex) = (path("keys.bin"), path("keys.hex"));
    ok(&["big", "gen", "--count", "1000000", "--out", s(&bin)]);
    assert_eq!(
        digest(&bin),
        "b2517eb91e9eaad2c3aa272059289ae688a8f9c7aa700880231bce1820f4a0d1"
    );
    ok(&[
        "big",
        "gen",
        "--count",
        "600000",
        "--start",
        "7",
        "--hex",
        "--out",
        s(&hex),
    ]);
    assert_eq!(
        digest(&hex),
        "139a1c2140ba03f752e8f3a8b2ca086825308dee9f0006060c2bd5dc0299838d"
    );
    let cases: [(&Path, &[&str], &str, &str); 3] = [
        (
            &bin,
            &["--record-bytes", "20", "--memory", "32M", "--shard-bits", "4"],
            "15677072d47bede5125cd46b1d72bb0ad02e1236c953690818efbebd64e6b58b",
            "binary",
        ),
        (
            &hex,
            &["--hex", "--memory", "16M", "--shard-bits", "3"],
            "a183cb508b327393c78750870a881ef37c393a962ff93885bb0831f484bc0be8",
            "hex",
        ),
        (
            &hex,
            &["--memory", "16M", "--shard-bits", "5"],
            "6b4866527fcf9d7317f86c5cf5d17dc5f56af46bfbc0eb686af4c66a8a25789a",
            "text",
        ),
    ];
    for (keys, args, expected, name) in cases {
        for threads in ["1", "3"] {
            let out = path(&format!("{name}-{threads}.rbs"));
            let mut a = vec!["big", "build", "--keys", s(keys), "--out", s(&out), "-q"];
            a.extend_from_slice(args);
            a.extend_from_slice(&["--threads", threads]);
            ok(&a);
            assert_eq!(digest(&out), expected, "{name} keys, {threads} threads");
        }
    }
}

/// A one-line failure of `ribbon ARGS` run in `cwd`, with its exit code.
fn failure_in(cwd: &Path, args: &[&str]) -> (i32, String) {
    let r = Command::new(env!("CARGO_BIN_EXE_ribbon"))
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("run ribbon");
    let e = String::from_utf8(r.stderr).unwrap();
    assert!(!r.status.success(), "{args:?} should fail");
    assert_eq!(e.lines().count(), 1, "{e}");
    (r.status.code().unwrap(), e)
}

/// Every file under `dir` with its bytes (links as their targets' names).
fn snapshot(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let m = std::fs::symlink_metadata(&p).unwrap();
        if m.file_type().is_symlink() {
            let target = std::fs::read_link(&p).unwrap();
            all.push((p, target.to_string_lossy().into_owned().into_bytes()));
        } else if m.is_dir() {
            all.push((p.clone(), b"<dir>".to_vec()));
            all.extend(snapshot(&p));
        } else {
            all.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    all.sort();
    all
}

/// Issue 44: `big build --work DIR` removed DIR whole on success (DIR
/// holding files of its own, or the output; `--work .` took the keys), and
/// followed a link planted at the default work path (another directory's
/// files deleted). The build now owns only the directory it made (or an
/// empty one it adopted), refuses anything else with one line, never
/// follows a link there, and deletes only its own files by name.
#[test]
fn the_build_deletes_only_what_it_created() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = d.join("keys.txt");
    let text: String = (0..5000).map(|i| format!("key-{i}\n")).collect();
    std::fs::write(&keys, &text).unwrap();
    let build = |out: &Path, work: Option<&Path>| -> Vec<String> {
        let mut a = vec![
            "big".to_string(),
            "build".into(),
            "--keys".into(),
            s(&keys).into(),
            "--out".into(),
            s(out).into(),
            "--shard-bits".into(),
            "1".into(),
            "--memory".into(),
            "8M".into(),
            "-q".into(),
        ];
        if let Some(w) = work {
            a.extend(["--work".to_string(), s(w).into()]);
        }
        a
    };
    let refused = |cwd: &Path, a: Vec<String>, says: &str| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let (code, e) = failure_in(cwd, &a);
        assert!(code == 1 || code == 2, "{a:?}: exit {code}");
        assert!(e.contains(says), "{a:?}: {e}");
    };

    // A directory holding files of its own: refused, every file kept.
    let foreign = d.join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    let before = snapshot(d);
    refused(d, build(&d.join("f.rbs"), Some(&foreign)), "not empty");
    assert_eq!(snapshot(d), before, "a foreign work directory was changed");

    // The output inside the work directory (an earlier output there).
    let own = d.join("own");
    std::fs::create_dir(&own).unwrap();
    std::fs::write(own.join("f.rbs"), "earlier output").unwrap();
    let before = snapshot(d);
    refused(
        d,
        build(&own.join("f.rbs"), Some(&own)),
        "inside the work directory",
    );
    assert_eq!(snapshot(d), before);

    // `--work .`: the current directory (the keys in it) is not the build's.
    let before = snapshot(d);
    refused(
        d,
        build(Path::new("f.rbs"), Some(Path::new("."))),
        "work directory .",
    );
    assert_eq!(snapshot(d), before, "--work . changed the current directory");

    // A link planted at the default work path (OUT.work): never followed.
    let victim = d.join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("precious"), "keep").unwrap();
    std::os::unix::fs::symlink(&victim, d.join("g.rbs.work")).unwrap();
    let before = snapshot(d);
    refused(d, build(&d.join("g.rbs"), None), "symbolic link");
    assert_eq!(snapshot(d), before, "the link was followed");
    // Nor a link to an empty directory, nor a file there.
    let empty = d.join("empty-target");
    std::fs::create_dir(&empty).unwrap();
    std::os::unix::fs::symlink(&empty, d.join("h.rbs.work")).unwrap();
    refused(d, build(&d.join("h.rbs"), None), "symbolic link");
    std::fs::write(d.join("i.rbs.work"), "a file").unwrap();
    refused(d, build(&d.join("i.rbs"), None), "not a directory");
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
    for name in ["f.rbs", "g.rbs", "h.rbs", "i.rbs"] {
        assert!(!d.join(name).exists(), "{name} written");
    }

    // An empty directory is used and left in place, empty.
    let adopted = d.join("adopted");
    std::fs::create_dir(&adopted).unwrap();
    let a: Vec<String> = build(&d.join("a.rbs"), Some(&adopted));
    ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(std::fs::read_dir(&adopted).unwrap().count(), 0);
    let q = ok(&[
        "big",
        "query",
        "--filter",
        s(&d.join("a.rbs")),
        "--keys",
        s(&keys),
    ]);
    assert!(q.stdout.chunks(2).all(|l| l == b"1\n"));

    // The build's own work directory with someone else's file in it: the
    // build's files go, that file and its directory stay.
    let w = d.join("w");
    let mut a = build(&d.join("b.rbs"), Some(&w));
    a.extend(["--stop-after".into(), "bucketing".into()]);
    ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
    std::fs::write(w.join("shards/readme"), "someone else's").unwrap();
    let r = ribbon(
        &build(&d.join("b.rbs"), Some(&w))
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(std::fs::read(w.join("shards/readme")).unwrap(), b"someone else's");
    let left: Vec<_> = snapshot(&w).into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        left,
        [
            w.join(".ribbon-big-build"),
            w.join("shards"),
            w.join("shards/readme")
        ],
        "the build's own files should be gone"
    );
    assert!(d.join("b.rbs").exists());
    assert_eq!(std::fs::read(&keys).unwrap(), text.as_bytes());
}

/// Issue 44: a rerun of `big build` recognised its input by path, size and
/// modification time: other keys of the same size and time (`cp -p`,
/// `touch -r`) reused the old buckets, and the new keys answered
/// "definitely not". Now the keys' content is read again and compared
/// with the digest recorded when they were bucketed; standard input is
/// never reused.
#[test]
fn a_resumed_build_reuses_buckets_only_for_the_same_keys() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = d.join("keys.txt");
    let old: String = (0..20_000).map(|i| format!("old-{i:05}\n")).collect();
    let new: String = (0..20_000).map(|i| format!("new-{i:05}\n")).collect();
    assert_eq!(old.len(), new.len());
    std::fs::write(&keys, &old).unwrap();
    let mtime = std::fs::metadata(&keys).unwrap().modified().unwrap();
    let out = d.join("f.rbs");
    let work = d.join("w");
    let build = |keys: &str, extra: &[&str]| {
        let mut a = vec![
            "big",
            "build",
            "--keys",
            keys,
            "--out",
            s(&out),
            "--work",
            s(&work),
            "--shard-bits",
            "2",
            "--memory",
            "8M",
            "--json",
            "-q",
        ];
        a.extend_from_slice(extra);
        a.iter().map(|x| x.to_string()).collect::<Vec<_>>()
    };
    let run = |a: Vec<String>| ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
    run(build(s(&keys), &["--stop-after", "bucketing"]));

    // The same bytes again: reused.
    let r = json(&run(build(s(&keys), &["--stop-after", "bucketing"])));
    assert_eq!(r["buckets_reused"], true, "{r}");

    // Other keys, same size and modification time: bucketed again, and
    // every new key is found.
    std::fs::write(&keys, &new).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&keys)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(std::fs::metadata(&keys).unwrap().modified().unwrap(), mtime);
    let r = json(&run(build(s(&keys), &[])));
    assert_eq!(r["buckets_reused"], false, "{r}");
    let q = ok(&["big", "query", "--filter", s(&out), "--keys", s(&keys)]);
    assert_eq!(q.stdout.len(), 2 * 20_000);
    assert!(q.stdout.chunks(2).all(|l| l == b"1\n"), "a new key answered 0");
    assert!(!work.exists());

    // Standard input cannot be read twice: never reused.
    let stdin_build = || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ribbon"))
            .args(build("-", &["--stop-after", "bucketing"]))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), new.as_bytes()).unwrap();
        let r = child.wait_with_output().unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        json(&r)
    };
    stdin_build();
    assert_eq!(stdin_build()["buckets_reused"], false);
}

/// Issue 44: `big shard --bucket FIFO` waited forever in `open(2)`; every
/// input of `big` is now refused at once unless it is a regular file (or
/// standard input, for keys).
#[test]
fn a_fifo_as_a_bucket_is_refused_at_once() {
    child::run_limited(
        "a_fifo_as_a_bucket_is_refused_at_once",
        child::Limits {
            memory_kib: 1 << 20,
            time: std::time::Duration::from_secs(10),
        },
        || {
            let dir = tempfile::tempdir().unwrap();
            let fifo = dir.path().join("b000000.u64");
            assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
            for bucket in [fifo.clone(), dir.path().to_path_buf()] {
                let e = failure(&[
                    "big",
                    "shard",
                    "--bucket",
                    s(&bucket),
                    "--index",
                    "0",
                    "--shard-bits",
                    "0",
                    "--out",
                    s(&dir.path().join("s.rbn")),
                ]);
                assert!(e.contains("not a regular file"), "{e}");
            }
            // A FIFO as the keys of `big build`: refused before any work
            // directory is made for it.
            let out = dir.path().join("x.rbs");
            let e = failure(&["big", "build", "--keys", s(&fifo), "--out", s(&out), "-q"]);
            assert!(e.contains("not a regular file"), "{e}");
            assert!(!dir.path().join("x.rbs.work").exists());
        },
    );
}
