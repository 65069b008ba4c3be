//! The native reference harness: RocksDB's own built-in `FilterBitsBuilder`
//! and `FilterBitsReader`, in this process, through cxx (`cpp/harness.cc`).

use crate::packed::PackedKeys;

/// Why a table file is being written, as far as filter policies look at
/// it: the policy crate's own type (`Misc`, `Flush`, `Compaction`), passed
/// to C++ as RocksDB's `TableFileCreationReason` (one definition, shared
/// with `rocks-bridge`).
pub use ribbon::rocksdb::policy::CreationReason as Reason;

#[cxx::bridge(namespace = "ribbon_compat")]
mod ffi {
    // RocksDB's creation reason, as rocks-bridge declares and checks it.
    #[namespace = "rocksdb"]
    extern "C++" {
        include!("rocksdb/types.h");
        type TableFileCreationReason = rocks_bridge::TableFileCreationReason;
    }

    // C++ types and functions.
    unsafe extern "C++" {
        include!("ribbon-compat/cpp/harness.h");

        type NativeBuilder;
        type NativeReader;

        fn new_native_builder(
            policy: &str,
            format_version: i32,
            reason: TableFileCreationReason,
            level: i32,
            optimize_filters_for_memory: bool,
        ) -> Result<UniquePtr<NativeBuilder>>;
        fn has_builder(self: &NativeBuilder) -> bool;
        fn add_key(self: Pin<&mut NativeBuilder>, key: &[u8]);
        fn add_key_and_alt(self: Pin<&mut NativeBuilder>, key: &[u8], alt: &[u8]);
        fn estimate_entries_added(self: Pin<&mut NativeBuilder>) -> usize;
        fn finish(self: Pin<&mut NativeBuilder>) -> Result<Vec<u8>>;
        fn calculate_space(self: Pin<&mut NativeBuilder>, num_entries: usize) -> usize;
        fn approximate_num_entries(self: Pin<&mut NativeBuilder>, bytes: usize) -> usize;
        fn estimated_fp_rate(self: Pin<&mut NativeBuilder>, num_entries: usize, bytes: usize) -> f64;

        fn new_native_reader(contents: &[u8]) -> UniquePtr<NativeReader>;
        fn new_policy_reader(policy: &str, contents: &[u8]) -> Result<UniquePtr<NativeReader>>;
        fn may_match(self: &NativeReader, key: &[u8]) -> bool;
        fn may_match_batch(self: &NativeReader, keys: &[u8], ends: &[u32], out: &mut [u8]) -> Result<()>;

        fn count_matches(self: &NativeReader, keys: &[u8], ends: &[u64], batched: bool) -> usize;
        fn native_build_packed(
            policy: &str,
            format_version: i32,
            keys: &[u8],
            ends: &[u64],
        ) -> Result<Vec<u8>>;

        fn native_hash64(data: &[u8], seed: u64) -> u64;
        fn native_slice_hash64(data: &[u8]) -> u64;
        fn native_bloom_hash(data: &[u8]) -> u32;
        fn native_hash32(data: &[u8], seed: u32) -> u32;
        fn native_ribbon_num_slots(
            cfc: u32,
            coeff_bits: u32,
            smash: bool,
            homogeneous: bool,
            num_to_add: u32,
            out: &mut u32,
        ) -> bool;
        fn native_ribbon_num_to_add(
            cfc: u32,
            coeff_bits: u32,
            smash: bool,
            homogeneous: bool,
            num_slots: u32,
            out: &mut u32,
        ) -> bool;
    }
}

/// A RocksDB filter builder for one policy string, format_version and
/// table-file context.
pub struct NativeBuilder(cxx::UniquePtr<ffi::NativeBuilder>);

impl NativeBuilder {
    /// RocksDB's builder for `policy` (any string `FilterPolicy::CreateFromString`
    /// accepts), as the block-based table builder would create it for a file
    /// of `format_version` written for `reason` at `level` (-1: unknown).
    /// Table options are RocksDB's defaults (`optimize_filters_for_memory`
    /// on).
    pub fn new(policy: &str, format_version: i32, reason: Reason, level: i32) -> Result<Self, String> {
        Self::with_optimize_filters_for_memory(policy, format_version, reason, level, true)
    }

    /// As [`NativeBuilder::new`] with an explicit
    /// `optimize_filters_for_memory`.
    pub fn with_optimize_filters_for_memory(
        policy: &str,
        format_version: i32,
        reason: Reason,
        level: i32,
        optimize_filters_for_memory: bool,
    ) -> Result<Self, String> {
        ffi::new_native_builder(
            policy,
            format_version,
            reason.into(),
            level,
            optimize_filters_for_memory,
        )
        .map(Self)
        .map_err(|e| e.what().to_string())
    }

    /// The builder for an SstFileWriter (`reason` misc, level -1).
    pub fn for_sst_file_writer(policy: &str, format_version: i32) -> Result<Self, String> {
        Self::new(policy, format_version, Reason::Misc, -1)
    }

    fn pin(&mut self) -> core::pin::Pin<&mut ffi::NativeBuilder> {
        self.0.pin_mut()
    }

