//! What a new user meets first: help and version, one-line errors, inputs
//! from pipes and standard input, CRLF keys files, refusals instead of
//! silent wrong answers, what `build` says it wrote, the `rust.*` policy ids,
//! one JSON document, and no panic on a non-UTF-8 argument or a failed
//! write.

use assert_cmd::Command;
use std::path::Path;

fn ribbon() -> Command {
    Command::cargo_bin("ribbon").unwrap()
}

struct Run {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

fn run(args: &[&str]) -> Run {
    run_with(ribbon().args(args))
}

fn run_with(cmd: &mut Command) -> Run {
    cmd.output().unwrap().into()
}

impl From<std::process::Output> for Run {
    fn from(o: std::process::Output) -> Self {
        Run {
            code: o.status.code(),
            stdout: o.stdout,
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Run {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Exits with `code`, one `ribbon: ` line on stderr containing `needle`,
    /// and no panic.
    fn fails_with(&self, code: i32, needle: &str) {
        assert_eq!(self.code, Some(code), "{}", self.stderr);
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
        assert_eq!(self.stderr.lines().count(), 1, "{}", self.stderr);
        assert!(
            self.stderr.starts_with("ribbon: ") && self.stderr.contains(needle),
            "want {needle:?} in {}",
            self.stderr
        );
    }

    fn ok(&self) -> &Self {
        assert_eq!(self.code, Some(0), "{}", self.stderr);
        self
    }
}

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Dir(tempfile::tempdir().unwrap())
    }

    fn file(&self, name: &str, bytes: &[u8]) -> String {
        let p = self.0.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p.display().to_string()
    }

    fn path(&self, name: &str) -> String {
        self.0.path().join(name).display().to_string()
    }
}

fn keys_text(n: usize) -> String {
    (0..n).map(|i| format!("user-key-{i}\n")).collect()
}

fn answers(r: &Run) -> Vec<String> {
    r.text().lines().map(str::to_string).collect()
}

fn corpus(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../sst/tests/corpus")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn help_and_version_go_to_stdout_with_exit_0() {
    for args in [
        &["--help"][..],
        &["-h"],
        &["help"],
        &["build", "--help"],
        &["build", "-h"],
        &["query", "--help"],
        &["info", "--help"],
        &["sst", "--help"],
        &["sst", "info", "--help"],
        &["sst", "query", "--help"],
        &["sst", "dump-filter", "--help"],
        &["sst", "verify", "--help"],
        &["help", "build"],
    ] {
        let r = run(args);
        r.ok();
        assert!(r.text().contains("Usage: ribbon"), "{args:?}: {}", r.text());
        assert!(r.stderr.is_empty(), "{args:?}");
    }
    // The build help documents the policy ids and the CRLF rule.
    let help = run(&["build", "--help"]).text();
    for want in [
        "rust.RibbonFilter",
        "carriage return",
        "--optimize-filters-for-memory",
    ] {
        assert!(help.contains(want), "{want}");
    }
    for (args, name) in [
        (&["--version"][..], "ribbon"),
        (&["-V"], "ribbon"),
        (&["build", "--version"], "ribbon-build"),
    ] {
        let r = run(args);
        r.ok();
        assert_eq!(
            r.text(),
            format!("{name} {}\n", env!("CARGO_PKG_VERSION")),
            "{args:?}"
        );
    }
}

#[test]
fn usage_errors_are_one_line_with_exit_2_and_a_pointer_to_help() {
    let d = Dir::new();
    let k = d.file("k", b"a\n");
    for (args, needle, help) in [
        (vec![], "missing subcommand", "'ribbon --help'"),
        (vec!["frobnicate"], "frobnicate", "'ribbon --help'"),
        (vec!["build", "--keys", &k], "--out", "'ribbon build --help'"),
        (
            vec!["build", "--policy", "nope:10", "--keys", &k, "--out", "o"],
            "\"nope:10\"",
            "'ribbon build --help'",
        ),
        (vec!["query", "--filter", "f"], "--keys", "'ribbon query --help'"),
        (vec!["sst"], "missing subcommand", "'ribbon sst --help'"),
        (vec!["sst", "info"], "PATH", "'ribbon sst info --help'"),
        (
            vec!["sst", "verify", "x", "--bogus"],
            "--bogus",
            "'ribbon sst verify --help'",
        ),
        (
            vec![
                "build",
                "--policy",
                "ribbonfilter:10",
                "--flush",
                "--level",
                "2",
                "--keys",
                &k,
                "--out",
                "o",
            ],
            "--level",
            "'ribbon build --help'",
        ),
        (
            vec![
                "build",
                "--policy",
                "ribbonfilter:10",
                "--width",
                "64",
                "--keys",
                &k,
                "--out",
                "o",
            ],
            "--width needs --standalone",
            "'ribbon build --help'",
        ),
        (
            vec![
                "build",
                "--policy",
                "ribbonfilter:10",
                "--from-rocksdb",
                &k,
                "--out",
                "o",
            ],
            "--from-rocksdb needs --standalone",
            "'ribbon build --help'",
        ),
        (
            vec![
                "build",
                "--standalone",
                "--keys",
                &k,
                "--num-keys",
                "3",
                "--out",
                "o",
            ],
            "--num-keys goes with --from-rocksdb",
            "'ribbon build --help'",
        ),
        (
            vec![
                "build",
                "--standalone",
                "--policy",
                "ribbonfilter:10",
                "--keys",
                &k,
                "--out",
                "o",
            ],
            "cannot be used with",
            "'ribbon build --help'",
        ),
        (
            vec!["query", "--filter", "-", "--keys", "-"],
            "standard input",
            "'ribbon query --help'",
        ),
    ] {
        let r = run(&args);
        r.fails_with(2, needle);
        assert!(r.stderr.contains(help), "{args:?}: {}", r.stderr);
    }
}

#[test]
fn options_take_equals_and_dash_means_standard_streams() {
    let d = Dir::new();
    let keys = d.file("keys.txt", keys_text(1000).as_bytes());
    let out = d.path("f");
    run(&[
        "build",
        "--policy=ribbonfilter:10",
        &format!("--keys={keys}"),
        &format!("--out={out}"),
    ])
    .ok();
    let filter = std::fs::read(&out).unwrap();
    // Keys from standard input, filter to standard output.
    let r = run_with(
        ribbon()
            .args([
                "build",
                "--policy",
                "ribbonfilter:10",
                "--keys",
                "-",
                "--out",
                "-",
            ])
            .write_stdin(keys_text(1000)),
    );
    r.ok();
    assert_eq!(r.stdout, filter);
    // The filter through a pipe: '-' and /dev/stdin both read every byte.
    for path in ["-", "/dev/stdin"] {
        let r = run_with(
            ribbon()
                .args(["query", "--filter", path, "--keys", &keys])
                .write_stdin(filter.clone()),
        );
        r.ok();
        let a = answers(&r);
        assert_eq!(a.len(), 1000);
        assert!(a.iter().all(|a| a == "1"), "{path}: a member answered 0");
    }
    // Keys through a pipe.
    let r = run_with(
        ribbon()
            .args(["query", "--filter", &out, "--keys", "-"])
            .write_stdin(keys_text(1000)),
    );
    assert!(answers(r.ok()).iter().all(|a| a == "1"));
}

#[test]
fn crlf_keys_are_the_same_keys_and_hex_stays_exact() {
    let d = Dir::new();
    let lf = d.file("lf.txt", keys_text(500).as_bytes());
    let crlf = d.file("crlf.txt", keys_text(500).replace('\n', "\r\n").as_bytes());
    let (a, b) = (d.path("a"), d.path("b"));
    run(&["build", "--policy", "ribbonfilter:10", "--keys", &lf, "--out", &a]).ok();
    run(&[
        "build",
        "--policy",
        "ribbonfilter:10",
        "--keys",
        &crlf,
        "--out",
        &b,
    ])
    .ok();
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let r = run(&["query", "--filter", &a, "--keys", &crlf]);
    assert!(answers(r.ok()).iter().all(|x| x == "1"));
    // With --hex a key ending in \r is its own key: "a\r" is 610d, not 61.
    let hex_keys = d.file("h.hex", b"610d\r\n");
    let plain = d.file("p.txt", b"a\r\n");
    let (h, p) = (d.path("h"), d.path("p"));
    run(&[
        "build",
        "--policy",
        "bloomfilter:10",
        "--keys",
        &hex_keys,
        "--hex",
        "--out",
        &h,
    ])
    .ok();
    run(&[
        "build",
        "--policy",
        "bloomfilter:10",
        "--keys",
        &plain,
        "--out",
        &p,
    ])
    .ok();
    assert_ne!(std::fs::read(&h).unwrap(), std::fs::read(&p).unwrap());
    let lib = |key: &[u8]| {
        let policy: ribbon::rocksdb::policy::FilterPolicy = "bloomfilter:10".parse().unwrap();
        ribbon::rocksdb::builder::build_filter(
            &policy,
            &ribbon::rocksdb::policy::BuildContext::default(),
            &[key],
        )
        .unwrap()
    };
    assert_eq!(std::fs::read(&h).unwrap(), lib(b"a\r"));
    assert_eq!(std::fs::read(&p).unwrap(), lib(b"a"));
}

#[test]
fn query_and_info_refuse_what_is_not_a_filter() {
    let d = Dir::new();
    let keys = d.file("keys.txt", keys_text(100).as_bytes());
    let empty = d.file("empty", b"");
    let text = d.file("text", keys_text(100).as_bytes());
    let mut state = 7u64;
    let random: Vec<u8> = (0..5000)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            (state >> 33) as u8
        })
        .collect();
    let random = d.file("random", &random);
    let sst = corpus("full_ribbon_fv7_zstd_xxh3.sst");
    let mut bad_header = ribbon::standalone::Ribbon::from_keys(["a", "b"], &Default::default())
        .unwrap()
        .as_bytes()
        .to_vec();
    bad_header[9] ^= 0x40; // inside the header, after the magic
    let bad_header = d.file("bad.rbn", &bad_header);
    let reserved = d.file("reserved", &[1, 2, 3, 4, 5, 6, 7, 8, 0xFD, 0, 0, 0, 0]);
    for (filter, needle) in [
        (&empty, "empty file"),
        (&text, "not a RocksDB filter block"),
        (&random, "not a RocksDB filter block"),
        (&sst, "ribbon sst query"),
        (&bad_header, "standalone Ribbon filter file"),
        (&reserved, "reserved"),
    ] {
        run(&["query", "--filter", filter, "--keys", &keys]).fails_with(1, needle);
        run(&["info", "--filter", filter]).fails_with(1, needle);
    }
    // info says how RocksDB itself would read such bytes.
    run(&["info", "--filter", &empty]).fails_with(1, "\"definitely not\" for every key");
    run(&["info", "--filter", &reserved]).fails_with(1, "every key may match");
    // Converting such bytes to a standalone filter is refused by the same
    // rule, never imported as a filter that says "definitely not".
    for (filter, needle) in [(&empty, "empty"), (&reserved, "reserved")] {
        let out = d.path("converted");
        let r = run(&["build", "--standalone", "--from-rocksdb", filter, "--out", &out]);
        r.fails_with(1, needle);
        assert!(!Path::new(&out).exists());
    }
    let five = d.file("five", &[0xFE, 0, 2, 0, 0]);
    run(&[
        "build",
        "--standalone",
        "--from-rocksdb",
        &five,
        "--out",
        &d.path("c5"),
    ])
    .fails_with(1, "too short");
    // RocksDB's own always-true filter is a real filter: every key may match.
    let always_true = d.file("true", &[0; 6]);
    assert!(
        answers(run(&["query", "--filter", &always_true, "--keys", &keys]).ok())
            .iter()
            .all(|a| a == "1")
    );
}

