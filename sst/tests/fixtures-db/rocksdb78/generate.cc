// Writes the RocksDB 7.8 database fixtures that sst/tests/db_versions.rs
// reads: small database directories written by Debian 12's RocksDB
// (librocksdb7.8, package librocksdb-dev), with the options of issue #30
// that the rocksdict fixtures (../generate.py, RocksDB 9.x) do not cover,
// and what that RocksDB itself says of each, in the same `expected`
// format (see ../generate.py):
//
//   NAME/db/        the database directory (LOG and LOCK left out)
//   NAME/wal/       its WALs, where the database has a separate wal_dir
//   NAME/expected   rocksdb VERSION / cf NAME / live HEXKEY /
//                   probe HEXKEY USEFUL POSITIVE FOUND
//
// The directory is copied while the database is open, its WAL synced (as
// a crash would leave it: the unflushed writes are in the WAL only), and
// the facts are asked of the open database. Regenerate (not in CI):
//
//   apt-get install -y librocksdb-dev g++
//   g++ -std=c++17 -O1 -o /tmp/generate78 sst/tests/fixtures-db/rocksdb78/generate.cc -lrocksdb
//   /tmp/generate78 sst/tests/fixtures-db/rocksdb78

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/db_ttl.h>
#include <rocksdb/version.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace ROCKSDB_NAMESPACE;

