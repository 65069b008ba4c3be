//! Fixtures with recorded answers: `NAME.sst`, and beside it `NAME.probes`
//! (one hex key a line) and `NAME.expected` (the writing RocksDB's own answer
//! to a `Get` of each probe: 1 "may match", 0 when its filter said no).

use ribbon_sst::SstFile;
use std::path::Path;

/// One SST file and the answers its writer gave.
pub struct Recorded {
    pub name: String,
    pub sst: SstFile,
    pub probes: Vec<Vec<u8>>,
    pub expected: Vec<bool>,
}

/// The bytes of a hex line.
pub fn hex(line: &str) -> Vec<u8> {
    (0..line.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&line[i..i + 2], 16).unwrap())
        .collect()
}

impl Recorded {
    /// Opens `dir/NAME.sst` and reads its probes and answers.
    pub fn open(dir: &Path, name: &str) -> Self {
        let read = |ext: &str| std::fs::read_to_string(dir.join(format!("{name}.{ext}"))).unwrap();
        let probes: Vec<Vec<u8>> = read("probes").lines().map(hex).collect();
        let expected: Vec<bool> = read("expected").lines().map(|l| l == "1").collect();
        assert_eq!(probes.len(), expected.len(), "{name}");
        let sst = SstFile::open(dir.join(format!("{name}.sst"))).unwrap_or_else(|e| panic!("{name}: {e}"));
        Self {
            name: name.to_string(),
            sst,
            probes,
            expected,
        }
    }

    /// The reader gives every recorded answer, batched and one by one, and
    /// the writer's filter said "definitely not" to most absent probes (so
    /// the check is not vacuous).
    pub fn check_answers(&self) {
        let got = self.sst.key_may_match_many(&self.probes);
        for (i, (g, e)) in got.iter().zip(&self.expected).enumerate() {
            assert_eq!(
                g,
                e,
                "{}: probe {i} {:?}",
                self.name,
                String::from_utf8_lossy(&self.probes[i])
            );
        }
        let single: Vec<bool> = self.probes.iter().map(|p| self.sst.key_may_match(p)).collect();
        assert_eq!(single, got, "{}", self.name);
        let negatives = self.expected.iter().filter(|&&e| !e).count();
        assert!(negatives > self.probes.len() / 3, "{}: {negatives}", self.name);
    }

    /// Checks every block checksum (more than `min_blocks` blocks) and
    /// every key against the filter; the filter's report.
    pub fn verify(&self, min_blocks: usize) -> ribbon_sst::VerifyReport {
        let blocks = self
            .sst
            .verify_checksums()
            .unwrap_or_else(|e| panic!("{}: {e}", self.name));
        assert!(blocks > min_blocks, "{}: {blocks} blocks", self.name);
        self.sst
            .verify_filter()
            .unwrap_or_else(|e| panic!("{}: {e}", self.name))
    }
}
