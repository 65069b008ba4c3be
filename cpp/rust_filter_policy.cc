// The Rust filter policy: RocksDB's FilterPolicy, FilterBitsBuilder and
// FilterBitsReader interfaces, with every filter built and read in Rust.
#include "cpp/rust_filter_policy.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/cache_reservation_manager.h"
#include "cpp/bridge_util.h"
#include "rocks-bridge/src/ffi.rs.h"
#include "rocksdb/cache.h"
#include "rocksdb/convenience.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/options.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/object_registry.h"
#include "rocksdb/utilities/options_type.h"
#include "table/block_based/filter_policy_internal.h"

// The C API's options wrapper (db/c.cc defines it identically; the C header
// only declares it). rust-rocksdb's `Options` owns one.
struct rocksdb_options_t {
  rocksdb::Options rep;
};

namespace rocks_bridge {

using rocksdb::FilterBitsBuilder;
using rocksdb::FilterBitsReader;
using rocksdb::FilterBuildingContext;
using rocksdb::Slice;

namespace {

// RocksDB's status strings for a corrupted construction
// (XXPH3FilterBitsBuilder in table/block_based/filter_policy.cc).
constexpr const char* kEntriesCorrupted =
    "Filter's hash entries checksum mismatched";
constexpr const char* kFilterCorrupted = "Corrupted filter content";

using ReservationHandle =
    rocksdb::CacheReservationManager::CacheReservationHandle;
using FilterConstructionCharge = rocksdb::CacheReservationManagerImpl<
    rocksdb::CacheEntryRole::kFilterConstruction>;

// The filter RocksDB writes when construction failed: 6 zero bytes.
Slice FinishAlwaysTrue() { return Slice("\0\0\0\0\0\0", 6); }

// Filters are built in Rust; this class replays around them what RocksDB's
// FastLocalBloom and Ribbon builders (XXPH3FilterBitsBuilder and its
// subclasses) do with the block cache and with
// detect_filter_construct_corruption, with the same sizes in the same order:
// - each time the hash entries reach half of a bucket of 256 KiB / 8
//   entries, a bucket is charged (AddHash; failures ignored);
// - a Ribbon filter charges its banding before banding; when the cache
//   refuses it (strict_capacity_limit), the builder falls back to Bloom;
// - the finished filter is charged (failures ignored) and stays charged
//   until the builder is destroyed;
// - the buckets are released once the entries are no longer needed: at
//   Finish, or at MaybePostVerify when the entries are kept for it.
class RustBitsBuilder : public RustSizedBuilder<RustBuilder> {
 public:
  RustBitsBuilder(rust::Box<RustBuilder> inner,
                  std::shared_ptr<rocksdb::CacheReservationManager> charge,
                  bool detect)
      : RustSizedBuilder(std::move(inner)),
        charge_(std::move(charge)),
        detect_(detect) {}

  void AddKey(const Slice& key) override {
    inner_->add_key(AsRust(key));
    ChargeNewEntries();
  }
  void AddKeyAndAlt(const Slice& key, const Slice& alt) override {
    inner_->add_key_and_alt(AsRust(key), AsRust(alt));
    ChargeNewEntries();
  }
  using FilterBitsBuilder::Finish;
  Slice Finish(std::unique_ptr<const char[]>* buf) override {
    return Finish(buf, nullptr);
  }
  Slice Finish(std::unique_ptr<const char[]>* buf,
               rocksdb::Status* status) override {
    entries_charged_ = 0;
    if (status) *status = rocksdb::Status::OK();
    std::unique_ptr<ReservationHandle> banding;
    bool bloom_fallback = false;
    if (charge_) {
      size_t banding_bytes = inner_->banding_bytes();
      if (banding_bytes > 0) {
        rocksdb::Status s =
            charge_->MakeCacheReservation(banding_bytes, &banding);
        if (s.IsMemoryLimit()) {
          banding.reset();
          bloom_fallback = true;
        }
      }
    }
    FinishedFilter f = inner_->finish(bloom_fallback);
    if (f.filter.empty()) {
      ReleaseEntries();
      buf->reset();
      return Slice(nullptr, 0);
    }
    // RocksDB's Ribbon builder checks the entries before charging the
    // filter, its Bloom builder after.
    std::unique_ptr<ReservationHandle> final_charge;
    if (!f.ribbon) ChargeFilter(f.filter.size(), &final_charge);
    if (!f.entries_intact) {
      ReleaseEntries();
      if (status) *status = rocksdb::Status::Corruption(kEntriesCorrupted);
      return FinishAlwaysTrue();
    }
    if (!detect_) ReleaseEntries();
    if (f.ribbon) ChargeFilter(f.filter.size(), &final_charge);
    if (final_charge) final_charges_.push_back(std::move(final_charge));
    return HandToRocksDb(f.filter, buf);
    // `banding` is released here, last, as RocksDB releases it.
  }
  rocksdb::Status MaybePostVerify(const Slice& filter_content) override {
    if (!detect_) return rocksdb::Status::OK();
    bool ok = inner_->post_verify(AsRust(filter_content));
    ReleaseEntries();
    return ok ? rocksdb::Status::OK()
              : rocksdb::Status::Corruption(kFilterCorrupted);
  }

