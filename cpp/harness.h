// The native reference harness: RocksDB's own built-in filter builders and
// readers, driven from Rust through cxx (see src/harness.rs).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "rocksdb/rocksdb_namespace.h"
#include "rocksdb/types.h"
#include "rust/cxx.h"

namespace ROCKSDB_NAMESPACE {
class FilterBitsBuilder;
class FilterBitsReader;
class FilterPolicy;
class Slice;
struct BlockBasedTableOptions;
}  // namespace ROCKSDB_NAMESPACE

namespace ribbon_compat {

// One RocksDB FilterBitsBuilder from a policy string, a format_version and
// the table-file context (RocksDB's TableFileCreationReason; level as
// FilterBuildingContext::level_at_creation).
class NativeBuilder {
 public:
  NativeBuilder(std::shared_ptr<const rocksdb::FilterPolicy> policy,
                std::unique_ptr<rocksdb::BlockBasedTableOptions> table_options,
                rocksdb::FilterBitsBuilder* builder);
  ~NativeBuilder();

  // False when the policy builds no filter at all (0 bits per key).
  bool has_builder() const;
  void add_key(rust::Slice<const uint8_t> key);
  void add_key_slice(const rocksdb::Slice& key);
  void add_key_and_alt(rust::Slice<const uint8_t> key,
                       rust::Slice<const uint8_t> alt);
  size_t estimate_entries_added();
  // The filter block contents; the builder can be used again afterwards.
  rust::Vec<uint8_t> finish();
  size_t calculate_space(size_t num_entries);
  size_t approximate_num_entries(size_t bytes);
  double estimated_fp_rate(size_t num_entries, size_t bytes);

 private:
  std::shared_ptr<const rocksdb::FilterPolicy> policy_;
  std::unique_ptr<rocksdb::BlockBasedTableOptions> table_options_;
  std::unique_ptr<rocksdb::FilterBitsBuilder> builder_;
};

// RocksDB's reader for a filter block (it owns a copy of the bytes).
class NativeReader {
 public:
  // The reader `policy` creates, or RocksDB's built-in dispatch when null.
  NativeReader(std::string contents,
               std::shared_ptr<const rocksdb::FilterPolicy> policy);
  ~NativeReader();
  bool may_match(rust::Slice<const uint8_t> key) const;
  // Keys are concatenated in `keys`; key i is keys[ends[i-1] .. ends[i]].
  // At most 32 keys per call (MultiGet's batch size); `out` gets 0 or 1.
  void may_match_batch(rust::Slice<const uint8_t> keys,
                       rust::Slice<const uint32_t> ends,
                       rust::Slice<uint8_t> out) const;
  // For benchmarks: how many of the keys (packed as above, any number,
  // 64-bit ends) may match, queried one by one or in MultiGet batches of 32,
  // in one call so that crossing into C++ costs nothing per key.
  size_t count_matches(rust::Slice<const uint8_t> keys,
                       rust::Slice<const uint64_t> ends, bool batched) const;

 private:
  std::string contents_;
  std::shared_ptr<const rocksdb::FilterPolicy> policy_;
  std::unique_ptr<rocksdb::FilterBitsReader> reader_;
};

// optimize_filters_for_memory: BlockBasedTableOptions' setting (default
// true), which changes how FastLocalBloom chooses its probe count.
std::unique_ptr<NativeBuilder> new_native_builder(
    rust::Str policy, int32_t format_version,
    rocksdb::TableFileCreationReason reason, int32_t level,
    bool optimize_filters_for_memory);
std::unique_ptr<NativeReader> new_native_reader(
    rust::Slice<const uint8_t> contents);
// The reader of the policy `policy` names (any id CreateFromString accepts,
// including registered custom policies).
std::unique_ptr<NativeReader> new_policy_reader(
    rust::Str policy, rust::Slice<const uint8_t> contents);

// For benchmarks: a whole filter from packed keys in one call.
rust::Vec<uint8_t> native_build_packed(rust::Str policy, int32_t format_version,
                                       rust::Slice<const uint8_t> keys,
                                       rust::Slice<const uint64_t> ends);

uint64_t native_hash64(rust::Slice<const uint8_t> data, uint64_t seed);
uint64_t native_slice_hash64(rust::Slice<const uint8_t> data);
uint32_t native_bloom_hash(rust::Slice<const uint8_t> data);
uint32_t native_hash32(rust::Slice<const uint8_t> data, uint32_t seed);

// ribbon_config.h's BandingConfigHelper1MaybeSupported, for every combination
// RocksDB instantiates. cfc: 0 = kOneIn2, 1 = kOneIn20, 2 = kOneIn1000.
// Returns false for a combination RocksDB does not provide.
bool native_ribbon_num_slots(uint32_t cfc, uint32_t coeff_bits, bool smash,
                             bool homogeneous, uint32_t num_to_add,
                             uint32_t& out);
bool native_ribbon_num_to_add(uint32_t cfc, uint32_t coeff_bits, bool smash,
                              bool homogeneous, uint32_t num_slots,
                              uint32_t& out);

}  // namespace ribbon_compat
