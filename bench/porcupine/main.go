// Command porcupine-driver checks a faultline history.jsonl (cas-register
// vocabulary) with Porcupine, so that faultline's linearizability checker
// can be compared with it on the same files (docs/porcupine-comparison.md).
//
// Usage:
//
//	porcupine-driver [-timeout 600s] [-max-rss-mb 16000] [-format F] FILE
//
// F is jsonl (default: a faultline history, described below), or kv or
// etcd for Porcupine's own test logs (logs.go).
//
// It prints one line: the verdict (Ok, Illegal, Unknown, or
// "Unknown(memory)" when the RSS bound was hit), the number of operations
// given to Porcupine, the time to read and parse the file, the time of the
// check, the end-to-end time (read + parse + build + check) and the peak
// RSS (VmHWM from /proc/self/status). Exit code: 0 Ok, 1 Illegal, 2
// Unknown, 254 bad input.
//
// Translation of the history (docs/porcupine-comparison.md explains why):
//   - nemesis events are skipped;
//   - failed ops are dropped, as faultline's checker ignores them;
//   - ok ops: Call/Return from `time` (or `index` when some event has no
//     time), mapped to 2t for calls and 2t+1 for returns so that a return
//     and a call with equal times stay concurrent (the spec's rule) whatever
//     order Porcupine's sort gives equal timestamps;
//   - info ops and invocations never completed: Return = MaxInt64 and the
//     model accepts any outcome for them (they may take effect, or never,
//     which is linearizing them at the end);
//   - ClientId = process; partitioned by key.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// event is one line of history.jsonl; fields the driver does not need are
// ignored.
type event struct {
	Index   int64           `json:"index"`
	Time    *int64          `json:"time"`
	Process json.RawMessage `json:"process"`
	Type    string          `json:"type"`
	F       string          `json:"f"`
	Key     json.RawMessage `json:"key"`
	Value   json.RawMessage `json:"value"`
}

// optInt is an int that may be JSON null (a register is initially null).
type optInt struct {
	Set bool
	V   int64
}

const (
	opRead = iota
	opWrite
	opCas
)

// input is a Porcupine operation's input.
type input struct {
	Op  int
	Key string
	Arg optInt // write's value, cas's expected value
	New optInt // cas's new value
}

// output is a Porcupine operation's output.
type output struct {
	Crashed bool   // info or never completed: any outcome is possible
	Read    optInt // read's result
}

func parseOptInt(raw json.RawMessage) (optInt, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return optInt{}, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return optInt{}, fmt.Errorf("value %s is not an integer or null", s)
	}
	return optInt{true, v}, nil
}

func parseInput(e *event) (input, error) {
	in := input{Key: string(e.Key)}
	if in.Key == "null" {
		in.Key = ""
	}
	var err error
	switch e.F {
	case "read":
		in.Op = opRead
	case "write":
		in.Op = opWrite
		in.Arg, err = parseOptInt(e.Value)
	case "cas":
		in.Op = opCas
		var pair []json.RawMessage
		if err = json.Unmarshal(e.Value, &pair); err != nil || len(pair) != 2 {
			return in, fmt.Errorf("cas value must be [expected, new]")
		}
		if in.Arg, err = parseOptInt(pair[0]); err == nil {
			in.New, err = parseOptInt(pair[1])
		}
	default:
		err = fmt.Errorf("f %q is not in the cas-register vocabulary", e.F)
	}
	return in, err
}

// casRegister is the model: one register per partition (key), initially
// null.
func casRegister() porcupine.Model {
	return porcupine.Model{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			index := map[string]int{}
			var parts [][]porcupine.Operation
			for _, op := range history {
				k := op.Input.(input).Key
				i, ok := index[k]
				if !ok {
					i = len(parts)
					index[k] = i
					parts = append(parts, nil)
				}
				parts[i] = append(parts[i], op)
			}
			return parts
		},
		Init: func() interface{} { return optInt{} },
		Step: func(state, in, out interface{}) (bool, interface{}) {
			s := state.(optInt)
			i := in.(input)
			o := out.(output)
			switch i.Op {
			case opRead:
				return o.Crashed || o.Read == s, s
			case opWrite:
				return true, i.Arg
			default: // cas; only ok and crashed cas ops reach the model
				if s == i.Arg {
					return true, i.New
				}
				return o.Crashed, s
			}
		},
		Equal: porcupine.ShallowEqual,
	}
}

// vmHWM returns this process's peak resident set in kB (0 if unknown).
func vmHWM() int64 {
	return statusKB("VmHWM:")
}

func statusKB(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, field) {
			f := strings.Fields(line[len(field):])
			if len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				return v
			}
		}
	}
	return 0
}