    /// False when the policy writes no filter at all (0 bits per key).
    pub fn has_builder(&self) -> bool {
        self.0.has_builder()
    }
    /// `FilterBitsBuilder::AddKey`.
    pub fn add_key(&mut self, key: &[u8]) {
        self.pin().add_key(key)
    }
    /// `FilterBitsBuilder::AddKeyAndAlt`.
    pub fn add_key_and_alt(&mut self, key: &[u8], alt: &[u8]) {
        self.pin().add_key_and_alt(key, alt)
    }
    /// `FilterBitsBuilder::EstimateEntriesAdded`.
    pub fn estimate_entries_added(&mut self) -> usize {
        self.pin().estimate_entries_added()
    }
    /// `FilterBitsBuilder::Finish`: the filter block contents.
    pub fn finish(&mut self) -> Vec<u8> {
        self.pin().finish().expect("RocksDB filter Finish failed")
    }
    /// `FilterBitsBuilder::CalculateSpace`.
    pub fn calculate_space(&mut self, num_entries: usize) -> usize {
        self.pin().calculate_space(num_entries)
    }
    /// `FilterBitsBuilder::ApproximateNumEntries`.
    pub fn approximate_num_entries(&mut self, bytes: usize) -> usize {
        self.pin().approximate_num_entries(bytes)
    }
    /// `FilterBitsBuilder::EstimatedFpRate`.
    pub fn estimated_fp_rate(&mut self, num_entries: usize, bytes: usize) -> f64 {
        self.pin().estimated_fp_rate(num_entries, bytes)
    }

    /// Builds a filter from `keys` in one call.
    pub fn build<K: AsRef<[u8]>>(policy: &str, format_version: i32, keys: &[K]) -> Vec<u8> {
        let mut b = Self::for_sst_file_writer(policy, format_version).expect("valid policy");
        for k in keys {
            b.add_key(k.as_ref());
        }
        b.finish()
    }
}

/// RocksDB's reader for a filter block, as `BuiltinFilterPolicy` creates it.
pub struct NativeReader(cxx::UniquePtr<ffi::NativeReader>);

impl NativeReader {
    /// RocksDB's built-in reader over a copy of `contents`.
    pub fn new(contents: &[u8]) -> Self {
        Self(ffi::new_native_reader(contents))
    }
    /// The reader that the policy `policy` (any id RocksDB's
    /// `FilterPolicy::CreateFromString` accepts, registered custom policies
    /// included) creates over a copy of `contents`.
    pub fn for_policy(policy: &str, contents: &[u8]) -> Result<Self, String> {
        ffi::new_policy_reader(policy, contents)
            .map(Self)
            .map_err(|e| e.what().to_string())
    }
    /// `FilterBitsReader::MayMatch` for one key.
    pub fn may_match(&self, key: &[u8]) -> bool {
        self.0.may_match(key)
    }
    /// The batched `MayMatch` (MultiGet), in batches of at most 32 keys.
    pub fn may_match_batch<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<bool> {
        let mut out = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(32) {
            let mut flat = Vec::new();
            let mut ends = Vec::with_capacity(chunk.len());
            for k in chunk {
                flat.extend_from_slice(k.as_ref());
                ends.push(flat.len() as u32);
            }
            let mut answers = [0u8; 32];
            self.0
                .may_match_batch(&flat, &ends, &mut answers[..chunk.len()])
                .expect("valid batch");
            out.extend(answers[..chunk.len()].iter().map(|&a| a != 0));
        }
        out
    }
}

/// RocksDB builds a whole filter from packed keys in one call (SstFileWriter
/// context), so that no per-key crossing into C++ is timed.
pub fn build_packed(policy: &str, format_version: i32, keys: &PackedKeys) -> Vec<u8> {
    ffi::native_build_packed(policy, format_version, &keys.bytes, &keys.ends).expect("valid policy")
}

impl NativeReader {
    /// How many of `keys` may match, queried one by one or in MultiGet
    /// batches of 32, all inside C++.
    pub fn count_matches(&self, keys: &PackedKeys, batched: bool) -> usize {
        self.0.count_matches(&keys.bytes, &keys.ends, batched)
    }
}

/// RocksDB's `Hash64(data, n, seed)`.
pub fn hash64(data: &[u8], seed: u64) -> u64 {
    ffi::native_hash64(data, seed)
}
/// RocksDB's `GetSliceHash64`.
pub fn slice_hash64(data: &[u8]) -> u64 {
    ffi::native_slice_hash64(data)
}
/// RocksDB's `BloomHash`.
pub fn bloom_hash(data: &[u8]) -> u32 {
    ffi::native_bloom_hash(data)
}
/// RocksDB's 32-bit `Hash(data, n, seed)`.
pub fn hash32(data: &[u8], seed: u32) -> u32 {
    ffi::native_hash32(data, seed)
}
/// RocksDB's `BandingConfigHelper1MaybeSupported::GetNumSlots`, or `None`
/// for a shape RocksDB does not instantiate. `cfc`: 0 = one in 2,
/// 1 = one in 20, 2 = one in 1000.
pub fn ribbon_num_slots(cfc: u32, coeff_bits: u32, smash: bool, homogeneous: bool, n: u32) -> Option<u32> {
    let mut out = 0;
    ffi::native_ribbon_num_slots(cfc, coeff_bits, smash, homogeneous, n, &mut out).then_some(out)
}
/// RocksDB's `BandingConfigHelper1MaybeSupported::GetNumToAdd`, as
/// [`ribbon_num_slots`].
pub fn ribbon_num_to_add(cfc: u32, coeff_bits: u32, smash: bool, homogeneous: bool, n: u32) -> Option<u32> {
    let mut out = 0;
    ffi::native_ribbon_num_to_add(cfc, coeff_bits, smash, homogeneous, n, &mut out).then_some(out)
}
