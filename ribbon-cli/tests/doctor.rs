//! `ribbon doctor` through the command line (issue 36): on the databases
//! another RocksDB wrote (rocksdict's 9.8.4, sst/tests/fixtures-db/) it
//! finds nothing wrong, says what the OPTIONS file does not record, and
//! agrees with the tables' own properties; a damaged file is reported as
//! unreadable, never guessed; the HTML page is self-contained and renders
//! in headless Chromium.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sst/tests/fixtures-db");
    let mut dbs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path().join("db"))
        .filter(|p| p.is_dir())
        .collect();
    dbs.sort();
    assert!(dbs.len() >= 5, "fixtures in {}", root.display());
    dbs
}

fn doctor_json(dir: &Path, extra: &[&str]) -> Value {
    let out = Command::cargo_bin("ribbon")
        .unwrap()
        .arg("doctor")
        .arg("--json")
        .args(extra)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn findings(v: &Value) -> Vec<(String, String, Option<u64>)> {
    v["column_families"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|cf| {
            cf["findings"].as_array().unwrap().iter().map(move |f| {
                (
                    cf["name"].as_str().unwrap().to_string(),
                    f["code"].as_str().unwrap().to_string(),
                    f["level"].as_u64(),
                )
            })
        })
        .collect()
}

#[test]
fn databases_of_another_rocksdb_have_no_wrong_finding() {
    for db in fixtures() {
        let v = doctor_json(&db, &[]);
        assert_eq!(v["rocksdb_version"], "9.8.4", "{}", db.display());
        assert_eq!(findings(&v), vec![], "{}", db.display());
        for cf in v["column_families"].as_array().unwrap() {
            // 9.8.4 writes `filter_policy=bloomfilter`: said, not guessed.
            let notes = cf["notes"].as_array().unwrap();
            assert!(
                notes.iter().any(|n| n.as_str().unwrap().contains("name only")),
                "{}: {notes:?}",
                db.display()
            );
            for f in cf["files"].as_array().unwrap() {
                if f["filter_bytes"].as_u64().unwrap() > 0 {
                    assert_eq!(f["family"], "Bloom");
                    assert_eq!(f["filter_bytes"], f["filter_size_property"]);
                    assert!(f["measured"]["queries"].as_u64().unwrap() > 0);
                }
            }
            let total = &cf["total"];
            assert_eq!(
                total["placement"]["table_reader_bytes"], total["filter_bytes"],
                "cache_index_and_filter_blocks=false: every filter byte is the readers'"
            );
        }
    }
}

#[test]
fn a_damaged_file_is_reported_as_unreadable() {
    let src = fixtures()
        .into_iter()
        .find(|p| p.ends_with("l0_only/db"))
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut ssts = Vec::new();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, tmp.path().join(p.file_name().unwrap())).unwrap();
        if p.extension().is_some_and(|e| e == "sst") {
            ssts.push(p.file_name().unwrap().to_owned());
        }
    }
    ssts.sort();
    let victim = tmp.path().join(&ssts[0]);
    let mut bytes = std::fs::read(&victim).unwrap();
    let n = bytes.len();
    bytes[n - 30] ^= 0x5a;
    std::fs::write(&victim, bytes).unwrap();
    let v = doctor_json(tmp.path(), &["--samples", "100"]);
    assert_eq!(
        findings(&v),
        vec![("default".to_string(), "unreadable".to_string(), Some(0))]
    );
    let level = &v["column_families"][0]["levels"][0];
    assert_eq!(level["unreadable_files"], 1);
    assert_eq!(level["files"].as_u64().unwrap() as usize, ssts.len() - 1);
}

