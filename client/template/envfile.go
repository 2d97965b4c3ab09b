package template

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ParseEnvFile reads a rendered `env = true` template as Nomad does (with
// hashicorp/go-envparse's format), returning its variables:
//
//   - blank lines and lines starting with # are skipped;
//   - every other line is KEY=VALUE, with whitespace around both trimmed
//     and an optional leading "export ";
//   - a key starts with a letter or _ and goes on with letters, digits,
//     _, . or /;
//   - an unquoted value ends at a # (a comment), and whitespace before it
//     is dropped; 'single quotes' keep their text as it is; "double
//     quotes" take JSON's escapes (\" \\ \/ \b \f \n \r \t \uXXXX), so a
//     value rendered with toJSON may hold newlines; the styles may be
//     mixed within one value;
//   - a key given twice keeps its last value.
//
// Errors name the line.
func ParseEnvFile(data []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxOutput)
	line := 0
	for sc.Scan() {
		line++
		k, v, err := parseEnvLine(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("env file line %d: %w", line, err)
		}
		if k != "" {
			out[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("env file: %w", err)
	}
	return out, nil
}

// parseEnvLine parses one line; a blank or comment line gives an empty key.
func parseEnvLine(ln string) (string, string, error) {
	ln = strings.TrimSpace(ln)
	if ln == "" || ln[0] == '#' {
		return "", "", nil
	}
	key, value, ok := strings.Cut(ln, "=")
	if !ok {
		return "", "", fmt.Errorf("%q has no = (want KEY=VALUE)", ln)
	}
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if rest, ok := strings.CutPrefix(key, "export "); ok && rest != "" {
		key = strings.TrimSpace(rest)
	}
	if err := checkEnvKey(key); err != nil {
		return "", "", err
	}
	v, err := parseEnvValue(value)
	if err != nil {
		return "", "", fmt.Errorf("value of %s: %w", key, err)
	}
	return key, v, nil
}

func checkEnvKey(key string) error {
	if key == "" {
		return fmt.Errorf("empty key")
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		letter := c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
		if i == 0 && !letter {
			return fmt.Errorf("key %q must start with a letter or _", key)
		}
		if !letter && !(c >= '0' && c <= '9') && c != '.' && c != '/' {
			return fmt.Errorf("key %q may hold only letters, digits, _, . and /, not %q", key, c)
		}
	}
	return nil
}

// parseEnvValue unquotes a trimmed value (see ParseEnvFile).
func parseEnvValue(s string) (string, error) {
	var b strings.Builder
	// sig is the length of b up to its last character that trailing
	// whitespace before a comment must not cut.
	sig := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '#':
			return b.String()[:sig], nil
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return "", fmt.Errorf("unmatched '")
			}
			b.WriteString(s[i+1 : i+1+j])
			sig, i = b.Len(), i+1+j
		case '"':
			n, err := unquoteDouble(&b, s[i+1:])
			if err != nil {
				return "", err
			}
			sig, i = b.Len(), i+1+n
		default:
			if c < 0x20 && c != '\t' {
				return "", fmt.Errorf("control character 0x%02x in value", c)
			}
			b.WriteByte(c)
			if c != ' ' && c != '\t' {
				sig = b.Len()
			}
		}
	}
	return b.String(), nil
}

// unquoteDouble writes the unescaped text of a double-quoted part that
// starts just after its opening quote, and returns the index of the
// closing quote in s.
func unquoteDouble(b *strings.Builder, s string) (int, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return i, nil
		case c < 0x20 && c != '\t':
			return 0, fmt.Errorf("control character 0x%02x in value", c)
		case c != '\\':
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return 0, fmt.Errorf("incomplete escape sequence")
		}
		switch e := s[i]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, err := hex4(s[i+1:])
			if err != nil {
				return 0, err
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if !strings.HasPrefix(s[i+1:], `\u`) {
					return 0, fmt.Errorf("incomplete Unicode surrogate pair")
				}
				r2, err := hex4(s[i+3:])
				if err != nil {
					return 0, err
				}
				r, i = utf16.DecodeRune(r, r2), i+6
			}
			b.WriteRune(r)
		default:
			if e >= utf8.RuneSelf {
				return 0, fmt.Errorf("invalid escape sequence: a backslash before a non-ASCII character")
			}
			return 0, fmt.Errorf("invalid escape sequence \\%c", e)
		}
	}
	return 0, fmt.Errorf(`unmatched "`)
}

func hex4(s string) (rune, error) {
	if len(s) < 4 {
		return 0, fmt.Errorf("incomplete \\u escape")
	}
	v, err := strconv.ParseUint(s[:4], 16, 16)
	if err != nil {
		return 0, fmt.Errorf("invalid \\u escape %q", s[:4])
	}
	return rune(v), nil
}
