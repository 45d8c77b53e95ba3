// Command nullserve is the anchor of scripts/bench-serve.sh: a bare
// net/http server on loopback that answers every request 200 with a short
// body and does nothing else. The load generator's latency against it is
// what the machine, the kernel's loopback, net/http and the generator cost
// by themselves at a given rate; what `rlcheck serve` adds is its latency
// beyond that, measured the same way in the same run.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18182", "address")
	duration := flag.Duration("duration", 2*time.Minute, "stop after this long")
	flag.Parse()
	body := []byte("{\"status\":\"ok\"}\n")
	srv := &http.Server{Addr: *listen, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})}
	time.AfterFunc(*duration, func() { srv.Close() })
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, "nullserve:", err)
		os.Exit(2)
	}
}
