// What the two C++ policies (the built-in-compatible one and users' custom
// ones) share: the build context they hand to Rust, and how keys cross to
// Rust.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "rocks-bridge/src/ffi.rs.h"
#include "rocksdb/slice.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"

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
