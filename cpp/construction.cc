// See construction.h. Everything here is RocksDB's public Cache and
// FilterPolicy interfaces plus FilterBitsBuilder (filter_policy_internal.h),
// so it drives RocksDB's built-in policies and the Rust policy alike.
#include "ribbon-compat/cpp/construction.h"

#include <cstring>
#include <mutex>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "ribbon-compat/src/construction.rs.h"
#include "rocksdb/advanced_cache.h"
#include "rocksdb/cache.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/options.h"
#include "rocksdb/table.h"
#include "table/block_based/filter_policy_internal.h"

// The C API's options wrapper (db/c.cc defines it identically; the C header
// only declares it). rust-rocksdb's `Options` owns one.
struct rocksdb_options_t {
  rocksdb::Options rep;
};

namespace ribbon_compat {

using rocksdb::Slice;
using rocksdb::Status;

// A block cache that logs the inserts and releases of the dummy entries
// CacheReservationManager makes for kFilterConstruction, with the cache's
// usage after each.
class RecordingCache : public rocksdb::CacheWrapper {
 public:
  explicit RecordingCache(std::shared_ptr<rocksdb::Cache> target)
      : CacheWrapper(std::move(target)) {}
  const char* Name() const override { return "RecordingCache"; }

  Status Insert(const Slice& key, ObjectPtr value,
                const CacheItemHelper* helper, size_t charge,
                Handle** handle = nullptr,
                Priority priority = Priority::LOW,
                const Slice& compressed = Slice(),
                rocksdb::CompressionType type =
                    rocksdb::CompressionType::kNoCompression) override {
    Status s = target_->Insert(key, value, helper, charge, handle, priority,
                               compressed, type);
    if (helper &&
        helper->role == rocksdb::CacheEntryRole::kFilterConstruction) {
      std::lock_guard<std::mutex> lock(mu_);
      if (s.ok() && handle && *handle) charged_.insert(*handle);
      events_.push_back(ChargeEvent{ChargeEventKind::Insert, charge, s.ok(),
                                    target_->GetUsage()});
    }
    return s;
  }

  using rocksdb::Cache::Release;
  bool Release(Handle* handle, bool erase_if_last_ref = false) override {
    size_t charge = 0;
    bool ours = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ours = charged_.erase(handle) > 0;
    }
    if (ours) charge = target_->GetCharge(handle);
    bool erased = target_->Release(handle, erase_if_last_ref);
    if (ours) {
      std::lock_guard<std::mutex> lock(mu_);
      events_.push_back(ChargeEvent{ChargeEventKind::Release, charge, true,
                                    target_->GetUsage()});
    }
    return erased;
  }

  // Logs a moment of the builder's life with the usage then.
  void Mark(ChargeEventKind kind) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(ChargeEvent{kind, 0, true, target_->GetUsage()});
  }

  rust::Vec<ChargeEvent> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    rust::Vec<ChargeEvent> out;
    for (const ChargeEvent& e : events_) out.push_back(e);
    return out;
  }
  void clear_events() {
    std::lock_guard<std::mutex> lock(mu_);
    events_.clear();
  }

 private:
  mutable std::mutex mu_;
  std::vector<ChargeEvent> events_;
  std::unordered_set<Handle*> charged_;
};

ChargeRecorder::ChargeRecorder(std::shared_ptr<RecordingCache> cache)
    : cache_(std::move(cache)) {}
ChargeRecorder::~ChargeRecorder() = default;
rust::Vec<ChargeEvent> ChargeRecorder::events() const {
  return cache_->events();
}
size_t ChargeRecorder::usage() const { return cache_->GetUsage(); }
void ChargeRecorder::clear_events() { cache_->clear_events(); }

