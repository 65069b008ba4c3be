// The C++ half of rocks-bridge's custom policies: RocksDB's FilterPolicy,
// FilterBitsBuilder and FilterBitsReader, each call forwarded to the Rust
// policy a user registered (rocks-bridge/src/custom/ffi.rs). The Rust side
// catches every panic; nothing here throws into RocksDB.
#include "cpp/custom_filter_policy.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <string>

#include "cpp/bridge_util.h"
#include "rocks-bridge/src/custom/ffi.rs.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "rocksdb/utilities/object_registry.h"
#include "table/block_based/filter_policy_internal.h"

namespace rocks_bridge {

using rocksdb::FilterBitsBuilder;
using rocksdb::FilterBitsReader;
using rocksdb::FilterBuildingContext;
using rocksdb::Slice;

namespace {

class CustomBitsBuilder : public RustSizedBuilder<CustomBuilder> {
 public:
  using RustSizedBuilder::RustSizedBuilder;

  void AddKey(const Slice& key) override { inner_->add_key(AsRust(key)); }
  void AddKeyAndAlt(const Slice& key, const Slice& alt) override {
    inner_->add_key_and_alt(AsRust(key), AsRust(alt));
  }
  using FilterBitsBuilder::Finish;
  Slice Finish(std::unique_ptr<const char[]>* buf) override {
    return HandToRocksDb(inner_->finish(), buf);
  }
};

class CustomBitsReader : public FilterBitsReader {
 public:
  explicit CustomBitsReader(rust::Box<CustomReader> inner)
      : inner_(std::move(inner)) {}

  bool MayMatch(const Slice& key) override {
    return inner_->may_match(AsRust(key));
  }
  void MayMatch(int num_keys, Slice** keys, bool* may_match) override {
    MayMatchInChunks(*inner_, num_keys, keys, may_match);
  }

 private:
  rust::Box<CustomReader> inner_;
};

class CustomFilterPolicy : public rocksdb::FilterPolicy {
 public:
  explicit CustomFilterPolicy(rust::Box<CustomPolicy> policy)
      : policy_(std::move(policy)),
        id_(std::string(policy_->id())),
        compatibility_name_(std::string(policy_->compatibility_name())) {}

  // The id names the policy everywhere RocksDB shows or saves it.
  const char* Name() const override { return id_.c_str(); }
  const char* CompatibilityName() const override {
    return compatibility_name_.c_str();
  }
  std::string GetId() const override { return id_; }

  FilterBitsBuilder* GetBuilderWithContext(
      const FilterBuildingContext& context) const override {
    BuildContext ctx = ToBuildContext(context);
    rust::Box<CustomBuilder> builder = policy_->new_builder(ctx);
    if (!builder->builds_filter()) return nullptr;
    return new CustomBitsBuilder(std::move(builder));
  }

  FilterBitsReader* GetFilterBitsReader(const Slice& contents) const override {
    // RocksDB keeps `contents` alive for the reader's lifetime.
    return new CustomBitsReader(policy_->new_reader(AsRust(contents)));
  }

 private:
  rust::Box<CustomPolicy> policy_;
  std::string id_;
  std::string compatibility_name_;
};

const rocksdb::FilterPolicy* MakeCustomPolicy(
    const std::string& uri, std::unique_ptr<const rocksdb::FilterPolicy>* guard,
    std::string* errmsg) {
  try {
    guard->reset(new CustomFilterPolicy(make_custom_policy(uri)));
    return guard->get();
  } catch (const std::exception& e) {
    if (errmsg) *errmsg = e.what();
    return nullptr;
  }
}

}  // namespace

void register_custom_policy_name(rust::Str name) {
  using Entry = rocksdb::ObjectLibrary::PatternEntry;
  // "NAME" alone, or "NAME:" and at least one character.
  rocksdb::ObjectLibrary::Default()->AddFactory<const rocksdb::FilterPolicy>(
      Entry(std::string(name), true).AddSeparator(":", true),
      MakeCustomPolicy);
}

}  // namespace rocks_bridge
