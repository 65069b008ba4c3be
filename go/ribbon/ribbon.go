package ribbon

/*
#cgo CFLAGS: -I${SRCDIR}/../../capi/include
#include <stdlib.h>
#include "ribbon.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// DefaultFormatVersion is the format_version BuildFilter writes (RocksDB's
// default BlockBasedTableOptions::format_version).
const DefaultFormatVersion = 7

// The error codes of ribbon.h.
const (
	ErrNull        = int(C.RIBBON_ERR_NULL)
	ErrArgument    = int(C.RIBBON_ERR_ARGUMENT)
	ErrIO          = int(C.RIBBON_ERR_IO)
	ErrCorrupt     = int(C.RIBBON_ERR_CORRUPT)
	ErrUnsupported = int(C.RIBBON_ERR_UNSUPPORTED)
	ErrBuild       = int(C.RIBBON_ERR_BUILD)
	ErrTooLarge    = int(C.RIBBON_ERR_TOO_LARGE)
	ErrPanic       = int(C.RIBBON_ERR_PANIC)
)

// Error is a failed call: what was asked, the C function's code and
// ribbon_last_error()'s one line.
type Error struct {
	Op      string
	Code    int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: error %d: %s", e.Op, e.Code, e.Message)
}

// call runs f, which makes one C call and returns its code, with the
// goroutine on one OS thread, so that ribbon_last_error() (per thread) is
// that call's message.
func call(op string, f func() C.int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rc := f()
	if rc == C.RIBBON_OK {
		return nil
	}
	return &Error{Op: op, Code: int(rc), Message: C.GoString(C.ribbon_last_error())}
}

// CheckABI fails when the library linked is not the one ribbon.h describes.
func CheckABI() error {
	if got := C.ribbon_abi_version(); got != C.RIBBON_ABI_VERSION {
		return fmt.Errorf("libribbon's ABI version is %d, ribbon.h's %d: rebuild the library", uint32(got), uint32(C.RIBBON_ABI_VERSION))
	}
	return nil
}

// cKeys: keys copied into C memory (cgo may not pass Go memory that holds
// Go pointers): one buffer of all bytes, and the pointer and length arrays.
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
	if buf == nil || ptrs == nil || lens == nil {
		panic("ribbon: out of C memory")
	}
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

// answers runs f with an out buffer of n bytes and returns them as bools.
func answers(op string, n int, f func(out *C.uint8_t) C.int) ([]bool, error) {
	out := (*C.uint8_t)(C.malloc(C.size_t(n + 1)))
	defer C.free(unsafe.Pointer(out))
	if err := call(op, func() C.int { return f(out) }); err != nil {
		return nil, err
	}
	res := make([]bool, n)
	for i, a := range unsafe.Slice(out, n) {
		res[i] = a != 0
	}
	return res, nil
}

// Sst is an open SST file (ribbon_sst_open): its filter, as RocksDB's Get
// asks it.
type Sst struct{ h *C.RibbonSst }

// OpenSst opens the SST file at path; every block checksum is verified.
func OpenSst(path string) (*Sst, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var h *C.RibbonSst
	if err := call(path, func() C.int { return C.ribbon_sst_open(cpath, &h) }); err != nil {
		return nil, err
	}
	return &Sst{h}, nil
}

// Close closes the file; later calls are no-ops.
func (s *Sst) Close() {
	C.ribbon_sst_close(s.h)
	s.h = nil
}

// MayMatchMany answers, for each key, whether Get(key) gets past the
// file's filter (false: the key is certainly not in the file).
func (s *Sst) MayMatchMany(keys [][]byte) ([]bool, error) {
	ck := newCKeys(keys)
	defer ck.free()
	return answers("sst_may_match_many", len(keys), func(out *C.uint8_t) C.int {
		return C.ribbon_sst_may_match_many(s.h, ck.ptrs, ck.lens, C.size_t(ck.n), out)
	})
}

// BuildFilter builds the filter block RocksDB writes for keys under policy
// ("ribbonfilter:10", "bloomfilter:10", ...), byte for byte, at
// DefaultFormatVersion.
func BuildFilter(policy string, keys [][]byte) ([]byte, error) {
	return BuildFilterVersion(policy, DefaultFormatVersion, keys)
}

// BuildFilterVersion is BuildFilter at another format_version (2 to 7).
func BuildFilterVersion(policy string, formatVersion int, keys [][]byte) ([]byte, error) {
	cpolicy := C.CString(policy)
	defer C.free(unsafe.Pointer(cpolicy))
	ck := newCKeys(keys)
	defer ck.free()
	var p *C.uint8_t
	var n C.size_t
	if err := call("filter_build", func() C.int {
		return C.ribbon_filter_build(cpolicy, C.int(formatVersion), ck.ptrs, ck.lens, C.size_t(ck.n), &p, &n)
	}); err != nil {
		return nil, err
	}
	defer C.ribbon_bytes_free(p, n)
	return C.GoBytes(unsafe.Pointer(p), C.int(n)), nil
}

// Filter is an open RocksDB filter block (ribbon_filter_open), read as
// RocksDB reads it.
type Filter struct{ h *C.RibbonFilter }

// OpenFilter opens filter bytes (the library keeps its own copy). Bytes
// that are not a filter RocksDB writes are an error (ErrCorrupt), never a
// filter that answers every key alike.
func OpenFilter(data []byte) (*Filter, error) {
	buf := C.CBytes(data)
	defer C.free(buf)
	var h *C.RibbonFilter
	if err := call("filter_open", func() C.int {
		return C.ribbon_filter_open((*C.uint8_t)(buf), C.size_t(len(data)), &h)
	}); err != nil {
		return nil, err
	}
	return &Filter{h}, nil
}

// Close releases the filter; later calls are no-ops.
func (f *Filter) Close() {
	C.ribbon_filter_close(f.h)
	f.h = nil
}

// MayMatchMany answers, for each key, whether the filter may hold it.
func (f *Filter) MayMatchMany(keys [][]byte) ([]bool, error) {
	ck := newCKeys(keys)
	defer ck.free()
	return answers("filter_may_match_many", len(keys), func(out *C.uint8_t) C.int {
		return C.ribbon_filter_may_match_many(f.h, ck.ptrs, ck.lens, C.size_t(ck.n), out)
	})
}

// FilterMayMatchMany opens filter bytes, asks them for keys and closes them.
func FilterMayMatchMany(filter []byte, keys [][]byte) ([]bool, error) {
	f, err := OpenFilter(filter)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.MayMatchMany(keys)
}
