package plots

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// dpi is the PNG resolution; the timeline reduces its series to this many
// columns per inch of width.
const dpi = 96

// checkExt refuses, before any work, a path whose extension picks no format.
func checkExt(path string) (string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" {
		return "", fmt.Errorf("plots: %s: unknown image format %q: use .png or .svg", path, filepath.Ext(path))
	}
	return ext, nil
}

// save draws a w×h figure with paint and writes it to path as PNG or SVG.
func save(path string, w, h vg.Length, paint func(draw.Canvas)) error {
	ext, err := checkExt(path)
	if err != nil {
		return err
	}
	var c vg.CanvasWriterTo
	if ext == ".png" {
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))}
	} else {
		c = vgsvg.New(w, h)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	paint(dc)

	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("plots: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plots: writing %s: %w", path, err)
	}
	return nil
}

// CheckPath reports whether path names a chart file this package can write
// (.png or .svg), so callers can refuse a bad name before any work.
func CheckPath(path string) error {
	_, err := checkExt(path)
	return err
}
