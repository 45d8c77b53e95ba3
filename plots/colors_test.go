package plots

import (
	"testing"
)

func TestStrategyColorsAreFixedAndDistinct(t *testing.T) {
	seen := map[[3]uint8]string{}
	for _, name := range []string{"sequential", "combined", "gated", "gated-rates-first", "local-per-worker",
		"combined-counter", "redis", "xrate-chained", "xrate-reserve-all", "uber-ratelimit"} {
		c := StrategyColor(name)
		key := [3]uint8{c.R, c.G, c.B}
		if other, ok := seen[key]; ok {
			t.Errorf("%s and %s share a colour", name, other)
		}
		seen[key] = name
		if c == violationColor {
			t.Errorf("%s uses the violation red", name)
		}
	}
	if got, want := StrategyColor("combined"), strategyColors["combined"]; got != want {
		t.Errorf("combined: %v, want %v", got, want)
	}
}

func TestStrategyColorFallback(t *testing.T) {
	for _, name := range []string{"", "my-limiter", "another", "x"} {
		a, b := StrategyColor(name), StrategyColor(name)
		if a != b || a.A != 0xFF {
			t.Errorf("%q: %v then %v", name, a, b)
		}
		// Fallback hues keep away from red, which marks violations.
		if int(a.R) > int(a.G)+100 && int(a.R) > int(a.B)+100 {
			t.Errorf("%q: %v is too close to red", name, a)
		}
	}
	if StrategyColor("my-limiter") == StrategyColor("another") {
		t.Error("two names hash to one colour")
	}
}

func TestTint(t *testing.T) {
	c := strategyColors["combined"]
	if tint(c, 0) != c {
		t.Error("tint 0 changed the colour")
	}
	if w := tint(c, 1); w.R != 255 || w.G != 255 || w.B != 255 {
		t.Errorf("tint 1 = %v, want white", w)
	}
}
