//! `ribbon conformance` against hostile vector sets (issue 31): paths out
//! of the vectors directory, a digest oracle, a key cut inside a UTF-8
//! character, fields truncated by `as i32`, and rows that multiplied a
//! keys file's memory. Each copy of the vectors is changed, its manifest
//! updated to match, and the run ends in a one-line error (or its table).

#[path = "../../sst/tests/support/child.rs"]
#[allow(dead_code)]
mod child;

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const RIBBON: &str = env!("CARGO_BIN_EXE_ribbon");

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/v1")
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

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `bytes` to `rel` in the copy `dir` and lists it in the manifest
/// with its size and digest (replacing its entry, if any).
fn put(dir: &Path, rel: &str, bytes: &[u8]) {
    std::fs::write(dir.join(rel), bytes).unwrap();
    list(dir, rel, bytes.len(), &sha(bytes));
}

/// Sets the manifest entry of `rel`.
fn list(dir: &Path, rel: &str, len: usize, digest: &str) {
    let manifest = std::fs::read_to_string(dir.join("manifest.tsv")).unwrap();
    let mut lines: Vec<String> = manifest
        .lines()
        .filter(|l| l.split('\t').next() != Some(rel))
        .map(str::to_string)
        .collect();
    lines.push(format!("{rel}\t{len}\t{digest}"));
    std::fs::write(dir.join("manifest.tsv"), lines.join("\n") + "\n").unwrap();
}

