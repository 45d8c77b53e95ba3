package simulate

import (
	"io"
	"strings"
)

// table lays out rows with the first column left-aligned and the others
// right-aligned, two spaces apart; tabwriter cannot mix alignments.
type table struct{ rows [][]string }

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer) error {
	var width []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		var line strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-len(c))
			switch {
			case i == 0:
				line.WriteString(c + pad)
			default:
				line.WriteString("  " + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
