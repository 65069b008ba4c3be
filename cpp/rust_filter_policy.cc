// The Rust filter policy: RocksDB's FilterPolicy, FilterBitsBuilder and
// FilterBitsReader interfaces, with every filter built and read in Rust.
#include "cpp/rust_filter_policy.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <unordered_map>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rocks-bridge/src/ffi.rs.h"
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

rust::Slice<const uint8_t> AsRust(const Slice& s) {
  return rust::Slice<const uint8_t>(
      reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

class RustBitsBuilder : public FilterBitsBuilder {
 public:
  explicit RustBitsBuilder(rust::Box<RustBuilder> inner)
      : inner_(std::move(inner)) {}

  void AddKey(const Slice& key) override { inner_->add_key(AsRust(key)); }
  void AddKeyAndAlt(const Slice& key, const Slice& alt) override {
    inner_->add_key_and_alt(AsRust(key), AsRust(alt));
  }
  size_t EstimateEntriesAdded() override {
    return inner_->estimate_entries_added();
  }
  using FilterBitsBuilder::Finish;
  rocksdb::Slice Finish(std::unique_ptr<const char[]>* buf) override {
    rust::Vec<uint8_t> bytes = inner_->finish();
    if (bytes.empty()) {
      buf->reset();
      return Slice(nullptr, 0);
    }
    char* data = new char[bytes.size()];
    std::copy(bytes.begin(), bytes.end(), data);
    buf->reset(data);
    return Slice(data, bytes.size());
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

 private:
  rust::Box<RustBuilder> inner_;
};

class RustBitsReader : public rocksdb::BuiltinFilterBitsReader {
 public:
  explicit RustBitsReader(rust::Box<RustReader> inner)
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
  bool HashMayMatch(const uint64_t h) override {
    return inner_->may_match_hash(h);
  }

 private:
  rust::Box<RustReader> inner_;
};

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
    BuildContext ctx;
    ctx.format_version = context.table_options.format_version;
    ctx.compaction_style = static_cast<int32_t>(context.compaction_style);
    ctx.reason = context.reason;
    ctx.level_at_creation = context.level_at_creation;
    ctx.optimize_filters_for_memory =
        context.table_options.optimize_filters_for_memory;
    rust::Box<RustBuilder> builder = new_builder(GetId(), ctx);
    if (!builder->builds_filter()) return nullptr;
    return new RustBitsBuilder(std::move(builder));
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
