//! `ribbon_sst::SstFile` on arbitrary bytes, through every call the
//! `ribbon sst` commands make: open, `info`, key, batch and prefix
//! queries, the partitions `dump-filter` writes, block listing, and both
//! verifications. Nothing panics, every error is one line, and the work
//! stays within the read budget (run under `-rss_limit_mb` and a timeout).
//!
//! Built by cargo-fuzz (`cfg(fuzzing)`), the reader accepts every block
//! checksum, so mutations reach the parsers behind them.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ribbon_sst::{Error, Filter, SstFile, TableInfo};

fn one_line(e: &Error) {
    let msg = e.to_string();
    assert!(!msg.is_empty() && !msg.contains('\n'), "{msg:?}");
}

fuzz_target!(|data: &[u8]| {
    let sst = match SstFile::from_bytes(data.to_vec()) {
        Ok(s) => s,
        Err(e) => return one_line(&e),
    };
    let mut probes: Vec<Vec<u8>> = vec![Vec::new(), b"a".to_vec(), b"key000001".to_vec()];
    probes.extend(data.chunks(13).take(16).map(<[u8]>::to_vec));
    let single: Vec<bool> = probes.iter().map(|k| sst.key_may_match(k)).collect();
    assert_eq!(sst.key_may_match_many(&probes), single);
    for p in &probes {
        if let Err(e) = sst.prefix_may_match(p) {
            one_line(&e);
        }
    }
    let _ = TableInfo::new(&sst).family();
    let _ = sst.filter().summary().kind_label();
    if let Filter::Partitioned { partitions, .. } = sst.filter() {
        let _: usize = partitions.iter().map(|p| p.contents.len()).sum();
    }
    for result in [sst.blocks().map(|b| b.len()), sst.verify_checksums()] {
        if let Err(e) = result {
            one_line(&e);
        }
    }
    match sst.verify_filter() {
        Ok(report) => assert!(report.misses.len() as u64 <= report.miss_count),
        Err(e) => one_line(&e),
    }
});
