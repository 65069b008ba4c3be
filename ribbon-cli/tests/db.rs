//! `ribbon db` and the ends of output every command shares: a closed pipe
//! is a quiet, normal end; a file where a database directory is expected
//! is named as such.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn corpus_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../sst/tests/corpus/{name}"))
}

#[test]
fn a_closed_pipe_ends_quietly_with_exit_code_0() {
    // Many keys, so that the output outlives the reader's first line.
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    let text: String = (0..300_000).map(|i| format!("key{i}\n")).collect();
    std::fs::write(&keys, text).unwrap();
    let sst = corpus_file("full_bloom_fv5_snappy_crc32c.sst");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ribbon"))
        .args([
            "sst",
            "query",
            sst.to_str().unwrap(),
            "--keys",
            keys.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 2];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // stdout is dropped here: the pipe's reader is gone.
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "exit {status:?}, stderr {err:?}");
    assert!(err.is_empty(), "{err}");
}

#[test]
fn a_file_is_not_a_database_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    std::fs::write(&keys, "a\n").unwrap();
    let sst = corpus_file("full_bloom_fv5_snappy_crc32c.sst");
    let out = Command::new(env!("CARGO_BIN_EXE_ribbon"))
        .args([
            "db",
            "query",
            sst.to_str().unwrap(),
            "--keys",
            keys.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        err.contains("not a database directory") && err.contains("ribbon sst"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    // Issue 44: "X: X: not a database directory".
    assert_eq!(err.matches(sst.to_str().unwrap()).count(), 1, "{err}");
}

#[test]
fn a_manifest_adding_the_default_column_family_again_is_refused_in_one_line() {
    // Issue 44: every default-family file vanished ("memtable:none").
    use ribbon_sst::coding::put_varint64;
    let mut first = Vec::new();
    put_varint64(&mut first, 1);
    put_varint64(&mut first, 26);
    first.extend_from_slice(b"leveldb.BytewiseComparator");
    for tag in [2, 3, 4] {
        put_varint64(&mut first, tag);
        put_varint64(&mut first, 1);
    }
    let mut again = Vec::new();
    for v in [200, 0, 201, 7] {
        put_varint64(&mut again, v);
    }
    again.extend_from_slice(b"default");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("CURRENT"), "MANIFEST-000003\n").unwrap();
    let manifest = ribbon_sst::db::log::write_log(&[&first, &again]);
    std::fs::write(tmp.path().join("MANIFEST-000003"), manifest).unwrap();
    let keys = tmp.path().join("keys");
    std::fs::write(&keys, "a\n").unwrap();
    let out = db_query_in(tmp.path(), &keys);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty());
    assert!(
        err.contains("column family 0") && err.contains("added while it exists"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

fn db_query_in(dir: &Path, keys: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ribbon"))
        .args([
            "db",
            "query",
            dir.to_str().unwrap(),
            "--keys",
            keys.to_str().unwrap(),
        ])
        .output()
        .unwrap()
}

#[test]
fn sst_query_json_is_one_object_per_key() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    std::fs::write(&keys, "a\nb\n").unwrap();
    let sst = corpus_file("full_bloom_fv5_snappy_crc32c.sst");
    let run = |json: bool| {
        let mut args = vec![
            "sst",
            "query",
            sst.to_str().unwrap(),
            "--keys",
            keys.to_str().unwrap(),
        ];
        if json {
            args.push("--json");
        }
        let out = Command::new(env!("CARGO_BIN_EXE_ribbon"))
            .args(&args)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let plain: Vec<bool> = run(false).lines().map(|l| l == "1").collect();
    let lines: Vec<serde_json::Value> = run(true)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    for (i, (v, want)) in lines.iter().zip(plain).enumerate() {
        assert_eq!(v["key"], ["a", "b"][i]);
        assert_eq!(v["may_match"], want);
    }
}

/// `ribbon db query` on the rocksdict L0-only fixture.
fn db_query(keys: &Path, extra: &[&str]) -> std::process::Output {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sst/tests/fixtures-db/l0_only/db");
    let mut args = vec![
        "db",
        "query",
        dir.to_str().unwrap(),
        "--keys",
        keys.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    Command::new(env!("CARGO_BIN_EXE_ribbon"))
        .args(&args)
        .output()
        .unwrap()
}

#[test]
fn db_query_streams_its_keys_in_chunks_with_the_same_answers() {
    // More keys than one chunk (65,536), CRLF lines, no final newline: the
    // same lines as each key asked alone, in order, and JSON Lines whose
    // files with may_match are the text's.
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    let n = 70_000;
    let mut text: String = (0..n).map(|i| format!("key{:06}\r\n", i % 1200)).collect();
    text.truncate(text.len() - 2);
    std::fs::write(&keys, &text).unwrap();
    let out = db_query(&keys, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), n);
    for i in [0, 1, 7, 1199, 65_535, 65_536, n - 1] {
        let one = tmp.path().join("one");
        std::fs::write(&one, format!("key{:06}\n", i % 1200)).unwrap();
        let alone = String::from_utf8(db_query(&one, &[]).stdout).unwrap();
        assert_eq!(alone.trim_end(), lines[i], "key {i}");
    }
    let json = db_query(&keys, &["--json"]);
    assert!(json.status.success());
    let json = String::from_utf8(json.stdout).unwrap();
    let mut count = 0;
    for (line, text) in json.lines().zip(&lines) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let files: Vec<String> = v["files"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["may_match"] == true)
            .map(|f| format!("L{}:{}", f["level"], f["file"].as_str().unwrap()))
            .collect();
        let shown = if files.is_empty() {
            "-".to_string()
        } else {
            files.join(" ")
        };
        assert_eq!(text.split('\t').nth(2), Some(shown.as_str()), "{line}");
        count += 1;
    }
    assert_eq!(count, n);
}

#[test]
fn db_query_names_the_line_of_bad_hex() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    let mut text: String = (0..70_000).map(|i| format!("{:08x}\n", i)).collect();
    text.push_str("abc\n");
    std::fs::write(&keys, &text).unwrap();
    let out = db_query(&keys, &["--hex"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains(":70001: invalid hex"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// Issue 44: text `db query` echoed keys raw: a tab in a key shifted the
/// columns, a newline split its line, a terminal escape reached the
/// terminal. Keys are now escaped in the text output (JSON is escaped by
/// serde and keeps the key as it is).
#[test]
fn db_query_text_escapes_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let keys = tmp.path().join("keys");
    // Hex, so that a key may hold a newline too.
    let raw: [&[u8]; 5] = [b"key000001", b"a\tb", b"x\ny", b"\x1b[2J\\", b"\xff\x00"];
    let hex: String = raw
        .iter()
        .map(|k| k.iter().map(|b| format!("{b:02x}")).collect::<String>() + "\n")
        .collect();
    std::fs::write(&keys, &hex).unwrap();
    // Text mode reads lines: the same keys but the one with a newline.
    let text_keys = tmp.path().join("text");
    std::fs::write(&text_keys, b"key000001\na\tb\n\x1b[2J\\\n\xff\x00\n").unwrap();
    let out = db_query(&text_keys, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\u{1b}'), "{text:?}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text:?}");
    for l in &lines {
        assert_eq!(l.split('\t').count(), 3, "{l:?}");
    }
    let firsts: Vec<&str> = lines.iter().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(firsts, ["key000001", "a\\tb", "\\x1b[2J\\\\", "\\xff\\x00"]);
    // JSON: the key as it is (serde escapes it).
    let out = db_query(&text_keys, &["--json"]);
    assert!(out.status.success());
    let keys_json: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["key"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(keys_json[1], "a\tb");
    // --hex prints hex, unchanged.
    let out = db_query(&keys, &["--hex"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 5);
    assert!(text.lines().nth(2).unwrap().starts_with("780a79\t"), "{text}");
}
