package realrun

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// WriteCalibration writes what the runs of rep measured as a scenario
// fragment at path: lateness and send_delay as empirical distributions
// over the samples, which go to two files beside it (PATH-lateness.txt:
// the overshoot of every timer; PATH-send-delay.txt: from Acquire
// returning to the arrival, over every send). Paste the fragment into a
// scenario kept in the same directory, and the simulator draws from what
// this machine did. An empty path writes nothing.
func WriteCalibration(path string, rep *Report) error {
	if path == "" {
		return nil
	}
	var late, send []time.Duration
	for _, run := range rep.Runs {
		for _, st := range run.Strategies {
			late = append(late, st.Late...)
			send = append(send, st.SendDelays...)
		}
	}
	if len(late) == 0 {
		late = []time.Duration{0} // no timer slept: no lateness seen
	}
	base := strings.TrimSuffix(path, filepath.Ext(path))
	lateFile, sendFile := base+"-lateness.txt", base+"-send-delay.txt"
	if err := writeSamples(lateFile, late); err != nil {
		return err
	}
	if err := writeSamples(sendFile, send); err != nil {
		return err
	}
	frag := fmt.Sprintf("# Measured by rlcheck run %s: %d run(s) at speed %g, %d timer wake-ups, %d sends.\n"+
		"lateness: empirical(%s)\nsend_delay: empirical(%s)\n",
		rep.Scenario.Name, len(rep.Runs), rep.Speed, len(late), len(send), filepath.Base(lateFile), filepath.Base(sendFile))
	return os.WriteFile(path, []byte(frag), 0o644)
}

func writeSamples(path string, d []time.Duration) error {
	var b strings.Builder
	for _, x := range d {
		b.WriteString(x.String())
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
