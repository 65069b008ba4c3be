package ribbon

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestBuildAndQuery(t *testing.T) {
	if err := CheckABI(); err != nil {
		t.Fatal(err)
	}
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("key%04d", i))
	}
	filter, err := BuildFilter("ribbonfilter:10", keys)
	if err != nil {
		t.Fatal(err)
	}
	f, err := OpenFilter(filter)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := f.MayMatchMany(keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		if !g {
			t.Fatalf("member %d does not match", i)
		}
	}
	f.Close() // twice: a no-op
}

// Errors carry the failing call's own message, read on its OS thread,
// whichever goroutine and thread made it.
func TestErrorsCarryTheirOwnMessage(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 8; i++ {
				path := fmt.Sprintf("/nonexistent/%d-%d.sst", g, i)
				_, err := OpenSst(path)
				var e *Error
				if !errors.As(err, &e) || e.Code != ErrIO {
					errs <- fmt.Errorf("%s: %v, not an I/O error", path, err)
					return
				}
				if want := "cannot read " + path; len(e.Message) < len(want) || e.Message[:len(want)] != want {
					errs <- fmt.Errorf("%s: message %q is not this call's", path, e.Message)
					return
				}
				if _, err := BuildFilter("nosuchpolicy:1", nil); !errors.As(err, &e) || e.Code != ErrArgument {
					errs <- fmt.Errorf("a bad policy: %v", err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, err := OpenFilter([]byte{1, 2, 3}); err == nil {
		t.Error("three bytes opened as a filter")
	}
}