 private:
  // Hash entries per charged bucket: a dummy cache entry's worth of
  // 64-bit hashes.
  static size_t BucketEntries() {
    return FilterConstructionCharge::GetDummyEntrySize() / sizeof(uint64_t);
  }
  void ChargeNewEntries() {
    if (!charge_) return;
    size_t n = inner_->estimate_entries_added();
    const size_t bucket = BucketEntries();
    while (entries_charged_ < n) {
      ++entries_charged_;
      if (entries_charged_ % bucket == bucket / 2) {
        buckets_.emplace_back(nullptr);
        charge_
            ->MakeCacheReservation(bucket * sizeof(uint64_t), &buckets_.back())
            .PermitUncheckedError();
      }
    }
  }
  void ChargeFilter(size_t bytes, std::unique_ptr<ReservationHandle>* handle) {
    if (charge_) {
      charge_->MakeCacheReservation(bytes, handle).PermitUncheckedError();
    }
  }
  void ReleaseEntries() { buckets_.clear(); }

  // Null unless kFilterConstruction is charged to a block cache.
  std::shared_ptr<rocksdb::CacheReservationManager> charge_;
  bool detect_;
  size_t entries_charged_ = 0;
  std::deque<std::unique_ptr<ReservationHandle>> buckets_;
  std::deque<std::unique_ptr<ReservationHandle>> final_charges_;
};

class RustBitsReader : public rocksdb::BuiltinFilterBitsReader {
 public:
  explicit RustBitsReader(rust::Box<RustReader> inner)
      : inner_(std::move(inner)) {}

  bool MayMatch(const Slice& key) override {
    return inner_->may_match(AsRust(key));
  }
  void MayMatch(int num_keys, Slice** keys, bool* may_match) override {
    MayMatchInChunks(*inner_, num_keys, keys, may_match);
  }
  bool HashMayMatch(const uint64_t h) override {
    return inner_->may_match_hash(h);
  }

 private:
  rust::Box<RustReader> inner_;
};

// Whether construction memory is charged to the block cache: the
// kFilterConstruction override of cache_usage_options, else its default.
bool FilterConstructionCharged(const rocksdb::BlockBasedTableOptions& table) {
  const auto& usage = table.cache_usage_options;
  auto it =
      usage.options_overrides.find(rocksdb::CacheEntryRole::kFilterConstruction);
  auto charged = it != usage.options_overrides.end() ? it->second.charged
                                                     : usage.options.charged;
  return charged == rocksdb::CacheEntryRoleOptions::Decision::kEnabled;
}

class RustFilterPolicy : public rocksdb::FilterPolicy {
 public:
  // `name` is "rust.RibbonFilter" or "rust.BloomFilter", `bits` the
  // canonical bits-per-key suffix (":10", ":6.5"); a Ribbon policy has a
  // bloom_before_level, which SetOptions can change
  // ("table_factory.filter_policy.bloom_before_level"), as with RocksDB's
  // own ribbonfilter.
  RustFilterPolicy(std::string name, std::string bits, bool ribbon,
                   int bloom_before_level)
      : name_(std::move(name)),
        bits_(std::move(bits)),
        ribbon_(ribbon),
        bloom_before_level_(bloom_before_level) {
    if (ribbon_) {
      static const std::unordered_map<std::string, rocksdb::OptionTypeInfo>
          type_info = {
              {"bloom_before_level",
               {offsetof(class RustFilterPolicy, bloom_before_level_),
                rocksdb::OptionType::kAtomicInt,
                rocksdb::OptionVerificationType::kNormal,
                rocksdb::OptionTypeFlags::kMutable}},
          };
      RegisterOptions(this, &type_info);
    }
  }

  // The name its registered options go under (Configurable).
  static const char* kName() { return "RustFilterPolicy"; }
  const char* Name() const override { return name_.c_str(); }
  // The built-in family's name: RocksDB stores and finds filter blocks under
  // it, so files written by either side are read by the other.
  const char* CompatibilityName() const override {
    return "rocksdb.BuiltinBloomFilter";
  }
  // The full id, so an options string or OPTIONS file recreates the policy
  // with its settings: "rust.RibbonFilter:10:1", "rust.BloomFilter:10".
  std::string GetId() const override {
    std::string id = name_ + bits_;
    if (ribbon_) {
      id += ":" + std::to_string(
                      bloom_before_level_.load(std::memory_order_relaxed));
    }
    return id;
  }

