package cli

import (
	_ "embed"
	"errors"
	"io"
)

// ScenarioExample is the annotated scenario simulate --example prints.
//
//go:embed example.yaml
var ScenarioExample string

// PrintExample writes ScenarioExample to w; the command takes no scenario
// beside it.
func PrintExample(w io.Writer, args []string) error {
	if len(args) > 0 {
		return errors.New("--example takes no scenario")
	}
	_, err := io.WriteString(w, ScenarioExample)
	return err
}
