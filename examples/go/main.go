// A user of the Go package rocks-ribbon/go/ribbon (go/ribbon: the C API
// through cgo, linked statically), run against files RocksDB wrote. It
// fails (exit 1) with a one-line message on any wrong answer.
//
//	cargo build --release -p ribbon-capi
//	cd examples/go && go run . ../../conformance/v1/sst/full_ribbon_fv7_zstd_xxh3
//
// It opens NAME.sst, asks its filter for every probe of NAME.probes.hex in
// one batch and compares each answer with NAME.answers.txt (what RocksDB
// 11.8.1's own Get answered); builds a RocksDB-format Ribbon filter whose
// members must all match; and checks that a missing file and a truncated
// filter are errors that say why.
package main

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"rocks-ribbon/go/ribbon"
)

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
	if err := ribbon.CheckABI(); err != nil {
		return err
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
	sst, err := ribbon.OpenSst(base + ".sst")
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

	var rerr *ribbon.Error
	if _, err := ribbon.OpenSst("/nonexistent/file.sst"); !errors.As(err, &rerr) || rerr.Code != ribbon.ErrIO || rerr.Message == "" {
		return fmt.Errorf("a missing file: %v, not an I/O error with its message", err)
	} else {
		fmt.Printf("missing file: %v\n", err)
	}

	members := make([][]byte, 10000)
	for i := range members {
		members[i] = []byte(fmt.Sprintf("member%08d", i))
	}
	filter, err := ribbon.BuildFilter("ribbonfilter:10", members)
	if err != nil {
		return err
	}
	answers, err := ribbon.FilterMayMatchMany(filter, members)
	if err != nil {
		return err
	}
	for i, a := range answers {
		if !a {
			return fmt.Errorf("member %d of the filter does not match", i)
		}
	}
	fmt.Printf("RocksDB-format Ribbon filter: %d bytes; all %d members may match\n", len(filter), len(members))
	if _, err := ribbon.FilterMayMatchMany(filter[:len(filter)-3], members); !errors.As(err, &rerr) || rerr.Code != ribbon.ErrCorrupt {
		return fmt.Errorf("a truncated filter: %v, not a corrupt-filter error", err)
	} else {
		fmt.Printf("truncated filter: %v\n", err)
	}
	fmt.Println("Go example: OK")
	return nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run . PATH_WITHOUT_.sst")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "go example:", err)
		os.Exit(1)
	}
}