#[test]
fn errors_are_one_line() {
    let out = Command::cargo_bin("ribbon")
        .unwrap()
        .args(["doctor", "/nonexistent/db"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    let db = &fixtures()[0];
    let out = Command::cargo_bin("ribbon")
        .unwrap()
        .args(["doctor", "--options", "/nonexistent/OPTIONS"])
        .arg(db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    let out = Command::cargo_bin("ribbon")
        .unwrap()
        .args(["doctor", "--json", "--html", "x.html"])
        .arg(db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_planned_configuration_is_judged_with_options() {
    // The same database judged against a Ribbon configuration with its bits
    // per key: its Bloom filters were written under another policy.
    let db = fixtures()
        .into_iter()
        .find(|p| p.ends_with("l0_only/db"))
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let planned = tmp.path().join("OPTIONS-planned");
    let text = std::fs::read_to_string(db.join("OPTIONS-000007")).unwrap();
    std::fs::write(
        &planned,
        text.replace("filter_policy=bloomfilter", "filter_policy=ribbonfilter:10:-1"),
    )
    .unwrap();
    let v = doctor_json(&db, &["--options", planned.to_str().unwrap()]);
    assert_eq!(v["options_given"], true);
    assert_eq!(
        findings(&v),
        vec![("default".to_string(), "policy_changed".to_string(), Some(0))]
    );
    assert_eq!(v["column_families"][0]["notes"], serde_json::json!([]));
}

/// RocksDB 6.29.5's database with a built-in Bloom configured in code
/// (sst/tests/fixtures-db/rocksdb629/generate.py).
fn rocksdb_629_db() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../sst/tests/fixtures-db/rocksdb629/bloom_in_code/db")
}

#[test]
fn a_6x_database_under_rocksdb_builtin_bloom_filter_has_its_filters_read() {
    // RocksDB 6.x writes filter_policy=rocksdb.BuiltinBloomFilter for any
    // built-in Bloom set in code; RocksDB 7+ reads every built-in filter
    // under it (tests/doctor.rs checks that against RocksDB 11.8.1 itself).
    let db = rocksdb_629_db();
    let text = std::fs::read_to_string(db.join("OPTIONS-000007")).unwrap();
    assert!(text.contains("filter_policy=rocksdb.BuiltinBloomFilter"));
    let v = doctor_json(&db, &["--samples", "2000"]);
    assert_eq!(v["rocksdb_version"], "6.29.5");
    assert_eq!(findings(&v), vec![], "{v:#}");
    let cf = &v["column_families"][0];
    let notes = cf["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("rocksdb.BuiltinBloomFilter")
                && n.as_str().unwrap().contains("build none")),
        "{notes:?}"
    );
    let files = cf["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    for f in files {
        assert_eq!(f["family"], "Bloom");
        assert!(f["measured"]["queries"].as_u64().unwrap() > 0);
    }
    // Judged against nullptr, the same filters are ignored.
    let tmp = tempfile::tempdir().unwrap();
    let planned = tmp.path().join("OPTIONS-planned");
    std::fs::write(
        &planned,
        text.replace(
            "filter_policy=rocksdb.BuiltinBloomFilter",
            "filter_policy=nullptr",
        ),
    )
    .unwrap();
    let v = doctor_json(&db, &["--options", planned.to_str().unwrap()]);
    assert_eq!(
        findings(&v),
        vec![
            ("default".to_string(), "incompatible_policy".to_string(), Some(0)),
            ("default".to_string(), "incompatible_policy".to_string(), Some(1)),
        ]
    );
}

#[test]
fn text_report_names_every_section() {
    let db = fixtures()
        .into_iter()
        .find(|p| p.ends_with("wide_columns_cfs/db"))
        .unwrap();
    let out = Command::cargo_bin("ribbon")
        .unwrap()
        .arg("doctor")
        .arg(&db)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for want in [
        "column family \"default\"",
        "column family \"other\"",
        "findings: none",
        "cost:",
        "what-if",
        "ribbonfilter saves",
    ] {
        assert!(text.contains(want), "{want:?} missing from:\n{text}");
    }
}

fn chromium() -> String {
    let bin = std::env::var("RIBBON_CHROMIUM").unwrap_or_else(|_| "chromium".into());
    let found = std::process::Command::new(&bin).arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "{bin} not found: install Debian's chromium package (scripts/test.sh does) or set RIBBON_CHROMIUM"
    );
    bin
}

#[test]
fn the_html_page_is_self_contained_and_renders_in_chromium() {
    let db = fixtures()
        .into_iter()
        .find(|p| p.ends_with("wide_columns_cfs/db"))
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("doctor.html");
    Command::cargo_bin("ribbon")
        .unwrap()
        .args(["doctor", "--html"])
        .arg(&page)
        .arg(&db)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    // No network: nothing is loaded from anywhere (the SVG namespace is a
    // name, not a fetch).
    for bad in ["<script src", "<link", "url(", "@import", "<img"] {
        assert!(!html.contains(bad), "{bad} in the page");
    }
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    // One section and one chart per column family, a bar per level.
    assert_eq!(dom.matches("class=\"column-family\"").count(), 2, "{dom}");
    assert_eq!(dom.matches("<svg class=\"chart\"").count(), 2);
    assert_eq!(dom.matches("class=\"bar\"").count(), 2);
    assert!(dom.contains("class=\"measured\""));
    assert!(dom.contains("note: filter_policy=bloomfilter"));
}
