package plots

import (
	"hash/fnv"
	"image/color"
	"math"
)

// strategyColors fixes each known strategy's colour, so a strategy looks the
// same in every chart. Red is kept for violations.
var strategyColors = map[string]color.RGBA{
	"sequential":        {0xE6, 0x9F, 0x00, 0xFF}, // orange
	"combined":          {0x00, 0x72, 0xB2, 0xFF}, // blue
	"gated":             {0x00, 0x9E, 0x73, 0xFF}, // green
	"gated-rates-first": {0xCC, 0x79, 0xA7, 0xFF}, // pink
	"local-per-worker":  {0x8C, 0x56, 0x4B, 0xFF}, // brown
	"combined-counter":  {0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	"redis":             {0x88, 0x22, 0x55, 0xFF}, // wine
	"xrate-chained":     {0x99, 0x99, 0x33, 0xFF}, // olive
	"xrate-reserve-all": {0x33, 0x22, 0x88, 0xFF}, // indigo
	"uber-ratelimit":    {0x44, 0xAA, 0x99, 0xFF}, // teal
}

var (
	violationColor = color.RGBA{0xD0, 0x00, 0x00, 0xFF}
	neutralColor   = color.RGBA{0x44, 0x55, 0x66, 0xFF}
	limitColor     = color.RGBA{0x22, 0x22, 0x22, 0xFF}
)

// StrategyColor returns the colour every chart uses for a strategy. Names
// outside the known set get a colour derived from a hash of the name, so
// they too keep it from chart to chart and run to run.
func StrategyColor(name string) color.RGBA {
	if c, ok := strategyColors[name]; ok {
		return c
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	sum := h.Sum32()
	// Hues 20°..340° avoid the red reserved for violations.
	hue := 20 + float64(sum%320)
	light := 0.38 + float64((sum>>16)%3)*0.08
	return hsl(hue, 0.55, light)
}

// hsl converts a hue in degrees, saturation and lightness in [0, 1].
func hsl(h, s, l float64) color.RGBA {
	c := (1 - math.Abs(2*l-1)) * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := l - c/2
	var r, g, b float64
	switch {
	case h < 60:
		r, g, b = c, x, 0
	case h < 120:
		r, g, b = x, c, 0
	case h < 180:
		r, g, b = 0, c, x
	case h < 240:
		r, g, b = 0, x, c
	case h < 300:
		r, g, b = x, 0, c
	default:
		r, g, b = c, 0, x
	}
	to := func(v float64) uint8 { return uint8(math.Round((v + m) * 255)) }
	return color.RGBA{to(r), to(g), to(b), 0xFF}
}

// tint mixes c with white; f = 0 keeps c, f = 1 is white.
func tint(c color.RGBA, f float64) color.RGBA {
	mix := func(v uint8) uint8 { return uint8(math.Round(float64(v) + (255-float64(v))*f)) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 0xFF}
}
