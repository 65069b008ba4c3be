// The RocksDB 7.8 half of the cross-version corpus (see README.md): writes
// one case with Debian's librocksdb-dev (or any RocksDB whose headers and
// library it is compiled against) and prints each probe's answer; also
// checks that a database written elsewhere opens here with its filters used.
//
//   writer write MODE DIR CF_OPTIONS TABLE_OPTIONS GROUP...
//     MODE: sst (one group, written with SstFileWriter to DIR/out.sst, then
//     ingested) or db (each group put and flushed in turn; a group whose
//     file name ends in ".compact" is then compacted to the last level).
//     Each GROUP file has lines "k HEX" (keys, sorted) and "p HEX" (probes).
//     Prints "version V", one "file NAME LEVEL SMALLEST_HEX LARGEST_HEX" per
//     live SST file, then one "answer GROUP INDEX 0|1" per probe: 0 when the
//     Get raised rocksdb.bloom.filter.useful or .prefix.useful (a filter
//     said "definitely not"), else 1.
//   writer check DIR TABLE_OPTIONS KEYS_FILE
//     Opens the database in DIR with those table options (its own OPTIONS
//     file is not read), Gets every key of KEYS_FILE (lines "k HEX") and as
//     many absent keys; prints "found N/M useful U" and fails unless every
//     key is found and U > 0.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/sst_file_writer.h"
#include "rocksdb/statistics.h"
#include "rocksdb/table.h"
#include "rocksdb/version.h"

using namespace ROCKSDB_NAMESPACE;

namespace {

void Check(const Status& s, const char* what) {
  if (!s.ok()) {
    std::cerr << what << ": " << s.ToString() << "\n";
    std::exit(1);
  }
}

std::string Hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

std::string Unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  }
  return out;
}

struct Group {
  std::string path;
  std::vector<std::string> keys;
  std::vector<std::string> probes;
};

Group ReadGroup(const std::string& path) {
  Group g;
  g.path = path;
  std::ifstream in(path);
  std::string tag, hex;
  while (in >> tag >> hex) {
    (tag == "k" ? g.keys : g.probes).push_back(Unhex(hex));
  }
  return g;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Options MakeOptions(const std::string& cf, const std::string& table) {
  Options base;
  base.create_if_missing = true;
  base.write_buffer_size = 64 << 20;
  base.target_file_size_base = 64 << 20;
  base.disable_auto_compactions = true;
  ConfigOptions config;
  Options opts;
  Check(GetOptionsFromString(config, base, cf, &opts), "cf options");
  BlockBasedTableOptions t;
  Check(GetBlockBasedTableOptionsFromString(config, t, table, &t),
        "table options");
  opts.table_factory.reset(NewBlockBasedTableFactory(t));
  opts.statistics = CreateDBStatistics();
  return opts;
}

uint64_t Useful(const Options& o) {
  return o.statistics->getTickerCount(BLOOM_FILTER_USEFUL) +
         o.statistics->getTickerCount(BLOOM_FILTER_PREFIX_USEFUL);
}

int Write(int argc, char** argv) {
  std::string mode = argv[2], dir = argv[3];
  Options opts = MakeOptions(argv[4], argv[5]);
  std::vector<Group> groups;
  for (int i = 6; i < argc; ++i) groups.push_back(ReadGroup(argv[i]));
  std::cout << "version " << ROCKSDB_MAJOR << "." << ROCKSDB_MINOR << "."
            << ROCKSDB_PATCH << "\n";
  std::unique_ptr<DB> db;
  if (mode == "sst") {
    std::string sst = dir + "/out.sst";
    SstFileWriter w(EnvOptions(), opts);
    Check(w.Open(sst), "open sst");
    for (const std::string& k : groups.at(0).keys) {
      Check(w.Put(k, "v" + k), "put");
    }
    Check(w.Finish(), "finish");
    DB* raw;
    Check(DB::Open(opts, dir + "/db", &raw), "open db");
    db.reset(raw);
    IngestExternalFileOptions ingest;
    ingest.move_files = false;
    ingest.write_global_seqno = false;
    Check(db->IngestExternalFile({sst}, ingest), "ingest");
  } else {
    DB* raw;
    Check(DB::Open(opts, dir + "/db", &raw), "open db");
    db.reset(raw);
    for (const Group& g : groups) {
      for (const std::string& k : g.keys) {
        Check(db->Put(WriteOptions(), k, "v" + k), "put");
      }
      Check(db->Flush(FlushOptions()), "flush");
      if (EndsWith(g.path, ".compact")) {
        CompactRangeOptions c;
        c.bottommost_level_compaction = BottommostLevelCompaction::kForce;
        Slice begin(g.keys.front()), end(g.keys.back());
        Check(db->CompactRange(c, &begin, &end), "compact");
      }
    }
  }
  std::vector<LiveFileMetaData> files;
  db->GetLiveFilesMetaData(&files);
  for (const LiveFileMetaData& f : files) {
    std::cout << "file " << f.name << " " << f.level << " "
              << Hex(f.smallestkey) << " " << Hex(f.largestkey) << "\n";
  }
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const Group& g = groups[gi];
    for (size_t i = 0; i < g.probes.size(); ++i) {
      uint64_t before = Useful(opts);
      std::string value;
      Status s = db->Get(ReadOptions(), g.probes[i], &value);
      if (!s.ok() && !s.IsNotFound()) Check(s, "get");
      std::cout << "answer " << gi << " " << i << " "
                << (Useful(opts) > before ? 0 : 1) << "\n";
    }
  }
  Check(db->Close(), "close");
  return 0;
}

int CheckDb(char** argv) {
  std::string dir = argv[2];
  Options opts = MakeOptions("", argv[3]);
  opts.create_if_missing = false;
  Group g = ReadGroup(argv[4]);
  DB* raw;
  Check(DB::Open(opts, dir, &raw), "open");
  std::unique_ptr<DB> db(raw);
  size_t found = 0;
  for (const std::string& k : g.keys) {
    std::string v;
    found += db->Get(ReadOptions(), k, &v).ok();
  }
  uint64_t before = Useful(opts);
  for (const std::string& k : g.keys) {
    std::string v;
    Status s = db->Get(ReadOptions(), k + "~absent", &v);
    if (s.ok()) {
      std::cerr << "absent key found\n";
      return 1;
    }
  }
  uint64_t useful = Useful(opts) - before;
  std::cout << "RocksDB " << ROCKSDB_MAJOR << "." << ROCKSDB_MINOR << "."
            << ROCKSDB_PATCH << ": found " << found << "/" << g.keys.size()
            << " useful " << useful << "\n";
  return found == g.keys.size() && useful > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 7 && std::string(argv[1]) == "write") return Write(argc, argv);
  if (argc == 5 && std::string(argv[1]) == "check") return CheckDb(argv);
  std::cerr << "usage: writer write MODE DIR CF_OPTIONS TABLE_OPTIONS GROUP...\n"
               "       writer check DIR TABLE_OPTIONS KEYS_FILE\n";
  return 2;
}
