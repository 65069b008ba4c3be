// What the two C++ policies (the built-in-compatible one and users' custom
// ones) share: the build context they hand to Rust, and how keys cross to
// Rust.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "rocks-bridge/src/ffi.rs.h"
#include "rocksdb/slice.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "table/block_based/filter_policy_internal.h"

namespace rocks_bridge {

inline rust::Slice<const uint8_t> AsRust(const rocksdb::Slice& s) {
  return rust::Slice<const uint8_t>(
      reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// FilterBitsReader::MayMatch for a batch, through a Rust reader's
// `may_match_batch`. Readers are shared by concurrent Gets and MultiGets:
// everything lives on the stack. Keys go to Rust as (address, length)
// pairs, in chunks of MultiGet's batch size.
template <class RustReader>
void MayMatchInChunks(const RustReader& reader, int num_keys,
                      rocksdb::Slice** keys, bool* may_match) {
  constexpr int kChunk = 32;
  size_t addresses[kChunk];
  size_t lengths[kChunk];
  uint8_t answers[kChunk];
  for (int begin = 0; begin < num_keys; begin += kChunk) {
    int n = std::min(kChunk, num_keys - begin);
    for (int i = 0; i < n; ++i) {
      addresses[i] = reinterpret_cast<size_t>(keys[begin + i]->data());
      lengths[i] = keys[begin + i]->size();
    }
    reader.may_match_batch(
        rust::Slice<const size_t>(addresses, static_cast<size_t>(n)),
        rust::Slice<const size_t>(lengths, static_cast<size_t>(n)),
        rust::Slice<uint8_t>(answers, static_cast<size_t>(n)));
    for (int i = 0; i < n; ++i) may_match[begin + i] = answers[i] != 0;
  }
}

// A filter RocksDB takes ownership of: `bytes` copied into `*buf` (never a
// null buffer, even for an empty filter).
inline rocksdb::Slice HandToRocksDb(const rust::Vec<uint8_t>& bytes,
                                    std::unique_ptr<const char[]>* buf) {
  char* data = new char[std::max<size_t>(bytes.size(), 1)];
  std::copy(bytes.begin(), bytes.end(), data);
  buf->reset(data);
  return rocksdb::Slice(data, bytes.size());
}

// A FilterBitsBuilder over a Rust builder (`RustBuilder` is the cxx type
// of either bridge): the size estimates RocksDB asks for, answered by Rust.
// Subclasses add keys and finish.
template <class RustBuilder>
class RustSizedBuilder : public rocksdb::FilterBitsBuilder {
 public:
  explicit RustSizedBuilder(rust::Box<RustBuilder> inner)
      : inner_(std::move(inner)) {}
  size_t EstimateEntriesAdded() override {
    return inner_->estimate_entries_added();
  }
  size_t ApproximateNumEntries(size_t bytes) override {
    return inner_->approximate_num_entries(bytes);
  }
  size_t CalculateSpace(size_t num_entries) override {
    return inner_->calculate_space(num_entries);
  }
  double EstimatedFpRate(size_t num_entries, size_t bytes) override {
    return inner_->estimated_fp_rate(num_entries, bytes);
  }

 protected:
  rust::Box<RustBuilder> inner_;
};

inline BuildContext ToBuildContext(
    const rocksdb::FilterBuildingContext& context) {
  BuildContext ctx;
  ctx.format_version = context.table_options.format_version;
  ctx.compaction_style = static_cast<int32_t>(context.compaction_style);
  ctx.reason = context.reason;
  ctx.level_at_creation = context.level_at_creation;
  ctx.optimize_filters_for_memory =
      context.table_options.optimize_filters_for_memory;
  ctx.detect_filter_construct_corruption =
      context.table_options.detect_filter_construct_corruption;
  return ctx;
}

}  // namespace rocks_bridge
