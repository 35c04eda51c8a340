// The h2spec command the conformance test runs. The shared copy of h2spec (../shared/tools/h2spec/src,
// summerwind/h2spec at af83a65, MIT) lacks cmd/h2spec, its cobra front end, so this small main drives
// the library instead: the same three groups h2spec.Run runs (generic, http2, hpack), then one JSON
// line per case to -report, named by h2spec's own id ("http2/6.9.1/3", what `h2spec <id>` runs), so
// the test reads each case's outcome from data rather than from h2spec's coloured progress text.
//
// Built by test/helpers/h2spec.ts: GO111MODULE=off, GOPATH holding the shared source as
// github.com/summerwind/h2spec beside Debian's /usr/share/gocode (golang-golang-x-net-dev,
// golang-github-fatih-color-dev); no module download.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/summerwind/h2spec/config"
	"github.com/summerwind/h2spec/generic"
	"github.com/summerwind/h2spec/hpack"
	"github.com/summerwind/h2spec/http2"
	"github.com/summerwind/h2spec/spec"
)

// caseResult is one line of the report.
type caseResult struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	Requirement string `json:"requirement"`
	Outcome     string `json:"outcome"` // passed, failed or skipped
	Error       string `json:"error,omitempty"`
	Millis      int64  `json:"ms"`
}

func main() {
	host := flag.String("host", "127.0.0.1", "the server's address")
	port := flag.Int("port", 0, "the server's port")
	path := flag.String("path", "/", "the path of the requests h2spec sends")
	timeout := flag.Duration("timeout", 2*time.Second, "how long a case waits for the server")
	report := flag.String("report", "", "the file that gets one JSON line per case")
	flag.Parse()
	if *port == 0 || *report == "" {
		fmt.Fprintln(os.Stderr, "usage: h2spec -port PORT -report FILE [-host HOST] [-path PATH] [-timeout 2s] [ID...]")
		os.Exit(2)
	}

	// Ids given (http2/5.1, http2/5.1/6) run those cases only, as `h2spec ID...` does: to replay one.
	c := &config.Config{Host: *host, Port: *port, Path: *path, Timeout: *timeout, MaxHeaderLen: 4000, Sections: flag.Args()}
	groups := []*spec.TestGroup{generic.Spec(), http2.Spec(), hpack.Spec()}
	for _, group := range groups {
		group.Test(c)
	}

	var results []caseResult
	for _, group := range groups {
		results = collect(group, results)
	}
	out, err := os.Create(*report)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	encoder := json.NewEncoder(out)
	failed := 0
	for _, result := range results {
		if result.Outcome == "failed" {
			failed++
		}
		if err := encoder.Encode(result); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if err := out.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("%d cases, %d failed\n", len(results), failed)
	if failed > 0 {
		os.Exit(1)
	}
}

// collect appends the results of a group's cases, then of its subgroups, in h2spec's order.
func collect(group *spec.TestGroup, results []caseResult) []caseResult {
	for _, tc := range append(group.Tests, group.StrictTests...) {
		result := tc.Result
		if result == nil {
			continue // a strict case, not run without --strict
		}
		line := caseResult{
			ID:          fmt.Sprintf("%s/%d", group.ID(), result.Sequence),
			Description: tc.Desc,
			Requirement: tc.Requirement,
			Outcome:     "passed",
			Millis:      result.Duration.Milliseconds(),
		}
		if result.Skipped {
			line.Outcome = "skipped"
		} else if result.Failed {
			line.Outcome = "failed"
			line.Error = result.Error.Error()
		}
		results = append(results, line)
	}
	for _, sub := range group.Groups {
		results = collect(sub, results)
	}
	return results
}
