package template

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"text/template"
	"time"
)

// funcEnv is what the functions that look outside the template see.
type funcEnv struct {
	env map[string]string
	sb  *sandbox
	now func() time.Time
	// tmpl is the template being rendered, for executeTemplate.
	tmpl *template.Template
	// services is the native service catalog; nil when it was not read.
	services *ServiceData
}

// funcMap returns consul-template's helper functions that need no outside
// system, under consul-template's names and with its argument orders (the
// piped value is the last argument). Where consul-template refuses an
// argument type that Drover accepts (containsAll on a []string, say), the
// result for consul-template's own types is the same.
//
// Not provided: the functions of external.go (refused with a clear error),
// the sprig_* functions, and toTOML (no TOML encoder in Drover).
func funcMap(fe *funcEnv) template.FuncMap {
	scratch := &Scratch{}
	m := template.FuncMap{
		// Environment, files, time.
		"env":             fe.envFunc,
		"mustEnv":         fe.mustEnv,
		"envOrDefault":    fe.envOrDefault,
		"file":            fe.file,
		"timestamp":       fe.timestamp,
		"executeTemplate": fe.executeTemplate,
		"scratch":         func() *Scratch { return scratch },

		// Native services (funcs_services.go).
		"nomadService":  fe.nomadService,
		"nomadServices": fe.nomadServices,

		// Strings.
		"base64Decode":    base64Decode,
		"base64Encode":    base64Encode,
		"base64URLDecode": base64URLDecode,
		"base64URLEncode": base64URLEncode,
		"hmacSHA256Hex":   hmacSHA256Hex,
		"indent":          indent,
		"join":            join,
		"md5sum":          md5sum,
		"regexMatch":      regexMatch,
		"regexReplaceAll": regexReplaceAll,
		"replaceAll":      replaceAll,
		"sha256Hex":       sha256Hex,
		"split":           split,
		"splitToMap":      splitToMap,
		"toLower":         toLower,
		"toTitle":         toTitle,
		"toUpper":         toUpper,
		"trim":            trim,
		"trimPrefix":      trimPrefix,
		"trimSuffix":      trimSuffix,
		"trimSpace":       trimSpace,

		// Parsing and encoding.
		"parseBool":             parseBool,
		"parseFloat":            parseFloat,
		"parseInt":              parseInt,
		"parseJSON":             parseJSON,
		"parseUint":             parseUint,
		"parseYAML":             parseYAML,
		"toJSON":                toJSON,
		"toJSONPretty":          toJSONPretty,
		"toUnescapedJSON":       toUnescapedJSON,
		"toUnescapedJSONPretty": toUnescapedJSONPretty,
		"toYAML":                toYAML,

		// Lists and maps.
		"contains":       contains,
		"containsAll":    containsAll,
		"containsAny":    containsAny,
		"containsNone":   containsNone,
		"containsNotAll": containsNotAll,
		"explodeMap":     explodeMap,
		"in":             in,
		"loop":           loop,

		// Math.
		"add":      add,
		"subtract": subtract,
		"multiply": multiply,
		"divide":   divide,
		"modulo":   modulo,
		"minimum":  minimum,
		"maximum":  maximum,
	}
	for name, stub := range refusedStubs() {
		m[name] = stub
	}
	return m
}

// envFunc is consul-template's env: the task's variable, or "" when it is
// unset. Like Nomad, only the task's environment is visible, never the
// client's own.
func (fe *funcEnv) envFunc(name string) (string, error) {
	return fe.env[name], nil
}

// mustEnv is env that fails on an unset or empty variable.
func (fe *funcEnv) mustEnv(name string) (string, error) {
	if v := fe.env[name]; v != "" {
		return v, nil
	}
	return "", fmt.Errorf("required environment variable %s is empty", name)
}

// envOrDefault is the variable when it is set (even to ""), else def.
func (fe *funcEnv) envOrDefault(name, def string) (string, error) {
	if v, ok := fe.env[name]; ok {
		return v, nil
	}
	return def, nil
}

// file reads a file of the task directory or the alloc's shared
// directory; a relative path starts at the task directory. Unlike
// consul-template, which waits for a missing file to appear, a missing
// file fails the render: nothing would make it appear before the start.
func (fe *funcEnv) file(p string) (string, error) {
	if p == "" {
		return "", nil
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(fe.sb.taskDir, abs)
	}
	data, err := fe.sb.readFile(filepath.Clean(abs))
	if err != nil {
		return "", fmt.Errorf("file %q: %w", p, err)
	}
	return string(data), nil
}

// timestamp is the client clock's time in UTC: RFC 3339 by default, Unix
// seconds for "unix", else formatted with the given Go layout.
func (fe *funcEnv) timestamp(layout ...string) (string, error) {
	now := fe.now().UTC()
	switch len(layout) {
	case 0:
		return now.Format(time.RFC3339), nil
	case 1:
		if layout[0] == "unix" {
			return strconv.FormatInt(now.Unix(), 10), nil
		}
		return now.Format(layout[0]), nil
	}
	return "", fmt.Errorf("timestamp: wrong number of arguments, expected 0 or 1, but got %d", len(layout))
}

// executeTemplate runs a template defined with {{ define }}, with an
// optional dot.
func (fe *funcEnv) executeTemplate(name string, data ...any) (string, error) {
	var dot any
	switch len(data) {
	case 0:
	case 1:
		dot = data[0]
	default:
		return "", fmt.Errorf("executeTemplate: wrong number of arguments, expected 1 or 2, but got %d", len(data)+1)
	}
	var b bytes.Buffer
	if err := fe.tmpl.ExecuteTemplate(&limitedWriter{w: &b, left: maxOutput}, name, dot); err != nil {
		return "", err
	}
	return b.String(), nil
}
