package sendlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"
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
		if got < 0 {
			t.Fatalf("parse(%q) = %d: negative", s, got)
		}
		if looksLikeDate([]byte(s)) {
			return
		}
		r, ok := new(big.Rat).SetString(strings.TrimPrefix(s, "+"))
		if !ok {
			t.Fatalf("parse(%q) = %d, but it is not a number", s, got)
		}
		if unit == UnitAuto {
			n, _ := parseNumber([]byte(s))
			unit = UnitSeconds
			if !n.decimal {
				unit = unitForDigits(n.intDigit)
			}
		}
		scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(unit.exp10())), nil))
		want := new(big.Rat).Mul(r, scale)
		if !want.IsInt() || want.Num().Cmp(big.NewInt(got)) != 0 {
			t.Fatalf("parse(%q, %v) = %d, exact value %s", s, unit, got, want.FloatString(3))
		}
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
			if !errors.As(err, &ie) {
				t.Fatalf("error %v is not an *InputError", err)
			}
			if ie.Line < 0 || ie.Line > lines {
				t.Fatalf("error names line %d of %d", ie.Line, lines)
			}
			if ie.File != name {
				t.Fatalf("error names file %q", ie.File)
			}
			return
		}
		if rec.At < 0 || rec.Line <= last || rec.Line > lines {
			t.Fatalf("bad record %+v after line %d", rec, last)
		}
		last = rec.Line
	}
}

func FuzzPlain(f *testing.F) {
	for _, s := range []string{"0.5\n1.5\n", "# c\n\n1\n", "1\r\n2", "\x00", "-1\n", strings.Repeat("1", 70000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzReader(t, "f.txt", s, Options{Format: FormatPlain})
		fuzzReader(t, "f.txt", s, Options{Format: FormatPlain, SkipInvalid: true})
	})
}

func FuzzCSV(f *testing.F) {
	for _, s := range []string{"ts,key\n1,a\n", "a,b\n\"1\",\"x,y\"\n", "1,2\n3,4\n", "ts\n", "\"unterminated\n1\n", "ts,ts\n1,2\n"} {
		f.Add(s, "")
		f.Add(s, "2")
	}
	f.Fuzz(func(t *testing.T, s, col string) {
		fuzzReader(t, "f.csv", s, Options{Format: FormatCSV, TimeCol: col})
		fuzzReader(t, "f.csv", s, Options{Format: FormatCSV, TimeCol: col, SkipInvalid: true})
	})
}

func FuzzJSONL(f *testing.F) {
	for _, s := range []string{`{"ts":1}` + "\n", `{"time":"2024-01-01T00:00:00Z"}`, `{"a":{"b":1.5}}`, `[1]`, `{"ts":-1}`, `{"ts":1e999}`} {
		f.Add(s, "")
		f.Add(s, "a.b")
	}
	f.Fuzz(func(t *testing.T, s, field string) {
		fuzzReader(t, "f.jsonl", s, Options{Format: FormatJSONL, TimeField: field})
		fuzzReader(t, "f.jsonl", s, Options{Format: FormatJSONL, TimeField: field, SkipInvalid: true})
	})
}

func FuzzAuto(f *testing.F) {
	for _, s := range []string{"1\n2\n", "ts,k\n1,a\n", `{"ts":1}`, "\x1f\x8b\x08garbage"} {
		f.Add(s)
	}
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
		csvFields([]byte(line), &p.cols, &p.fields)
		slow, err := p.record(bytes.TrimSpace(p.fields[slotTime]), p.fields[slotKey], nil, nil)
		if err != nil || slow.At != fast.At || string(slow.Key) != string(fast.Key) {
			t.Fatalf("%q: fast path %+v, general path %+v (%v)", line, fast, slow, err)
		}
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
		if got < 0 || got > int64(maxDuration) {
			t.Fatalf("parseDuration(%q) = %d: out of range", s, got)
		}
		if c := s[len(s)-1]; (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
			if d, err := time.ParseDuration(s); err != nil || int64(d) != got {
				t.Fatalf("parseDuration(%q) = %d, time.ParseDuration says %v, %v", s, got, d, err)
			}
			return
		}
		r, ok := new(big.Rat).SetString(strings.TrimPrefix(s, "+"))
		if !ok {
			t.Fatalf("parseDuration(%q) = %d, but it is not a number", s, got)
		}
		scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(unit.exp10())), nil))
		if want := new(big.Rat).Mul(r, scale); !want.IsInt() || want.Num().Cmp(big.NewInt(got)) != 0 {
			t.Fatalf("parseDuration(%q, %v) = %d, exact value %s", s, unit, got, want.FloatString(3))
		}
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
	} {
		f.Add(s, true, uint8(0))
		f.Add(s, false, uint8(4))
	}
	read := func(s string, opt Options, fast bool) (out []string) {
		disableFastPath = !fast
		defer func() { disableFastPath = false }()
		r := NewReader("f.csv", strings.NewReader(s), opt)
		defer r.Close()
		for {
			rec, err := r.Next()
			if err == io.EOF {
				return out
			}
			if err != nil {
				return append(out, err.Error())
			}
			out = append(out, fmt.Sprintf("%d %d %q", rec.At, rec.Line, rec.Key))
		}
	}
	f.Fuzz(func(t *testing.T, s string, withKey bool, u uint8) {
		opt := Options{Format: FormatCSV, Unit: Unit(u % 5), Workers: 1}
		if withKey {
			opt.KeyCol = "2"
		}
		fast, slow := read(s, opt, true), read(s, opt, false)
		if !slices.Equal(fast, slow) {
			t.Fatalf("%q:\nfast path %q\ngeneral   %q", s, fast, slow)
		}
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
		if n != k || (n <= 19 && v != want) {
			t.Fatalf("leadingDigits(%q) = %d, %d; want %d, %d", s, v, n, want, k)
		}
	})
}
