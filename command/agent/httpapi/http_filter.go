package httpapi

import (
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-bexpr"

	"github.com/drover-sched/drover/structs"
)

// listFilter is a parsed ?filter= expression in go-bexpr's language, the
// one Nomad's list endpoints take: `Status == "running"`, `Name contains
// "web"`, `Meta["team"] == "infra"`, `ClientStatus == "failed" and JobID
// matches "^web"`. It is evaluated in the agent against each object the
// list answers (a job, node or allocation list stub, an evaluation, a
// deployment), because the servers answer lists whole.
//
// Selectors name the object's JSON fields, so a user filters on what the
// answer shows. The listed types send their fields under their Go names,
// so struct fields are looked up by Go name (or a bexpr tag); a field kept
// out of answers carries bexpr:"-" as well as json:"-" (a node's
// SecretID), so it cannot be probed either. A time.Time compares as its
// JSON text (see jsonTimeText), and a node's attributes as a map. The json tag itself is not used: go-bexpr
// reads a json:",omitempty" tag as an empty name, which would hide the
// field.
//
// As in Nomad, an expression is only checked against the objects when it
// is evaluated: a selector naming no field is a 400 when some object is
// listed, but matches nothing in an empty list. So is a path through a
// nil pointer (LastDrain.Status on a node never drained); `and`
// short-circuits, so `LastDrain is not nil and LastDrain.Status ==
// "complete"` guards it. A missing map key (an attribute a node does not
// have) is "not present", which no `==` matches and every `!=` does.
type listFilter struct {
	expr string
	eval *bexpr.Evaluator
}

// Bounds of a filter. go-bexpr's parser backtracks: its work grows
// fourfold with each level of parentheses, up to the two million steps it
// allows by default (60 MB and 200 ms for a 29-byte filter of ten nested
// parentheses), and its recursion grows with the nesting (500 MB for a
// query string of 120,000). maxFilterSteps is enough for every filter a
// person writes (a five-term filter nested four deep takes 55,000, five
// hundred terms joined by "or" 200,000) and costs a few MB at most;
// maxFilterLen bounds the nesting and so the parser's stack.
const (
	maxFilterLen   = 16 << 10
	maxFilterSteps = 250_000
	// filterQuote is how much of a refused filter a 400 quotes back.
	filterQuote = 200
)

// parseFilter parses expr; an empty expr is the nil filter, which matches
// everything. A malformed expression is a 400 quoting the parser.
func parseFilter(expr string) (*listFilter, error) {
	if expr == "" {
		return nil, nil
	}
	if len(expr) > maxFilterLen {
		return nil, badRequest("invalid filter %s: it is %d bytes, longer than the %d allowed", quoteFilter(expr), len(expr), maxFilterLen)
	}
	eval, err := bexpr.CreateEvaluator(expr, bexpr.WithHookFn(filterHook), bexpr.WithMaxExpressions(maxFilterSteps))
	if err != nil {
		if strings.Contains(err.Error(), "max number of expressions parsed") {
			return nil, badRequest("invalid filter %s: it is too complex to parse (deeply nested parentheses, most likely); write it with fewer levels of nesting", quoteFilter(expr))
		}
		return nil, badRequest("invalid filter %s: %v", quoteFilter(expr), err)
	}
	return &listFilter{expr: expr, eval: eval}, nil
}

// quoteFilter quotes expr for an error, cut short if it is long.
func quoteFilter(expr string) string {
	if len(expr) <= filterQuote {
		return strconv.Quote(expr)
	}
	return strconv.Quote(strings.ToValidUTF8(expr[:filterQuote], "")) + "..."
}

// filterList returns the items of list f matches, in order; list itself
// when f is nil. An item f cannot be evaluated on fails the whole list,
// as in Nomad, rather than being silently dropped or kept.
func filterList[T any](f *listFilter, list []T) ([]T, error) {
	if f == nil {
		return list, nil
	}
	out := make([]T, 0, len(list))
	for _, item := range list {
		ok, err := f.eval.Evaluate(item)
		if err != nil {
			return nil, badRequest("filter %q cannot be evaluated: %v", f.expr, err)
		}
		if ok {
			out = append(out, item)
		}
	}
	return out, nil
}

var (
	timeType       = reflect.TypeFor[time.Time]()
	attributesType = reflect.TypeFor[structs.Attributes]()
)

// filterHook shows the evaluator each value as a user reads it in the
// JSON: times as their text (jsonTimeText), a node's attributes as the
// map they are sent as (attributesMap).
func filterHook(v reflect.Value) reflect.Value {
	return attributesMap(jsonTimeText(v))
}

// attributesMap shows structs.Attributes to the evaluator as a map, so
// that `Attributes["kernel.name"] == "linux"` and `"kernel.name" in
// Attributes` select what they did when attributes were one.
func attributesMap(v reflect.Value) reflect.Value {
	if v.IsValid() && v.Type() == attributesType {
		return reflect.ValueOf(v.Interface().(structs.Attributes).Map())
	}
	return v
}

// jsonTimeText shows a time.Time to the evaluator as the RFC 3339 text
// encoding/json sends, so `WaitUntil == "0001-01-01T00:00:00Z"` compares
// what the user read instead of failing on a struct.
func jsonTimeText(v reflect.Value) reflect.Value {
	if v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().Type() == timeType {
		v = v.Elem()
	}
	if v.IsValid() && v.Type() == timeType {
		return reflect.ValueOf(v.Interface().(time.Time).Format(time.RFC3339Nano))
	}
	return v
}
