package contract_test

import (
	"fmt"

	"github.com/rlcheck/rlcheck/rule/contract"
)

func ExampleParse() {
	c, err := contract.Parse("api.yaml", []byte("rules: [10/s, 500/min]\nmax_in_flight: 4\n"))
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Rules, c.MaxInFlight, c.Boundary)

	_, err = contract.Parse("api.yaml", []byte("rules: [10/s]\nmax_inflight: 4\n"))
	fmt.Println(err)
	// Output:
	// [10/1s 500/1m] 4 half-open
	// api.yaml:2: unknown field "max_inflight": want name, rules, max_in_flight, boundary, time_col, time_field, unit, key_col, key_field, tz, status_col, status_field, refused, costs, actual, settled_col, settled_field
}
