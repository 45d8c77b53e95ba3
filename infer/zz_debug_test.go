package infer

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

func TestZZDebug(t *testing.T) {
	for _, f := range []string{"false-31", "false-44", "true-31", "true-80", "true-82"} {
		raw, _ := os.ReadFile("/tmp/ib/log-" + f + ".json")
		var x struct {
			Hidden string
			Units  []string
			Log    []Send
		}
		json.Unmarshal(raw, &x)
		res := Infer(x.Log, Options{Units: x.Units})
		for rd, fit := range res.Fits {
			fmt.Printf("== %s rd %d best %v both %v: %s smallest %v %q\n", f, rd, res.Best, res.BothFit, RulesText(fit.Rules), fit.Smallest, fit.Unproved)
			for _, r := range fit.Rules {
				fmt.Printf("     %s conf %.2f also %v\n", RulesText([]Rule{r}), r.Confidence, r.AlsoFits)
			}
		}
	}
}