  FilterBitsBuilder* GetBuilderWithContext(
      const FilterBuildingContext& context) const override {
    BuildContext ctx = ToBuildContext(context);
    rust::Box<RustBuilder> builder = new_builder(GetId(), ctx);
    if (!builder->builds_filter()) return nullptr;
    // As BloomLikeFilterPolicy decides for its FastLocalBloom and Ribbon
    // builders (the legacy Bloom charges nothing and detects nothing).
    std::shared_ptr<rocksdb::CacheReservationManager> charge;
    bool xxph3 = builder->is_xxph3();
    if (xxph3 && context.table_options.block_cache &&
        FilterConstructionCharged(context.table_options)) {
      charge = std::make_shared<FilterConstructionCharge>(
          context.table_options.block_cache);
    }
    bool detect =
        xxph3 && context.table_options.detect_filter_construct_corruption;
    return new RustBitsBuilder(std::move(builder), std::move(charge), detect);
  }

  FilterBitsReader* GetFilterBitsReader(const Slice& contents) const override {
    // RocksDB keeps `contents` alive for the reader's lifetime.
    return new RustBitsReader(new_reader(AsRust(contents)));
  }

 private:
  std::string name_;
  std::string bits_;
  bool ribbon_;
  std::atomic<int> bloom_before_level_;
};

// Factory for the ObjectLibrary: the Rust side validates and canonicalises
// the id.
const rocksdb::FilterPolicy* MakePolicy(
    const std::string& uri, std::unique_ptr<const rocksdb::FilterPolicy>* guard,
    std::string* errmsg) {
  PolicyParts parts;
  if (!parse_policy_id(uri, parts)) {
    if (errmsg) *errmsg = "invalid Rust filter policy: " + uri;
    return nullptr;
  }
  guard->reset(new RustFilterPolicy(std::string(parts.name),
                                    std::string(parts.bits_suffix),
                                    parts.ribbon, parts.bloom_before_level));
  return guard->get();
}

rocksdb::BlockBasedTableOptions* TableOptions(size_t options_address) {
  auto* opts = reinterpret_cast<rocksdb_options_t*>(options_address);
  if (!opts || !opts->rep.table_factory) return nullptr;
  return opts->rep.table_factory
      ->GetOptions<rocksdb::BlockBasedTableOptions>();
}

}  // namespace

void register_rust_filter_policies() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto library = rocksdb::ObjectLibrary::Default();
    using Entry = rocksdb::ObjectLibrary::PatternEntry;
    library->AddFactory<const rocksdb::FilterPolicy>(
        Entry("rust.RibbonFilter", false).AddNumber(":", false), MakePolicy);
    library->AddFactory<const rocksdb::FilterPolicy>(
        Entry("rust.RibbonFilter", false)
            .AddNumber(":", false)
            .AddNumber(":", true),
        MakePolicy);
    library->AddFactory<const rocksdb::FilterPolicy>(
        Entry("rust.BloomFilter", false).AddNumber(":", false), MakePolicy);
  });
}

void set_table_filter_policy(size_t options_address, rust::Str id) {
  register_rust_filter_policies();
  rocksdb::BlockBasedTableOptions* table = TableOptions(options_address);
  if (!table) {
    throw std::invalid_argument("the table factory is not block-based");
  }
  rocksdb::ConfigOptions config;
  std::shared_ptr<const rocksdb::FilterPolicy> policy;
  rocksdb::Status s = rocksdb::FilterPolicy::CreateFromString(
      config, std::string(id), &policy);
  if (!s.ok()) throw std::invalid_argument(s.ToString());
  // CreateFromString answers OK with no policy for an id that no factory
  // matches; only the ids that mean "no policy" (Rust's rule) may clear the
  // filter.
  if (!policy && !names_no_filter_policy(id)) {
    throw std::invalid_argument("no filter policy has the id \"" +
                                std::string(id) + "\"");
  }
  // A new factory: `Options` copies share their table factory, so changing
  // this one in place would change every copy.
  rocksdb::BlockBasedTableOptions copy = *table;
  copy.filter_policy = std::move(policy);
  auto* opts = reinterpret_cast<rocksdb_options_t*>(options_address);
  opts->rep.table_factory.reset(rocksdb::NewBlockBasedTableFactory(copy));
}

rust::String table_filter_policy_id(size_t options_address) {
  rocksdb::BlockBasedTableOptions* table = TableOptions(options_address);
  if (!table || !table->filter_policy) return rust::String();
  return rust::String(table->filter_policy->GetId());
}

}  // namespace rocks_bridge
