package accesslog_test

import (
	"fmt"
	"time"

	"github.com/rlcheck/rlcheck/sendlog/accesslog"
)

func ExampleParser() {
	filter, err := accesslog.NewFilter(accesslog.FilterSpec{Paths: []string{"/api/"}, Statuses: []string{"2xx", "429"}})
	if err != nil {
		panic(err)
	}
	p := accesslog.Parser{Format: accesslog.Nginx, Filter: filter}
	for _, line := range []string{
		`203.0.113.7 - - [30/Nov/2024:05:50:00 +0000] "GET /api/v1/items?page=2 HTTP/1.1" 200 512 "-" "curl/8.5.0" 1732945800.123 0.045`,
		`203.0.113.7 - - [30/Nov/2024:05:50:00 +0000] "GET /static/app.js HTTP/1.1" 200 9120 "-" "curl/8.5.0" 1732945800.130 0.002`,
		`203.0.113.7 - - [30/Nov/2024:05:50:00 +0000] "POST /api/v1/orders HTTP/1.1" 429 87 "-" "curl/8.5.0" 1732945800.131 0.001`,
	} {
		e, keep, err := p.Parse([]byte(line))
		if err != nil || !keep {
			continue
		}
		fmt.Printf("%s %s %d from %s for %v\n", e.Method, e.Path, e.Status,
			time.Unix(0, e.Start).UTC().Format("15:04:05.000"), time.Duration(e.End-e.Start))
	}
	fmt.Println("left out:", p.Filtered)
	// Output:
	// GET /api/v1/items 200 from 05:50:00.078 for 45ms
	// POST /api/v1/orders 429 from 05:50:00.130 for 1ms
	// left out: 1
}