// readHistory reads the file and builds Porcupine operations.
func readHistory(path string) ([]porcupine.Operation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var events []event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	allTimed := true
	for line := 1; sc.Scan(); line++ {
		text := sc.Bytes()
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		var e event
		if err := json.Unmarshal(text, &e); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if e.Time == nil {
			allTimed = false
		}
		events = append(events, e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	data = nil

	var ops []porcupine.Operation
	dropped := map[int]bool{} // indices into ops of failed ops
	open := map[int64]int{}   // process -> index into ops
	for i := range events {
		e := &events[i]
		if len(e.Process) > 0 && e.Process[0] == '"' {
			continue // nemesis
		}
		proc, err := strconv.ParseInt(string(e.Process), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("index %d: bad process %s", e.Index, e.Process)
		}
		t := e.Index
		if allTimed {
			t = *e.Time
		}
		if e.Type == "invoke" {
			in, err := parseInput(e)
			if err != nil {
				return nil, fmt.Errorf("index %d: %v", e.Index, err)
			}
			open[proc] = len(ops)
			ops = append(ops, porcupine.Operation{
				ClientId: int(proc),
				Input:    in,
				Call:     2 * t,
				Output:   output{Crashed: true},
				Return:   math.MaxInt64,
			})
			continue
		}
		k, ok := open[proc]
		if !ok {
			return nil, fmt.Errorf("index %d: completion without invoke", e.Index)
		}
		delete(open, proc)
		switch e.Type {
		case "ok":
			out := output{}
			if e.F == "read" {
				if out.Read, err = parseOptInt(e.Value); err != nil {
					return nil, fmt.Errorf("index %d: %v", e.Index, err)
				}
			}
			ops[k].Output = out
			ops[k].Return = 2*t + 1
		case "fail":
			dropped[k] = true
		case "info":
			// stays crashed: Return = MaxInt64
		default:
			return nil, fmt.Errorf("index %d: unknown type %q", e.Index, e.Type)
		}
	}
	if len(dropped) > 0 {
		kept := ops[:0]
		for i, op := range ops {
			if !dropped[i] {
				kept = append(kept, op)
			}
		}
		ops = kept
	}
	return ops, nil
}

func main() {
	timeout := flag.Duration("timeout", 600*time.Second, "Porcupine's time bound (0: none)")
	maxRSS := flag.Int64("max-rss-mb", 16000, "give up (Unknown(memory), exit 2) when VmRSS exceeds this many MB (0: no bound)")
	format := flag.String("format", "jsonl", "jsonl (faultline history, cas-register), kv or etcd (Porcupine's test logs, logs.go)")
	flag.Parse()
	if flag.NArg() != 1 || (*format != "jsonl" && *format != "kv" && *format != "etcd") {
		fmt.Fprintln(os.Stderr, "usage: porcupine-driver [-timeout D] [-max-rss-mb N] [-format jsonl|kv|etcd] FILE")
		os.Exit(254)
	}
	path := flag.Arg(0)
	start := time.Now()
	if *maxRSS > 0 {
		go func() {
			for {
				time.Sleep(100 * time.Millisecond)
				if rss := statusKB("VmRSS:"); rss > *maxRSS*1024 {
					fmt.Printf("%s verdict Unknown(memory) VmRSS %d MB > %d MB after %.2fs\n",
						path, rss/1024, *maxRSS, time.Since(start).Seconds())
					os.Exit(2)
				}
			}
		}()
	}
	var res porcupine.CheckResult
	var parsed time.Time
	nops, crashed := 0, 0
	if *format == "jsonl" {
		ops, err := readHistory(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(254)
		}
		for _, op := range ops {
			if op.Return == math.MaxInt64 {
				crashed++
			}
		}
		nops = len(ops)
		parsed = time.Now()
		res = porcupine.CheckOperationsTimeout(casRegister(), ops, *timeout)
	} else {
		read, model := readKv, kvModel()
		if *format == "etcd" {
			read, model = readEtcd, etcdModel()
		}
		events, err := read(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(254)
		}
		nops = len(events) / 2
		parsed = time.Now()
		res = porcupine.CheckEventsTimeout(model, events, *timeout)
	}
	done := time.Now()
	fmt.Printf("%s verdict %s ops %d crashed %d read+parse %.2fs check %.2fs e2e %.2fs VmHWM %.0f MB\n",
		path, res, nops, crashed, parsed.Sub(start).Seconds(),
		done.Sub(parsed).Seconds(), done.Sub(start).Seconds(),
		float64(vmHWM())/1024)
	switch res {
	case porcupine.Ok:
		os.Exit(0)
	case porcupine.Illegal:
		os.Exit(1)
	default:
		os.Exit(2)
	}
}