static void ok(const Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

static std::string key(int i) {
  char b[16];
  std::snprintf(b, sizeof b, "key%06d", i);
  return b;
}

static std::string hex(const Slice& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

// Appends operands with ',' (what the merge does is not what is tested:
// the reader only follows where Get stops).
class Append : public AssociativeMergeOperator {
 public:
  bool Merge(const Slice&, const Slice* existing, const Slice& value, std::string* out,
             Logger*) const override {
    out->assign(existing ? existing->ToString() + "," : std::string());
    out->append(value.data(), value.size());
    return true;
  }
  const char* Name() const override { return "Append"; }
};

struct Setup {
  std::string name;
  bool wal = false;
  bool merge = false;
  bool ttl = false;
  std::vector<std::string> cfs = {"default"};
  std::function<void(DB*, std::vector<ColumnFamilyHandle*>&)> build;
};

static ColumnFamilyOptions cf_options(const Setup& s) {
  ColumnFamilyOptions o;
  BlockBasedTableOptions t;
  t.filter_policy.reset(NewBloomFilterPolicy(10, false));
  o.table_factory.reset(NewBlockBasedTableFactory(t));
  o.disable_auto_compactions = true;
  if (s.merge) o.merge_operator = std::make_shared<Append>();
  return o;
}

static uint64_t ticker(Statistics* st, Tickers t) { return st->getTickerCount(t); }

static void write(const fs::path& out_root, const Setup& s) {
  fs::path out = out_root / s.name;
  fs::remove_all(out);
  fs::path work = fs::temp_directory_path() / ("gen78-" + s.name);
  fs::remove_all(work);
  fs::create_directories(work);
  fs::path db_dir = work / "db", wal_dir = work / "wal";
  DBOptions dbo;
  dbo.create_if_missing = true;
  dbo.create_missing_column_families = true;
  dbo.statistics = CreateDBStatistics();
  if (s.wal) dbo.wal_dir = wal_dir.string();
  std::vector<ColumnFamilyDescriptor> descs;
  for (auto& cf : s.cfs) descs.emplace_back(cf, cf_options(s));
  std::vector<ColumnFamilyHandle*> handles;
  DB* db = nullptr;
  DBWithTTL* ttl = nullptr;
  if (s.ttl) {
    std::vector<int32_t> ttls(descs.size(), 365 * 24 * 3600);
    ok(DBWithTTL::Open(Options(dbo, descs[0].options), db_dir.string(), descs, &handles, &ttl, ttls),
       "open with TTL");
    db = ttl;
  } else {
    ok(DB::Open(dbo, db_dir.string(), descs, &handles, &db), "open");
  }
  s.build(db, handles);
  ok(db->FlushWAL(true), "FlushWAL");
  fs::create_directories(out);
  for (auto& e : fs::directory_iterator(db_dir)) {
    std::string n = e.path().filename().string();
    if (n.rfind("LOG", 0) == 0 || n == "LOCK") continue;
    fs::create_directories(out / "db");
    fs::copy_file(e.path(), out / "db" / n);
  }
  if (s.wal) fs::copy(wal_dir, out / "wal");
  std::ostringstream lines;
  lines << "rocksdb " << ROCKSDB_MAJOR << "." << ROCKSDB_MINOR << "." << ROCKSDB_PATCH << "\n";
  std::vector<std::string> probes;
  for (int i = 0; i < 1200; i += 7) probes.push_back(key(i));
  for (int i = 0; i < 60; i++) {
    char b[16];
    std::snprintf(b, sizeof b, "absent%04d", i);
    probes.push_back(b);
  }
  Statistics* st = dbo.statistics.get();
  for (size_t c = 0; c < handles.size(); c++) {
    lines << "cf " << s.cfs[c] << "\n";
    std::unique_ptr<Iterator> it(db->NewIterator(ReadOptions(), handles[c]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) lines << "live " << hex(it->key()) << "\n";
    ok(it->status(), "iterator");
    for (auto& p : probes) {
      uint64_t useful = ticker(st, BLOOM_FILTER_USEFUL);
      uint64_t positive = ticker(st, BLOOM_FILTER_FULL_POSITIVE);
      std::string v;
      Status g = db->Get(ReadOptions(), handles[c], p, &v);
      if (!g.ok() && !g.IsNotFound()) ok(g, "Get");
      lines << "probe " << hex(p) << " " << ticker(st, BLOOM_FILTER_USEFUL) - useful << " "
            << ticker(st, BLOOM_FILTER_FULL_POSITIVE) - positive << " " << (g.ok() ? 1 : 0) << "\n";
    }
  }
  for (auto* h : handles) ok(db->DestroyColumnFamilyHandle(h), "handle");
  delete db;
  std::ofstream(out / "expected") << lines.str();
  fs::remove_all(work);
  std::printf("%s written\n", s.name.c_str());
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: generate78 OUT_DIR\n");
    return 2;
  }
  fs::path out = argv[1];
  WriteOptions w;
  std::vector<Setup> setups;
  // A separate wal_dir: a flushed file, then deletes and new keys in the WAL only.
  setups.push_back({"wal_dir", true, false, false, {"default"}, [&](DB* db, auto& h) {
    for (int i = 0; i < 1000; i++) ok(db->Put(w, h[0], key(i), "v" + std::to_string(i)), "put");
    ok(db->Flush(FlushOptions(), h[0]), "flush");
    for (int i = 0; i < 1000; i += 3) ok(db->Delete(w, h[0], key(i)), "delete");
    for (int i = 1000; i < 1100; i++) ok(db->Put(w, h[0], key(i), "wal-only"), "put");
  }});
  // Range deletions: flushed, rewritten over, and one in the WAL only.
  setups.push_back({"range_deletes", false, false, false, {"default"}, [&](DB* db, auto& h) {
    for (int i = 0; i < 1000; i++) ok(db->Put(w, h[0], key(i), "v"), "put");
    ok(db->Flush(FlushOptions(), h[0]), "flush");
    ok(db->DeleteRange(w, h[0], key(100), key(300)), "delete range");
    ok(db->Flush(FlushOptions(), h[0]), "flush");
    for (int i = 150; i < 170; i++) ok(db->Put(w, h[0], key(i), "after"), "put");
    ok(db->Flush(FlushOptions(), h[0]), "flush");
    ok(db->DeleteRange(w, h[0], key(500), key(520)), "delete range (WAL only)");
  }});
  // Three column families and merge operands: over values in a file, alone,
  // over deletions, flushed and in the WAL.
  setups.push_back({"merge_cfs", false, true, false, {"default", "one", "two"}, [&](DB* db, auto& h) {
    for (size_t c = 0; c < h.size(); c++) {
      int base = static_cast<int>(c) * 200;
      for (int i = base; i < base + 700; i++) ok(db->Put(w, h[c], key(i), "v"), "put");
      ok(db->Flush(FlushOptions(), h[c]), "flush");
      for (int i = base; i < base + 900; i += 4) ok(db->Merge(w, h[c], key(i), "m"), "merge");
      for (int i = base + 1; i < base + 700; i += 9) ok(db->Delete(w, h[c], key(i)), "delete");
      ok(db->Flush(FlushOptions(), h[c]), "flush");
      for (int i = base + 2; i < base + 1000; i += 6) ok(db->Merge(w, h[c], key(i), "wal"), "merge");
    }
  }});
  // TTL (DBWithTTL: a timestamp after each value; nothing has expired).
  setups.push_back({"ttl", false, false, true, {"default"}, [&](DB* db, auto& h) {
    for (int i = 0; i < 900; i++) ok(db->Put(w, h[0], key(i), "ttl value"), "put");
    ok(db->Flush(FlushOptions(), h[0]), "flush");
    for (int i = 0; i < 900; i += 5) ok(db->Delete(w, h[0], key(i)), "delete");
    ok(db->Flush(FlushOptions(), h[0]), "flush");
    CompactRangeOptions cr;
    ok(db->CompactRange(cr, h[0], nullptr, nullptr), "compact");
    for (int i = 900; i < 1000; i++) ok(db->Put(w, h[0], key(i), "wal"), "put");
  }});
  for (auto& s : setups) write(out, s);
  return 0;
}
