package rlchecktest_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rlcheck/rlcheck/rlchecktest"
	"github.com/rlcheck/rlcheck/rule"
)

// fetchAll stands for the code under test: a client that paces its calls
// to an API allowing 5 calls per 100 ms by waiting 20 ms between them.
func fetchAll(c *http.Client, url string, n int) error {
	for i := range n {
		if i > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		resp, err := c.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
	}
	return nil
}

// TestFetchAllKeepsTheLimit is a service's own test written with testify:
// require stops the test when its setup or the calls fail, and
// AssertCompliant, which takes the same *testing.T, judges the recorded
// sends like an assert function (it reports and returns the verdict).
func TestFetchAllKeepsTheLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	var rec rlchecktest.Recorder
	client := &http.Client{Transport: rec.Transport(srv.Client().Transport)}

	require.NoError(t, fetchAll(client, srv.URL, 8))
	require.Equal(t, 8, rec.Len(), "calls sent")

	limit, err := rule.Parse("5/100ms")
	require.NoError(t, err)
	rlchecktest.AssertCompliant(t, rec.Sends(), limit)
}
