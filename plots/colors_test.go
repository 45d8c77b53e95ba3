package plots

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStrategyColorsAreFixedAndDistinct(t *testing.T) {
	seen := map[[3]uint8]string{}
	for _, name := range []string{"sequential", "combined", "gated", "gated-rates-first", "local-per-worker",
		"combined-counter", "redis", "xrate-chained", "xrate-reserve-all", "uber-ratelimit"} {
		c := StrategyColor(name)
		key := [3]uint8{c.R, c.G, c.B}
		assert.NotContains(t, seen, key, "%s shares a colour with %s", name, seen[key])
		seen[key] = name
		assert.NotEqual(t, violationColor, c, "%s uses the violation red", name)
	}
	assert.Equal(t, strategyColors["combined"], StrategyColor("combined"), "combined")
}

func TestStrategyColorFallback(t *testing.T) {
	for _, name := range []string{"", "my-limiter", "another", "x"} {
		a, b := StrategyColor(name), StrategyColor(name)
		assert.Equal(t, a, b, "%q: a second call", name)
		assert.Equal(t, uint8(0xFF), a.A, "%q: %v is not opaque", name, a)
		// Fallback hues keep away from red, which marks violations.
		assert.False(t, int(a.R) > int(a.G)+100 && int(a.R) > int(a.B)+100, "%q: %v is too close to red", name, a)
	}
	assert.NotEqual(t, StrategyColor("my-limiter"), StrategyColor("another"), "two names hash to one colour")
}

func TestTint(t *testing.T) {
	c := strategyColors["combined"]
	assert.Equal(t, c, tint(c, 0), "tint 0 changed the colour")
	w := tint(c, 1)
	assert.Equal(t, [3]uint8{255, 255, 255}, [3]uint8{w.R, w.G, w.B}, "tint 1 = %v, want white", w)
}
