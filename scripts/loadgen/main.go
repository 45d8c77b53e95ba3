// Command loadgen drives `rlcheck serve` for scripts/bench-serve.sh: -conns
// keep-alive connections on loopback, each sending requests back to back
// for -duration, one key per connection. It prints the requests answered
// (by status), the rate, and the percentiles of the latency serve added
// beyond the configured -latency (fixed).
//
// With -rate R (requests/s in all) each connection sends on a fixed
// schedule, one request every conns/R, instead of back to back, and a
// request's latency counts from its scheduled instant: a request sent late
// because the one before it was slow is charged the wait, so a server that
// falls behind the schedule shows it in the percentiles (no coordinated
// omission).
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	target := flag.String("url", "http://127.0.0.1:18181/v1/load", "serve's URL")
	conns := flag.Int("conns", 64, "keep-alive connections")
	duration := flag.Duration("duration", 10*time.Second, "how long to send")
	latency := flag.Duration("latency", 0, "serve's configured latency (fixed), subtracted")
	rate := flag.Float64("rate", 0, "requests/s over all connections on a fixed schedule (0: back to back)")
	body := flag.String("body", "", "send each request as a POST of this JSON body (a provider preset's request), not a GET")
	flag.Parse()
	u, err := url.Parse(*target)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", u.Host) // a bare connection: no request, nothing judged
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "loadgen: serve did not come up:", err)
			os.Exit(2)
		}
	}
	var mu sync.Mutex
	var all []time.Duration
	statuses := map[int]int{}
	errs := 0
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(*duration)
	for i := range *conns {
		wg.Go(func() {
			tr := &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1, DisableCompression: true}
			client := &http.Client{Transport: tr}
			key := fmt.Sprintf("key-%02d", i)
			var lat []time.Duration
			st := map[int]int{}
			bad := 0
			var every time.Duration
			if *rate > 0 {
				every = time.Duration(float64(*conns) / *rate * float64(time.Second))
			}
			// Connections start spread over one interval, not all at once.
			next := start.Add(every * time.Duration(i) / time.Duration(*conns))
			for time.Now().Before(end) {
				req, _ := http.NewRequest("GET", *target, nil)
				if *body != "" {
					req, _ = http.NewRequest("POST", *target, strings.NewReader(*body))
					req.Header.Set("Content-Type", "application/json")
				}
				req.Header.Set("X-API-Key", key)
				t0 := time.Now()
				if every > 0 {
					if next.After(end) {
						break
					}
					time.Sleep(time.Until(next))
					t0 = next
					next = next.Add(every)
				}
				resp, err := client.Do(req)
				if err != nil {
					bad++
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat = append(lat, time.Since(t0)-*latency)
				st[resp.StatusCode]++
			}
			mu.Lock()
			all = append(all, lat...)
			for k, v := range st {
				statuses[k] += v
			}
			errs += bad
			mu.Unlock()
		})
	}
	wg.Wait()
	took := time.Since(start)
	slices.Sort(all)
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[min(len(all)-1, int(p*float64(len(all))))]
	}
	fmt.Printf("answered %d\n", len(all))
	fmt.Printf("errors %d\n", errs)
	fmt.Printf("statuses %v\n", statuses)
	fmt.Printf("rate %.0f req/s over %v with %d connections\n", float64(len(all))/took.Seconds(), took.Round(time.Millisecond), *conns)
	fmt.Printf("added latency p50 %v p99 %v p99.9 %v max %v\n", pct(0.50), pct(0.99), pct(0.999), pct(1))
}
