// The C API from Go (cgo), against files RocksDB wrote. It fails (exit 1)
// with a one-line message on any wrong answer.
//
//	CGO_CFLAGS="-I$PWD/capi/include" CGO_LDFLAGS="$TARGET/release/libribbon.a -lm -ldl -lpthread" \
//	    go run ./examples/go conformance/v1/sst/full_ribbon_fv7_zstd_xxh3
//
// It opens NAME.sst, asks its filter for every probe of NAME.probes.hex in
// one batch and compares each answer with NAME.answers.txt (what RocksDB
// 11.8.1's own Get answered); builds a RocksDB-format Ribbon filter whose
// members must all match; and checks that a missing file is an error.
package main

/*
#include <stdlib.h>
#include "ribbon.h"
*/
import "C"

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"
)

// ribbonError is a failed call: its code and ribbon_last_error().
func ribbonError(rc C.int, what string) error {
	if rc == C.RIBBON_OK {
		return nil
	}
	return fmt.Errorf("%s: error %d: %s", what, int(rc), C.GoString(C.ribbon_last_error()))
}

// cKeys copies keys into C memory (cgo may not pass Go memory that holds
// Go pointers): one buffer of all bytes, and the pointer and length
// arrays. free releases them.
type cKeys struct {
	buf  unsafe.Pointer
	ptrs **C.uint8_t
	lens *C.size_t
	n    int
}

func newCKeys(keys [][]byte) cKeys {
	total := 1
	for _, k := range keys {
		total += len(k)
	}
	n := len(keys)
	buf := C.malloc(C.size_t(total))
	ptrs := (**C.uint8_t)(C.malloc(C.size_t(n+1) * C.size_t(unsafe.Sizeof(uintptr(0)))))
	lens := (*C.size_t)(C.malloc(C.size_t(n+1) * C.size_t(unsafe.Sizeof(C.size_t(0)))))
	bufs := unsafe.Slice((*byte)(buf), total)
	ps := unsafe.Slice(ptrs, n+1)
	ls := unsafe.Slice(lens, n+1)
	off := 0
	for i, k := range keys {
		copy(bufs[off:], k)
		ps[i] = (*C.uint8_t)(unsafe.Pointer(&bufs[off]))
		ls[i] = C.size_t(len(k))
		off += len(k)
	}
	return cKeys{buf, ptrs, lens, n}
}

func (k cKeys) free() {
	C.free(k.buf)
	C.free(unsafe.Pointer(k.ptrs))
	C.free(unsafe.Pointer(k.lens))
}

// Sst is an open SST file.
type Sst struct{ h *C.RibbonSst }

// OpenSst opens the SST file at path.
func OpenSst(path string) (*Sst, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var h *C.RibbonSst
	if err := ribbonError(C.ribbon_sst_open(cpath, &h), path); err != nil {
		return nil, err
	}
	return &Sst{h}, nil
}

// Close closes the file.
func (s *Sst) Close() { C.ribbon_sst_close(s.h); s.h = nil }

// MayMatchMany answers, for each key, whether Get(key) gets past the filter.
func (s *Sst) MayMatchMany(keys [][]byte) ([]bool, error) {
	ck := newCKeys(keys)
	defer ck.free()
	out := (*C.uint8_t)(C.malloc(C.size_t(len(keys) + 1)))
	defer C.free(unsafe.Pointer(out))
	rc := C.ribbon_sst_may_match_many(s.h, ck.ptrs, ck.lens, C.size_t(ck.n), out)
	if err := ribbonError(rc, "may_match_many"); err != nil {
		return nil, err
	}
	answers := make([]bool, len(keys))
	for i, a := range unsafe.Slice(out, len(keys)) {
		answers[i] = a != 0
	}
	return answers, nil
}