#[test]
fn build_says_what_it_wrote_and_why_it_is_not_the_named_kind() {
    let d = Dir::new();
    let many = d.file("many", keys_text(10_000).as_bytes());
    let few = d.file("few", keys_text(3).as_bytes());
    let empty = d.file("empty", b"");
    let out = d.path("f");
    let line = |args: &[&str]| {
        let mut all = vec!["build", "--out", &out];
        all.extend_from_slice(args);
        let r = run(&all);
        r.ok();
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        r.stderr
    };
    let s = line(&["--policy", "ribbonfilter:10", "--keys", &many]);
    let bytes = std::fs::metadata(&out).unwrap().len();
    for want in [
        "wrote Standard128Ribbon (ribbonfilter:10:0)".to_string(),
        "10000 keys".into(),
        format!("{bytes} bytes"),
        "bits/key".into(),
        "expected FP rate 0.00".into(),
    ] {
        assert!(s.contains(&want), "want {want:?} in {s}");
    }
    assert!(!s.contains(" not "), "{s}");
    let s = line(&["--policy", "ribbonfilter:10", "--keys", &few]);
    assert!(
        s.contains("wrote FastLocalBloom") && s.contains("Bloom filter is smaller"),
        "{s}"
    );
    let s = line(&["--policy", "ribbonfilter:10:2", "--level", "1", "--keys", &many]);
    assert!(s.contains("level 1 is below bloom_before_level 2"), "{s}");
    let s = line(&["--policy", "ribbonfilter:10:1", "--flush", "--keys", &many]);
    assert!(s.contains("a flush counts as level -1"), "{s}");
    let s = line(&[
        "--policy",
        "ribbonfilter:10:1",
        "--flush",
        "--compaction-style",
        "fifo",
        "--keys",
        &many,
    ]);
    assert!(s.contains("wrote Standard128Ribbon"), "FIFO has no levels: {s}");
    let s = line(&[
        "--policy",
        "bloomfilter:10",
        "--format-version",
        "4",
        "--keys",
        &many,
    ]);
    assert!(
        s.contains("wrote LegacyBloom") && s.contains("format_version 4"),
        "{s}"
    );
    let s = line(&["--policy", "ribbonfilter:10", "--keys", &empty]);
    assert!(s.contains("no keys") && !s.contains("NaN"), "{s}");
    let dup = d.file("dup", b"a\na\nb\n");
    let s = line(&["--policy", "bloomfilter:10", "--keys", &dup]);
    assert!(
        s.contains("3 keys (2 after collapsing adjacent duplicates"),
        "{s}"
    );
    let r = run(&[
        "build",
        "--quiet",
        "--policy",
        "ribbonfilter:10",
        "--keys",
        &many,
        "--out",
        &out,
    ]);
    assert!(r.ok().stderr.is_empty());
}

