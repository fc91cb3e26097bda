// Porcupine's own test logs, checked with models written for this driver
// that follow the semantics of Porcupine's porcupine_test.go (see
// docs/porcupine-comparison.md):
//
//   - "kv" (test_data/kv/*.txt): one EDN op map a line, {:process P, :type
//     :invoke|:ok, :f :get|:put|:append, :key "K", :value "V"|nil}. A string
//     register per key, initially ""; get must return the current value,
//     put replaces it, append concatenates. Partitioned by key.
//   - "etcd" (test_data/jepsen/*.log): Jepsen log lines "INFO jepsen.util -
//     P\t:TYPE\t:F\tVALUE" of one register, initially nil. Reads return nil
//     or an integer; an ok cas took effect, a failed cas saw another value;
//     a read that failed with :timed-out may have returned anything; info
//     lines leave the op open, and every op still open at the end may have
//     had any outcome (its return is placed after every other event).
//
// Both build porcupine.Events in file order (Porcupine orders events by
// their position) and run CheckEventsTimeout.
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"
)

const (
	kvGet = iota
	kvPut
	kvAppend
)

type kvIn struct {
	Op    int
	Key   string
	Value string
}

type kvOut struct {
	Unknown bool // never completed: any outcome
	Value   string
}

var kvLine = regexp.MustCompile(
	`^\{:process (\d+), :type :(\w+), :f :(\w+), :key "([^"]*)", :value (nil|"[^"]*")\}$`)

// readKv parses a kv log into events; ops still open at the end get an
// unknown return after everything else.
func readKv(path string) ([]porcupine.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events []porcupine.Event
	open := map[int]int{} // process -> event id of its open call
	next := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		m := kvLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("line %d: not a kv op map", n)
		}
		proc, _ := strconv.Atoi(m[1])
		value := strings.Trim(m[5], `"`)
		if m[5] == "nil" {
			value = ""
		}
		switch m[2] {
		case "invoke":
			op := kvGet
			switch m[3] {
			case "get":
			case "put":
				op = kvPut
			case "append":
				op = kvAppend
			default:
				return nil, fmt.Errorf("line %d: unknown f %q", n, m[3])
			}
			if _, busy := open[proc]; busy {
				return nil, fmt.Errorf("line %d: process %d invokes twice", n, proc)
			}
			events = append(events, porcupine.Event{ClientId: proc,
				Kind: porcupine.CallEvent, Value: kvIn{op, m[4], value}, Id: next})
			open[proc] = next
			next++
		case "ok":
			id, busy := open[proc]
			if !busy {
				return nil, fmt.Errorf("line %d: ok without an open invoke", n)
			}
			delete(open, proc)
			events = append(events, porcupine.Event{ClientId: proc,
				Kind: porcupine.ReturnEvent, Value: kvOut{Value: value}, Id: id})
		default:
			// info (or anything else): the op stays open.
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for proc, id := range open {
		events = append(events, porcupine.Event{ClientId: proc,
			Kind: porcupine.ReturnEvent, Value: kvOut{Unknown: true}, Id: id})
	}
	return events, nil
}

func kvModel() porcupine.Model {
	return porcupine.Model{
		PartitionEvent: func(history []porcupine.Event) [][]porcupine.Event {
			keyOf := map[int]string{}
			byKey := map[string][]porcupine.Event{}
			var order []string
			for _, e := range history {
				if e.Kind == porcupine.CallEvent {
					keyOf[e.Id] = e.Value.(kvIn).Key
				}
				k := keyOf[e.Id]
				if _, seen := byKey[k]; !seen {
					order = append(order, k)
				}
				byKey[k] = append(byKey[k], e)
			}
			parts := make([][]porcupine.Event, 0, len(order))
			for _, k := range order {
				parts = append(parts, byKey[k])
			}
			return parts
		},
		Init: func() interface{} { return "" },
		Step: func(state, in, out interface{}) (bool, interface{}) {
			s := state.(string)
			i := in.(kvIn)
			o := out.(kvOut)
			switch i.Op {
			case kvGet:
				return o.Unknown || o.Value == s, s
			case kvPut:
				return true, i.Value
			default:
				return true, s + i.Value
			}
		},
	}
}

