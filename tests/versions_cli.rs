//! The `ribbon` tool over the cross-version corpus
//! (`sst/tests/fixtures-versions/`, written by RocksDB 7.8.3 and 9.8.4;
//! `compat/versions/README.md`): `ribbon sst query` gives every answer the
//! writing RocksDB recorded, and `ribbon build`, with the switches of that
//! version's SstFileWriter (`--format-version`, `--level -1`,
//! `--optimize-filters-for-memory false`), writes the very filter bytes it
//! wrote, for every whole-key full-filter SstFileWriter file. (Prefix
//! filters need the extractor, which `ribbon build` does not take;
//! `sst/tests/versions.rs` rebuilds those through the library.)

use std::path::PathBuf;

fn corpus(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("sst/tests/fixtures-versions")
        .join(name)
        .display()
        .to_string()
}

#[path = "util/cli.rs"]
mod cli;

use cli::run;

/// (name, how, table options) per line of `index.tsv`.
fn index() -> Vec<(String, String, String)> {
    std::fs::read_to_string(corpus("index.tsv"))
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[2].to_string(), f[4].to_string())
        })
        .collect()
}

fn option<'a>(options: &'a str, key: &str) -> Option<&'a str> {
    options
        .split(';')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

#[test]
fn sst_query_gives_every_recorded_answer() {
    let files = index();
    assert_eq!(files.len(), 32);
    for (name, _, _) in &files {
        let sst = corpus(&format!("{name}.sst"));
        let probes = corpus(&format!("{name}.probes"));
        let got = run(&["sst", "query", &sst, "--keys", &probes, "--hex"]);
        let expected = std::fs::read_to_string(corpus(&format!("{name}.expected"))).unwrap();
        assert!(expected.contains('0'), "{name}: vacuous");
        assert_eq!(String::from_utf8(got).unwrap(), expected, "{name}");
    }
}

#[test]
fn build_writes_the_bytes_of_each_versions_sst_file_writer() {
    let mut rebuilt = 0;
    for (name, how, table) in index() {
        let whole_key_only = !name.contains("prefix");
        if how != "sst" || option(&table, "partition_filters") == Some("true") || !whole_key_only {
            continue;
        }
        let keys = corpus(&format!("{name}.keys"));
        let built = run(&[
            "build",
            "--policy",
            option(&table, "filter_policy").unwrap(),
            "--format-version",
            option(&table, "format_version").unwrap(),
            "--level",
            "-1",
            "--optimize-filters-for-memory",
            "false",
            "--keys",
            &keys,
            "--hex",
            "--quiet",
            "--out",
            "-",
        ]);
        let sst = ribbon_sst::SstFile::open(corpus(&format!("{name}.sst"))).unwrap();
        let blocks = sst.filter().blocks();
        assert_eq!(blocks.len(), 1, "{name}");
        assert!(built == blocks[0], "{name}: ribbon build wrote other bytes");
        rebuilt += 1;
    }
    assert_eq!(rebuilt, 14);
}
