// The native reference harness. Everything here calls RocksDB's own code; the
// Rust side compares the pure-Rust crate against it.
#include "ribbon-compat/cpp/harness.h"

#include <algorithm>
#include <stdexcept>

#include "rocksdb/convenience.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/table.h"
#include "table/block_based/filter_policy_internal.h"
#include "util/hash.h"
#include "util/ribbon_config.h"

namespace ribbon_compat {

using rocksdb::Slice;

namespace {
Slice AsSlice(rust::Slice<const uint8_t> s) {
  return Slice(reinterpret_cast<const char*>(s.data()), s.size());
}
}  // namespace

NativeBuilder::NativeBuilder(
    std::shared_ptr<const rocksdb::FilterPolicy> policy,
    std::unique_ptr<rocksdb::BlockBasedTableOptions> table_options,
    rocksdb::FilterBitsBuilder* builder)
    : policy_(std::move(policy)),
      table_options_(std::move(table_options)),
      builder_(builder) {}

NativeBuilder::~NativeBuilder() = default;

bool NativeBuilder::has_builder() const { return builder_ != nullptr; }

void NativeBuilder::add_key(rust::Slice<const uint8_t> key) {
  if (builder_) builder_->AddKey(AsSlice(key));
}

void NativeBuilder::add_key_slice(const rocksdb::Slice& key) {
  if (builder_) builder_->AddKey(key);
}

void NativeBuilder::add_key_and_alt(rust::Slice<const uint8_t> key,
                                    rust::Slice<const uint8_t> alt) {
  if (builder_) builder_->AddKeyAndAlt(AsSlice(key), AsSlice(alt));
}

size_t NativeBuilder::estimate_entries_added() {
  return builder_ ? builder_->EstimateEntriesAdded() : 0;
}

rust::Vec<uint8_t> NativeBuilder::finish() {
  rust::Vec<uint8_t> out;
  if (!builder_) return out;
  std::unique_ptr<const char[]> buf;
  rocksdb::Status status;
  Slice s = builder_->Finish(&buf, &status);
  if (!status.ok()) throw std::runtime_error(status.ToString());
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    out.push_back(static_cast<uint8_t>(s.data()[i]));
  }
  return out;
}

size_t NativeBuilder::calculate_space(size_t num_entries) {
  return builder_ ? builder_->CalculateSpace(num_entries) : 0;
}

size_t NativeBuilder::approximate_num_entries(size_t bytes) {
  return builder_ ? builder_->ApproximateNumEntries(bytes) : 0;
}

double NativeBuilder::estimated_fp_rate(size_t num_entries, size_t bytes) {
  return builder_ ? builder_->EstimatedFpRate(num_entries, bytes) : 0.0;
}

NativeReader::NativeReader(std::string contents,
                           std::shared_ptr<const rocksdb::FilterPolicy> policy)
    : contents_(std::move(contents)), policy_(std::move(policy)) {
  if (policy_) {
    reader_.reset(policy_->GetFilterBitsReader(Slice(contents_)));
  } else {
    // Any built-in policy reads any built-in filter: the reader dispatches
    // on the trailer, exactly as a table reader does.
    reader_.reset(rocksdb::BuiltinFilterPolicy::GetBuiltinFilterBitsReader(
        Slice(contents_)));
  }
}

NativeReader::~NativeReader() = default;

bool NativeReader::may_match(rust::Slice<const uint8_t> key) const {
  return reader_->MayMatch(AsSlice(key));
}

