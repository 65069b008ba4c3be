/* The C API end to end, against files RocksDB wrote: every check fails
 * the program (exit 1) with a one-line message.
 *
 *   cargo build --release -p ribbon-capi
 *   cc -O2 examples/c/sst_query.c $(pkg-config --cflags --libs target/release/ribbon.pc) -o sst_query
 *   ./sst_query conformance/v1/sst/full_ribbon_fv7_zstd_xxh3   (the path without .sst)
 *
 * 1. Opens NAME.sst and asks its filter for every probe of NAME.probes.hex
 *    in one batch; each answer must equal NAME.answers.txt, what RocksDB
 *    11.8.1's own Get answered. One key at a time must agree.
 * 2. Builds a RocksDB-format Ribbon filter and a standalone filter from
 *    keys; every key must "may match"; the standalone filter goes through a
 *    file and comes back memory-mapped.
 * 3. Error paths: a missing file is RIBBON_ERR_IO with a message, NULL
 *    keys are RIBBON_ERR_NULL, corrupt bytes are RIBBON_ERR_CORRUPT.
 * 4. Reconciliation: the difference of two sketches is the known one. */
#include "ribbon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what) {
    fprintf(stderr, "sst_query: %s (last error: %s)\n", what, ribbon_last_error());
    exit(1);
}

static void check(int rc, const char *what) {
    if (rc != RIBBON_OK) {
        fprintf(stderr, "sst_query: %s: error %d: %s\n", what, rc, ribbon_last_error());
        exit(1);
    }
}

