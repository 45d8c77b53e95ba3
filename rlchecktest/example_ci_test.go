package rlchecktest_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rlcheck/rlcheck/rlchecktest"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/rule/contract"
	"github.com/rlcheck/rlcheck/serve"
	"github.com/rlcheck/rlcheck/strategies"
)

// The CI recipe, from the contract to the provider's edge: the limiter is
// built from the contract's rules, a strict fake partner judges every
// request when it arrives, as the real one does, the sends are written for
// rlcheck check, and the spread of the delays from Acquire to arrival tells
// whether the margin the windows were widened by is enough.
func Example_ci() {
	terms, err := contract.Load("testdata/partner.yaml") // rules: [10/s, 500/min, 10000/day], max_in_flight: 4
	if err != nil {
		panic(err)
	}
	var arrivals bytes.Buffer // the partner's log: each request's arrival and its X-Send-Time
	opts := serve.Options{Rules: terms.Rules, Boundary: terms.Boundary, MaxInFlight: terms.MaxInFlight, Log: &arrivals}
	partner, err := serve.New(opts)
	if err != nil {
		panic(err)
	}
	api := httptest.NewServer(partner)

	// The limiter under test: every window wider by a margin the delays must not outgrow.
	const margin = 50 * time.Millisecond
	lim := strategies.NewRealGated(terms.MaxInFlight, strategies.Widen(margin, terms.Rules...)...)
	var rec rlchecktest.Recorder
	client := &http.Client{Transport: rec.Transport(nil)}
	var wg sync.WaitGroup
	for range 12 { // ten at once, two a second later
		wg.Go(func() {
			err := lim.Do(context.Background(), func() error {
				req, err := http.NewRequest("POST", api.URL+"/v1/charges", nil)
				if err != nil {
					return err
				}
				req.Header.Set(serve.SendTimeHeader, strconv.FormatInt(time.Now().UnixNano(), 10)) // admitted now
				resp, err := client.Do(req)
				if err != nil {
					return err
				}
				return resp.Body.Close()
			})
			if err != nil {
				panic(err)
			}
		})
	}
	wg.Wait()
	api.Close()
	partner.Close()

	var sends bytes.Buffer // in CI, a file: rlcheck check --contract partner.yaml sends.csv
	if err := rec.WriteCSV(&sends, rule.Units(terms.Rules)...); err != nil {
		panic(err)
	}
	views, err := serve.BothViews(&arrivals, terms.Rules, terms.Boundary, false)
	if err != nil {
		panic(err)
	}
	judged, refused := partner.Requests()
	fmt.Println(strings.Count(sends.String(), "\n")-1, "sends written,", judged, "judged at arrival,", refused, "refused")
	fmt.Println("the margin covers the spread of delays from Acquire to arrival:", views.Spread <= margin)
	// Output:
	// 12 sends written, 12 judged at arrival, 0 refused
	// the margin covers the spread of delays from Acquire to arrival: true
}
