package template

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// TestFunctionsRenderAsConsulTemplateDoes runs each helper the way
// consul-template's documentation shows it and expects consul-template's
// output; the piped value is always the last argument.
func TestFunctionsRenderAsConsulTemplateDoes(t *testing.T) {
	mac := hmac.New(sha256.New, []byte("somekey"))
	mac.Write([]byte("somemessage"))
	sha := sha256.Sum256([]byte("bladibla"))
	md := md5.Sum([]byte("myString"))
	cases := []struct{ name, tmpl, want string }{
		// Environment and time.
		{"env reads the task's variables", `{{ env "NOMAD_ALLOC_ID" }} {{ env "NOMAD_PORT_http" }} {{ env "NOMAD_META_tier" }}`, "8f2a4c1e-0000-4000-8000-000000000001 23456 front"},
		{"env of an unset variable is empty", `[{{ env "NOT_SET" }}]`, "[]"},
		{"envOrDefault uses the default only when unset", `{{ envOrDefault "NOT_SET" "def" }}|{{ envOrDefault "EMPTY" "def" }}|{{ envOrDefault "NOMAD_PORT_http" "def" }}`, "def||23456"},
		{"mustEnv of a set variable", `{{ mustEnv "NOMAD_PORT_http" }}`, "23456"},
		{"timestamp is RFC 3339 in UTC", `{{ timestamp }}`, "2024-05-06T07:08:07Z"},
		{"timestamp unix", `{{ timestamp "unix" }}`, "1714979287"},
		{"timestamp with a layout", `{{ timestamp "2006-01-02 15:04" }}`, "2024-05-06 07:08"},

		// Strings.
		{"base64Encode", `{{ "hello" | base64Encode }}`, "aGVsbG8="},
		{"base64Decode", `{{ "aGVsbG8=" | base64Decode }}`, "hello"},
		{"base64URLEncode", `{{ "hello?>" | base64URLEncode }}`, "aGVsbG8_Pg=="},
		{"base64URLDecode", `{{ "aGVsbG8_Pg==" | base64URLDecode }}`, "hello?>"},
		{"sha256Hex", `{{ "bladibla" | sha256Hex }}`, hex.EncodeToString(sha[:])},
		{"md5sum", `{{ "myString" | md5sum }}`, hex.EncodeToString(md[:])},
		{"hmacSHA256Hex takes the message then the key", `{{ hmacSHA256Hex "somemessage" "somekey" }}|{{ "somekey" | hmacSHA256Hex "somemessage" }}`,
			hex.EncodeToString(mac.Sum(nil)) + "|" + hex.EncodeToString(mac.Sum(nil))},
		{"split and join", `{{ "a,b,c" | split "," | join ";" }}`, "a;b;c"},
		{"split trims and gives an empty list for blank text", `{{ "foo\nbar\n" | split "\n" | len }} {{ "  " | split "," | len }}`, "2 0"},
		{"splitToMap", `{{ "foo:bar\nbaz:bat\nnope\n" | splitToMap "\n" ":" }}`, "map[baz:bat foo:bar]"},
		{"join takes any list", `{{ parseJSON "[1,\"x\",true]" | join "-" }}`, "1-x-true"},
		{"toLower toUpper", `{{ "MiXed" | toLower }} {{ "MiXed" | toUpper }}`, "mixed MIXED"},
		{"toTitle keeps the rest of each word", `{{ "hello wORLD foo-bar" | toTitle }}`, "Hello WORLD Foo-Bar"},
		{"trimSpace", `[{{ "  x \n" | trimSpace }}]`, "[x]"},
		{"trim trims a cutset", `[{{ "hello world!!" | trim "!!" }}]`, "[hello world]"},
		{"trimPrefix and trimSuffix", `[{{ "hello world!!" | trimPrefix "hello" }}][{{ "hello world!!" | trimSuffix "world!!" }}]`, "[ world!!][hello ]"},
		{"replaceAll", `{{ "foo.bar.baz" | replaceAll "." "_" }}`, "foo_bar_baz"},
		{"regexReplaceAll with a submatch", `{{ "foo.bar" | regexReplaceAll "foo([.a-z]+)" "$1" }}`, ".bar"},
		{"regexMatch", `{{ "foo.bar" | regexMatch "foo([.a-z]+)" }} {{ "xyz" | regexMatch "^a" }}`, "true false"},
		{"indent skips empty lines", `{{ "a\nb\n\nc" | indent 2 }}`, "  a\n  b\n\n  c"},

		// Parsing and encoding.
		{"parseBool", `{{ "true" | parseBool }} {{ "" | parseBool }}`, "true false"},
		{"parseFloat", `{{ "1.25" | parseFloat }}`, "1.25"},
		{"parseInt", `{{ "-42" | parseInt }}`, "-42"},
		{"parseUint", `{{ "42" | parseUint }}`, "42"},
		{"parseJSON", `{{ with $d := "{\"name\":\"web\",\"n\":2}" | parseJSON }}{{ $d.name }} {{ $d.n }}{{ end }}`, "web 2"},
		{"parseJSON of nothing is an empty map", `{{ "" | parseJSON | len }}`, "0"},
		{"toJSON escapes HTML and sorts keys", `{{ "{\"q\":\"a?b=c&d=e\",\"a\":[1,2]}" | parseJSON | toJSON }}`, `{"a":[1,2],"q":"a?b=c\u0026d=e"}`},
		{"toUnescapedJSON", `{{ "{\"q\":\"a?b=c&d=e\"}" | parseJSON | toUnescapedJSON }}`, `{"q":"a?b=c&d=e"}`},
		{"toJSONPretty indents by two", `{{ "{\"admin\":{\"port\":\"1234\"},\"maxconns\":\"5\"}" | parseJSON | toJSONPretty }}`,
			"{\n  \"admin\": {\n    \"port\": \"1234\"\n  },\n  \"maxconns\": \"5\"\n}"},
		{"toUnescapedJSONPretty", `{{ "{\"q\":\"<x>\"}" | parseJSON | toUnescapedJSONPretty }}`, "{\n  \"q\": \"<x>\"\n}"},
		{"toYAML as consul-template's documentation shows", `{{ "{\"admin\":{\"port\":\"1234\"},\"maxconns\":\"5\",\"minconns\":\"2\"}" | parseJSON | toYAML }}`,
			"admin:\n  port: \"1234\"\nmaxconns: \"5\"\nminconns: \"2\""},
		{"toYAML lists sit at their key's indentation", `{{ "{\"a\":[\"web\",\"db\"]}" | parseJSON | toYAML }}`, "a:\n- web\n- db"},
		{"parseYAML then toJSON", `{{ "a: 1\nb: [x, y]\n" | parseYAML | toJSON }}`, `{"a":1,"b":["x","y"]}`},

		// Lists and maps.
		{"in a list", `{{ in (split "," "api,web") "web" }} {{ in (split "," "api,web") "db" }}`, "true false"},
		{"in a string is a substring test", `{{ in "foobar" "oba" }}`, "true"},
		{"in compares integers across sizes", `{{ in (parseJSON "[1,2]") 2.0 }} {{ in (split "," "1,2") 1 }}`, "true false"},
		{"contains is in for pipes", `{{ split "," "api,web" | contains "web" }}`, "true"},
		{"containsAll", `{{ split "," "a,b,c" | containsAll (split "," "a,b") }} {{ split "," "a,b,c" | containsAll (split "," "a,x") }}`, "true false"},
		{"containsAny", `{{ split "," "a,b,c" | containsAny (split "," "x,b") }} {{ split "," "a,b,c" | containsAny (split "," "x,y") }}`, "true false"},
		{"containsNone", `{{ split "," "a,b,c" | containsNone (split "," "x,y") }} {{ split "," "a,b,c" | containsNone (split "," "x,a") }}`, "true false"},
		{"containsNotAll", `{{ split "," "a,b,c" | containsNotAll (split "," "a,x") }} {{ split "," "a,b,c" | containsNotAll (split "," "a,b") }}`, "true false"},
		{"containsAll takes consul-template's []interface{}", `{{ split "," "a,b" | containsAll (parseJSON "[\"a\"]") }}`, "true"},
		{"explodeMap", `{{ "{\"a/b\":\"1\",\"a/c\":\"2\",\"d\":\"3\"}" | parseJSON | explodeMap | toJSON }}`, `{"a":{"b":"1","c":"2"},"d":"3"}`},
		{"loop with one bound", `{{ range loop 3 }}{{ . }}{{ end }}`, "012"},
		{"loop with two bounds into a variable", `{{ range $i := loop 5 8 }}{{ $i }} {{ end }}`, "5 6 7 "},
		{"loop takes a parsed or string bound", `{{ range loop ("2" | parseInt) }}x{{ end }}{{ range loop "2" }}y{{ end }}`, "xxyy"},

		// Math, in consul-template's argument order.
		{"add", `{{ add 1 2 }} {{ 1 | add 2 }}`, "3 3"},
		{"subtract", `{{ subtract 2 5 }} {{ 5 | subtract 2 }}`, "3 3"},
		{"multiply", `{{ multiply 2 3 }}`, "6"},
		{"divide", `{{ divide 2 10 }} {{ 10 | divide 2 }} {{ 7 | divide 2 }}`, "5 5 3"},
		{"modulo", `{{ modulo 2 5 }}`, "1"},
		{"minimum and maximum", `{{ minimum 2 5 }} {{ maximum 2 5 }} {{ 5 | minimum 2 }}`, "2 5 2"},
		{"a float on either side gives a float", `{{ add 1.5 2 }} {{ 3 | divide 2.0 }}`, "3.5 1.5"},
		{"parsed numbers mix with literals", `{{ "40" | parseInt | add 2 }} {{ "40" | parseUint | add 2 }}`, "42 42"},

		// Template machinery.
		{"executeTemplate runs a defined template", `{{ define "greet" }}hi {{ . }}{{ end }}{{ executeTemplate "greet" "there" }}`, "hi there"},
		{"scratch", `{{ scratch.Set "a" 1 }}{{ scratch.SetX "a" 2 }}{{ scratch.Get "a" }} {{ scratch.Key "a" }} {{ scratch.Key "b" }}` +
			`{{ scratch.MapSet "m" "z" 2 }}{{ scratch.MapSet "m" "y" 1 }}{{ scratch.MapSetX "m" "y" 9 }} {{ scratch.MapValues "m" }}`, "1 true false [1 2]"},
		{"a missing map key prints as consul-template does", `{{ $m := parseJSON "{}" }}{{ $m.nope }}`, "<no value>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := renderData(t, tc.tmpl)
			if err != nil {
				t.Fatalf("render %s: %v", tc.tmpl, err)
			}
			if got != tc.want {
				t.Fatalf("render %s\n got %q\nwant %q", tc.tmpl, got, tc.want)
			}
		})
	}
}

