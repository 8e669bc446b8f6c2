package main

import (
	"fmt"
	"hash/fnv"

	"github.com/anishathalye/porcupine"
)

// The register model of one Kubernetes object (a ConfigMap key): absent, or a value at a
// resourceVersion. resourceVersions are etcd revisions: every write gets a larger one than
// any write linearized before it. A write whose outcome is unknown leaves the value known
// and its resourceVersion unknown (rv 0) but above floor; the first read that sees the
// value learns it.

const (
	outcomeOK       = "ok"
	outcomeNotFound = "not-found"
	outcomeConflict = "conflict"
	outcomeUnknown  = "unknown"
)

// input is what a client asked: get, put (unconditional write), cas (write if the object
// is at expected_rv) or delete.
type input struct {
	Kind     string
	Value    string
	Expected int64
}

// output is what it saw: the outcome and, for ok reads and writes, the value and rv.
type output struct {
	Outcome string
	Value   string
	Rv      int64
}

type state struct {
	Exists bool
	Value  string
	Rv     int64 // 0: unknown (written by a request whose outcome is unknown)
	Floor  int64 // every later write has a larger rv than this
}

func (s state) latest() int64 {
	if s.Rv > s.Floor {
		return s.Rv
	}
	return s.Floor
}

func written(value string, rv int64) state {
	return state{Exists: true, Value: value, Rv: rv, Floor: rv}
}

func step(st, in, out interface{}) (bool, interface{}) {
	s, i, o := st.(state), in.(input), out.(output)
	switch i.Kind {
	case "get":
		return stepGet(s, o)
	case "put":
		switch o.Outcome {
		case outcomeOK:
			return o.Rv > s.latest(), written(i.Value, o.Rv)
		case outcomeUnknown:
			return true, state{Exists: true, Value: i.Value, Floor: s.latest()}
		}
	case "cas":
		return stepCas(s, i, o)
	case "delete":
		switch o.Outcome {
		case outcomeOK:
			return s.Exists, state{Floor: s.latest()}
		case outcomeNotFound:
			return !s.Exists, s
		case outcomeUnknown:
			if s.Exists {
				return true, state{Floor: s.latest()}
			}
			return true, s
		}
	}
	return false, s
}

func stepGet(s state, o output) (bool, interface{}) {
	switch o.Outcome {
	case outcomeNotFound:
		return !s.Exists, s
	case outcomeOK:
		if !s.Exists || s.Value != o.Value {
			return false, s
		}
		if s.Rv != 0 {
			return s.Rv == o.Rv, s
		}
		return o.Rv > s.Floor, state{Exists: true, Value: s.Value, Rv: o.Rv, Floor: o.Rv}
	}
	return false, s
}

// matches: could the object be at rv expected now?
func (s state) matches(expected int64) bool {
	if !s.Exists {
		return false
	}
	if s.Rv != 0 {
		return s.Rv == expected
	}
	return expected > s.Floor
}

func stepCas(s state, i input, o output) (bool, interface{}) {
	switch o.Outcome {
	case outcomeOK:
		return s.matches(i.Expected) && o.Rv > i.Expected, written(i.Value, o.Rv)
	case outcomeConflict:
		return s.Exists && (s.Rv == 0 || s.Rv != i.Expected), s
	case outcomeNotFound:
		return !s.Exists, s
	case outcomeUnknown:
		// Applied here if it can be; not applied is the same as linearized last.
		if s.matches(i.Expected) {
			return true, state{Exists: true, Value: i.Value, Floor: i.Expected}
		}
		return true, s
	}
	return false, s
}

func describeOperation(in, out interface{}) string {
	i, o := in.(input), out.(output)
	var call string
	switch i.Kind {
	case "put":
		call = fmt.Sprintf("put(%s)", i.Value)
	case "cas":
		call = fmt.Sprintf("cas(@%d, %s)", i.Expected, i.Value)
	default:
		call = i.Kind + "()"
	}
	switch {
	case o.Outcome == outcomeOK && i.Kind == "get":
		return fmt.Sprintf("%s -> %s@%d", call, o.Value, o.Rv)
	case o.Outcome == outcomeOK && i.Kind != "delete":
		return fmt.Sprintf("%s -> ok@%d", call, o.Rv)
	}
	return fmt.Sprintf("%s -> %s", call, o.Outcome)
}

func describeState(st interface{}) string {
	s := st.(state)
	switch {
	case !s.Exists && s.Floor == 0:
		return "absent"
	case !s.Exists:
		return fmt.Sprintf("absent (deleted after @%d)", s.Floor)
	case s.Rv == 0:
		return fmt.Sprintf("%s@? (> %d, outcome unknown)", s.Value, s.Floor)
	}
	return fmt.Sprintf("%s@%d", s.Value, s.Rv)
}

func hashState(st interface{}) uint64 {
	s := st.(state)
	h := fnv.New64a()
	fmt.Fprintf(h, "%t|%s|%d|%d", s.Exists, s.Value, s.Rv, s.Floor)
	return h.Sum64()
}

// registerModel is the model of one key's history (the caller partitions by key).
var registerModel = porcupine.Model{
	Init:              func() interface{} { return state{} },
	Step:              step,
	Equal:             func(a, b interface{}) bool { return a.(state) == b.(state) },
	Hash:              hashState,
	DescribeOperation: describeOperation,
	DescribeState:     describeState,
	DescribeOperationMetadata: func(info interface{}) string {
		if info == nil {
			return ""
		}
		return fmt.Sprintf("%v", info)
	},
}