namespace {

rocksdb::BlockBasedTableOptions TableOptionsCopy(size_t options_address) {
  auto* opts = reinterpret_cast<rocksdb_options_t*>(options_address);
  rocksdb::BlockBasedTableOptions* table =
      opts && opts->rep.table_factory
          ? opts->rep.table_factory
                ->GetOptions<rocksdb::BlockBasedTableOptions>()
          : nullptr;
  if (!table) {
    throw std::invalid_argument("the table factory is not block-based");
  }
  return *table;
}

// A new factory: `Options` copies share their table factory.
void SetTableOptions(size_t options_address,
                     const rocksdb::BlockBasedTableOptions& table) {
  auto* opts = reinterpret_cast<rocksdb_options_t*>(options_address);
  opts->rep.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
}

// Wraps a builder: marks in the recording cache (if any) when a filter is
// finished and when it is post-verified, and with `tamper` zeroes the first
// 8 bytes of each finished filter.
class ObservingBuilder : public rocksdb::FilterBitsBuilder {
 public:
  ObservingBuilder(rocksdb::FilterBitsBuilder* inner, bool tamper,
                   std::shared_ptr<RecordingCache> cache)
      : inner_(inner), tamper_(tamper), cache_(std::move(cache)) {}
  void AddKey(const Slice& key) override { inner_->AddKey(key); }
  void AddKeyAndAlt(const Slice& key, const Slice& alt) override {
    inner_->AddKeyAndAlt(key, alt);
  }
  size_t EstimateEntriesAdded() override {
    return inner_->EstimateEntriesAdded();
  }
  using rocksdb::FilterBitsBuilder::Finish;
  Slice Finish(std::unique_ptr<const char[]>* buf) override {
    return Finish(buf, nullptr);
  }
  Slice Finish(std::unique_ptr<const char[]>* buf, Status* status) override {
    Slice filter = inner_->Finish(buf, status);
    if (cache_) cache_->Mark(ChargeEventKind::Finished);
    if (!tamper_ || (status && !status->ok()) || filter.size() < 8 + 5) {
      return filter;
    }
    char* copy = new char[filter.size()];
    std::memcpy(copy, filter.data(), filter.size());
    std::memset(copy, 0, 8);
    size_t size = filter.size();
    buf->reset(copy);
    return Slice(copy, size);
  }
  Status MaybePostVerify(const Slice& filter_content) override {
    if (cache_) cache_->Mark(ChargeEventKind::PostVerify);
    return inner_->MaybePostVerify(filter_content);
  }
  size_t ApproximateNumEntries(size_t bytes) override {
    return inner_->ApproximateNumEntries(bytes);
  }
  size_t CalculateSpace(size_t num_entries) override {
    return inner_->CalculateSpace(num_entries);
  }
  double EstimatedFpRate(size_t num_entries, size_t bytes) override {
    return inner_->EstimatedFpRate(num_entries, bytes);
  }

 private:
  std::unique_ptr<rocksdb::FilterBitsBuilder> inner_;
  bool tamper_;
  std::shared_ptr<RecordingCache> cache_;
};

class ObservingPolicy : public rocksdb::FilterPolicy {
 public:
  ObservingPolicy(std::shared_ptr<const rocksdb::FilterPolicy> inner,
                  bool tamper, std::shared_ptr<RecordingCache> cache)
      : inner_(std::move(inner)), tamper_(tamper), cache_(std::move(cache)) {}
  const char* Name() const override { return inner_->Name(); }
  const char* CompatibilityName() const override {
    return inner_->CompatibilityName();
  }
  rocksdb::FilterBitsBuilder* GetBuilderWithContext(
      const rocksdb::FilterBuildingContext& context) const override {
    rocksdb::FilterBitsBuilder* inner = inner_->GetBuilderWithContext(context);
    return inner ? new ObservingBuilder(inner, tamper_, cache_) : nullptr;
  }
  rocksdb::FilterBitsReader* GetFilterBitsReader(
      const Slice& contents) const override {
    return inner_->GetFilterBitsReader(contents);
  }

 private:
  std::shared_ptr<const rocksdb::FilterPolicy> inner_;
  bool tamper_;
  std::shared_ptr<RecordingCache> cache_;
};

}  // namespace

std::unique_ptr<ChargeRecorder> install_recording_cache(size_t options_address,
                                                        size_t capacity,
                                                        bool strict,
                                                        bool charge) {
  rocksdb::BlockBasedTableOptions table = TableOptionsCopy(options_address);
  rocksdb::LRUCacheOptions cache_options;
  cache_options.capacity = capacity;
  cache_options.num_shard_bits = 0;
  cache_options.strict_capacity_limit = strict;
  auto cache = std::make_shared<RecordingCache>(cache_options.MakeSharedCache());
  table.block_cache = cache;
  table.no_block_cache = false;
  table.cache_usage_options.options_overrides[
      rocksdb::CacheEntryRole::kFilterConstruction] = {
      charge ? rocksdb::CacheEntryRoleOptions::Decision::kEnabled
             : rocksdb::CacheEntryRoleOptions::Decision::kDisabled};
  SetTableOptions(options_address, table);
  return std::make_unique<ChargeRecorder>(std::move(cache));
}

void wrap_filter_policy(size_t options_address, bool tamper) {
  rocksdb::BlockBasedTableOptions table = TableOptionsCopy(options_address);
  if (!table.filter_policy) {
    throw std::invalid_argument("the table has no filter policy");
  }
  auto cache = std::dynamic_pointer_cast<RecordingCache>(table.block_cache);
  table.filter_policy =
      std::make_shared<ObservingPolicy>(table.filter_policy, tamper, cache);
  SetTableOptions(options_address, table);
}

}  // namespace ribbon_compat
