package sendlog

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/rlcheck/rlcheck/internal/genlog"
)

// benchCSV is n lines of ts_ns,key, as scripts/genlog writes them.
func benchCSV(n int) []byte {
	var b bytes.Buffer
	genlog.WriteCSV(&b, genlog.Default(n))
	return b.Bytes()
}

// BenchmarkReadCSV measures parsing alone, all workers, batches drained.
func BenchmarkReadCSV(b *testing.B) {
	const lines = 1_000_000
	data := benchCSV(lines)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r := NewReader("bench.csv", bytes.NewReader(data), Options{})
		n := 0
		for {
			bt, err := r.NextBatch()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n += bt.Len()
		}
		if n != lines {
			b.Fatal(n)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mlines/s")
}

// BenchmarkParseChunk measures one goroutine parsing one chunk, without
// and with the key column.
func BenchmarkParseChunk(b *testing.B) {
	data := benchCSV(20000)
	data = data[bytes.IndexByte(data, '\n')+1:]
	for _, key := range []int{-1, 1} {
		name := map[int]string{-1: "plain", 1: "key"}[key]
		b.Run(name, func(b *testing.B) {
			lp := &lineParser{format: FormatCSV, tp: *newTimeParser(UnitNanos), cols: [nSlots]int{0, key, -1, -1}}
			bt := new(batch)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				parseChunk(bt, chunk{data: data}, lp, false)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*20000), "ns/line")
		})
	}
}

// BenchmarkParseChunkJSON measures one goroutine parsing one chunk of JSON
// lines, {"ts":N,"key":"kN"}.
func BenchmarkParseChunkJSON(b *testing.B) {
	var data []byte
	for _, line := range bytes.Split(benchCSV(20000), []byte("\n"))[1:] {
		if ts, key, ok := bytes.Cut(line, []byte(",")); ok {
			data = fmt.Appendf(data, "{\"ts\":%s,\"key\":\"%s\"}\n", ts, key)
		}
	}
	lp := &lineParser{format: FormatJSONL, tp: *newTimeParser(UnitNanos), cols: [nSlots]int{-1, -1, -1, -1}}
	lp.paths[slotTime], lp.paths[slotKey] = []string{"ts"}, []string{"key"}
	bt := new(batch)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		parseChunk(bt, chunk{data: data}, lp, false)
	}
	if bt.err != nil || bt.Len() != 20000 {
		b.Fatal(bt.err, bt.Len())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*20000), "ns/line")
}
