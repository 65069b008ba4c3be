//! The standalone Ribbon file format (`ribbon::standalone`): any bytes are
//! rejected or read without a panic, with and without checksum
//! verification, and batch queries answer as single queries do.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ribbon::standalone::RibbonRef;

fuzz_target!(|data: &[u8]| {
    let _ = RibbonRef::from_bytes(data);
    // The checksums would stop almost every mutation: go past them.
    let Ok(filter) = RibbonRef::from_bytes_unverified(data) else {
        return;
    };
    let _ = (
        filter.bits_per_key(),
        filter.expected_fp_rate(),
        filter.num_keys(),
    );
    let keys: Vec<&[u8]> = data.chunks(7).take(64).collect();
    let single: Vec<bool> = keys.iter().map(|k| filter.contains(k)).collect();
    assert_eq!(filter.contains_many(&keys), single);
    let _ = filter.to_rocksdb();
});