fn conformance(dir: &Path, impl_: &str, extra: &[&str]) -> Output {
    Command::new(RIBBON)
        .args(["conformance", "--impl", impl_, "--vectors", dir.to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap()
}

fn one_line_failure(out: &Output) -> String {
    let e = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(!e.contains("panicked"), "{e}");
    e
}

#[test]
fn paths_out_of_the_vectors_directory_are_refused_and_no_digest_leaks() {
    child::run_limited(
        "paths_out_of_the_vectors_directory_are_refused_and_no_digest_leaks",
        child::Limits {
            memory_kib: 1 << 20,
            time: std::time::Duration::from_secs(10),
        },
        || {
            let tmp = tempfile::tempdir().unwrap();
            let outside = tmp.path().join("secret");
            std::fs::write(&outside, "not a vector").unwrap();
            for (i, rel) in ["../secret", "/etc/hostname", "./cases.tsv", "keys//bin.hex"]
                .iter()
                .enumerate()
            {
                let dir = tmp.path().join(format!("v{i}"));
                copy_dir(&vectors(), &dir);
                list(&dir, rel, 12, &"0".repeat(64));
                let e = one_line_failure(&conformance(&dir, RIBBON, &[]));
                assert!(
                    e.contains("is not a plain relative path inside the vectors directory"),
                    "{rel}: {e}"
                );
            }
            // A link inside the directory to a file outside it.
            let dir = tmp.path().join("link");
            copy_dir(&vectors(), &dir);
            std::os::unix::fs::symlink(&outside, dir.join("leak.bin")).unwrap();
            list(&dir, "leak.bin", 12, &"0".repeat(64));
            let e = one_line_failure(&conformance(&dir, RIBBON, &[]));
            assert!(e.contains("leak.bin: is outside the vectors directory"), "{e}");
            // A FIFO listed as a vector file: refused, not waited on.
            let dir = tmp.path().join("fifo");
            copy_dir(&vectors(), &dir);
            assert!(Command::new("mkfifo")
                .arg(dir.join("pipe.bin"))
                .status()
                .unwrap()
                .success());
            list(&dir, "pipe.bin", 12, &"0".repeat(64));
            let e = one_line_failure(&conformance(&dir, RIBBON, &[]));
            assert!(e.contains("pipe.bin: not a regular file"), "{e}");
            // A digest mismatch names the manifest's digest, not the file's.
            let dir = tmp.path().join("digest");
            copy_dir(&vectors(), &dir);
            let data = std::fs::read(dir.join("probes.hex")).unwrap();
            list(&dir, "probes.hex", data.len(), &"ab".repeat(32));
            let e = one_line_failure(&conformance(&dir, RIBBON, &[]));
            assert!(e.contains("sha256 differs from the manifest's abab"), "{e}");
            assert!(!e.contains(&sha(&data)), "the file's digest leaked: {e}");
        },
    );
}

#[test]
fn a_key_cut_inside_a_character_and_out_of_range_fields_are_not_panics() {
    child::run_limited(
        "a_key_cut_inside_a_character_and_out_of_range_fields_are_not_panics",
        child::Limits {
            memory_kib: 1 << 20,
            time: std::time::Duration::from_secs(10),
        },
        || {
            let tmp = tempfile::tempdir().unwrap();
            // The first member key of the `hash` cases: 'a' and then two-byte
            // characters, so byte 48 falls inside one.
            let dir = tmp.path().join("utf8");
            copy_dir(&vectors(), &dir);
            let keys = std::fs::read_to_string(dir.join("keys/lengths.hex")).unwrap();
            let first = format!("a{}", "é".repeat(60));
            let rest = keys.split_once('\n').unwrap().1;
            put(&dir, "keys/lengths.hex", format!("{first}\n{rest}").as_bytes());
            let out = conformance(&dir, "echo 0 #", &["--only", "hash", "--reader-only"]);
            let (stdout, stderr) = (
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
            );
            assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
            assert!(!stderr.contains("panicked"), "{stderr}");
            assert!(
                stdout.contains(&format!("(key a{}...)", "é".repeat(47))),
                "{stdout}"
            );

            // format_version and context beyond i32: an error, not a wrap to 7.
            for (col, value) in [(3, "4294967303"), (4, "-4294967297")] {
                let dir = tmp.path().join(format!("range{col}"));
                copy_dir(&vectors(), &dir);
                let cases = std::fs::read_to_string(dir.join("cases.tsv")).unwrap();
                let mut done = false;
                let changed: Vec<String> = cases
                    .lines()
                    .map(|l| {
                        let mut f: Vec<&str> = l.split('\t').collect();
                        if !done && !l.starts_with('#') && f[0] != "id" {
                            f[col] = value;
                            done = true;
                        }
                        f.join("\t")
                    })
                    .collect();
                put(&dir, "cases.tsv", (changed.join("\n") + "\n").as_bytes());
                let e = one_line_failure(&conformance(&dir, RIBBON, &[]));
                assert!(e.contains(&format!("{value:?} is out of range")), "{e}");
            }
        },
    );
}

/// 25,000 rows naming the whole 20,000-line keys file (a 3 MB cases.tsv)
/// took one copy of the keys per row (tens of GB); the keys are now read
/// once and shared: under 1 GiB of address space and 10 s of CPU, the run
/// loads them and checks the one selected feature.
#[test]
fn rows_sharing_a_keys_file_share_its_memory() {
    child::run_limited(
        "rows_sharing_a_keys_file_share_its_memory",
        child::Limits {
            memory_kib: 1 << 20,
            time: std::time::Duration::from_secs(10),
        },
        || {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("many");
            copy_dir(&vectors(), &dir);
            let cases = std::fs::read_to_string(dir.join("cases.tsv")).unwrap();
            let row = cases
                .lines()
                .find(|l| l.split('\t').nth(6) == Some("bin.hex"))
                .unwrap()
                .to_string();
            let mut text = cases.clone();
            for i in 0..25_000 {
                let mut f: Vec<String> = row.split('\t').map(str::to_string).collect();
                f[0] = format!("dup-{i}");
                f[1] = "dup".into();
                f[7] = "20000".into();
                text.push_str(&f.join("\t"));
                text.push('\n');
            }
            assert!(text.len() > 3_000_000);
            put(&dir, "cases.tsv", text.as_bytes());
            let out = conformance(&dir, RIBBON, &["--only", "hash"]);
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(stdout.contains("hash"), "{stdout}");
        },
    );
}

/// Issue 44: an implementation that leaves a FIFO where the runner reads
/// its output (the filter of `build --out`) made the runner wait forever
/// in `open(2)`, and one that plants a link at a scratch file's name made
/// the runner write through it. The runner now reads only regular files
/// and creates its scratch files anew: the case fails, the run ends, and
/// the link's target is untouched.
#[test]
fn an_implementation_leaving_fifos_and_links_does_not_hang_or_steer_the_runner() {
    child::run_limited(
        "an_implementation_leaving_fifos_and_links_does_not_hang_or_steer_the_runner",
        child::Limits {
            memory_kib: 1 << 20,
            time: std::time::Duration::from_secs(30),
        },
        || {
            let tmp = tempfile::tempdir().unwrap();
            let victim = tmp.path().join("victim");
            std::fs::write(&victim, "precious").unwrap();
            let script = tmp.path().join("impl.sh");
            // For `build`: a link to the victim at the name of the next
            // scratch file (`query.hex`, beside its --keys file) and a FIFO
            // at --out; for anything else: the real tool.
            std::fs::write(
                &script,
                format!(
                    "#!/bin/sh\nprev=\nfor a in \"$@\"; do\n  \
                     if [ \"$prev\" = --keys ]; then ln -sf '{}' \"$(dirname \"$a\")/query.hex\"; fi\n  \
                     if [ \"$prev\" = --out ]; then mkfifo \"$a\"; exit 0; fi\n  \
                     prev=$a\ndone\nexec '{RIBBON}' \"$@\"\n",
                    victim.display()
                ),
            )
            .unwrap();
            let mut perm = std::fs::metadata(&script).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
            std::fs::set_permissions(&script, perm).unwrap();
            let out = conformance(
                &vectors(),
                script.to_str().unwrap(),
                &["--timeout", "5", "--only", "bloom", "--no-sst"],
            );
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(out.status.code(), Some(1), "{text}");
            assert!(text.contains("not a regular file"), "{text}");
            assert!(
                std::fs::read(&victim).unwrap() == b"precious",
                "the runner wrote through a link the implementation planted"
            );
        },
    );
}