/* Reads a text file's lines into *lines (each NUL-terminated); returns the count. */
static size_t read_lines(const char *path, char ***lines) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "sst_query: cannot open %s\n", path);
        exit(1);
    }
    size_t n = 0, cap = 0;
    char buf[4096];
    *lines = NULL;
    while (fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\r\n")] = 0;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            *lines = realloc(*lines, cap * sizeof **lines);
            if (!*lines) fail("out of memory");
        }
        (*lines)[n++] = strdup(buf);
    }
    fclose(f);
    return n;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: sst_query PATH_WITHOUT_.sst\n");
        return 2;
    }
    if (ribbon_abi_version() != RIBBON_ABI_VERSION) fail("the library's ABI version is not the header's");

    /* 1. An SST file RocksDB wrote, against RocksDB's recorded answers. */
    char path[4096];
    char **hex, **answers;
    snprintf(path, sizeof path, "%s.probes.hex", argv[1]);
    size_t n = read_lines(path, &hex);
    snprintf(path, sizeof path, "%s.answers.txt", argv[1]);
    if (read_lines(path, &answers) != n || n == 0) fail("probes and answers differ in count");
    uint8_t **keys = malloc(n * sizeof *keys);
    size_t *lens = malloc(n * sizeof *lens);
    uint8_t *out = malloc(n);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(hex[i]) / 2;
        keys[i] = malloc(len ? len : 1);
        lens[i] = len;
        for (size_t j = 0; j < len; j++) {
            int hi = hexval(hex[i][2 * j]), lo = hexval(hex[i][2 * j + 1]);
            if (hi < 0 || lo < 0) fail("a probe is not hex");
            keys[i][j] = (uint8_t)(hi << 4 | lo);
        }
    }
    snprintf(path, sizeof path, "%s.sst", argv[1]);
    RibbonSst *sst = NULL;
    check(ribbon_sst_open(path, &sst), path);
    check(ribbon_sst_may_match_many(sst, (const uint8_t *const *)keys, lens, n, out), "may_match_many");
    size_t positives = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t one;
        check(ribbon_sst_may_match(sst, keys[i], lens[i], &one), "may_match");
        if (out[i] != (answers[i][0] == '1') || one != out[i]) {
            fprintf(stderr, "sst_query: probe %zu (%s): answered %d (one by one %d), RocksDB's Get %s\n", i,
                    hex[i], out[i], one, answers[i]);
            return 1;
        }
        positives += out[i];
    }
    char *info = NULL;
    check(ribbon_sst_info_json(sst, &info), "info");
    if (!strstr(info, "\"filter_layout\":")) fail("info JSON has no filter_layout");
    printf("%s: %zu probes, %zu may match, all as RocksDB's Get answered\n  info: %.120s...\n", path, n,
           positives, info);
    ribbon_string_free(info);
    /* NULL keys with n > 0 are an error, not a crash. */
    if (ribbon_sst_may_match_many(sst, NULL, lens, n, out) != RIBBON_ERR_NULL) fail("NULL keys accepted");
    if (strlen(ribbon_last_error()) == 0) fail("no message for NULL keys");
    ribbon_sst_close(sst);

    /* A missing file: RIBBON_ERR_IO, a message, and the handle left NULL. */
    RibbonSst *missing = (RibbonSst *)1;
    if (ribbon_sst_open("/nonexistent/file.sst", &missing) != RIBBON_ERR_IO || missing != NULL)
        fail("a missing file is not RIBBON_ERR_IO");
    printf("missing file: %s\n", ribbon_last_error());

    /* 2. Filters built from keys: every key may match. */
    enum { M = 10000 };
    uint8_t *mk = malloc(M * 16);
    const uint8_t **mkeys = malloc(M * sizeof *mkeys);
    size_t *mlens = malloc(M * sizeof *mlens);
    uint8_t *mout = malloc(M);
    for (size_t i = 0; i < M; i++) {
        mlens[i] = (size_t)snprintf((char *)mk + 16 * i, 16, "member%08zu", i);
        mkeys[i] = mk + 16 * i;
    }
    uint8_t *bytes = NULL;
    size_t len = 0;
    check(ribbon_filter_build("ribbonfilter:10", 7, mkeys, mlens, M, &bytes, &len), "filter_build");
    RibbonFilter *filter = NULL;
    check(ribbon_filter_open(bytes, len, &filter), "filter_open");
    check(ribbon_filter_may_match_many(filter, mkeys, mlens, M, mout), "filter_may_match_many");
    for (size_t i = 0; i < M; i++)
        if (!mout[i]) fail("a member of the RocksDB-format filter does not match");
    char *desc = NULL;
    check(ribbon_filter_describe(filter, &desc), "describe");
    printf("RocksDB-format filter: %zu bytes, %s; all %d members may match\n", len, desc, M);
    ribbon_string_free(desc);
    ribbon_filter_close(filter);
    /* Corrupt bytes: the trailer cut off. */
    if (ribbon_filter_open(bytes, len - 3, &filter) != RIBBON_ERR_CORRUPT) fail("a truncated filter opened");
    ribbon_bytes_free(bytes, len);

    RibbonStandaloneConfig config;
    check(ribbon_standalone_config_default(&config), "config_default");
    config.width = 64;
    config.balanced = 1;
    RibbonStandalone *standalone = NULL;
    check(ribbon_standalone_build(&config, mkeys, mlens, M, &standalone), "standalone_build");
    check(ribbon_standalone_serialize(standalone, &bytes, &len), "serialize");
    ribbon_standalone_close(standalone);
    char tmp[] = "/tmp/ribbon-c-example-XXXXXX";
    int fd = mkstemp(tmp);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "wb");
    if (!f || fwrite(bytes, 1, len, f) != len || fclose(f) != 0) fail("cannot write the filter file");
    ribbon_bytes_free(bytes, len);
    check(ribbon_standalone_open_path(tmp, &standalone), "standalone_open_path");
    check(ribbon_standalone_contains_many(standalone, mkeys, mlens, M, mout), "contains_many");
    for (size_t i = 0; i < M; i++)
        if (!mout[i]) fail("a member of the standalone filter does not match");
    uint64_t num_keys;
    double bpk, fp;
    check(ribbon_standalone_stats(standalone, &num_keys, &bpk, &fp), "stats");
    if (num_keys != M) fail("the standalone filter's key count is wrong");
    printf("Balanced Ribbon (mmap): %llu keys, %.3f bits/key, expected FP rate %.5f; all members match\n",
           (unsigned long long)num_keys, bpk, fp);
    ribbon_standalone_close(standalone);
    remove(tmp);

    /* 4. Reconciliation: A holds members 0..M-1 but 17, B members 5..M-1. */
    RibbonSketch *a = NULL, *b = NULL;
    check(ribbon_sketch_new(7, 200, &a), "sketch_new");
    check(ribbon_sketch_new(7, 200, &b), "sketch_new");
    for (size_t i = 0; i < M; i++) {
        if (i != 17) check(ribbon_sketch_insert_many(a, &mkeys[i], &mlens[i], 1), "insert A");
        if (i >= 5) check(ribbon_sketch_insert_many(b, &mkeys[i], &mlens[i], 1), "insert B");
    }
    RibbonDifference *d = NULL;
    check(ribbon_sketch_diff(a, b, &d), "diff");
    size_t only_a, only_b;
    check(ribbon_difference_count(d, 0, &only_a), "count");
    check(ribbon_difference_count(d, 1, &only_b), "count");
    if (only_a != 5 || only_b != 1) fail("the difference has the wrong size");
    const uint8_t *k;
    size_t klen;
    check(ribbon_difference_key(d, 1, 0, &k, &klen), "key");
    if (klen != mlens[17] || memcmp(k, mkeys[17], klen) != 0) fail("the key only in B is wrong");
    printf("reconcile: %zu keys only in A, %zu only in B (%.*s), as written\n", only_a, only_b, (int)klen, k);
    ribbon_difference_free(d);
    ribbon_sketch_free(a);
    ribbon_sketch_free(b);
    printf("C example: OK\n");
    return 0;
}