void NativeReader::may_match_batch(rust::Slice<const uint8_t> keys,
                                   rust::Slice<const uint32_t> ends,
                                   rust::Slice<uint8_t> out) const {
  constexpr size_t kMax = 32;
  if (ends.size() > kMax || out.size() < ends.size()) {
    throw std::invalid_argument("at most 32 keys, and room for each answer");
  }
  Slice slices[kMax];
  Slice* ptrs[kMax];
  bool answers[kMax];
  uint32_t begin = 0;
  for (size_t i = 0; i < ends.size(); ++i) {
    if (ends[i] < begin || ends[i] > keys.size()) {
      throw std::invalid_argument("key ends out of order or out of range");
    }
    slices[i] = Slice(reinterpret_cast<const char*>(keys.data()) + begin,
                      ends[i] - begin);
    ptrs[i] = &slices[i];
    begin = ends[i];
  }
  reader_->MayMatch(static_cast<int>(ends.size()), ptrs, answers);
  for (size_t i = 0; i < ends.size(); ++i) out[i] = answers[i] ? 1 : 0;
}

size_t NativeReader::count_matches(rust::Slice<const uint8_t> keys,
                                   rust::Slice<const uint64_t> ends,
                                   bool batched) const {
  const char* base = reinterpret_cast<const char*>(keys.data());
  size_t count = 0;
  uint64_t begin = 0;
  if (!batched) {
    for (uint64_t end : ends) {
      count += reader_->MayMatch(Slice(base + begin, end - begin)) ? 1 : 0;
      begin = end;
    }
    return count;
  }
  constexpr size_t kMax = 32;
  Slice slices[kMax];
  Slice* ptrs[kMax];
  bool answers[kMax];
  for (size_t i = 0; i < ends.size(); i += kMax) {
    size_t n = std::min(kMax, ends.size() - i);
    for (size_t j = 0; j < n; ++j) {
      slices[j] = Slice(base + begin, ends[i + j] - begin);
      ptrs[j] = &slices[j];
      begin = ends[i + j];
    }
    reader_->MayMatch(static_cast<int>(n), ptrs, answers);
    for (size_t j = 0; j < n; ++j) count += answers[j] ? 1 : 0;
  }
  return count;
}

rust::Vec<uint8_t> native_build_packed(rust::Str policy, int32_t format_version,
                                       rust::Slice<const uint8_t> keys,
                                       rust::Slice<const uint64_t> ends) {
  auto b = new_native_builder(policy, format_version,
                              rocksdb::TableFileCreationReason::kMisc, -1, true);
  const char* base = reinterpret_cast<const char*>(keys.data());
  uint64_t begin = 0;
  for (uint64_t end : ends) {
    b->add_key_slice(Slice(base + begin, end - begin));
    begin = end;
  }
  return b->finish();
}

std::unique_ptr<NativeBuilder> new_native_builder(
    rust::Str policy, int32_t format_version,
    rocksdb::TableFileCreationReason reason, int32_t level,
    bool optimize_filters_for_memory) {
  rocksdb::ConfigOptions config;
  config.ignore_unsupported_options = false;
  std::shared_ptr<const rocksdb::FilterPolicy> fp;
  rocksdb::Status s = rocksdb::FilterPolicy::CreateFromString(
      config, std::string(policy), &fp);
  if (!s.ok()) throw std::invalid_argument(s.ToString());
  if (!fp) throw std::invalid_argument("empty filter policy");
  auto table_options = std::make_unique<rocksdb::BlockBasedTableOptions>();
  table_options->format_version = format_version;
  table_options->optimize_filters_for_memory = optimize_filters_for_memory;
  table_options->filter_policy = fp;
  rocksdb::FilterBuildingContext context(*table_options);
  context.compaction_style = rocksdb::kCompactionStyleLevel;
  context.level_at_creation = level;
  context.reason = reason;
  rocksdb::FilterBitsBuilder* builder = fp->GetBuilderWithContext(context);
  return std::make_unique<NativeBuilder>(fp, std::move(table_options),
                                         builder);
}

std::unique_ptr<NativeReader> new_native_reader(
    rust::Slice<const uint8_t> contents) {
  return std::make_unique<NativeReader>(
      std::string(reinterpret_cast<const char*>(contents.data()),
                  contents.size()),
      nullptr);
}

