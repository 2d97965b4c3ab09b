package structs

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// The shapes driver config values arrive in (see DriverConfigKind), and
// how a wrong one is named in a message.

func isString(v any) bool {
	switch v.(type) {
	case string, []byte:
		return true
	}
	return false
}

func isNumber(v any) bool {
	switch x := v.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return true
	case json.Number:
		_, err := x.Float64()
		return err == nil
	case string:
		_, err := strconv.ParseFloat(x, 64)
		return err == nil
	}
	return false
}

func isBool(v any) bool {
	switch x := v.(type) {
	case bool:
		return true
	case string:
		_, err := strconv.ParseBool(x)
		return err == nil
	}
	return false
}

func isDuration(v any) bool {
	switch x := v.(type) {
	case time.Duration:
		return true
	case string:
		_, err := time.ParseDuration(x)
		return err == nil
	}
	return isNumber(v)
}

// isConfigScalar reports whether v can stand for a string in a list or map:
// HCL converts numbers and bools to strings there, and so do the drivers.
func isConfigScalar(v any) bool {
	switch v.(type) {
	case bool, json.Number:
		return true
	}
	return isString(v) || isNumber(v)
}

func listOf(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// singleBlock reads a map written as an object (JSON, an HCL map) or as
// one block (HCL gives a list of one map).
func singleBlock(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, s := range x {
			m[k] = s
		}
		return m, true
	}
	if blocks, ok := blockList(v); ok && len(blocks) == 1 {
		return blocks[0], true
	}
	return nil, false
}

// blockList reads blocks written as a list of objects, or as one object.
func blockList(v any) ([]map[string]any, bool) {
	switch x := v.(type) {
	case []map[string]any:
		return x, true
	case map[string]any:
		return []map[string]any{x}, true
	case []any:
		out := make([]map[string]any, 0, len(x))
		for _, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			out = append(out, m)
		}
		return out, true
	}
	return nil, false
}

// describeValue names what a wrong value is, for a message.
func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 40 {
			x = x[:40] + "..."
		}
		return "a string (" + strconv.Quote(x) + ")"
	case bool:
		return "a boolean (" + strconv.FormatBool(x) + ")"
	case []any, []string:
		return "a list"
	case map[string]any, map[string]string:
		return "a map"
	case []map[string]any:
		if len(x) == 1 {
			return "a block"
		}
		return strconv.Itoa(len(x)) + " blocks"
	}
	if isNumber(v) {
		return fmt.Sprintf("a number (%v)", v)
	}
	return fmt.Sprintf("a %T", v)
}
