// The Rust filter policy: RocksDB's FilterPolicy, FilterBitsBuilder and
// FilterBitsReader, with every filter built and read by a Rust policy
// (rocks-bridge/src/ffi.rs): the `rust.*` policies and the ones users
// register (rocks_bridge::custom) alike. The Rust side catches every panic;
// nothing here throws into RocksDB.
//
// It compiles against the headers of whichever librocksdb-sys the build
// links: RocksDB 11.8.1 (rust-rocksdb 0.25) or 10.4.2 (rust-rocksdb 0.24).
// What differs between them is marked `#if ROCKSDB_MAJOR`.
#include "rocks-bridge/cpp/rust_filter_policy.h"

#include <algorithm>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/cache_reservation_manager.h"
#include "options/options_parser.h"
#include "rocks-bridge/src/ffi.rs.h"
#include "rocks-bridge/src/rocksdb_ffi.rs.h"
#include "rocksdb/cache.h"
#include "rocksdb/convenience.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/options.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/object_registry.h"
#include "rocksdb/utilities/options_type.h"
#include "rocksdb/version.h"
#include "table/block_based/filter_policy_internal.h"

namespace rocks_bridge {

using rocksdb::FilterBitsBuilder;
using rocksdb::FilterBitsReader;
using rocksdb::FilterBuildingContext;
using rocksdb::Slice;

namespace {

rust::Slice<const uint8_t> AsRust(const Slice& s) {
  return rust::Slice<const uint8_t>(
      reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

// A filter RocksDB takes ownership of: `bytes` copied into `*buf`.
Slice HandToRocksDb(const rust::Vec<uint8_t>& bytes,
                    std::unique_ptr<const char[]>* buf) {
  char* data = new char[std::max<size_t>(bytes.size(), 1)];
  std::copy(bytes.begin(), bytes.end(), data);
  buf->reset(data);
  return Slice(data, bytes.size());
}

BuildContext ToBuildContext(const FilterBuildingContext& context) {
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

// The builder interface with CalculateSpace and EstimatedFpRate: RocksDB 11
// declares them on FilterBitsBuilder itself; RocksDB 10 only on
// BuiltinFilterBitsBuilder, the FilterBitsBuilder subclass its own builders
// derive from (table/block_based/filter_policy_internal.h). Nothing in
// RocksDB 10 casts a builder to it (only the filter_bench tool does), so
// deriving from it there changes nothing but letting `override` check the
// signatures.
#if ROCKSDB_MAJOR >= 11
using BitsBuilderBase = FilterBitsBuilder;
#else
using BitsBuilderBase = rocksdb::BuiltinFilterBitsBuilder;
#endif

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
class RustBitsBuilder : public BitsBuilderBase {
 public:
  RustBitsBuilder(rust::Box<BuilderHandle> inner,
                  std::shared_ptr<rocksdb::CacheReservationManager> charge,
                  bool detect)
      : inner_(std::move(inner)),
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
    FinishedFilter f = inner_->finish_constructed(bloom_fallback, detect_);
    if (f.filter.empty()) {
      ReleaseEntries();
      buf->reset();
      return Slice(nullptr, 0);
    }
    // RocksDB's Ribbon builder checks the entries before charging the
    // filter, its Bloom builder after.
    std::unique_ptr<ReservationHandle> final_charge;
    if (!f.banded) ChargeFilter(f.filter.size(), &final_charge);
    if (!f.entries_intact) {
      ReleaseEntries();
      if (status) *status = rocksdb::Status::Corruption(kEntriesCorrupted);
      return FinishAlwaysTrue();
    }
    if (!detect_) ReleaseEntries();
    if (f.banded) ChargeFilter(f.filter.size(), &final_charge);
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

  rust::Box<BuilderHandle> inner_;
  // Null unless kFilterConstruction is charged to a block cache.
  std::shared_ptr<rocksdb::CacheReservationManager> charge_;
  bool detect_;
  size_t entries_charged_ = 0;
  std::deque<std::unique_ptr<ReservationHandle>> buckets_;
  std::deque<std::unique_ptr<ReservationHandle>> final_charges_;
};

class RustBitsReader : public FilterBitsReader {
 public:
  explicit RustBitsReader(rust::Box<ReaderHandle> inner)
      : inner_(std::move(inner)) {}

  bool MayMatch(const Slice& key) override {
    return inner_->may_match(AsRust(key));
  }
  void MayMatch(int num_keys, Slice** keys, bool* may_match) override {
    // Readers are shared by concurrent Gets and MultiGets: everything here
    // lives on the stack. Keys go to Rust as (address, length) pairs, in
    // chunks of MultiGet's batch size.
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
      inner_->may_match_batch(
          rust::Slice<const size_t>(addresses, static_cast<size_t>(n)),
          rust::Slice<const size_t>(lengths, static_cast<size_t>(n)),
          rust::Slice<uint8_t>(answers, static_cast<size_t>(n)));
      for (int i = 0; i < n; ++i) may_match[begin + i] = answers[i] != 0;
    }
  }

 private:
  rust::Box<ReaderHandle> inner_;
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
  // The policy's mutable options (a Ribbon policy's bloom_before_level) are
  // registered with RocksDB's Configurable, parsed, shown and compared by
  // the Rust policy, so SetOptions
  // ("table_factory.filter_policy.bloom_before_level") and OPTIONS files
  // handle them as RocksDB's own ribbonfilter's.
  explicit RustFilterPolicy(rust::Box<PolicyHandle> policy)
      : policy_(std::move(policy)),
        name_(std::string(policy_->name())),
        compatibility_name_(std::string(policy_->compatibility_name())) {
    for (const rust::String& option : policy_->mutable_options()) {
      rocksdb::OptionTypeInfo info(0, rocksdb::OptionType::kUnknown,
                                   rocksdb::OptionVerificationType::kNormal,
                                   rocksdb::OptionTypeFlags::kMutable);
      info.SetParseFunc([](const rocksdb::ConfigOptions&,
                           const std::string& name, const std::string& value,
                           void* addr) {
        try {
          static_cast<RustFilterPolicy*>(addr)->policy_->set_option(name,
                                                                    value);
          return rocksdb::Status::OK();
        } catch (const std::exception& e) {
          return rocksdb::Status::InvalidArgument(e.what());
        }
      });
      info.SetSerializeFunc([](const rocksdb::ConfigOptions&,
                               const std::string& name, const void* addr,
                               std::string* value) {
        *value = std::string(
            static_cast<const RustFilterPolicy*>(addr)->policy_->option(name));
        return rocksdb::Status::OK();
      });
      info.SetEqualsFunc([](const rocksdb::ConfigOptions&,
                            const std::string& name, const void* a,
                            const void* b, std::string* mismatch) {
        bool same =
            std::string(
                static_cast<const RustFilterPolicy*>(a)->policy_->option(
                    name)) ==
            std::string(
                static_cast<const RustFilterPolicy*>(b)->policy_->option(name));
        if (!same) *mismatch = name;
        return same;
      });
      options_.emplace(std::string(option), std::move(info));
    }
    if (!options_.empty()) RegisterOptions(this, &options_);
  }

  // The name its registered options go under (Configurable).
  static const char* kName() { return "RustFilterPolicy"; }
  // The name the policy is registered under ("rust.RibbonFilter").
  const char* Name() const override { return name_.c_str(); }
  // The family RocksDB stores and finds filter blocks under: for the rust.*
  // policies the built-in one, so files written by either side are read by
  // the other.
  const char* CompatibilityName() const override {
    return compatibility_name_.c_str();
  }
  // The full id, so an options string or OPTIONS file recreates the policy
  // with its settings: "rust.RibbonFilter:10:1", "rust.BloomFilter:10".
  std::string GetId() const override { return std::string(policy_->id()); }

  FilterBitsBuilder* GetBuilderWithContext(
      const FilterBuildingContext& context) const override {
    rust::Box<BuilderHandle> builder =
        policy_->new_builder(ToBuildContext(context));
    if (!builder->builds_filter()) return nullptr;
    // As BloomLikeFilterPolicy decides for its FastLocalBloom and Ribbon
    // builders (builders that do not follow RocksDB's construction
    // protocol, like the legacy Bloom, charge nothing and detect nothing).
    std::shared_ptr<rocksdb::CacheReservationManager> charge;
    bool protocol = builder->follows_construction_protocol();
    if (protocol && context.table_options.block_cache &&
        FilterConstructionCharged(context.table_options)) {
      charge = std::make_shared<FilterConstructionCharge>(
          context.table_options.block_cache);
    }
    bool detect =
        protocol && context.table_options.detect_filter_construct_corruption;
    return new RustBitsBuilder(std::move(builder), std::move(charge), detect);
  }

  FilterBitsReader* GetFilterBitsReader(const Slice& contents) const override {
    // RocksDB keeps `contents` alive for the reader's lifetime.
    return new RustBitsReader(policy_->new_reader(AsRust(contents)));
  }

 private:
  rust::Box<PolicyHandle> policy_;
  std::string name_;
  std::string compatibility_name_;
  std::unordered_map<std::string, rocksdb::OptionTypeInfo> options_;
};

// Factory for the ObjectLibrary: the Rust registry makes the policy.
const rocksdb::FilterPolicy* MakePolicy(
    const std::string& uri, std::unique_ptr<const rocksdb::FilterPolicy>* guard,
    std::string* errmsg) {
  try {
    guard->reset(new RustFilterPolicy(make_policy(uri)));
    return guard->get();
  } catch (const std::exception& e) {
    if (errmsg) *errmsg = e.what();
    return nullptr;
  }
}

}  // namespace

void register_policy_name(rust::Str name) {
  using Entry = rocksdb::ObjectLibrary::PatternEntry;
  // "NAME" alone, or "NAME:" and at least one character.
  rocksdb::ObjectLibrary::Default()->AddFactory<const rocksdb::FilterPolicy>(
      Entry(std::string(name), true).AddSeparator(":", true), MakePolicy);
}

rust::String policy_id(rust::Str id) {
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
  return policy ? rust::String(policy->GetId()) : rust::String();
}

void persist_options(rust::Str file, rust::Str db_options,
                     rust::Slice<const FamilyOptions> families) {
  // Unknown option names are errors, and so is a filter policy (or any
  // object) that RocksDB cannot create: RocksDB's defaults would leave the
  // table quietly without the filter the string names, through
  // ignore_unsupported_options and through BlockBasedTableFactory::
  // ParseOption, which drops the error of an option held "by name" (the
  // filter policy) while input_strings_escaped is set. The ObjectRegistry
  // holds the rust.* policies once rocks_bridge::register has run.
  rocksdb::ConfigOptions config;
  config.ignore_unknown_options = false;
  config.ignore_unsupported_options = false;
  config.input_strings_escaped = false;
  // Writing and checking the file: RocksDB's own settings (the file is
  // escaped as RocksDB writes and reads OPTIONS files), nothing ignored.
  rocksdb::ConfigOptions persist;
  persist.ignore_unknown_options = false;
  persist.ignore_unsupported_options = false;
  auto check = [](const rocksdb::Status& s, const std::string& what) {
    if (!s.ok()) throw std::invalid_argument(what + ": " + s.ToString());
  };
  rocksdb::DBOptions db;
  check(rocksdb::GetDBOptionsFromString(config, rocksdb::DBOptions(),
                                        std::string(db_options), &db),
        "the database options");
  std::vector<std::string> names;
  std::vector<rocksdb::ColumnFamilyOptions> cfs;
  for (const FamilyOptions& family : families) {
    names.emplace_back(std::string(family.name));
    cfs.emplace_back();
    check(rocksdb::GetColumnFamilyOptionsFromString(
              config, rocksdb::ColumnFamilyOptions(),
              std::string(family.options), &cfs.back()),
          "the options of column family \"" + names.back() + "\"");
  }
  // Writes the file, reads it back and checks that every option read equals
  // the one written (the config's sanity level: exact match).
  check(rocksdb::PersistRocksDBOptions(rocksdb::WriteOptions(), persist, db,
                                       names, cfs, std::string(file),
                                       persist.env->GetFileSystem().get()),
        "writing the OPTIONS file");
}

}  // namespace rocks_bridge