#[test]
fn rust_ids_write_the_bytes_of_the_builtin_ids() {
    let d = Dir::new();
    let keys = d.file("keys", keys_text(3000).as_bytes());
    let small = d.file("small", keys_text(20).as_bytes());
    for (rust, native) in [
        ("rust.RibbonFilter:10", "ribbonfilter:10"),
        ("rust.RibbonFilter:6.5:1", "ribbonfilter:6.5:1"),
        ("rust.RibbonFilter:23.4:-1", "ribbonfilter:23.4:-1"),
        ("rust.BloomFilter:10", "bloomfilter:10"),
        ("rust.BloomFilter:4.25", "bloomfilter:4.25"),
    ] {
        for extra in [
            &["--format-version", "7"][..],
            &["--format-version", "4"],
            &["--flush"],
            &["--level", "3"],
        ] {
            for k in [&keys, &small] {
                let (a, b) = (d.path("a"), d.path("b"));
                let mut args = vec!["build", "-q", "--keys", k];
                args.extend_from_slice(extra);
                run(&[&args[..], &["--policy", rust, "--out", &a]].concat()).ok();
                run(&[&args[..], &["--policy", native, "--out", &b]].concat()).ok();
                assert_eq!(
                    std::fs::read(&a).unwrap(),
                    std::fs::read(&b).unwrap(),
                    "{rust} {extra:?}"
                );
            }
        }
    }
    run(&[
        "build",
        "--policy",
        "rust.BloomFilter:10:false",
        "--keys",
        &keys,
        "--out",
        "x",
    ])
    .fails_with(2, "\"rust.BloomFilter:10:false\"");
}

