package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
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
	id := fmt.Sprintf("rlcheck-%d", a.seq+2)
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
		body = map[string]any{
			"id": "chatcmpl-" + id, "object": "chat.completion", "created": a.at / 1e9, "model": req.Model,
			"choices": []any{map[string]any{
				"index": 0, "message": map[string]any{"role": "assistant", "content": completionText(n)},
				"logprobs": nil, "finish_reason": stop,
			}},
			"usage": openAIUsage(req.prompt, n),
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	json.NewEncoder(w).Encode(body)
}

func openAIUsage(prompt, n int64) map[string]int64 {
	return map[string]int64{"prompt_tokens": prompt, "completion_tokens": n, "total_tokens": prompt + n}
}

func anthropicMessage(id, model, text string, stop any, in, out int64) map[string]any {
	content := []any{}
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	return map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": content,
		"stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]int64{"input_tokens": in, "output_tokens": out},
	}
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
