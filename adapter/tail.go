package adapter

import (
	"io"
	"strings"
	"sync"
)

// tail passes what is written on to `to` (when not nil) and keeps the
// last tailBytes of it for error messages.
type tail struct {
	to  io.Writer
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 600

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailBytes {
		t.buf = t.buf[len(t.buf)-tailBytes:]
	}
	t.mu.Unlock()
	if t.to != nil {
		t.to.Write(p) // its failures are no reason to stop the program
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
