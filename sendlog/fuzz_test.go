package sendlog

import (
	"bytes"
	"fmt"
	"io"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzTimestamp checks parsed numbers against exact rational arithmetic.
func FuzzTimestamp(f *testing.F) {
	for _, s := range []string{"3.001236", "0", "1732945844123456789", "1.5e3", "1e-9", "2024-11-30T04:30:00.5Z", "-1", "1.0000000001", "00.10", "9223372036854775807"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, u uint8) {
		unit := Unit(u % 5)
		got, err := newTimeParser(unit).parse([]byte(s))
		if err != nil {
			return
		}
		require.GreaterOrEqual(t, got, int64(0), "parse(%q)", s)
		if looksLikeDate([]byte(s)) {
			return
		}
		r, ok := new(big.Rat).SetString(strings.TrimPrefix(s, "+"))
		require.True(t, ok, "parse(%q) = %d, but it is not a number", s, got)
		if unit == UnitAuto {
			n, _ := parseNumber([]byte(s))
			unit = UnitSeconds
			if !n.decimal {
				unit = unitForDigits(n.intDigit)
			}
		}
		scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(unit.exp10())), nil))
		want := new(big.Rat).Mul(r, scale)
		require.True(t, want.IsInt() && want.Num().Cmp(big.NewInt(got)) == 0, "parse(%q, %v) = %d, exact value %s", s, unit, got, want.FloatString(3))
	})
}

// fuzzReader reads a whole input and checks what no input may break: no
// panic, errors are *InputErrors with a line inside the input, and records
// have non-negative times and increasing line numbers.
func fuzzReader(t *testing.T, name, text string, opt Options) {
	r := NewReader(name, strings.NewReader(text), opt)
	lines := int64(strings.Count(text, "\n") + 1)
	if strings.HasPrefix(text, "\x1f\x8b") {
		lines = 1 << 40 // gzip: the lines are those of the decompressed text
	}
	var last int64
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			require.True(t, ie.Line >= 0 && ie.Line <= lines, "error names line %d of %d", ie.Line, lines)
			require.Equal(t, name, ie.File)
			return
		}
		require.True(t, rec.At >= 0 && rec.Line > last && rec.Line <= lines, "bad record %+v after line %d", rec, last)
		last = rec.Line
	}
}

func FuzzPlain(f *testing.F) {
	for _, s := range []string{"0.5\n1.5\n", "# c\n\n1\n", "1\r\n2", "\x00", "-1\n", strings.Repeat("1", 70000),
		"\ufeff1.5\n2\n", "\ufeff\ufeff1\n", "1700000000000\n1700000000\n", "1700000000\n1700000000000\n", "0\n1700000000000\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzReader(t, "f.txt", s, Options{Format: FormatPlain})
		fuzzReader(t, "f.txt", s, Options{Format: FormatPlain, SkipInvalid: true})
	})
}

func FuzzCSV(f *testing.F) {
	for _, s := range []string{"ts,key\n1,a\n", "a,b\n\"1\",\"x,y\"\n", "1,2\n3,4\n", "ts\n", "\"unterminated\n1\n", "ts,ts\n1,2\n",
		"\ufeffts,key\n1,a\n", "ts,k\n1700000000000,a\n1700000000,b\n"} {
		f.Add(s, "")
		f.Add(s, "2")
	}
	f.Fuzz(func(t *testing.T, s, col string) {
		fuzzReader(t, "f.csv", s, Options{Format: FormatCSV, TimeCol: col})
		fuzzReader(t, "f.csv", s, Options{Format: FormatCSV, TimeCol: col, SkipInvalid: true})
	})
}

