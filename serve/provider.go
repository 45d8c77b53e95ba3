package serve

import (
	"fmt"
	"github.com/valyala/fastjson"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/rlcheck/rlcheck/rule"
)

// Provider is an API whose dialect a Server speaks (docs/providers.md):
// how a request is charged, and the shape of its answers and headers.
type Provider int

const (
	// NoProvider answers in serve's own dialect: Options.Status and Body,
	// the IETF RateLimit fields, a plain JSON 429.
	NoProvider Provider = iota
	// OpenAI answers as the OpenAI chat completions API.
	OpenAI
	// Anthropic answers as the Anthropic messages API.
	Anthropic
	// AzureOpenAI answers as Azure OpenAI's chat completions, which share
	// OpenAI's body and header family.
	AzureOpenAI
)

var providerNames = []string{"", "openai", "anthropic", "azure-openai"}

// Providers lists the names ParseProvider takes.
func Providers() []string { return providerNames[1:] }

func (p Provider) String() string {
	if p < 0 || int(p) >= len(providerNames) {
		return fmt.Sprintf("Provider(%d)", int(p))
	}
	return providerNames[p]
}

// ParseProvider reads a provider's name, as Providers lists them.
func ParseProvider(s string) (Provider, error) {
	if i := slices.Index(providerNames, strings.ToLower(strings.TrimSpace(s))); i > 0 {
		return Provider(i), nil
	}
	return NoProvider, fmt.Errorf("serve: provider %q: want one of %s", s, strings.Join(Providers(), ", "))
}

// units are the cost units the provider's rules may meter: tokens is the
// prompt's estimate plus max_tokens; Anthropic meters input and output
// apart too.
func (p Provider) units() []string {
	if p == Anthropic {
		return []string{"tokens", "input_tokens", "output_tokens"}
	}
	return []string{"tokens"}
}

// CharsPerToken is the prompt estimate's rule: a prompt of n characters
// (Unicode code points of every message's text, the system prompt's
// included) is charged ceil(n/4) tokens.
const CharsPerToken = 4

// chatRequest is what a preset reads of a request's body.
type chatRequest struct {
	Model     string
	MaxTokens *int64
	// MaxCompletion is OpenAI's newer name for max_tokens.
	MaxCompletion *int64
	Stream        bool
	StreamOptions struct {
		IncludeUsage bool
	}

	chars       int64 // of the system prompt and every message's text
	prompt, max int64 // the estimate: prompt tokens and max_tokens
}

// checkProvider refuses a preset whose rules meter a unit its requests do
// not carry, or that is also given cost sources.
func checkProvider(o Options) error {
	if o.Provider == NoProvider {
		return nil
	}
	if o.Provider < 0 || int(o.Provider) >= len(providerNames) {
		return fmt.Errorf("serve: %v: no such provider", o.Provider)
	}
	if len(o.Costs) > 0 {
		return fmt.Errorf("serve: provider %s reads each request's costs from its body: give no Options.Costs", o.Provider)
	}
	if o.CompletionPermille < 0 || o.CompletionPermille > MaxCompletionPermille {
		return fmt.Errorf("serve: Options.CompletionPermille %d: want 0 to %d", o.CompletionPermille, MaxCompletionPermille)
	}
	for _, u := range rule.Units(o.Rules) {
		if !slices.Contains(o.Provider.units(), u) {
			return fmt.Errorf("serve: provider %s: no request carries %s: its rules meter %s", o.Provider, u, strings.Join(o.Provider.units(), ", "))
		}
	}
	return nil
}

// readChat reads r's body as the provider's request and its costs in the
// units the rules meter, by the estimate: the prompt, and max_tokens.
func (s *Server) readChat(r *http.Request) (*chatRequest, []int64, error) {
	var req chatRequest
	if err := decodeChat(r, &req); err != nil {
		return nil, nil, err
	}
	req.prompt = (req.chars + CharsPerToken - 1) / CharsPerToken
	switch {
	case req.MaxTokens != nil:
		req.max = *req.MaxTokens
	case req.MaxCompletion != nil:
		req.max = *req.MaxCompletion
	case s.opt.Provider == Anthropic:
		return nil, nil, &costError{http.StatusBadRequest, "max_tokens: Field required", false}
	}
	if req.max < 0 || req.max > MaxCost/2 || req.prompt > MaxCost/2 {
		return nil, nil, &costError{http.StatusBadRequest, fmt.Sprintf("max_tokens %d: want a whole number from 0 up to %d", req.max, int64(MaxCost/2)), false}
	}
	// The usage a completion larger than max_tokens settles to must be a
	// cost the log can carry, as the estimate is.
	if used := req.prompt + s.completionTokens(&req); used > MaxCost {
		return nil, nil, &costError{http.StatusBadRequest, fmt.Sprintf("max_tokens %d: the completion answered (%d tokens with the prompt) would be more than %d, the most a cost in the log can be", req.max, used, int64(MaxCost)), false}
	}
	return &req, s.unitCosts(req.prompt, req.max), nil
}

