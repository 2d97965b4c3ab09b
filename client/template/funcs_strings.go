package template

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// String helpers. As in consul-template, the value a pipe feeds in is the
// last argument: {{ "a,b" | split "," }} is split(",", "a,b").

// base64Decoder and base64Encoder make the base64 functions of one
// encoding; a decode error names the function.
func base64Decoder(name string, enc *base64.Encoding) func(string) (string, error) {
	return func(s string) (string, error) {
		v, err := enc.DecodeString(s)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return string(v), nil
	}
}

func base64Encoder(enc *base64.Encoding) func(string) (string, error) {
	return func(s string) (string, error) { return enc.EncodeToString([]byte(s)), nil }
}

var (
	base64Decode    = base64Decoder("base64Decode", base64.StdEncoding)
	base64Encode    = base64Encoder(base64.StdEncoding)
	base64URLDecode = base64Decoder("base64URLDecode", base64.URLEncoding)
	base64URLEncode = base64Encoder(base64.URLEncoding)
)

func sha256Hex(s string) (string, error) {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:]), nil
}

func md5sum(s string) (string, error) {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:]), nil
}

// hmacSHA256Hex is the HMAC-SHA256 of message under key, in hex:
// {{ hmacSHA256Hex "message" "key" }} or {{ "key" | hmacSHA256Hex "message" }}.
func hmacSHA256Hex(message, key string) (string, error) {
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte(message))
	return hex.EncodeToString(mac.Sum(nil)), nil
}

// indent prefixes every non-empty line of s with spaces spaces.
func indent(spaces int, s string) (string, error) {
	if spaces < 0 {
		return "", fmt.Errorf("indent value must be a positive integer")
	}
	prefix := strings.Repeat(" ", spaces)
	var b strings.Builder
	atStart := true
	for i := 0; i < len(s); i++ {
		if atStart && s[i] != '\n' {
			b.WriteString(prefix)
		}
		b.WriteByte(s[i])
		atStart = s[i] == '\n'
	}
	return b.String(), nil
}

// join joins a list with sep. consul-template takes a []string; any list
// is accepted here, its elements printed as text/template prints them.
func join(sep string, list any) (string, error) {
	if ss, ok := list.([]string); ok {
		return strings.Join(ss, sep), nil
	}
	v := reflect.ValueOf(list)
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return "", fmt.Errorf("join: want a list, got %T", list)
	}
	parts := make([]string, v.Len())
	for i := range parts {
		parts[i] = fmt.Sprint(v.Index(i).Interface())
	}
	return strings.Join(parts, sep), nil
}

func regexMatch(re, s string) (bool, error) {
	c, err := regexp.Compile(re)
	if err != nil {
		return false, err
	}
	return c.MatchString(s), nil
}

// regexReplaceAll replaces every match of re in s with repl, where $1
// and ${name} refer to submatches.
func regexReplaceAll(re, repl, s string) (string, error) {
	c, err := regexp.Compile(re)
	if err != nil {
		return "", err
	}
	return c.ReplaceAllString(s, repl), nil
}

func replaceAll(from, to, s string) (string, error) {
	return strings.ReplaceAll(s, from, to), nil
}

// split splits s, trimmed of surrounding whitespace, on sep; an empty s
// gives an empty list (not [""]).
func split(sep, s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return []string{}, nil
	}
	return strings.Split(s, sep), nil
}

// splitToMap splits s on sep1, and each part on its first sep2 into a key
// and a value; parts without sep2 are dropped.
func splitToMap(sep1, sep2, s string) (map[string]string, error) {
	m := map[string]string{}
	s = strings.TrimSpace(s)
	if s == "" {
		return m, nil
	}
	for _, part := range strings.Split(s, sep1) {
		if k, v, ok := strings.Cut(part, sep2); ok {
			m[k] = v
		}
	}
	return m, nil
}

func toLower(s string) (string, error) { return strings.ToLower(s), nil }
func toUpper(s string) (string, error) { return strings.ToUpper(s), nil }

// toTitle upper-cases the first letter of every word and leaves the rest
// as it is, as consul-template does.
func toTitle(s string) (string, error) {
	return cases.Title(language.Und, cases.NoLower).String(s), nil
}

func trim(cutset, s string) (string, error)       { return strings.Trim(s, cutset), nil }
func trimPrefix(prefix, s string) (string, error) { return strings.TrimPrefix(s, prefix), nil }
func trimSuffix(suffix, s string) (string, error) { return strings.TrimSuffix(s, suffix), nil }
func trimSpace(s string) (string, error)          { return strings.TrimSpace(s), nil }
