package docker

import "fmt"

// The shapes a config value arrives in (decoded from HCL, JSON or
// msgpack), read after structs.ValidateDriverConfig has checked them.

// asBlocks reads a nested block in any of the shapes config arrives in:
// a map (JSON object), or a list of maps (HCL blocks, JSON arrays).
func asBlocks(v any, name string) ([]map[string]any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return []map[string]any{x}, nil
	case []map[string]any:
		return x, nil
	case []any:
		out := make([]map[string]any, 0, len(x))
		for _, e := range x {
			m, err := asMap(e, name)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
		return out, nil
	}
	return nil, fmt.Errorf("docker config: %q must be a block, got %T", name, v)
}

func asMap(v any, name string) (map[string]any, error) {
	switch x := v.(type) {
	case map[string]any:
		return x, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = e
		}
		return out, nil
	}
	return nil, fmt.Errorf("docker config: %q must be a block, got %T", name, v)
}

// asStringMap reads a map of strings (labels, sysctl, ulimit) given as a
// map or as HCL blocks (`labels { a = "b" }`), merging repeated blocks.
func asStringMap(v any, name string) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	var blocks []map[string]any
	if m, err := asMap(v, name); err == nil {
		blocks = []map[string]any{m}
	} else if bs, err := asBlocks(v, name); err == nil {
		blocks = bs
	} else {
		return nil, fmt.Errorf("docker config: %q must be a map of strings, got %T", name, v)
	}
	out := map[string]string{}
	for _, b := range blocks {
		for k, e := range b {
			switch s := e.(type) {
			case string:
				out[k] = s
			case bool, int, int64, uint64, float64:
				out[k] = fmt.Sprint(s)
			default:
				return nil, fmt.Errorf("docker config: %q key %q must be a string, got %T", name, k, e)
			}
		}
	}
	return out, nil
}