#[test]
fn optimize_filters_for_memory_switch_reproduces_older_rocksdb() {
    let d = Dir::new();
    // Few keys: the filter's 64-byte rounding moves the real bits/key far
    // from the policy's, and the probe count follows the real one only when
    // optimising for memory.
    let keys = d.file("keys", keys_text(10).as_bytes());
    let library = |optimize: bool| {
        let policy: ribbon::rocksdb::policy::FilterPolicy = "bloomfilter:10".parse().unwrap();
        let ctx = ribbon::rocksdb::policy::BuildContext {
            optimize_filters_for_memory: optimize,
            ..ribbon::rocksdb::policy::BuildContext::sst_file_writer(7)
        };
        let keys = keys_text(10);
        let keys: Vec<&[u8]> = keys.lines().map(str::as_bytes).collect();
        ribbon::rocksdb::builder::build_filter(&policy, &ctx, &keys).unwrap()
    };
    for (flag, optimize) in [("true", true), ("false", false)] {
        let out = d.path(flag);
        run(&[
            "build",
            "-q",
            "--policy",
            "bloomfilter:10",
            "--keys",
            &keys,
            "--out",
            &out,
            "--optimize-filters-for-memory",
            flag,
        ])
        .ok();
        assert_eq!(std::fs::read(&out).unwrap(), library(optimize), "{flag}");
    }
    assert_ne!(
        library(true),
        library(false),
        "the switch must change something to be worth testing"
    );
}

