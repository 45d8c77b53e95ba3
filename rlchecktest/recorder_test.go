package rlchecktest_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/rlcheck/rlcheck/rlchecktest"
	"github.com/rlcheck/rlcheck/rule"
)

func TestRecorderConcurrent(t *testing.T) {
	var rec rlchecktest.Recorder
	var wg sync.WaitGroup
	boom := errors.New("boom")
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if err := rec.Record(func() error { return boom }); err != boom {
					t.Errorf("Record returned %v, want f's error", err)
				}
			}
		}()
	}
	wg.Wait()
	sends := rec.Sends()
	if len(sends) != 1000 || rec.Len() != 1000 {
		t.Fatalf("%d sends, Len %d; want 1000", len(sends), rec.Len())
	}
	for i := 1; i < len(sends); i++ {
		if sends[i].Before(sends[i-1]) {
			t.Fatalf("send %d comes before send %d", i, i-1)
		}
	}
	var ft fakeTB
	if rec.AssertCompliant(&ft, rule.Rule{Limit: 10, Window: time.Hour}) {
		t.Fatal("1000 sends passed 10/1h")
	}
	rec.Reset()
	if rec.Len() != 0 {
		t.Fatal("Reset kept sends")
	}
}

func TestRecorderTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	var rec rlchecktest.Recorder
	client := &http.Client{Transport: rec.Transport(srv.Client().Transport)}
	for range 3 {
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// A request that never gets an answer was still sent, as far as the
	// recorder can tell, and counts.
	bad := &http.Client{Transport: rec.Transport(failing{})}
	if _, err := bad.Get("http://example.invalid/"); err == nil {
		t.Fatal("failing transport succeeded")
	}
	if rec.Len() != 4 {
		t.Fatalf("%d sends recorded, want 4", rec.Len())
	}
	var ft fakeTB
	if !rec.AssertCompliant(&ft, rule.Rule{Limit: 4, Window: time.Minute}) {
		t.Fatalf("4 sends failed 4/1m: %q", ft.errors)
	}
	if rec.AssertCompliant(&ft, rule.Rule{Limit: 3, Window: time.Minute}) {
		t.Fatal("4 sends passed 3/1m")
	}
}

type failing struct{}

func (failing) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("connection refused")
}
