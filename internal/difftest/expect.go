package difftest

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/internal/oracle"
	"github.com/rlcheck/rlcheck/rule"
)

// Verdict is what the oracle says of one rule on one key's sends, in the
// terms reports use.
type Verdict struct {
	// Lines are the violating sends' 1-based lines in the case's CSV
	// (header first), in judging order.
	Lines []int64
	// Max is the fullest window's content; -1 for a bucket rule.
	Max int64
	// Levels are a bucket rule's levels at its violations, rounded down
	// to nine decimals as reports print them.
	Levels []string
}

// Expect judges the case per key with the oracle: for each key (a single
// "" without keys), one verdict per rule.
func Expect(c Case) map[string][]Verdict {
	byKey := map[string][]int{}
	for i, s := range c.Sends {
		byKey[s.Key] = append(byKey[s.Key], i)
	}
	rules := OracleRules(c.Rules)
	out := map[string][]Verdict{}
	for key, idx := range byKey {
		sends := make([]oracle.Send, len(idx))
		for j, i := range idx {
			s := c.Sends[i]
			sends[j] = oracle.Send{T: s.At, Costs: s.Costs, Settled: s.Settled, Actual: s.Actual}
		}
		for _, v := range oracle.JudgeAll(sends, rules, c.Boundary == rule.Closed) {
			out[key] = append(out[key], fromOracle(v, idx))
		}
	}
	return out
}

// fromOracle turns an oracle verdict on a subset of sends (idx maps its
// indices to the case's) into lines and int64s.
func fromOracle(v oracle.Verdict, idx []int) Verdict {
	out := Verdict{Max: -1}
	for _, i := range v.Violations {
		out.Lines = append(out.Lines, int64(idx[i])+2)
	}
	if v.Max != nil {
		if !v.Max.IsInt64() {
			panic(fmt.Sprintf("window content %v past int64", v.Max))
		}
		out.Max = v.Max.Int64()
	}
	for _, l := range v.Levels {
		out.Levels = append(out.Levels, Decimal9(l))
	}
	return out
}

// Decimal9 writes a rational rounded toward zero to nine decimals,
// without trailing zeros ("0.8", "1", "0.333333333", "-2.5").
func Decimal9(r *big.Rat) string {
	if r.Sign() < 0 {
		return "-" + Decimal9(new(big.Rat).Neg(r))
	}
	scaled := new(big.Int).Mul(r.Num(), big.NewInt(1_000_000_000))
	scaled.Quo(scaled, r.Denom())
	s := fmt.Sprintf("%010s", scaled.String())
	whole, frac := s[:len(s)-9], strings.TrimRight(s[len(s)-9:], "0")
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// OracleRules converts rules to the oracle's plain numbers.
func OracleRules(rules []rule.Rule) []oracle.Rule {
	out := make([]oracle.Rule, len(rules))
	for i, r := range rules {
		o := oracle.Rule{N: int64(r.Limit), W: int64(r.Window), Unit: r.Unit, Offset: int64(r.Offset), Burst: int64(r.Burst)}
		o.Kind = map[rule.Kind]oracle.Kind{rule.Sliding: oracle.Sliding, rule.Fixed: oracle.Fixed,
			rule.Bucket: oracle.Bucket, rule.FirstCall: oracle.FirstCall}[r.Kind]
		if r.Zone != "" {
			loc, err := time.LoadLocation(r.Zone)
			if err != nil {
				panic(err)
			}
			o.Zone = loc
		}
		out[i] = o
	}
	return out
}

// CSV writes the case as check reads it: ts (ns), key, and one column per
// unit, named as the unit; send i is on line i+2.
func (c Case) CSV() string {
	var b strings.Builder
	units := c.Units()
	b.WriteString("ts,key")
	for _, u := range units {
		b.WriteString("," + u)
	}
	b.WriteString("\n")
	for _, s := range c.Sends {
		fmt.Fprintf(&b, "%d,%s", s.At, s.Key)
		for _, u := range units {
			fmt.Fprintf(&b, ",%d", s.Costs[u])
		}
		b.WriteString("\n")
	}
	return b.String()
}
