package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/rlcheck/rlcheck/checker"
	"github.com/rlcheck/rlcheck/rule"
	"github.com/rlcheck/rlcheck/sendlog"
)

// CostSource says where a request carries its cost in one unit: a request
// header (Header, such as X-Tokens) or a field of its JSON body (Field, a
// dotted path such as max_tokens or usage.input_tokens). A cost is a whole
// number from 0 up.
type CostSource struct {
	Unit   string
	Header string
	Field  string
}

// MaxCostBody is the most body a request whose cost is read from its body
// may carry: a larger one is refused (413) unread.
const MaxCostBody = 1 << 20

// costError is a request whose costs cannot be read: answered with status,
// unjudged and unlogged.
type costError struct {
	status int
	msg    string
}

func (e *costError) Error() string { return e.msg }

// costSources orders opt.Costs as the units the rules meter, refusing a
// unit without a source or a source no rule meters.
func costSources(rules []rule.Rule, costs []CostSource) ([]CostSource, error) {
	units := checker.UnitsOf(rules)
	if len(units) > sendlog.MaxCosts {
		return nil, fmt.Errorf("serve: the rules meter %d units (%s): at most %d", len(units), strings.Join(units, ", "), sendlog.MaxCosts)
	}
	for _, u := range units {
		if slices.Contains(strings.Split(LogHeader, ","), u) || slices.Contains(AnswerColumns(), u) {
			return nil, fmt.Errorf("serve: unit %s: the request log has a column of that name already", u)
		}
	}
	out := make([]CostSource, len(units))
	for _, c := range costs {
		k := indexOf(units, c.Unit)
		if k < 0 {
			return nil, fmt.Errorf("serve: cost source for %s: no rule meters it", c.Unit)
		}
		if (c.Header == "") == (c.Field == "") {
			return nil, fmt.Errorf("serve: cost source for %s: give a header or a body field, one of them", c.Unit)
		}
		out[k] = c
	}
	for k, u := range units {
		if out[k].Unit == "" {
			return nil, fmt.Errorf("serve: the rules meter %s: give the header or body field carrying it", u)
		}
	}
	return out, nil
}

func indexOf(units []string, u string) int {
	for i, x := range units {
		if x == u {
			return i
		}
	}
	return -1
}

// readCosts reads r's cost in each unit of s.costs. A body it reads is put
// back whole, so that a proxy forwards it intact.
func (s *Server) readCosts(r *http.Request) ([]int64, error) {
	if len(s.costs) == 0 {
		return nil, nil
	}
	out := make([]int64, len(s.costs))
	var body map[string]any
	for k, c := range s.costs {
		name, text := "header "+c.Header, ""
		if c.Header != "" {
			vs := r.Header.Values(c.Header)
			if len(vs) != 1 {
				return nil, &costError{http.StatusBadRequest, fmt.Sprintf("%s: want one value, the %s cost, got %d", name, c.Unit, len(vs))}
			}
			text = strings.TrimSpace(vs[0])
		} else {
			name = "body field " + c.Field
			if body == nil {
				var err error
				if body, err = readBody(r); err != nil {
					return nil, err
				}
			}
			v, ok := lookupField(body, c.Field)
			if !ok {
				return nil, &costError{http.StatusBadRequest, fmt.Sprintf("%s: missing, want the %s cost", name, c.Unit)}
			}
			n, isNum := v.(json.Number)
			if !isNum {
				return nil, &costError{http.StatusBadRequest, fmt.Sprintf("%s: %s: want a whole number, the %s cost", name, clip(fmt.Sprint(v)), c.Unit)}
			}
			text = n.String()
		}
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil || v < 0 {
			return nil, &costError{http.StatusBadRequest, fmt.Sprintf("%s: %q: want a whole number from 0 up, the %s cost", name, clip(text), c.Unit)}
		}
		out[k] = v
	}
	return out, nil
}

// readBody reads r's JSON body, at most MaxCostBody bytes, and puts it back.
func readBody(r *http.Request) (map[string]any, error) {
	if r.Body == nil {
		return nil, &costError{http.StatusBadRequest, "no body: want a JSON object carrying the costs"}
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxCostBody+1))
	if err != nil {
		return nil, &costError{http.StatusBadRequest, "reading the body: " + err.Error()}
	}
	if len(b) > MaxCostBody {
		return nil, &costError{http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes: too large to read its costs", MaxCostBody)}
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil {
		msg := "not a JSON object"
		if err != nil {
			msg = err.Error()
		}
		return nil, &costError{http.StatusBadRequest, "body: " + clip(msg) + ": want a JSON object carrying the costs"}
	}
	return m, nil
}

// lookupField follows a dotted path through nested objects.
func lookupField(m map[string]any, path string) (any, bool) {
	var v any = m
	for _, part := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[part]; !ok {
			return nil, false
		}
	}
	return v, true
}

// clip shortens text quoted back to a client.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// writeCostError answers a request whose costs cannot be read.
func writeCostError(w http.ResponseWriter, err error) {
	var ce *costError
	if !errors.As(err, &ce) {
		ce = &costError{http.StatusBadRequest, err.Error()}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ce.status)
	json.NewEncoder(w).Encode(struct {
		Error string `json:"error"`
	}{ce.msg})
}

// capacity is the most a rule admits in one request: its limit, or a
// bucket's burst.
func capacity(r rule.Rule) int64 {
	if r.Kind == rule.Bucket {
		return int64(r.Burst)
	}
	return int64(r.Limit)
}