#[test]
fn json_is_one_document_without_nan() {
    let d = Dir::new();
    let one = corpus("full_ribbon_fv7_zstd_xxh3.sst");
    let two = corpus("full_bloom_fv5_snappy_crc32c.sst");
    for args in [
        vec!["sst", "info", "--json", &one],
        vec!["sst", "info", "--json", &one, &two],
        vec!["sst", "verify", "--json", &one, &two],
    ] {
        let r = run(&args);
        r.ok();
        let doc: serde_json::Value =
            serde_json::from_slice(&r.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert_eq!(doc.as_array().unwrap().len(), args.len() - 3, "{args:?}");
        assert!(
            !r.text().contains("NaN") && !r.text().contains("inf"),
            "{}",
            r.text()
        );
    }
    let info: serde_json::Value =
        serde_json::from_slice(&run(&["sst", "info", "--json", &one]).stdout).unwrap();
    let f = &info[0];
    assert_eq!(f["checksum"], "kXXH3");
    assert!(f["bits_per_filter_entry"].as_f64().unwrap() > 5.0);
    assert!(f["ribbon_blocks"].as_u64().unwrap() > 0);
    // Filter files: a RocksDB block and an empty standalone filter.
    let keys = d.file("keys", keys_text(2000).as_bytes());
    let (block, empty_keys, sa) = (d.path("block"), d.file("none", b""), d.path("sa"));
    run(&[
        "build",
        "-q",
        "--policy",
        "ribbonfilter:10",
        "--keys",
        &keys,
        "--out",
        &block,
    ])
    .ok();
    run(&["build", "-q", "--standalone", "--keys", &empty_keys, "--out", &sa]).ok();
    let b: serde_json::Value =
        serde_json::from_slice(&run(&["info", "--json", "--filter", &block]).ok().stdout).unwrap();
    assert_eq!(b["kind"], "Standard128Ribbon");
    let s = run(&["info", "--json", "--filter", &sa]);
    let v: serde_json::Value = serde_json::from_slice(&s.ok().stdout).unwrap();
    assert_eq!(v["num_keys"], 0);
    assert!(v["bits_per_key"].is_null());
    let text = run(&["info", "--filter", &sa]).text();
    assert!(!text.contains("NaN") && text.contains("no keys"), "{text}");
    // The same checksum spelling in the text view.
    assert!(run(&["sst", "info", &one]).text().contains("checksum: kXXH3"));
    assert!(run(&["sst", "info", &one, &two]).text().contains("kXXH3"));
}

#[test]
fn no_panic_on_non_utf8_arguments_or_failed_writes() {
    use std::os::unix::ffi::OsStrExt;
    let d = Dir::new();
    let keys = d.file("keys", keys_text(1000).as_bytes());
    let out = d.path("f");
    run(&[
        "build",
        "-q",
        "--policy",
        "ribbonfilter:10",
        "--keys",
        &keys,
        "--out",
        &out,
    ])
    .ok();
    let bad = std::ffi::OsStr::from_bytes(b"bad\xff");
    let r = run_with(
        ribbon()
            .arg("query")
            .arg("--filter")
            .arg(bad)
            .args(["--keys", &keys]),
    );
    r.fails_with(1, "cannot read");
    let r = run_with(
        ribbon()
            .arg("build")
            .arg("--policy")
            .arg(bad)
            .args(["--keys", &keys, "--out", &out]),
    );
    r.fails_with(2, "invalid UTF-8");
    let r = run_with(ribbon().arg(bad));
    r.fails_with(2, "ribbon --help");
    if Path::new("/dev/full").exists() {
        let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        for args in [
            vec!["query", "--filter", &out, "--keys", &keys],
            vec!["--help"],
            vec!["sst", "info", "--json", &corpus("full_ribbon_fv7_zstd_xxh3.sst")],
        ] {
            let r: Run = std::process::Command::new(assert_cmd::cargo::cargo_bin("ribbon"))
                .args(&args)
                .stdout(full())
                .output()
                .unwrap()
                .into();
            r.fails_with(1, "cannot write standard output");
        }
        run(&[
            "build",
            "--policy",
            "ribbonfilter:10",
            "--keys",
            &keys,
            "--out",
            "/dev/full",
        ])
        .fails_with(1, "cannot write /dev/full");
    }
    // A closed pipe: the reader goes away before the answers are written.
    let big = d.file("big", keys_text(300_000).as_bytes());
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ribbon"))
        .args(["query", "--filter", &out, "--keys", &big])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    // A closed pipe is a quiet, normal end for a Unix tool (issue #30).
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
}

#[test]
fn dump_filter_to_standard_output() {
    let sst = corpus("full_ribbon_fv7_zstd_xxh3.sst");
    let d = Dir::new();
    let file = d.path("f");
    run(&["sst", "dump-filter", &sst, "--out", &file]).ok();
    let r = run(&["sst", "dump-filter", &sst, "--out", "-"]);
    assert_eq!(r.ok().stdout, std::fs::read(&file).unwrap());
    assert!(r.stderr.contains("standard output"));
    let partitioned = corpus("partitioned_ribbon_fv6_zlib_xxhash64.sst");
    run(&["sst", "dump-filter", &partitioned, "--out", "-"]).fails_with(2, "one file per partition");
}