// unitCosts are a request's costs in the units the rules meter, for a
// prompt and a completion of those sizes: max_tokens for the estimate
// charged at arrival, the completion answered for the usage it settles to.
func (s *Server) unitCosts(prompt, completion int64) []int64 {
	units := rule.Units(s.opt.Rules)
	costs := make([]int64, len(units))
	for k, u := range units {
		costs[k] = map[string]int64{"tokens": prompt + completion, "input_tokens": prompt, "output_tokens": completion}[u]
	}
	return costs
}

// usage is the usage a preset's answer to req reports, by unit: the
// prompt's estimate and the completion it generates.
func (s *Server) usage(req *chatRequest) []int64 {
	return s.unitCosts(req.prompt, s.completionTokens(req))
}

// decodeChat reads r's JSON body into req and puts the body back. It
// reads with fastjson, without reflection: a preset reads every request's
// body, and encoding/json took a third of what a preset added to an
// answer (BenchmarkAnswerOpenAI).
func decodeChat(r *http.Request, req *chatRequest) error {
	b, err := bodyBytes(r, "the request as a JSON object")
	if err != nil {
		return err
	}
	bad := func(msg string) error {
		return &costError{http.StatusBadRequest, "body: " + clip(msg) + ": want the request as a JSON object", false}
	}
	p := chatParsers.Get()
	defer chatParsers.Put(p)
	v, err := p.ParseBytes(b)
	if err != nil {
		return bad(err.Error())
	}
	o, err := v.Object()
	if err != nil {
		return bad("not an object")
	}
	o.Visit(func(key []byte, f *fastjson.Value) {
		if err == nil {
			err = req.field(string(key), f)
		}
	})
	if err != nil {
		return bad(err.Error())
	}
	return nil
}

var chatParsers fastjson.ParserPool

// field reads one field of a chat request; fields it does not know are
// left alone, as the providers leave them to the model.
func (req *chatRequest) field(key string, f *fastjson.Value) error {
	var err error
	switch key {
	case "model":
		var m []byte
		if m, err = f.StringBytes(); err == nil {
			req.Model = string(m)
		}
	case "system":
		req.chars += textChars(f)
	case "messages":
		var ms []*fastjson.Value
		if ms, err = f.Array(); err == nil {
			for _, m := range ms {
				req.chars += textChars(m.Get("content"))
			}
		}
	case "max_tokens", "max_completion_tokens":
		var n int64
		if n, err = f.Int64(); err == nil {
			if key == "max_tokens" {
				req.MaxTokens = &n
			} else {
				req.MaxCompletion = &n
			}
		}
	case "stream":
		req.Stream, err = f.Bool()
	case "stream_options":
		if u := f.Get("include_usage"); u != nil {
			req.StreamOptions.IncludeUsage, err = u.Bool()
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %v", key, err)
	}
	return nil
}

// textChars counts the characters of a message's content: a string, or a
// list of blocks whose text fields count.
func textChars(v *fastjson.Value) int64 {
	if v == nil {
		return 0
	}
	if v.Type() == fastjson.TypeString {
		s, _ := v.StringBytes()
		return int64(utf8.RuneCount(s))
	}
	blocks, err := v.Array()
	if err != nil {
		return 0
	}
	var n int64
	for _, b := range blocks {
		if t := b.Get("text"); t != nil && t.Type() == fastjson.TypeString {
			s, _ := t.StringBytes()
			n += int64(utf8.RuneCount(s))
		}
	}
	return n
}

// MaxCompletionPermille is the largest completion share a preset takes:
// ten times max_tokens, so that usage can exceed the estimate.
const MaxCompletionPermille = 10000

// completionTokens is the size of the completion a preset answers: its
// share of max_tokens, in thousandths (0: all of it).
func (s *Server) completionTokens(req *chatRequest) int64 {
	if s.opt.CompletionPermille == 0 {
		return req.max
	}
	return req.max/1000*int64(s.opt.CompletionPermille) + req.max%1000*int64(s.opt.CompletionPermille)/1000
}