// BuildFilter builds the filter block RocksDB writes for keys under policy.
func BuildFilter(policy string, keys [][]byte) ([]byte, error) {
	cpolicy := C.CString(policy)
	defer C.free(unsafe.Pointer(cpolicy))
	ck := newCKeys(keys)
	defer ck.free()
	var p *C.uint8_t
	var n C.size_t
	if err := ribbonError(C.ribbon_filter_build(cpolicy, 7, ck.ptrs, ck.lens, C.size_t(ck.n), &p, &n), "filter_build"); err != nil {
		return nil, err
	}
	defer C.ribbon_bytes_free(p, n)
	return C.GoBytes(unsafe.Pointer(p), C.int(n)), nil
}

// FilterMayMatchMany opens filter bytes and asks them for keys.
func FilterMayMatchMany(filter []byte, keys [][]byte) ([]bool, error) {
	cbytes := C.CBytes(filter)
	defer C.free(cbytes)
	var h *C.RibbonFilter
	if err := ribbonError(C.ribbon_filter_open((*C.uint8_t)(cbytes), C.size_t(len(filter)), &h), "filter_open"); err != nil {
		return nil, err
	}
	defer C.ribbon_filter_close(h)
	ck := newCKeys(keys)
	defer ck.free()
	out := (*C.uint8_t)(C.malloc(C.size_t(len(keys) + 1)))
	defer C.free(unsafe.Pointer(out))
	if err := ribbonError(C.ribbon_filter_may_match_many(h, ck.ptrs, ck.lens, C.size_t(ck.n), out), "filter_may_match_many"); err != nil {
		return nil, err
	}
	answers := make([]bool, len(keys))
	for i, a := range unsafe.Slice(out, len(keys)) {
		answers[i] = a != 0
	}
	return answers, nil
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		lines = append(lines, strings.TrimSpace(s.Text()))
	}
	return lines, s.Err()
}

func run(base string) error {
	if C.ribbon_abi_version() != C.RIBBON_ABI_VERSION {
		return errors.New("the library's ABI version is not the header's")
	}
	probes, err := readLines(base + ".probes.hex")
	if err != nil {
		return err
	}
	want, err := readLines(base + ".answers.txt")
	if err != nil {
		return err
	}
	if len(probes) != len(want) || len(probes) == 0 {
		return errors.New("probes and answers differ in count")
	}
	keys := make([][]byte, len(probes))
	for i, p := range probes {
		if keys[i], err = hex.DecodeString(p); err != nil {
			return fmt.Errorf("probe %d: %v", i, err)
		}
	}
	sst, err := OpenSst(base + ".sst")
	if err != nil {
		return err
	}
	defer sst.Close()
	got, err := sst.MayMatchMany(keys)
	if err != nil {
		return err
	}
	positives := 0
	for i := range got {
		if got[i] != (want[i] == "1") {
			return fmt.Errorf("probe %d (%s): answered %v, RocksDB's Get %s", i, probes[i], got[i], want[i])
		}
		if got[i] {
			positives++
		}
	}
	fmt.Printf("%s.sst: %d probes, %d may match, all as RocksDB's Get answered\n", base, len(keys), positives)

	if _, err := OpenSst("/nonexistent/file.sst"); err == nil {
		return errors.New("a missing file opened")
	} else {
		fmt.Printf("missing file: %v\n", err)
	}

	members := make([][]byte, 10000)
	for i := range members {
		members[i] = []byte(fmt.Sprintf("member%08d", i))
	}
	filter, err := BuildFilter("ribbonfilter:10", members)
	if err != nil {
		return err
	}
	answers, err := FilterMayMatchMany(filter, members)
	if err != nil {
		return err
	}
	for i, a := range answers {
		if !a {
			return fmt.Errorf("member %d of the filter does not match", i)
		}
	}
	fmt.Printf("RocksDB-format Ribbon filter: %d bytes; all %d members may match\n", len(filter), len(members))
	if _, err := FilterMayMatchMany(filter[:len(filter)-3], members); err == nil {
		return errors.New("a truncated filter opened")
	}
	fmt.Println("Go example: OK")
	return nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./examples/go PATH_WITHOUT_.sst")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "go example:", err)
		os.Exit(1)
	}
}
