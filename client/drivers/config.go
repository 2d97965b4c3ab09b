package drivers

import (
	"fmt"
	"strconv"
	"time"
)

// Driver config blocks arrive as map[string]any decoded from JSON (numbers
// are float64), msgpack (int64, uint64) or HCL (int, []string), depending on
// the path they took. These getters accept every shape so drivers do not
// care which.

// ConfigString returns a string option, or "" when unset.
func ConfigString(cfg map[string]any, key string) (string, error) {
	v, ok := cfg[key]
	if !ok || v == nil {
		return "", nil
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	}
	return "", fmt.Errorf("config %q: want a string, got %T", key, v)
}

// ConfigStrings returns a list-of-strings option such as args.
func ConfigStrings(cfg map[string]any, key string) ([]string, error) {
	v, ok := cfg[key]
	if !ok || v == nil {
		return nil, nil
	}
	switch x := v.(type) {
	case []string:
		return append([]string(nil), x...), nil
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			switch s := e.(type) {
			case string:
				out[i] = s
			case []byte:
				out[i] = string(s)
			default:
				out[i] = fmt.Sprint(e)
			}
		}
		return out, nil
	case string:
		return []string{x}, nil
	}
	return nil, fmt.Errorf("config %q: want a list of strings, got %T", key, v)
}

// ConfigInt returns an integer option, or def when unset.
func ConfigInt(cfg map[string]any, key string, def int64) (int64, error) {
	v, ok := cfg[key]
	if !ok || v == nil {
		return def, nil
	}
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case uint:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint64:
		return int64(x), nil
	case float64:
		return int64(x), nil
	case float32:
		return int64(x), nil
	case string:
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("config %q: %q is not an integer", key, x)
		}
		return n, nil
	}
	return 0, fmt.Errorf("config %q: want an integer, got %T", key, v)
}

// ConfigBool returns a boolean option, or false when unset.
func ConfigBool(cfg map[string]any, key string) (bool, error) {
	v, ok := cfg[key]
	if !ok || v == nil {
		return false, nil
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		b, err := strconv.ParseBool(x)
		if err != nil {
			return false, fmt.Errorf("config %q: %q is not a boolean", key, x)
		}
		return b, nil
	}
	return false, fmt.Errorf("config %q: want a boolean, got %T", key, v)
}

// ConfigDuration returns a duration option written as "10s", or as a number
// of nanoseconds, or 0 when unset.
func ConfigDuration(cfg map[string]any, key string) (time.Duration, error) {
	v, ok := cfg[key]
	if !ok || v == nil {
		return 0, nil
	}
	if s, ok := v.(string); ok {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("config %q: %q is not a duration (e.g. \"10s\")", key, s)
		}
		return d, nil
	}
	if d, ok := v.(time.Duration); ok {
		return d, nil
	}
	n, err := ConfigInt(cfg, key, 0)
	if err != nil {
		return 0, fmt.Errorf("config %q: want a duration, got %T", key, v)
	}
	return time.Duration(n), nil
}
