//! `SstFile` through `ribbon::MayContain` answers as `key_may_match` (and
//! so as the writing RocksDB's `Get`), borrowed bytes open as owned ones,
//! and `prefix_may_match_many` answers as `prefix_may_match` key by key.

use ribbon::MayContain;
use ribbon_sst::SstFile;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures-versions")
        .join(name)
}

fn probes(name: &str) -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string(fixture(&format!("{name}.probes"))).unwrap();
    text.lines()
        .map(|l| {
            (0..l.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&l[i..i + 2], 16).unwrap())
                .collect()
        })
        .collect()
}

#[test]
fn trait_answers_as_key_may_match_for_every_fixture_table() {
    let mut tables = 0;
    for entry in std::fs::read_dir(fixture("")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "sst") {
            continue;
        }
        let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
        if !fixture(&format!("{name}.probes")).exists() {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let sst = SstFile::from_bytes(&bytes[..]).unwrap();
        let probes = probes(&name);
        let want: Vec<bool> = probes.iter().map(|k| sst.key_may_match(k)).collect();
        assert_eq!(sst.contains_many(&probes), want, "{name}");
        let mut out = vec![false; probes.len()];
        sst.contains_many_into(&probes, &mut out);
        assert_eq!(out, want, "{name}");
        let single: Vec<bool> = probes.iter().map(|k| sst.contains(k)).collect();
        assert_eq!(single, want, "{name}");
        let dynamic: &dyn MayContain = &sst;
        assert_eq!((&dynamic).contains_many(&probes), want, "{name}");
        // Owned bytes open the same table.
        let owned = SstFile::from_bytes(bytes).unwrap();
        assert_eq!(owned.contains_many(&probes), want, "{name}");
        tables += 1;
    }
    assert!(tables >= 10, "only {tables} fixture tables with probes");
}

#[test]
fn prefix_may_match_many_answers_key_by_key() {
    let mut asked = 0;
    for name in [
        "v7_8_db_prefix_only_flush",
        "v7_8_db_prefix_only_compaction",
        "v7_8_db_hybrid_flush",
    ] {
        let sst = SstFile::open(fixture(&format!("{name}.sst"))).unwrap();
        let probes = probes(name);
        match sst.prefix_may_match(&probes[0]) {
            Ok(_) => {
                let want: Vec<bool> = probes.iter().map(|k| sst.prefix_may_match(k).unwrap()).collect();
                assert_eq!(sst.prefix_may_match_many(&probes).unwrap(), want, "{name}");
                asked += 1;
            }
            Err(e) => assert_eq!(
                sst.prefix_may_match_many(&probes).unwrap_err().to_string(),
                e.to_string(),
                "{name}"
            ),
        }
    }
    assert!(asked > 0, "no fixture table answered prefix queries");
    // A table without a prefix extractor: the error of `prefix_may_match`.
    let sst = SstFile::open(fixture("v7_8_sst_fastbloom.sst")).unwrap();
    assert!(sst.prefix_may_match(b"k").is_err());
    assert!(sst.prefix_may_match_many(&[b"k"]).is_err());
    assert!(sst.prefix_may_match_many::<&[u8]>(&[]).is_err());
    let sst = SstFile::open(fixture("v7_8_db_prefix_only_flush.sst")).unwrap();
    assert_eq!(
        sst.prefix_may_match_many::<&[u8]>(&[]).unwrap(),
        Vec::<bool>::new()
    );
}