type etcdIn struct {
	Op       int // opRead, opWrite, opCas
	Arg, New int
}

type etcdOut struct {
	Unknown bool
	CasOk   bool
	Nil     bool // read returned nil
	Value   int
}

var etcdLine = regexp.MustCompile(
	`^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:(\w+)\s+:(\w+)\s+(.*)$`)
var casArgs = regexp.MustCompile(`^\[(\d+)\s+(\d+)\]$`)

// readEtcd parses a Jepsen etcd log into events; lines that are not ops
// of a numbered process are skipped.
func readEtcd(path string) ([]porcupine.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events []porcupine.Event
	open := map[int]int{}
	next := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		m := etcdLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		proc, _ := strconv.Atoi(m[1])
		typ, fn, val := m[2], m[3], strings.TrimSpace(m[4])
		bad := func() error { return fmt.Errorf("line %d: unexpected %s %s %s", n, typ, fn, val) }
		if typ == "invoke" {
			var in etcdIn
			switch fn {
			case "read":
				in.Op = opRead
			case "write":
				v, err := strconv.Atoi(val)
				if err != nil {
					return nil, bad()
				}
				in = etcdIn{Op: opWrite, Arg: v}
			case "cas":
				c := casArgs.FindStringSubmatch(val)
				if c == nil {
					return nil, bad()
				}
				a, _ := strconv.Atoi(c[1])
				b, _ := strconv.Atoi(c[2])
				in = etcdIn{Op: opCas, Arg: a, New: b}
			default:
				return nil, bad()
			}
			if _, busy := open[proc]; busy {
				return nil, fmt.Errorf("line %d: process %d invokes twice", n, proc)
			}
			events = append(events, porcupine.Event{ClientId: proc,
				Kind: porcupine.CallEvent, Value: in, Id: next})
			open[proc] = next
			next++
			continue
		}
		id, busy := open[proc]
		if !busy {
			continue
		}
		var out etcdOut
		switch {
		case typ == "ok" && fn == "read":
			if val == "nil" {
				out.Nil = true
			} else if v, err := strconv.Atoi(val); err == nil {
				out.Value = v
			} else {
				return nil, bad()
			}
		case typ == "ok" && fn == "write":
		case (typ == "ok" || typ == "fail") && fn == "cas":
			out.CasOk = typ == "ok"
		case typ == "fail" && fn == "read" && val == ":timed-out":
			out.Unknown = true
		default:
			continue // info: the op stays open
		}
		delete(open, proc)
		events = append(events, porcupine.Event{ClientId: proc,
			Kind: porcupine.ReturnEvent, Value: out, Id: id})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for proc, id := range open {
		events = append(events, porcupine.Event{ClientId: proc,
			Kind: porcupine.ReturnEvent, Value: etcdOut{Unknown: true}, Id: id})
	}
	return events, nil
}

// etcdState is the register: nil, or a value.
type etcdState struct {
	Nil   bool
	Value int
}

func etcdModel() porcupine.Model {
	return porcupine.Model{
		Init: func() interface{} { return etcdState{Nil: true} },
		Step: func(state, in, out interface{}) (bool, interface{}) {
			s := state.(etcdState)
			i := in.(etcdIn)
			o := out.(etcdOut)
			switch i.Op {
			case opRead:
				ok := o.Unknown || (o.Nil && s.Nil) || (!o.Nil && !s.Nil && o.Value == s.Value)
				return ok, s
			case opWrite:
				return true, etcdState{Value: i.Arg}
			default:
				match := !s.Nil && s.Value == i.Arg
				next := s
				if match {
					next = etcdState{Value: i.New}
				}
				return o.Unknown || match == o.CasOk, next
			}
		},
	}
}
