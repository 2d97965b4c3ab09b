package template

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Parsing and encoding helpers. An empty string parses to the zero value
// (an empty map for JSON and YAML), as in consul-template, whose templates
// are first evaluated before their data has arrived.

// parseScalar makes a parse function of the templates: the empty string
// is T's zero value, and an error names the function.
func parseScalar[T any](name string, parse func(string) (T, error)) func(string) (T, error) {
	return func(s string) (T, error) {
		var zero T
		if s == "" {
			return zero, nil
		}
		v, err := parse(s)
		if err != nil {
			return zero, fmt.Errorf("%s: %w", name, err)
		}
		return v, nil
	}
}

var (
	parseBool  = parseScalar("parseBool", strconv.ParseBool)
	parseFloat = parseScalar("parseFloat", func(s string) (float64, error) { return strconv.ParseFloat(s, 64) })
	parseInt   = parseScalar("parseInt", func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) })
	parseUint  = parseScalar("parseUint", func(s string) (uint64, error) { return strconv.ParseUint(s, 10, 64) })
)

// parseJSON decodes JSON into maps, lists, strings, float64s and bools.
func parseJSON(s string) (any, error) {
	if s == "" {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("parseJSON: %w", err)
	}
	return v, nil
}

// parseYAML decodes YAML. Mappings decode to map[string]any (so that
// toJSON can encode the result), where consul-template's older YAML
// library gives map[any]any.
func parseYAML(s string) (any, error) {
	if s == "" {
		return map[string]any{}, nil
	}
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		return nil, fmt.Errorf("parseYAML: %w", err)
	}
	return v, nil
}

func toJSON(v any) (string, error) {
	out, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("toJSON: %w", err)
	}
	return string(bytes.TrimSpace(out)), nil
}

func toJSONPretty(v any) (string, error) {
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", fmt.Errorf("toJSONPretty: %w", err)
	}
	return string(bytes.TrimSpace(out)), nil
}

// toUnescapedJSON is toJSON without escaping <, > and & (for URLs and
// connection strings).
func toUnescapedJSON(v any) (string, error) {
	return unescapedJSON(v, "", "toUnescapedJSON")
}

func toUnescapedJSONPretty(v any) (string, error) {
	return unescapedJSON(v, "  ", "toUnescapedJSONPretty")
}

func unescapedJSON(v any, indent, name string) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return strings.TrimRight(b.String(), "\r\n"), nil
}

// toYAML encodes v as YAML indented by two spaces, with list items at
// their key's indentation, as consul-template's output looks.
func toYAML(v any) (string, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("toYAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("toYAML: %w", err)
	}
	return string(bytes.TrimSpace(b.Bytes())), nil
}
