package serve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/rlcheck/rlcheck/rule"
)

// benchAnswers measures one answered request, as serve's handler sees
// it, over 64 keys within their rules: plain serve and a provider preset
// (which reads the body, charges its estimate, answers a completion with
// the provider's headers and logs them). scripts/bench-preset.sh measures
// the same over loopback.
func benchAnswers(b *testing.B, p Provider) {
	rules, err := rule.ParseList("1000000/1s,20000000/1m")
	if err != nil {
		b.Fatal(err)
	}
	var clock int64 = 1
	o := Options{Rules: rules, KeyHeader: "X-API-Key", Log: io.Discard, Provider: p, Now: func() int64 { clock += 1000; return clock }}
	if p != NoProvider {
		rules, _ = rule.ParseList("1000000/1s,20000000 tokens/1m")
		o.Rules = rules
	}
	s, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	body := `{"model":"m","messages":[{"role":"user","content":"hello world!"}],"max_tokens":8}`
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("X-API-Key", keys[i%len(keys)])
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

func BenchmarkAnswerPlain(b *testing.B)  { benchAnswers(b, NoProvider) }
func BenchmarkAnswerOpenAI(b *testing.B) { benchAnswers(b, OpenAI) }
