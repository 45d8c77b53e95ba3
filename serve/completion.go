package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// maxCompletionText bounds the text of a completion a preset writes, in
// tokens of CharsPerToken characters; the usage reports the whole size.
const maxCompletionText = 16384

// completionText is a completion of n tokens under the prompt estimate's
// rule ("tok " is CharsPerToken characters), at most maxCompletionText.
func completionText(n int64) string {
	return strings.TrimSpace(strings.Repeat("tok ", int(min(n, maxCompletionText))))
}

// complete answers a request within the contract as the provider does: a
// completion of the preset's size whose usage is the prompt estimate and
// that size, whole or streamed (server-sent events, the usage last).
func (s *Server) complete(w http.ResponseWriter, a *arrival, req *chatRequest) {
	n := s.completionTokens(req)
	id := "rlcheck-" + strconv.FormatInt(a.seq+2, 10)
	stop := "stop"
	if n >= req.max && req.max > 0 {
		stop = "length"
	}
	if s.opt.Provider == Anthropic {
		stop = map[string]string{"stop": "end_turn", "length": "max_tokens"}[stop]
	}
	if req.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		if s.opt.Provider == Anthropic {
			streamAnthropic(w, "msg_"+id, req, n, stop)
		} else {
			streamOpenAI(w, "chatcmpl-"+id, a.at/1e9, req, n, stop)
		}
		return
	}
	var body any
	if s.opt.Provider == Anthropic {
		body = anthropicMessage("msg_"+id, req.Model, completionText(n), stop, req.prompt, n)
	} else {
		body = openAICompletion{
			ID: "chatcmpl-" + id, Object: "chat.completion", Created: a.at / 1e9, Model: req.Model,
			Choices: []openAIChoice{{Message: openAIMessage{Role: "assistant", Content: completionText(n)}, FinishReason: stop}},
			Usage:   openAIUsage(req.prompt, n),
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	json.NewEncoder(w).Encode(body)
}

// The answers' bodies are structs rather than maps: encoding/json writes a
// struct's fields in order without sorting keys, a third of what a
// preset's answer cost on a map (BenchmarkAnswerOpenAI).
type openAICompletion struct {
	ID      string         `json:"id"`
	Object  string         `json:"object"`
	Created int64          `json:"created"`
	Model   string         `json:"model"`
	Choices []openAIChoice `json:"choices"`
	Usage   openAIUsageDoc `json:"usage"`
}

type openAIChoice struct {
	Index        int           `json:"index"`
	Message      openAIMessage `json:"message"`
	Logprobs     *struct{}     `json:"logprobs"`
	FinishReason string        `json:"finish_reason"`
}

type openAIMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type openAIUsageDoc struct {
	Prompt     int64 `json:"prompt_tokens"`
	Completion int64 `json:"completion_tokens"`
	Total      int64 `json:"total_tokens"`
}

func openAIUsage(prompt, n int64) openAIUsageDoc {
	return openAIUsageDoc{Prompt: prompt, Completion: n, Total: prompt + n}
}

type anthropicDoc struct {
	ID           string             `json:"id"`
	Type         string             `json:"type"`
	Role         string             `json:"role"`
	Model        string             `json:"model"`
	Content      []anthropicContent `json:"content"`
	StopReason   any                `json:"stop_reason"`
	StopSequence *string            `json:"stop_sequence"`
	Usage        anthropicUsage     `json:"usage"`
}

type anthropicContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anthropicUsage struct {
	Input  int64 `json:"input_tokens"`
	Output int64 `json:"output_tokens"`
}

func anthropicMessage(id, model, text string, stop any, in, out int64) anthropicDoc {
	content := []anthropicContent{}
	if text != "" {
		content = append(content, anthropicContent{Type: "text", Text: text})
	}
	return anthropicDoc{ID: id, Type: "message", Role: "assistant", Model: model, Content: content,
		StopReason: stop, Usage: anthropicUsage{Input: in, Output: out}}
}

// event writes one server-sent event, named when name is set.
func event(w http.ResponseWriter, name string, data any) {
	if name != "" {
		fmt.Fprintf(w, "event: %s\n", name)
	}
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "data: %s\n\n", b)
}

// streamOpenAI streams a chat completion in chunks: the text, the finish
// reason, and, when the request asked for it (stream_options.include_usage),
// a last chunk with the usage; then [DONE].
func streamOpenAI(w http.ResponseWriter, id string, created int64, req *chatRequest, n int64, stop string) {
	chunk := func(choices []any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model, "choices": choices}
	}
	event(w, "", chunk([]any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": completionText(n)}, "finish_reason": nil}}))
	event(w, "", chunk([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": stop}}))
	if req.StreamOptions.IncludeUsage {
		last := chunk([]any{})
		last["usage"] = openAIUsage(req.prompt, n)
		event(w, "", last)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// streamAnthropic streams a message as the messages API does: the input
// usage at the start, the output usage in the message_delta before the
// end.
func streamAnthropic(w http.ResponseWriter, id string, req *chatRequest, n int64, stop string) {
	start := anthropicMessage(id, req.Model, "", nil, req.prompt, 0)
	event(w, "message_start", map[string]any{"type": "message_start", "message": start})
	event(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	event(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": completionText(n)}})
	event(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	event(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int64{"output_tokens": n}})
	event(w, "message_stop", map[string]any{"type": "message_stop"})
}
