// Command porcupine-check is zoneproof's thin wrapper around github.com/anishathalye/porcupine:
// it reads a register history (JSON, prepared by zoneproof.slo.linearizability), checks each
// key's operations against the register model (model.go) with a timeout, writes one JSON
// verdict per key and porcupine's HTML visualization of each non-linearizable key.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

const module = "github.com/anishathalye/porcupine"

type operationJSON struct {
	ID       int    `json:"id"`
	Client   int    `json:"client"`
	Key      string `json:"key"`
	Kind     string `json:"kind"`
	Value    string `json:"value"`
	Expected int64  `json:"expected"`
	Outcome  string `json:"outcome"`
	Rv       int64  `json:"rv"`
	Call     int64  `json:"call"`
	Return   *int64 `json:"return"`
}

type annotationJSON struct {
	Tag         string `json:"tag"`
	Start       int64  `json:"start"`
	End         int64  `json:"end"`
	Description string `json:"description"`
}

type historyJSON struct {
	Operations  []operationJSON  `json:"operations"`
	Annotations []annotationJSON `json:"annotations"`
}

type keyResult struct {
	Key            string  `json:"key"`
	Result         string  `json:"result"`
	Operations     int     `json:"operations"`
	Seconds        float64 `json:"seconds"`
	LastLinearized *int    `json:"last_linearized"`
	Frontier       []int   `json:"frontier"`
	State          string  `json:"state"`
	Visualization  string  `json:"visualization"`
}

type report struct {
	Porcupine string      `json:"porcupine"`
	TimeoutS  float64     `json:"timeout_s"`
	Seconds   float64     `json:"seconds"`
	Keys      []keyResult `json:"keys"`
}

var kinds = map[string]bool{"get": true, "put": true, "cas": true, "delete": true}
var outcomes = map[string]bool{outcomeOK: true, outcomeNotFound: true, outcomeConflict: true,
	outcomeUnknown: true}

func porcupineVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == module {
				return dep.Version
			}
		}
	}
	return "unknown"
}

// byKey validates the history and turns it into porcupine operations per key. An operation
// without a return time (outcome unknown) returns after every other one: porcupine's
// "infinity".
func byKey(h historyJSON) (map[string][]porcupine.Operation, error) {
	var last int64
	for _, op := range h.Operations {
		if op.Return != nil && *op.Return > last {
			last = *op.Return
		}
		if op.Call > last {
			last = op.Call
		}
	}
	never := last + int64(time.Second)
	keys := map[string][]porcupine.Operation{}
	for _, op := range h.Operations {
		if !kinds[op.Kind] || !outcomes[op.Outcome] || op.Key == "" {
			return nil, fmt.Errorf("operation %d: need a key, kind in get/put/cas/delete and outcome "+
				"in ok/not-found/conflict/unknown, got key %q kind %q outcome %q",
				op.ID, op.Key, op.Kind, op.Outcome)
		}
		if (op.Return == nil) != (op.Outcome == outcomeUnknown) {
			return nil, fmt.Errorf("operation %d: return must be null exactly when the outcome is unknown", op.ID)
		}
		ret := never
		if op.Return != nil {
			if *op.Return < op.Call {
				return nil, fmt.Errorf("operation %d returns (%d) before its call (%d)", op.ID, *op.Return, op.Call)
			}
			ret = *op.Return
		}
		in, out := input{Kind: op.Kind, Expected: op.Expected}, output{Outcome: op.Outcome, Rv: op.Rv}
		if op.Kind == "get" {
			out.Value = op.Value
		} else {
			in.Value = op.Value
		}
		keys[op.Key] = append(keys[op.Key], porcupine.Operation{
			ClientId: op.Client, Input: in, Call: op.Call, Output: out, Return: ret,
			Metadata: op.ID})
	}
	return keys, nil
}