func FuzzJSONL(f *testing.F) {
	for _, s := range []string{`{"ts":1}` + "\n", `{"time":"2024-01-01T00:00:00Z"}`, `{"a":{"b":1.5}}`, `[1]`, `{"ts":-1}`, `{"ts":1e999}`,
		"\ufeff" + `{"ts":1}`, `{"ts":1700000000000}` + "\n" + `{"ts":"1700000000"}`} {
		f.Add(s, "")
		f.Add(s, "a.b")
	}
	f.Fuzz(func(t *testing.T, s, field string) {
		fuzzReader(t, "f.jsonl", s, Options{Format: FormatJSONL, TimeField: field})
		fuzzReader(t, "f.jsonl", s, Options{Format: FormatJSONL, TimeField: field, SkipInvalid: true})
	})
}

// FuzzSettled reads reserved sends, CSV and JSON lines, each with an
// estimate, an actual cost and a settlement instant.
func FuzzSettled(f *testing.F) {
	for _, s := range []string{"ts,est,used,done\n1,60,20,10\n5,50,,\n", "ts,est,used,done\n5,1,1,4\n", "ts,est,used,done\n5,1,,6\n",
		`{"ts":1,"est":60,"used":20,"done":10}` + "\n" + `{"ts":2,"est":5,"done":null}`, `{"ts":3,"est":1,"done":"x"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		costs := []CostSource{{Unit: "tokens", Col: "est", ActualCol: "used", Field: "est", ActualField: "used"}}
		fuzzReader(t, "f.csv", s, Options{Format: FormatCSV, SettledCol: "done", Costs: costs})
		fuzzReader(t, "f.jsonl", s, Options{Format: FormatJSONL, SettledField: "done", Costs: costs})
		fuzzReader(t, "f.csv", s, Options{Format: FormatCSV, SettledCol: "done", Costs: costs, SkipInvalid: true})
	})
}

func FuzzAuto(f *testing.F) {
	for _, s := range []string{"1\n2\n", "ts,k\n1,a\n", `{"ts":1}`, "\x1f\x8b\x08garbage", "\ufeff{\"ts\":1}\n", "\ufeff1\n"} {
		f.Add(s)
	}
	// Gzip cut short, at every tenth byte, and whole.
	gz := gzipped(f, "ts,k\n1700000000000,a\n1700000000001,b\n1700000000002,c\n")
	for cut := 1; cut <= len(gz); cut += 10 {
		f.Add(string(gz[:cut]))
	}
	f.Add(string(gz))
	f.Fuzz(func(t *testing.T, s string) {
		fuzzReader(t, "f", s, Options{})
	})
}

// FuzzFastCSV checks the fast path for machine-written CSV against the
// general field splitter: whenever the fast path takes a line, both must
// read the same send.
func FuzzFastCSV(f *testing.F) {
	for _, s := range []string{"1767225600032485268,k3", "17,a,b", "12,", "0,\"q\"", "99999999999999999999,k", "5", "1, k"} {
		f.Add(s, uint8(4), true)
		f.Add(s, uint8(1), false)
	}
	f.Fuzz(func(t *testing.T, line string, u uint8, withKey bool) {
		mk := func() *lineParser {
			p := &lineParser{format: FormatCSV, tp: *newTimeParser(Unit(1 + u%4))}
			p.cols = [nSlots]int{0, -1, -1, -1}
			if withKey {
				p.cols[slotKey] = 1
			}
			return p
		}
		fast, ok := mk().fastCSV([]byte(line))
		if !ok {
			return
		}
		p := mk()
		require.NoError(t, p.csvSplit([]byte(line)), "%q: the fast path took it", line)
		slow, err := p.record(bytes.TrimSpace(p.fields[slotTime]), p.fields[slotKey], nil, nil)
		require.NoError(t, err, "%q: the fast path took it", line)
		require.Equal(t, fast.At, slow.At, "%q", line)
		require.Equal(t, string(fast.Key), string(slow.Key), "%q", line)
	})
}

// FuzzDuration checks call durations: plain numbers against exact rational
// arithmetic in their unit, unit-suffixed ones against time.ParseDuration.
func FuzzDuration(f *testing.F) {
	for _, s := range []string{"0.123", "150ms", "2", "1e3", "-1", "1h30m", "0.0000000001", "99999999999"} {
		f.Add(s, uint8(1))
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, u uint8) {
		unit := Unit(1 + u%4)
		got, err := parseDuration([]byte(s), unit)
		if err != nil {
			return
		}
		require.True(t, got >= 0 && got <= int64(maxDuration), "parseDuration(%q) = %d: out of range", s, got)
		if c := s[len(s)-1]; (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
			d, err := time.ParseDuration(s)
			require.NoError(t, err, "parseDuration(%q) = %d", s, got)
			require.Equal(t, int64(d), got, "parseDuration(%q) against time.ParseDuration", s)
			return
		}
		r, ok := new(big.Rat).SetString(strings.TrimPrefix(s, "+"))
		require.True(t, ok, "parseDuration(%q) = %d, but it is not a number", s, got)
		scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(unit.exp10())), nil))
		want := new(big.Rat).Mul(r, scale)
		require.True(t, want.IsInt() && want.Num().Cmp(big.NewInt(got)) == 0, "parseDuration(%q, %v) = %d, exact value %s", s, unit, got, want.FloatString(3))
	})
}

// FuzzFastLines reads CSV logs with and without the fast path for
// machine-written lines: records, line numbers, keys and errors must agree.
func FuzzFastLines(f *testing.F) {
	for _, s := range []string{
		"ts,key\n1767225600032485268,k3\n1767225600032485269,k4\n",
		"ts,key\n17,a\n18,\"b\"\n19, c\n20,d\r\n21,\n",
		"1,a\n2,b\n99999999999999999999,c\n3,d",
		"ts\n1\n\n2\n3\r\n4",
		"ts,key\n1732945844123,k\n1732945844123456789,k\n",
		"ts,key,x\n1,ab,c\n2,abc,d\n3,ab\n4,abcdefgh,1\n5,abcdefghi\n6,abcdefgh\n7,a\n8,ab\n",
		"ts,key\n1,abcdefg\n2,abcdefgh\n3,abcdefg,x\n4,,\n5,a\r\n6,abcdef,\n7,\n",
		// 16 to 20 digits, a key of seven bytes and of eight, a third
		// column, a line of digits alone; lines starting with "00000000"
		// (what the first-word cache's zero value stands for) around one
		// starting with eight NULs.
		"1767225600032485,abcdefg\n17672256000324852,abcdefgh\n176722560003248526,a,b\n1767225600032485268\n17672256000324852680,k\n1767225600032485268,k\n",
		"0000000012345678901,k3\n\x00\x00\x00\x00\x00\x00\x00\x0012345678901,k3\n0000000012345678901,k3\n1767225600032485268,k3\n",
		"ts,key\n1767225600032485268,\"k\"\n1767225600032485268,k\n1767225600032485268, k\n1767225600032485268,k\n1767225600032485268,k \n" +
			"1767225600032485268,k\n1767225600032485268,k\r\n1767225600032485268,k\n1767225600032485268,\n1767225600032485268,k\n" +
			"17672:5600032485268,k\n1767225600032485268,k\n 767225600032485268,k\n1767225600032485268,k\n1767225600032485268,k\n",
		// NUL bytes in a key, a third column and a short epoch's line,
		// each before lines of the common kind.
		"ts,key\n1767225600032485268,k\x00\n1767225600032485268,k\n1767225600032485268,k\n1767225600032485268,k,\x00\n1767225600032485268,k\n" +
			"1767225600032485268,k\n1767225600032,\x00k\n1767225600032485268,k\n1767225600032485268,k\n1767225600032485268,k\n",
		"ts,key\n1767225600032,k\n1767225600032,k\x00\n1767225600032,k\n1767225600032,k\n1767225600032,k\n1767225600032,k\n",
		// Keys that end within the epoch's third word, or seem to: a
		// leading '-' (a false mark after the comma), empty, a third
		// column, a NUL, and four bytes.
		"ts,key\n1767225600032485268,-k\n1767225600032485268,k\n1767225600032485268,\n1767225600032485268,k\n1767225600032485268,k,\n" +
			"1767225600032485268,k\n1767225600032485268,\x00\n1767225600032485268,k\n1767225600032485268,abcd\n1767225600032485268,k\n" +
			"176722560003248526,-\n1767225600032485268,k\n1767225600032485268,k\n1767225600032485268,k\n1767225600032485268,k\n",
		"9999999999999999999,k\n9223372036854775807,k\n9223372036854775808,k\n1767225600032485268,k\n1767225600:32485268,k\n17672256000324852/8,k\n",
		"ts,key\n1767225600032485268,k3\n17672256x0032485269,k4\n1767225600032485270,k5\n1767225600032485271\n1767225600032485272,k7,x\n",
		"ts,key\n1767225600032485268,k3\n1767225600032485269,k4\n17672256000324852690,k4\n176722560003248526,k4\n1767225600032485\n",
	} {
		f.Add(s, true, uint8(0))
		f.Add(s, false, uint8(4))
	}
	f.Fuzz(func(t *testing.T, s string, withKey bool, u uint8) {
		opt := Options{Format: FormatCSV, Unit: Unit(u % 5), Workers: 1}
		if withKey {
			opt.KeyCol = "2"
		}
		fast, slow := readPath("f.csv", s, opt, true), readPath("f.csv", s, opt, false)
		require.Equal(t, slow, fast, "%q: fast path against the general path", s)
	})
}

// readPath reads a whole log, with or without the fast paths, into one
// line per record and the error that stopped it, if any.
func readPath(name, s string, opt Options, fast bool) (out []string) {
	disableFastPath = !fast
	defer func() { disableFastPath = false }()
	r := NewReader(name, strings.NewReader(s), opt)
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			return append(out, err.Error())
		}
		line := fmt.Sprintf("%d %d %d %q", rec.At, rec.End, rec.Line, rec.Key)
		if opt.HasCosts() {
			line += fmt.Sprint(" ", rec.Cost[:len(opt.Costs)])
		}
		out = append(out, line)
	}
}

// FuzzFastCostLines reads CSV logs with a cost column, with and without
// the fast path for them: records, costs, line numbers, keys and errors
// must agree, wherever the key and cost columns are.
func FuzzFastCostLines(f *testing.F) {
	for _, s := range []string{
		"ts,key,tokens\n1767225600032485268,k3,1990\n1767225600032485269,k4,0\n1767225600032485270,k5,007\n",
		"ts,key,tokens\n1,a,1\n2,a, 3\n3,a,3 \n4,a,-1\n5,a,1.5\n6,a,\n7,a\n8,,1\n9,\"a\",1\n10,a,\"1\"\n11,a,1\r\n12,a,1",
		"ts,key,tokens,x\n1,abcdefghijk,123456789012345678,x\n2,a,1234567890123456789,y\n3,a,1,\"q\"\n4,a,2,\n",
		"ts,tokens,key\n1,5,a\n2,6,b b\n3,7, c\n4,8,d\r\n5,9\n",
		"ts,key,tokens\n1,k,1\n2,k\x00,1\n3,k,1\n",
		"ts,key,tokens\n99999999999999999999,k,1\n9223372036854775807,k,1\n17672256:0032485268,k,1\n",
	} {
		for cost := range uint8(3) {
			f.Add(s, true, cost, uint8(0))
			f.Add(s, false, cost, uint8(4))
		}
	}
	f.Fuzz(func(t *testing.T, s string, withKey bool, cost, u uint8) {
		opt := Options{Format: FormatCSV, Unit: Unit(u % 5), Workers: 1}
		opt.Costs = []CostSource{{Unit: "tokens", Col: []string{"tokens", "2", "3"}[cost%3]}}
		if withKey {
			opt.KeyCol = []string{"key", "3", "2"}[cost%3]
		}
		fast, slow := readPath("f.csv", s, opt, true), readPath("f.csv", s, opt, false)
		require.Equal(t, slow, fast, "%q: fast path against the general path", s)
	})
}

// FuzzFastJSON reads JSON lines logs with and without the fast path for
// flat objects: records, line numbers, keys, end times and errors must
// agree, whichever fields are asked for.
func FuzzFastJSON(f *testing.F) {
	for _, s := range []string{
		`{"ts":1767225600032485268,"key":"k3"}` + "\n" + `{"ts":1767225600032485269,"key":"k4"}`,
		`{"time":"2026-01-01T00:00:00.5Z","key":" a ","end":"2026-01-01T00:00:01Z"}`,
		`{ "ts" : 1.5 , "key" : 7 , "dur" : "150ms" }` + "\r\n" + `{"ts":2,"dur":0.25}`,
		`{"ts":1,"ts":2}` + "\n" + `{"ts":null}` + "\n" + `{"ts":true}`,
		`{"ts":"1\u0030","key":"a\"b"}` + "\n" + `{"ts":1e3}` + "\n" + `{"ts":-1}` + "\n" + `{"ts":01}`,
		`{"ts":1,"a":{"b":2}}` + "\n" + `{"ts":1,}` + "\n" + `{"ts":1} x` + "\n" + `{}` + "\n" + `{"ts":1,"end":0}`,
		`{"ts":99999999999999999999}` + "\n" + `{"ts":"1700000000"}` + "\n" + `{"ts":-}` + "\n" + `{"ts":1.}`,
		// One shape, then lines that keep its text around other values.
		`{"ts":17,"key":"a"}` + "\n" + `{"ts":18,"key":"b c"}` + "\n" + `{"ts":1.5,"key":"a"}` + "\n" + `{"ts":19,"key":"a\"b"}` +
			"\n" + `{"ts":20,"key":" x "}` + "\n" + `{"ts":21,"key":"a"} ` + "\n" + `{"ts":22,"key":""}` +
			"\n" + `{"key":"a","ts":23}` + "\n" + `{"key":"b","ts":24}` + "\n" + `{"ts":"25","key":"a"}` + "\n" + `{"ts":"26","key":"a"}` +
			"\n" + `{"ts":27,"key":"a"}` + "\n" + `{"ts":123456789012345678901,"key":"a"}`,
	} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
		f.Add(s, uint8(2))
		f.Add(s, uint8(3))
		f.Add(s, uint8(9))
	}
	f.Fuzz(func(t *testing.T, s string, which uint8) {
		opt := Options{Format: FormatJSONL, Workers: 1}
		if which&1 != 0 {
			opt.KeyField = "key"
			if which&8 != 0 {
				opt.KeyField = "ts" // one field read twice
			}
		}
		switch which >> 1 & 3 {
		case 1:
			opt.EndField = "end"
		case 2:
			opt.DurationField = "dur"
		case 3:
			opt.TimeField = "time"
		}
		fast, slow := readPath("f.jsonl", s, opt, true), readPath("f.jsonl", s, opt, false)
		require.Equal(t, slow, fast, "%q: fast path against the general path", s)
	})
}

// FuzzLeadingDigits holds the eight-at-a-time digit reader to the plain
// one, digit count and value.
func FuzzLeadingDigits(f *testing.F) {
	for _, s := range []string{"1767225600032485268,k", "12345678", "1234567a", "00000000000000000000000", "9999999999999999999", "", "/:09"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		v, n := leadingDigits(b)
		var want uint64
		k := 0
		for k < len(b) && k < 20 && b[k] >= '0' && b[k] <= '9' {
			want = want*10 + uint64(b[k]-'0')
			k++
		}
		require.Equal(t, k, n, "leadingDigits(%q) digit count", s)
		if n <= 19 {
			require.Equal(t, want, v, "leadingDigits(%q) value", s)
		}
	})
}
