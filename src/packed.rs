//! Keys packed back to back in one buffer, and building a filter from them
//! in Rust: what the benchmarks and the report time on both sides.

use ribbon::rocksdb::builder::FilterBuilder;
use ribbon::rocksdb::policy::{BuildContext, FilterPolicy};

/// Keys packed in one buffer, for benchmarks: key `i` is
/// `bytes[ends[i-1]..ends[i]]`.
#[derive(Debug, Clone, Default)]
pub struct PackedKeys {
    /// All key bytes, back to back.
    pub bytes: Vec<u8>,
    /// End offset of each key.
    pub ends: Vec<u64>,
}

impl PackedKeys {
    /// Packs `keys`.
    pub fn new<K: AsRef<[u8]>>(keys: &[K]) -> Self {
        let mut p = PackedKeys::default();
        for k in keys {
            p.bytes.extend_from_slice(k.as_ref());
            p.ends.push(p.bytes.len() as u64);
        }
        p
    }
    /// The keys in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let mut begin = 0usize;
        self.ends.iter().map(move |&end| {
            let k = &self.bytes[begin..end as usize];
            begin = end as usize;
            k
        })
    }
}

/// The pure-Rust crate builds a whole filter from packed keys (SstFileWriter
/// context, `format_version`), from raw keys to finished bytes.
pub fn build_rust(policy: &str, format_version: i32, keys: &PackedKeys) -> Vec<u8> {
    let policy: FilterPolicy = policy.parse().expect("valid policy");
    let mut b =
        FilterBuilder::new(&policy, &BuildContext::sst_file_writer(format_version)).expect("a filter");
    for k in keys.iter() {
        b.add_key(k);
    }
    b.finish()
}
