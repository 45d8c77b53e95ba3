package adapter

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// The test binary is its own adapter program when fakeEnv names a mode:
// it answers every call at its arrival, then spoils the answer as the
// mode says.
const fakeEnv = "RLCHECK_FAKE_ADAPTER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		fakeAdapter(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeCommand is the shell command that runs the test binary as an
// adapter in mode.
func fakeCommand(mode string) string {
	return fmt.Sprintf("%s=%s exec '%s'", fakeEnv, mode, os.Args[0])
}

func fakeAdapter(mode string) {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	switch mode {
	case "hang-hello":
		time.Sleep(time.Hour)
	case "version":
		fmt.Fprintln(out, `{"rlcheck_adapter": 2, "strategies": ["fake"]}`)
		return
	}
	fmt.Fprintln(out, `{"rlcheck_adapter": 1, "strategies": ["fake"]}`)
	out.Flush()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<24)
	for in.Scan() {
		var r Run
		if err := json.Unmarshal(in.Bytes(), &r); err != nil {
			panic(err)
		}
		lines := fakeAnswer(&r)
		switch mode {
		case "hang":
			out.Flush()
			time.Sleep(time.Hour)
		case "early":
			lines[0] = fmt.Sprintf(`{"run":%d,"call":0,"send_ns":%d}`, r.Run, r.Calls[0].ArrivalNS-1)
		case "twice":
			lines = append([]string{lines[1]}, lines...)
		case "missing":
			lines = append(lines[:len(lines)-2], lines[len(lines)-1])
		case "unknown":
			lines[0] = fmt.Sprintf(`{"run":%d,"call":%d,"send_ns":%d}`, r.Run, len(r.Calls), r.Calls[0].ArrivalNS)
		case "wrong-run":
			lines[0] = strings.Replace(lines[0], fmt.Sprintf(`"run":%d`, r.Run), `"run":99`, 1)
		case "truncate":
			fmt.Fprint(out, lines[0][:10])
			return
		case "error":
			lines = []string{fmt.Sprintf(`{"run":%d,"error":"ZeroDivisionError: division by zero"}`, r.Run)}
		}
		fmt.Fprintln(out, strings.Join(lines, "\n"))
		out.Flush()
	}
}

// fakeAnswer sends every call at its arrival, then closes the run.
func fakeAnswer(r *Run) []string {
	var lines []string
	for _, c := range r.Calls {
		lines = append(lines, fmt.Sprintf(`{"run":%d,"call":%d,"send_ns":%d}`, r.Run, c.ID, c.ArrivalNS))
	}
	return append(lines, fmt.Sprintf(`{"run":%d,"done":true}`, r.Run))
}
