package scenarios

import (
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary YAML to the loader: it must never panic, and
// every refusal must be a *scenarios.Error naming the file.
func FuzzParse(f *testing.F) {
	for _, n := range Names() {
		data, _ := shipped.ReadFile(n + ".yaml")
		f.Add(data)
	}
	f.Add([]byte("rules: [5/1s]\nstrategies: [combined]\ncallers: 3\ncalers: 4\n"))
	f.Add([]byte("arrivals: {pattern: replay, file: x}\n"))
	f.Add([]byte("rules: {a: b}\nskew: 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f.yaml", data, noFiles)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.File != "f.yaml" {
				t.Fatalf("error %v (%T) does not name the file", err, err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("parsed scenario does not validate: %v", err)
		}
	})
}
