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

// MaxCost is the largest cost a request may carry: the most check reads
// back from the log (18 digits). A larger one is answered 400, as a cost
// that is not a number is, since the verdict on the log could not read it.
const MaxCost = 999_999_999_999_999_999

// MaxCostBody is the most body a request whose cost is read from its body
// may carry: a larger one is refused (413) unread.
const MaxCostBody = 1 << 20

// costError is a request whose costs cannot be read, or that no window
// could admit or judge: answered with status, unjudged and unlogged;
// counted marks the latter, which the report counts.
type costError struct {
	status  int
	msg     string
	counted bool
}

func (e *costError) Error() string { return e.msg }

// costSources orders opt.Costs as the units the rules meter, refusing a
// unit without a source or a source no rule meters.
func costSources(rules []rule.Rule, costs []CostSource) ([]CostSource, error) {
	units := rule.Units(rules)
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
			if len(vs) == 0 {
				return nil, &costError{http.StatusBadRequest, fmt.Sprintf("%s: missing, want the %s cost", name, c.Unit), false}
			}
			if len(vs) > 1 {
				return nil, &costError{http.StatusBadRequest, fmt.Sprintf("%s: %d values, want one, the %s cost", name, len(vs), c.Unit), false}
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
				return nil, &costError{http.StatusBadRequest, fmt.Sprintf("%s: missing, want the %s cost", name, c.Unit), false}
			}
			n, isNum := v.(json.Number)
			if !isNum {
				return nil, &costError{http.StatusBadRequest, fmt.Sprintf("%s: %s: want a whole number, the %s cost", name, clip(fmt.Sprint(v)), c.Unit), false}
			}
			text = n.String()
		}
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil || v < 0 {
			return nil, &costError{http.StatusBadRequest, fmt.Sprintf("%s: %q: want a whole number from 0 up, the %s cost", name, clip(text), c.Unit), false}
		}
		if v > MaxCost {
			return nil, &costError{http.StatusBadRequest, fmt.Sprintf("%s: %q: want at most %d, the most a %s cost in the log can be (check reads 18 digits)", name, clip(text), int64(MaxCost), c.Unit), false}
		}
		out[k] = v
	}
	return out, nil
}

// readBody reads r's JSON body, at most MaxCostBody bytes, and puts it back.
func readBody(r *http.Request) (map[string]any, error) {
	b, err := bodyBytes(r, "a JSON object carrying the costs")
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil {
		msg := "not a JSON object"
		if err != nil {
			msg = err.Error()
		}
		return nil, &costError{http.StatusBadRequest, "body: " + clip(msg) + ": want a JSON object carrying the costs", false}
	}
	return m, nil
}

// bodyBytes reads r's body, at most MaxCostBody bytes, and puts it back,
// so that a proxy forwards it intact; want says what it should hold.
func bodyBytes(r *http.Request, want string) ([]byte, error) {
	if r.Body == nil {
		return nil, &costError{http.StatusBadRequest, "no body: want " + want, false}
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxCostBody+1))
	if err != nil {
		return nil, &costError{http.StatusBadRequest, "reading the body: " + err.Error(), false}
	}
	if len(b) > MaxCostBody {
		return nil, &costError{http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes: too large to read its costs", MaxCostBody), false}
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, nil
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

// oversize refuses a request whose cost alone exceeds the capacity of a
// rule that meters it (its limit, a bucket's burst): no wait could ever
// admit it. Like a request whose cost cannot be read it is answered at
// once, 413, and neither judged nor logged, so it takes nothing from any
// window and changes no later answer: it was never admitted.
func (s *Server) oversize(costs []int64) error {
	for _, r := range s.opt.Rules {
		if r.Unit == "" {
			continue
		}
		for k, c := range s.costs {
			if c.Unit == r.Unit && costs[k] > capacity(r) {
				return &costError{http.StatusRequestEntityTooLarge, fmt.Sprintf(
					"request cost exceeds a rule's limit: it can never be admitted: %d %s against %s", costs[k], r.Unit, r), true}
			}
		}
	}
	return nil
}

// unjudgeable refuses a request whose costs would carry a window's sum
// past int64 (checker.Checker.Fits's error): it cannot be judged, so it
// is answered 413 unjudged and unlogged, and the others are judged on.
func unjudgeable(err error) error {
	msg := err.Error()
	var ce *checker.CostError
	if errors.As(err, &ce) {
		msg = ce.Msg
	}
	return &costError{http.StatusRequestEntityTooLarge, "request cost cannot be judged: " + msg, true}
}

// refuse answers a request refused before judging, counting those
// refused for their cost (413) for the report.
func (s *Server) refuse(w http.ResponseWriter, err error) {
	if s.opt.Provider != NoProvider {
		s.refuseDialect(w, err)
		return
	}
	var ce *costError
	if errors.As(err, &ce) && ce.counted {
		s.unjudged.Add(1)
	}
	writeCostError(w, err)
}

// writeCostError answers a request whose costs cannot be read or judged.
func writeCostError(w http.ResponseWriter, err error) {
	var ce *costError
	if !errors.As(err, &ce) {
		ce = &costError{http.StatusBadRequest, err.Error(), false}
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