// explain names, for an illegal key, the last operation of the longest linearizable prefix,
// the model state after it, and the operations that could have come next but did not fit.
func explain(ops []porcupine.Operation, info porcupine.LinearizationInfo, r *keyResult) {
	partials := info.PartialLinearizations()
	if len(partials) == 0 {
		return
	}
	var longest []int
	for _, p := range partials[0] {
		if len(p) > len(longest) {
			longest = p
		}
	}
	done := make(map[int]bool, len(longest))
	var st interface{} = registerModel.Init()
	for _, index := range longest {
		done[index] = true
		_, st = registerModel.Step(st, ops[index].Input, ops[index].Output)
	}
	r.State = describeState(st)
	if len(longest) > 0 {
		id := ops[longest[len(longest)-1]].Metadata.(int)
		r.LastLinearized = &id
	}
	firstReturn := int64(-1)
	for index, op := range ops {
		if !done[index] && (firstReturn < 0 || op.Return < firstReturn) {
			firstReturn = op.Return
		}
	}
	type candidate struct {
		call int64
		id   int
	}
	var next []candidate
	for index, op := range ops {
		if !done[index] && op.Call <= firstReturn {
			next = append(next, candidate{op.Call, op.Metadata.(int)})
		}
	}
	sort.Slice(next, func(a, b int) bool { return next[a].call < next[b].call })
	r.Frontier = make([]int, 0, len(next))
	for _, c := range next {
		r.Frontier = append(r.Frontier, c.id)
	}
}

func annotations(h historyJSON) []porcupine.Annotation {
	found := make([]porcupine.Annotation, 0, len(h.Annotations))
	for _, a := range h.Annotations {
		found = append(found, porcupine.Annotation{Tag: a.Tag, Start: a.Start, End: a.End,
			Description: a.Description, BackgroundColor: "#fde2e2"})
	}
	return found
}

func checkKey(key string, ops []porcupine.Operation, timeout time.Duration, h historyJSON,
	visualize string) keyResult {
	start := time.Now()
	result, info := porcupine.CheckOperationsVerbose(registerModel, ops, timeout)
	r := keyResult{Key: key, Operations: len(ops), Frontier: []int{},
		Seconds: time.Since(start).Seconds()}
	switch result {
	case porcupine.Ok:
		r.Result = "ok"
	case porcupine.Illegal:
		r.Result = "illegal"
		explain(ops, info, &r)
		if visualize != "" {
			info.AddAnnotations(annotations(h))
			path := filepath.Join(visualize, key+".html")
			if err := porcupine.VisualizePath(registerModel, info, path); err != nil {
				fmt.Fprintf(os.Stderr, "visualization of key %s: %v\n", key, err)
			} else {
				r.Visualization = path
			}
		}
	default:
		r.Result = "unknown"
	}
	return r
}

func run(historyPath, outPath, visualize string, timeout time.Duration) error {
	var raw []byte
	var err error
	if historyPath == "-" {
		raw, err = io.ReadAll(os.Stdin)
	} else {
		raw, err = os.ReadFile(historyPath)
	}
	if err != nil {
		return err
	}
	var h historyJSON
	if err := json.Unmarshal(raw, &h); err != nil {
		return fmt.Errorf("%s is not a history: %v", historyPath, err)
	}
	keys, err := byKey(h)
	if err != nil {
		return err
	}
	if visualize != "" {
		if err := os.MkdirAll(visualize, 0o755); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(keys))
	for key := range keys {
		names = append(names, key)
	}
	sort.Strings(names)
	start := time.Now()
	results := make([]keyResult, len(names))
	var wg sync.WaitGroup
	for index, key := range names {
		wg.Add(1)
		go func(index int, key string) {
			defer wg.Done()
			results[index] = checkKey(key, keys[key], timeout, h, visualize)
		}(index, key)
	}
	wg.Wait()
	out := report{Porcupine: porcupineVersion(), TimeoutS: timeout.Seconds(),
		Seconds: time.Since(start).Seconds(), Keys: results}
	encoded, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return err
	}
	if outPath == "-" {
		_, err = os.Stdout.Write(append(encoded, '\n'))
		return err
	}
	return os.WriteFile(outPath, append(encoded, '\n'), 0o644)
}

func main() {
	historyPath := flag.String("history", "-", "history JSON ('-': stdin)")
	outPath := flag.String("out", "-", "where to write the verdict JSON ('-': stdout)")
	visualize := flag.String("visualize", "", "directory for <key>.html of each non-linearizable key")
	timeout := flag.Duration("timeout", time.Minute, "per-key checking budget; past it the key is 'unknown'")
	version := flag.Bool("version", false, "print porcupine's version and exit")
	flag.Parse()
	if *version {
		fmt.Println(porcupineVersion())
		return
	}
	if *timeout <= 0 {
		fmt.Fprintln(os.Stderr, "porcupine-check: --timeout must be > 0 (an unbounded check never reports unknown)")
		os.Exit(2)
	}
	if err := run(*historyPath, *outPath, *visualize, *timeout); err != nil {
		fmt.Fprintf(os.Stderr, "porcupine-check: %v\n", err)
		os.Exit(2)
	}
}
