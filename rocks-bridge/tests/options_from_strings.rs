//! `options_from_strings`, the route rust-rocksdb 0.24 users take to the
//! Rust policies (it has no `set_filter_policy`), tested here with the
//! workspace's rust-rocksdb 0.25; `examples/outside-rocksdb024` runs the
//! same path on rust-rocksdb 0.24 (`scripts/test-rocksdb-024.sh`). Also the
//! reopen through `Options::load_latest` that both releases rely on.

use rocksdb::{Cache, Env, Options, DB};

const FAMILIES: [(&str, &str); 3] = [
    ("rust", "rust.RibbonFilter:10:1"),
    ("balanced", "rust.BalancedRibbon:10"),
    ("native", "ribbonfilter:10"),
];

fn table(policy: &str) -> String {
    format!("block_based_table_factory={{filter_policy={policy};format_version=7}}")
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

/// Writes keys into every family, flushes, and reads them all back; the
/// filters of the `rust.*` families are built and read by Rust.
#[test]
fn families_from_strings_write_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let tables: Vec<(String, String)> = FAMILIES
        .iter()
        .map(|(name, policy)| (name.to_string(), table(policy)))
        .collect();
    let families: Vec<(&str, &str)> = tables.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
    let cache = Cache::new_lru_cache(8 << 20);
    let (opts, descriptors) = rocks_bridge::options_from_strings(
        "create_if_missing=true;create_missing_column_families=true",
        &families,
        &cache,
    )
    .unwrap();
    let names: Vec<&str> = descriptors.iter().map(|d| d.name()).collect();
    assert_eq!(names, ["default", "rust", "balanced", "native"]);

    let before = rocks_bridge::counters();
    {
        let db = DB::open_cf_descriptors(&opts, dir.path(), descriptors).unwrap();
        for (name, _) in FAMILIES {
            let cf = db.cf_handle(name).unwrap();
            for i in 0..2000 {
                db.put_cf(&cf, key(i), b"v").unwrap();
            }
            db.flush_cf(&cf).unwrap();
            for i in 0..2000 {
                assert!(db.get_cf(&cf, key(i)).unwrap().is_some(), "{name}: key {i} lost");
            }
        }
    }
    let after = rocks_bridge::counters();
    // Other tests of this binary may run at once: at least this test's two
    // Rust families' filters were built by Rust.
    assert!(
        after.filters_built >= before.filters_built + 2,
        "{before:?} {after:?}"
    );
    assert!(
        after.readers_created >= before.readers_created + 2,
        "{before:?} {after:?}"
    );

    // The database's own OPTIONS file names each family's policy by its full
    // id, and a reopen through Options::load_latest finds every key.
    let options_file = ribbon_sst::db::OptionsFile::newest(dir.path()).unwrap().unwrap();
    let text = std::fs::read_to_string(options_file).unwrap();
    for id in [
        "rust.RibbonFilter:10:1",
        "rust.BalancedRibbon:10:0",
        "ribbonfilter:10",
    ] {
        assert!(
            text.contains(&format!("filter_policy={{id={id}")),
            "{id} not in\n{text}"
        );
    }
    rocks_bridge::register();
    let before = rocks_bridge::counters();
    let (opts, descriptors) = Options::load_latest(dir.path(), Env::new().unwrap(), false, cache).unwrap();
    let db = DB::open_cf_descriptors(&opts, dir.path(), descriptors).unwrap();
    for (name, _) in FAMILIES {
        let cf = db.cf_handle(name).unwrap();
        for i in (0..2000).step_by(7) {
            assert!(
                db.get_cf(&cf, key(i)).unwrap().is_some(),
                "{name} reopened: key {i} lost"
            );
        }
        assert!(db.get_cf(&cf, b"absent").unwrap().is_none());
    }
    // The reopened families' filters are read by Rust again.
    let after = rocks_bridge::counters();
    assert!(
        after.readers_created >= before.readers_created + 2,
        "{before:?} {after:?}"
    );
}

/// The `default` family is listed first whatever the order given, and gets
/// its options from the strings when named.
#[test]
fn default_family_first() {
    let cache = Cache::new_lru_cache(1 << 20);
    let (_, descriptors) = rocks_bridge::options_from_strings(
        "",
        &[("b", ""), ("default", &table("rust.BloomFilter:10"))],
        &cache,
    )
    .unwrap();
    let names: Vec<&str> = descriptors.iter().map(|d| d.name()).collect();
    assert_eq!(names, ["default", "b"]);
}

/// Anything RocksDB would not parse, or would parse into something else, is
/// an error naming the cause, never options without the filter asked for.
#[test]
fn bad_strings_are_errors() {
    let cache = Cache::new_lru_cache(1 << 20);
    let err = |db: &str, families: &[(&str, &str)]| {
        rocks_bridge::options_from_strings(db, families, &cache)
            .err()
            .unwrap_or_else(|| panic!("accepted {db:?} {families:?}"))
            .to_string()
    };
    let e = err("create_if_mising=true", &[]);
    assert!(
        e.contains("database options") && e.contains("create_if_mising"),
        "{e}"
    );
    let e = err(
        "",
        &[(
            "x",
            "block_based_table_factory={filter_policy=rust.NoSuchFilter:10}",
        )],
    );
    assert!(e.contains("column family \"x\""), "{e}");
    let e = err(
        "",
        &[(
            "x",
            "block_based_table_factory={filter_policy=rust.RibbonFilter:ten}",
        )],
    );
    assert!(e.contains("column family \"x\""), "{e}");
    let e = err("", &[("x", "write_buffer_size=")]);
    assert!(e.contains("column family \"x\""), "{e}");
    let e = err("", &[("x", ""), ("x", "")]);
    assert!(e.contains("named twice"), "{e}");
    // A DB option in a family's string, and the other way round.
    err("", &[("x", "create_if_missing=true")]);
    err("write_buffer_size=1024", &[]);
}