// TestFunctionErrorsFailTheRender: a helper that cannot do its job fails
// the template, with the helper's name in the message.
func TestFunctionErrorsFailTheRender(t *testing.T) {
	cases := []struct{ name, tmpl, want string }{
		{"mustEnv of an unset variable", `{{ mustEnv "NOT_SET" }}`, "required environment variable NOT_SET is empty"},
		{"base64Decode of bad input", `{{ "%%" | base64Decode }}`, "base64Decode"},
		{"base64URLDecode of bad input", `{{ "%%" | base64URLDecode }}`, "base64URLDecode"},
		{"parseInt of a word", `{{ "ten" | parseInt }}`, "parseInt"},
		{"parseJSON of bad JSON", `{{ "{" | parseJSON }}`, "parseJSON"},
		{"integer division by zero", `{{ 1 | divide 0 }}`, "divide: division by zero"},
		{"modulo of floats", `{{ 1.5 | modulo 2 }}`, "modulo: unknown type"},
		{"math on a string", `{{ "x" | add 1 }}`, "add: unknown type"},
		{"a bad regexp", `{{ "x" | regexMatch "(" }}`, "missing closing )"},
		{"loop with three bounds", `{{ range loop 1 2 3 }}{{ end }}`, "loop: wrong number of arguments"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := renderData(t, tc.tmpl)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("render %s: error %v, want one containing %q", tc.tmpl, err, tc.want)
			}
		})
	}
}
