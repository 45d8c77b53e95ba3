package serve_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/serve"
)

// A Server is an http.Handler: mount it in a Go test and point the client
// under test at it.
func Example() {
	s, err := serve.New(serve.Options{Rules: []rule.Rule{{Limit: 2, Window: time.Minute}}, KeyHeader: "X-API-Key"})
	if err != nil {
		panic(err)
	}
	api := httptest.NewServer(s)
	defer api.Close()
	for range 3 {
		req, _ := http.NewRequest("GET", api.URL+"/v1/items", nil)
		req.Header.Set("X-API-Key", "tenant-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(strings.TrimSpace(fmt.Sprint(resp.StatusCode, " ", resp.Header.Get("RateLimit"), " ", resp.Header.Get("Retry-After"))))
	}
	judged, broke := s.Requests()
	fmt.Println(judged, "requests,", broke, "past the contract,", s.Violations(), "violation")
	// Output:
	// 200 "2-per-1m";r=1
	// 200 "2-per-1m";r=0;t=60
	// 429 "2-per-1m";r=0;t=60 60
	// 3 requests, 1 past the contract, 1 violation
}