std::unique_ptr<NativeReader> new_policy_reader(
    rust::Str policy, rust::Slice<const uint8_t> contents) {
  rocksdb::ConfigOptions config;
  std::shared_ptr<const rocksdb::FilterPolicy> fp;
  rocksdb::Status s = rocksdb::FilterPolicy::CreateFromString(
      config, std::string(policy), &fp);
  if (!s.ok()) throw std::invalid_argument(s.ToString());
  if (!fp) throw std::invalid_argument("empty filter policy");
  return std::make_unique<NativeReader>(
      std::string(reinterpret_cast<const char*>(contents.data()),
                  contents.size()),
      fp);
}

uint64_t native_hash64(rust::Slice<const uint8_t> data, uint64_t seed) {
  return rocksdb::Hash64(reinterpret_cast<const char*>(data.data()),
                         data.size(), seed);
}

uint64_t native_slice_hash64(rust::Slice<const uint8_t> data) {
  return rocksdb::GetSliceHash64(AsSlice(data));
}

uint32_t native_bloom_hash(rust::Slice<const uint8_t> data) {
  return rocksdb::BloomHash(AsSlice(data));
}

uint32_t native_hash32(rust::Slice<const uint8_t> data, uint32_t seed) {
  return rocksdb::Hash(reinterpret_cast<const char*>(data.data()), data.size(),
                       seed);
}

namespace {
using rocksdb::ribbon::ConstructionFailureChance;
using rocksdb::ribbon::detail::BandingConfigHelper1MaybeSupported;

template <ConstructionFailureChance kCfc, uint64_t kBits, bool kSmash,
          bool kHomog>
bool Lookup(bool slots, uint32_t n, uint32_t& out) {
  using H = BandingConfigHelper1MaybeSupported<kCfc, kBits, kSmash, kHomog,
                                               /*supported*/ true>;
  out = slots ? H::GetNumSlots(n) : H::GetNumToAdd(n);
  return true;
}

template <ConstructionFailureChance kCfc>
bool ByShape(uint32_t coeff_bits, bool smash, bool homog, bool slots,
             uint32_t n, uint32_t& out) {
#define RIBBON_CASE(BITS, SM, HO)                            \
  if (coeff_bits == BITS && smash == SM && homog == HO) {    \
    return Lookup<kCfc, BITS, SM, HO>(slots, n, out);        \
  }
  RIBBON_CASE(128U, false, false)
  RIBBON_CASE(128U, true, false)
  RIBBON_CASE(128U, false, true)
  RIBBON_CASE(128U, true, true)
  RIBBON_CASE(64U, false, false)
  RIBBON_CASE(64U, true, false)
  RIBBON_CASE(64U, false, true)
  RIBBON_CASE(64U, true, true)
#undef RIBBON_CASE
  return false;
}

bool Dispatch(uint32_t cfc, uint32_t coeff_bits, bool smash, bool homog,
              bool slots, uint32_t n, uint32_t& out) {
  switch (cfc) {
    case 0:
      return ByShape<rocksdb::ribbon::kOneIn2>(coeff_bits, smash, homog, slots,
                                               n, out);
    case 1:
      return ByShape<rocksdb::ribbon::kOneIn20>(coeff_bits, smash, homog,
                                                slots, n, out);
    case 2:
      return ByShape<rocksdb::ribbon::kOneIn1000>(coeff_bits, smash, homog,
                                                  slots, n, out);
    default:
      return false;
  }
}
}  // namespace

bool native_ribbon_num_slots(uint32_t cfc, uint32_t coeff_bits, bool smash,
                             bool homogeneous, uint32_t num_to_add,
                             uint32_t& out) {
  return Dispatch(cfc, coeff_bits, smash, homogeneous, true, num_to_add, out);
}

bool native_ribbon_num_to_add(uint32_t cfc, uint32_t coeff_bits, bool smash,
                              bool homogeneous, uint32_t num_slots,
                              uint32_t& out) {
  return Dispatch(cfc, coeff_bits, smash, homogeneous, false, num_slots, out);
}

}  // namespace ribbon_compat
