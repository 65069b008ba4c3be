// RocksDB's filter-construction machinery seen from outside the builders
// (see src/construction.rs): a block cache that records every charge made
// for CacheEntryRole::kFilterConstruction, and a filter policy wrapper that
// marks when filters are finished and post-verified, and can corrupt each
// finished filter before RocksDB post-verifies it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "rust/cxx.h"

namespace ribbon_compat {

struct ChargeEvent;
enum class ChargeEventKind : uint8_t;
class RecordingCache;

// Owns the recording block cache installed by `install_recording_cache`.
class ChargeRecorder {
 public:
  explicit ChargeRecorder(std::shared_ptr<RecordingCache> cache);
  ~ChargeRecorder();
  // The kFilterConstruction inserts and releases so far, in order.
  rust::Vec<ChargeEvent> events() const;
  // The cache's usage now (every entry, charges included).
  size_t usage() const;
  void clear_events();

 private:
  std::shared_ptr<RecordingCache> cache_;
};

// Gives the block-based table factory of a `rocksdb_options_t*` (an address)
// a new LRU block cache of `capacity` bytes in one shard, with
// `strict_capacity_limit` as given, that records the kFilterConstruction
// charges; `charge` sets cache_usage_options' kFilterConstruction override
// (enabled, or disabled). Throws when the factory is not block-based.
std::unique_ptr<ChargeRecorder> install_recording_cache(size_t options_address,
                                                        size_t capacity,
                                                        bool strict,
                                                        bool charge);

// Wraps the filter policy of the block-based table factory of a
// `rocksdb_options_t*`. Its builders mark, in the table's recording cache
// when it has one, each moment a filter is finished and each moment it is
// post-verified; with `tamper`, every filter they finish has its first 8
// bytes zeroed before RocksDB calls MaybePostVerify (what RocksDB's
// "XXPH3FilterBitsBuilder::Finish::TamperFilter" sync point does).
void wrap_filter_policy(size_t options_address, bool tamper);

}  // namespace ribbon_compat
