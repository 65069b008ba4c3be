//! The conformance vector loader of `ribbon conformance`
//! (`ribbon-cli/src/conformance/vectors.rs`, compiled here from its source
//! with the CLI's error and input modules): any vector set is loaded or
//! refused with a one-line error, without a panic, reading nothing outside
//! its directory.
//!
//! Input: files separated by NUL bytes, in this order: `manifest.tsv`,
//! `cases.tsv`, `sst.tsv`, `probes.hex`, `keys/k.hex`, `answers/a.txt`,
//! `filters/f.bin`. In the manifest, a size of `auto` and a digest of
//! `auto` are replaced by the named file's real size and SHA-256 (when it
//! is one of those, inside the directory), so that mutations get past the
//! digests to the rows.

#![no_main]
#![allow(dead_code)]

#[path = "../../ribbon-cli/src/error.rs"]
mod error;
#[path = "../../ribbon-cli/src/escape.rs"]
mod escape;
#[path = "../../ribbon-cli/src/input.rs"]
mod input;
#[path = "../../ribbon-cli/src/conformance/vectors.rs"]
mod vectors;

use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};

const NAMES: [&str; 7] = [
    "manifest.tsv",
    "cases.tsv",
    "sst.tsv",
    "probes.hex",
    "keys/k.hex",
    "answers/a.txt",
    "filters/f.bin",
];

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("ribbon-fuzz-conformance-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["keys", "answers", "filters"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let parts: Vec<&[u8]> = data.splitn(NAMES.len(), |&b| b == 0).collect();
    for (name, part) in NAMES.iter().zip(&parts).skip(1) {
        std::fs::write(dir.join(name), part).unwrap();
    }
    let manifest = String::from_utf8_lossy(parts[0]);
    let fixed: Vec<String> = manifest
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            let Some(i) = NAMES.iter().position(|n| f.first() == Some(n)).filter(|_| f.len() == 3) else {
                return line.to_string();
            };
            let bytes = parts.get(i).copied().unwrap_or(&[]);
            let size = if f[1] == "auto" { bytes.len().to_string() } else { f[1].to_string() };
            let digest = if f[2] == "auto" {
                Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
            } else {
                f[2].to_string()
            };
            format!("{}\t{size}\t{digest}", f[0])
        })
        .collect();
    std::fs::write(dir.join("manifest.tsv"), fixed.join("\n")).unwrap();
    match vectors::Vectors::load(&dir) {
        Ok(v) => {
            for c in &v.filters {
                assert!(c.keys().len() <= c.all_keys.len());
                assert!(c.filter_path.starts_with(&dir));
            }
        }
        Err(e) => assert_eq!(e.to_string().lines().count(), 1, "{e}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
});
