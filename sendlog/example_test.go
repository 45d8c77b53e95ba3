package sendlog_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rlcheck/rlcheck/sendlog"
)

// A Reader yields one record per send, times in integer nanoseconds; bad
// input is an *InputError naming the file, the line and the text.
func ExampleNewReader() {
	csv := "ts,tenant\n1767225600.000,acme\n1767225600.25,globex\nsoon,acme\n"
	r := sendlog.NewReader("sends.csv", strings.NewReader(csv), sendlog.Options{KeyCol: "tenant"})
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		var in *sendlog.InputError
		if errors.As(err, &in) {
			fmt.Printf("line %d: %s\n", in.Line, in.Msg)
			break
		}
		fmt.Printf("line %d: %d ns, key %s\n", rec.Line, rec.At, rec.Key)
	}
	// Output:
	// line 2: 1767225600000000000 ns, key acme
	// line 3: 1767225600250000000 ns, key globex
	// line 4: not a timestamp (want decimal seconds, an integer epoch or RFC 3339)
}
