package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chatBody is a request of prompt text and max_tokens, as the SDKs send it.
func chatBody(text string, maxTokens int, extra string) string {
	return fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":%q}],"max_tokens":%d%s}`, text, maxTokens, extra)
}

// TestOpenAIPresetAnswers: a completion of OpenAI's shape whose usage is
// the estimate (12 characters, 3 tokens, and max_tokens), the header
// family computed from the rules, and a 429 with the error body the SDK
// parses and the exact wait in retry-after-ms.
func TestOpenAIPresetAnswers(t *testing.T) {
	c := newClocked(t, Options{Rules: mustRules(t, "2/1s, 100 tokens/10s"), Provider: OpenAI})
	rec := c.do(t, ms(1000), chatBody("hello world!", 20, ""))
	require.Equal(t, 200, rec.Code, rec.Body.String())
	var got struct {
		Object  string
		Choices []struct {
			Message      struct{ Content string }
			FinishReason string `json:"finish_reason"`
		}
		Usage struct{ PromptTokens, CompletionTokens, TotalTokens int64 }
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Equal(t, "chat.completion", got.Object)
	require.Len(t, got.Choices, 1)
	assert.Equal(t, "length", got.Choices[0].FinishReason)
	assert.Len(t, got.Choices[0].Message.Content, 20*CharsPerToken-1)
	h := rec.Header()
	assert.Equal(t, []string{"2", "1", "1s", "100", "77", "10s"}, []string{
		h.Get("x-ratelimit-limit-requests"), h.Get("x-ratelimit-remaining-requests"), h.Get("x-ratelimit-reset-requests"),
		h.Get("x-ratelimit-limit-tokens"), h.Get("x-ratelimit-remaining-tokens"), h.Get("x-ratelimit-reset-tokens")})
	require.Equal(t, 200, c.do(t, ms(1250), chatBody("hi", 10, "")).Code)
	rec = c.do(t, ms(1500), chatBody("hi", 10, ""))
	require.Equal(t, 429, rec.Code)
	assert.Equal(t, "750", rec.Header().Get("retry-after-ms"), "counted, the refused request leaves two in the window until the one of 1.25 s leaves")
	assert.Equal(t, "1", rec.Header().Get("retry-after"))
	assert.Equal(t, "0", rec.Header().Get("x-ratelimit-remaining-requests"))
	assert.Equal(t, "1s", rec.Header().Get("x-ratelimit-reset-requests"), "the refused request counts: it leaves at 2.5 s")
	var e struct {
		Error struct{ Message, Type, Code string }
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
	assert.Equal(t, "requests", e.Error.Type)
	assert.Equal(t, "rate_limit_exceeded", e.Error.Code)
	assert.Contains(t, e.Error.Message, "Please try again in 750ms")
	assert.EqualValues(t, 1, c.judge(t).Violations())
}

// TestPresetTooLargeIsNotCharged: a request whose estimate alone exceeds
// a rule is answered 413 in the provider's shape and changes no later
// verdict: the calls that fit after it are admitted, as though it never
// came.
func TestPresetTooLargeIsNotCharged(t *testing.T) {
	for _, p := range []Provider{OpenAI, Anthropic, AzureOpenAI} {
		c := newClocked(t, Options{Rules: mustRules(t, "2/1s, 100 tokens/1s"), Provider: p})
		rec := c.do(t, ms(1000), chatBody("x", 100, ""))
		require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, "%v: 1 + 100 tokens", p)
		assert.Contains(t, rec.Body.String(), "request_too_large")
		assert.Empty(t, rec.Header().Get("retry-after"))
		for _, at := range []int64{1100, 1200} {
			rec = c.do(t, ms(at), chatBody("x", 48, ""))
			require.Equal(t, 200, rec.Code, "%v: %s", p, rec.Body.String())
		}
		assert.Equal(t, 429, c.do(t, ms(1300), chatBody("x", 1, "")).Code, "%v: 2/1s is full with the two that fit", p)
		res := c.judge(t)
		assert.EqualValues(t, 3, res.Sends)
		assert.EqualValues(t, 1, res.Violations())
		assert.EqualValues(t, 1, c.s.unjudged.Load())
	}
}

// TestAnthropicPresetAnswers: a message of Anthropic's shape, input and
// output tokens metered apart, resets as RFC 3339 instants and the 429 the
// SDK parses.
func TestAnthropicPresetAnswers(t *testing.T) {
	c := newClocked(t, Options{
		Rules:    mustRules(t, "3/1m, 100 input_tokens/1m, 50 output_tokens/1m"),
		Provider: Anthropic, CompletionPermille: 500,
	})
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	body := `{"model":"m","system":"abcd","messages":[{"role":"user","content":[{"type":"text","text":"abcdefgh"}]}],"max_tokens":30}`
	rec := c.do(t, base, body)
	require.Equal(t, 200, rec.Code, rec.Body.String())
	var got struct {
		StopReason string `json:"stop_reason"`
		Usage      struct {
			Input  int64 `json:"input_tokens"`
			Output int64 `json:"output_tokens"`
		}
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Equal(t, int64(3), got.Usage.Input, "12 characters, the system prompt's included")
	assert.Equal(t, int64(15), got.Usage.Output, "half of max_tokens")
	assert.Equal(t, "end_turn", got.StopReason)
	h := rec.Header()
	assert.Equal(t, "2", h.Get("anthropic-ratelimit-requests-remaining"))
	assert.Equal(t, "97", h.Get("anthropic-ratelimit-input-tokens-remaining"))
	assert.Equal(t, "20", h.Get("anthropic-ratelimit-output-tokens-remaining"), "charged max_tokens, the estimate")
	assert.Equal(t, "2030-01-01T00:01:00Z", h.Get("anthropic-ratelimit-output-tokens-reset"))
	// The answer settled the first request to its 15 output tokens: 15 + 30
	// fit 50, and then 15 + 15 + 30 do not.
	rec = c.do(t, base+ms(400), chatBody("x", 30, ""))
	require.Equal(t, 200, rec.Code, "settled to the usage, the first leaves room")
	assert.Equal(t, "5", rec.Header().Get("anthropic-ratelimit-output-tokens-remaining"), "50 - 15 - 30")
	rec = c.do(t, base+ms(500), chatBody("x", 30, ""))
	require.Equal(t, 429, rec.Code)
	assert.Equal(t, "60", rec.Header().Get("retry-after"))
	assert.Empty(t, rec.Header().Get("retry-after-ms"))
	var e struct {
		Type  string
		Error struct{ Type, Message string }
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
	assert.Equal(t, "error", e.Type)
	assert.Equal(t, "rate_limit_error", e.Error.Type)
	assert.Equal(t, 400, c.do(t, base+ms(600), `{"model":"m","messages":[]}`).Code, "the messages API requires max_tokens")
}

// TestPresetStreams: a streamed completion ends with the usage, in each
// provider's events.
func TestPresetStreams(t *testing.T) {
	c := newClocked(t, Options{Rules: mustRules(t, "5/1s"), Provider: OpenAI})
	rec := c.do(t, ms(1000), chatBody("abcd", 8, `,"stream":true,"stream_options":{"include_usage":true}`))
	require.Equal(t, 200, rec.Code)
	events := strings.Split(strings.TrimSpace(rec.Body.String()), "\n\n")
	require.Len(t, events, 4)
	assert.Equal(t, "data: [DONE]", events[3])
	assert.Contains(t, events[2], `"usage":{"prompt_tokens":1,"completion_tokens":8,"total_tokens":9}`)

	c = newClocked(t, Options{Rules: mustRules(t, "5/1s"), Provider: Anthropic})
	rec = c.do(t, ms(1000), chatBody("abcd", 8, `,"stream":true`))
	require.Equal(t, 200, rec.Code)
	events = strings.Split(strings.TrimSpace(rec.Body.String()), "\n\n")
	require.Len(t, events, 6)
	assert.Contains(t, events[4], `"usage":{"output_tokens":8}`)
	assert.True(t, strings.HasPrefix(events[5], "event: message_stop"))
}

// TestPresetRefusesWhatItCannotRead: cost sources beside a preset, a unit
// its requests do not carry, a body that is not a request.
func TestPresetRefusesWhatItCannotRead(t *testing.T) {
	_, err := New(Options{Rules: mustRules(t, "10 input_tokens/1s"), Provider: OpenAI})
	assert.ErrorContains(t, err, "no request carries input_tokens")
	_, err = New(Options{Rules: mustRules(t, "10 tokens/1s"), Provider: OpenAI, Costs: []CostSource{{Unit: "tokens", Header: "X"}}})
	assert.ErrorContains(t, err, "give no Options.Costs")
	c := newClocked(t, Options{Rules: mustRules(t, "10 tokens/1s"), Provider: OpenAI})
	for _, b := range []string{"", "[", `{"max_tokens":-1}`, `{"max_tokens":1.5}`} {
		rec := c.do(t, ms(1000), b)
		assert.Equal(t, 400, rec.Code, "%q", b)
		assert.Contains(t, rec.Body.String(), "invalid_request_error", "%q", b)
	}
}

// FuzzDecodeChat: any body is read as a chat request or refused with a
// 400 naming the body, never a panic.
func FuzzDecodeChat(f *testing.F) {
	for _, s := range []string{`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":8}`,
		`{"system":[{"type":"text","text":"x"}],"messages":[{"content":[{"text":"ab"},{"text":1}]}],"max_completion_tokens":3,"stream":true,"stream_options":{"include_usage":true}}`,
		`{"max_tokens":"8"}`, `[]`, `{`, `{"messages":{}}`, `{"messages":[1,{"content":null}]}`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		var req chatRequest
		err := decodeChat(r, &req)
		if err != nil {
			var ce *costError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, http.StatusBadRequest, ce.status)
			return
		}
		require.GreaterOrEqual(t, req.chars, int64(0))
	})
}

// TestUsagePastTheLargestCostIsRefused: with completions ten times
// max_tokens, a max_tokens whose usage would pass MaxCost (which the log
// cannot carry, and sums of which would pass int64) is answered 400 and
// charged nothing; the largest that fits is admitted and settled.
func TestUsagePastTheLargestCostIsRefused(t *testing.T) {
	c := newClocked(t, Options{
		Rules:    mustRules(t, "3/1m, 999999999999999999 tokens/1m"),
		Provider: OpenAI, CompletionPermille: MaxCompletionPermille,
	})
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	prompt := int64(1) // "x" is one token
	fits := (MaxCost - prompt) / 10
	rec := c.do(t, base, chatBody("x", int(fits+1), ""))
	require.Equal(t, 400, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "the most a cost in the log can be")
	rec = c.do(t, base+ms(1), chatBody("x", int(fits), ""))
	require.Equal(t, 200, rec.Code, rec.Body.String())
	assert.Equal(t, "2", rec.Header().Get("x-ratelimit-remaining-requests"), "the refused request took nothing")
}
