package logcheck

import (
	"github.com/rlcheck/rlcheck/report"
	"github.com/rlcheck/rlcheck/sendlog"
)

// costTable holds the costs of the sends read but not yet judged: the
// reorder buffer and the merge move a send's time and ref, and its costs
// wait here, by input and line, until its group's checker takes it. Only
// the lines between the oldest send not yet judged and the newest read are
// held, which Config.MaxBuffered bounds.
type costTable struct {
	units  int  // the cost units, and the status when one is read
	status bool // the last unit is each send's HTTP status
	// settled: after the costs come the actual costs, by unit, and the
	// settlement instant (sendlog.NotSettled for none).
	settled bool
	files   []costQueue // by input
	cols    [][]int64   // takeRun's columns
}

// costQueue holds one input's costs by line: vals[i*units:] are the costs
// of line base+i, taken[i] says whether its send was judged (lines with no
// send count as taken). Lines arrive in order and leave almost in order.
type costQueue struct {
	base  int64
	vals  []int64
	taken []bool
	head  int // the first line not taken
}

// newCostTable returns the table for the costs opt reads from n inputs, or
// nil when it reads none. A status, when opt reads one, is kept as one
// more unit after the costs.
func newCostTable(opt sendlog.Options, n int) *costTable {
	if !opt.HasCosts() && !opt.HasStatus() {
		return nil
	}
	t := &costTable{units: len(opt.Costs), files: make([]costQueue, n), status: opt.HasStatus(), settled: opt.HasSettled()}
	if t.settled {
		t.units += len(opt.Costs) + 1
	}
	if t.status {
		t.units++
	}
	return t
}

// add notes the costs of a batch's sends, read from input file.
func (t *costTable) add(file int, b *sendlog.Batch) {
	q := &t.files[file]
	for i, line := range b.Line {
		if len(q.taken) == 0 {
			q.base, q.head = line, 0
		}
		for q.base+int64(len(q.taken)) < line { // a line with no send
			q.taken = append(q.taken, true)
			q.vals = append(q.vals, make([]int64, t.units)...)
		}
		q.taken = append(q.taken, false)
		for u := range t.costUnits() {
			q.vals = append(q.vals, b.Cost[u][i])
		}
		if t.settled {
			for u := range t.costUnits() {
				q.vals = append(q.vals, b.Actual[u][i])
			}
			q.vals = append(q.vals, b.Settled[i])
		}
		if t.status {
			q.vals = append(q.vals, int64(b.Status[i]))
		}
	}
}

// costUnits is how many of the table's units are costs.
func (t *costTable) costUnits() int {
	n := t.units
	if t.status {
		n--
	}
	if t.settled {
		n = (n - 1) / 2
	}
	return n
}

// takeRun returns the costs of the sends at refs, by unit: cols[u][i] is
// the cost in unit u of the send at refs[i]. They are forgotten, and the
// columns are valid until the next call. Consecutive lines of one input,
// the common run, are taken as one block.
func (t *costTable) takeRun(refs []int64) [][]int64 {
	if t.cols == nil {
		t.cols = make([][]int64, t.units)
	}
	for u := range t.cols {
		t.cols[u] = t.cols[u][:0]
	}
	for k := 0; k < len(refs); {
		n := 1
		for k+n < len(refs) && refs[k+n] == refs[k]+int64(n) {
			n++
		}
		t.pop(report.Ref(refs[k]), n)
		k += n
	}
	return t.cols
}

// pop appends to t.cols the costs of n consecutive lines from ref on, and
// forgets them.
func (t *costTable) pop(ref report.Ref, n int) {
	q := &t.files[ref.File()]
	i := int(ref.Line() - q.base)
	vals := q.vals[i*t.units : (i+n)*t.units]
	if t.units == 1 {
		t.cols[0] = append(t.cols[0], vals...)
	} else {
		for j := range n {
			for u := range t.units {
				t.cols[u] = append(t.cols[u], vals[j*t.units+u])
			}
		}
	}
	for j := i; j < i+n; j++ {
		q.taken[j] = true
	}
	for q.head < len(q.taken) && q.taken[q.head] {
		q.head++
	}
	if q.head >= 4096 && q.head*2 >= len(q.taken) {
		q.compact(t.units)
	}
}

// compact drops the taken lines before head.
func (q *costQueue) compact(units int) {
	n := copy(q.taken, q.taken[q.head:])
	q.taken = q.taken[:n]
	n = copy(q.vals, q.vals[q.head*units:])
	q.vals = q.vals[:n]
	q.base += int64(q.head)
	q.head = 0
}
