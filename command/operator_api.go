package command

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
)

const operatorAPIHelp = `
Usage: drover operator api [options] <path>

  Send one request to the agent's HTTP API and print the answer's body as
  it arrives, like curl with the CLI's address, TLS settings, token,
  namespace and region already filled in. Streams such as
  /v1/event/stream are printed until interrupted (Ctrl-C) or until the
  agent ends them. The path may be a full URL of the same agent
  (http://127.0.0.1:4646/v1/jobs); its query is kept.

  Exits 0 when the agent answers 2xx; otherwise prints the status and the
  body on stderr and exits 1.

API Options:

  -X <method>
    The HTTP method. Default GET, or POST when a body is given.

  -H <Header: value>
    Add a header to the request; may be repeated. An X-Nomad-Token header
    replaces the CLI's token.

  -d <body>
    The request body: the text itself, @<file> to read it from a file, or
    @- (or -) to read it from stdin.

  -filter <expression>
    Add a filter expression to the query (the filter parameter).

  -verbose
    Print the request line, the status and the answer's headers on stderr.

  -dryrun
    Print the request as a curl command instead of sending it.
`

func operatorAPI(m *Meta, args []string) int {
	c := m.cmdLine("operator api", operatorAPIHelp, takes(1, "<path>")).withVerbose()
	method := c.String("X", "", "")
	data := c.String("d", "", "")
	filter := c.String("filter", "", "")
	dryrun := c.Bool("dryrun", false, "")
	var headers headerFlags
	c.Var(&headers, "H", "")
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	path, err := apiPath(c.Arg(0), client.Address())
	if err != nil {
		return m.errorf("Error: %v", err)
	}
	if *filter != "" {
		path = addQuery(path, "filter", *filter)
	}
	var body []byte
	if c.flagWasSet("d") {
		if body, err = m.readBody(*data); err != nil {
			return m.errorf("Error reading the body: %v", err)
		}
	}
	verb := strings.ToUpper(*method)
	if verb == "" {
		verb = http.MethodGet
		if c.flagWasSet("d") {
			verb = http.MethodPost
		}
	}
	if *dryrun {
		m.out("%s", curlCommand(verb, client.Address()+path, headers.h, body, m.token))
		return 0
	}

	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	return m.withInterrupt(func() int {
		if c.verbose {
			fmt.Fprintf(m.stderr, "> %s %s%s\n", verb, client.Address(), path)
		}
		resp, err := client.RawRequest(m.ctx, verb, path, headers.h, rd)
		if err != nil {
			return m.errorf("Error: %v", err)
		}
		defer resp.Body.Close()
		if c.verbose {
			fmt.Fprintf(m.stderr, "< %s\n", resp.Status)
			keys := make([]string, 0, len(resp.Header))
			for k := range resp.Header {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(m.stderr, "< %s: %s\n", k, strings.Join(resp.Header[k], ", "))
			}
		}
		ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
		out := m.stdout
		if !ok {
			fmt.Fprintf(m.stderr, "Error: %s %s: %s\n", verb, path, resp.Status)
			out = m.stderr
		}
		_, err = io.Copy(out, resp.Body)
		switch {
		case err != nil && m.ctx.Err() != nil:
			// Interrupted while following a stream: that is how one ends.
		case err != nil:
			return m.errorf("\nError reading the answer: %v", err)
		}
		if !ok {
			return 1
		}
		return 0
	})
}

// apiPath turns the argument into a path with its query: "/v1/jobs" and
// "v1/jobs" as they are, a full URL only when it names the CLI's agent
// (the address flags decide where requests go).
func apiPath(arg, address string) (string, error) {
	if !strings.Contains(arg, "://") {
		return "/" + strings.TrimPrefix(arg, "/"), nil
	}
	u, err := url.Parse(arg)
	if err != nil {
		return "", fmt.Errorf("invalid URL %q: %w", arg, err)
	}
	base, err := url.Parse(address)
	if err == nil && (u.Scheme != base.Scheme || u.Host != base.Host) {
		return "", fmt.Errorf("the URL %q names another agent than %s; pass only the path, and the agent with -address", arg, address)
	}
	p := u.EscapedPath()
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p, nil
}

func addQuery(path, key, value string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + url.QueryEscape(key) + "=" + url.QueryEscape(value)
}

// readBody reads -d's value: text, @file, or @- / - for stdin.
func (m *Meta) readBody(v string) ([]byte, error) {
	switch {
	case v == "-" || v == "@-":
		return io.ReadAll(m.stdin)
	case strings.HasPrefix(v, "@"):
		return os.ReadFile(v[1:])
	}
	return []byte(v), nil
}

// curlCommand is the request as a curl command line, for -dryrun.
func curlCommand(method, u string, header http.Header, body []byte, token string) string {
	parts := []string{"curl", "-X", method}
	keys := make([]string, 0, len(header))
	for k := range header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range header[k] {
			parts = append(parts, "-H", shellQuote(k+": "+v))
		}
	}
	if token != "" && header.Get("X-Nomad-Token") == "" {
		parts = append(parts, "-H", shellQuote("X-Nomad-Token: "+token))
	}
	if body != nil {
		parts = append(parts, "--data-binary", shellQuote(string(body)))
	}
	return strings.Join(append(parts, shellQuote(u)), " ")
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// headerFlags collects repeated -H "Name: value" flags.
type headerFlags struct{ h http.Header }

func (f *headerFlags) String() string { return "" }

func (f *headerFlags) Set(v string) error {
	name, value, ok := strings.Cut(v, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t") {
		return errors.New(`a header is "Name: value", such as -H "X-Nomad-Token: <secret>"`)
	}
	if f.h == nil {
		f.h = http.Header{}
	}
	f.h.Add(name, strings.TrimSpace(value))
	return nil
}
