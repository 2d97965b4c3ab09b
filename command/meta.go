package command

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/drover-sched/drover/api"
)

// Meta is what every CLI verb shares: where its output goes, the flags that
// say which agent to talk to, and the clock. Verbs take it instead of
// reaching for os.Stdout or time.Now, so tests can capture output and fix
// the time.
type Meta struct {
	stdout  io.Writer
	stderr  io.Writer
	stdin   io.Reader
	getenv  func(string) string
	environ func() []string
	now     func() time.Time

	// ctx is cancelled on interrupt, so a monitor stops cleanly on Ctrl-C.
	ctx context.Context

	// help is the running verb's help text.
	help string

	address   string
	namespace string
	region    string
	token     string

	// TLS flags, Nomad's: see clientFlagsHelp.
	caCert, caPath, clientCert, clientKey, tlsServerName string
	tlsSkipVerify                                        bool
}

// newMeta returns a Meta wired to the process: real environment and clock.
func newMeta(stdout, stderr io.Writer) *Meta {
	return &Meta{stdout: stdout, stderr: stderr, stdin: os.Stdin, getenv: os.Getenv, environ: os.Environ, now: time.Now, ctx: context.Background()}
}

// withInterrupt runs f with m.ctx cancelled on SIGINT, so that long waits
// (monitors, followed logs) end with a message instead of a killed process.
func (m *Meta) withInterrupt(f func() int) int {
	ctx, stop := signal.NotifyContext(m.ctx, os.Interrupt)
	defer stop()
	saved := m.ctx
	m.ctx = ctx
	defer func() { m.ctx = saved }()
	return f()
}

// clientFlagsHelp documents the general flags, which cmdLine registers on
// every verb that talks to an agent.
const clientFlagsHelp = `
General Options:

  -address=<addr>
    The address of the agent. Overrides DROVER_ADDR, then NOMAD_ADDR.
    Default: http://127.0.0.1:4646

  -namespace=<namespace>
    The namespace to use. Overrides DROVER_NAMESPACE and NOMAD_NAMESPACE.

  -region=<region>
    The region to forward requests to. Overrides DROVER_REGION.

  -token=<secret>
    The ACL token. Overrides DROVER_TOKEN and NOMAD_TOKEN.

  -ca-cert=<path>
    Path to a PEM encoded CA cert file to use to verify the agent's
    certificate. Overrides DROVER_CACERT and NOMAD_CACERT.

  -ca-path=<path>
    Path to a directory of PEM encoded CA cert files to verify the agent's
    certificate. If both -ca-cert and -ca-path are given, -ca-cert is used.
    Overrides DROVER_CAPATH and NOMAD_CAPATH.

  -client-cert=<path>
    Path to a PEM encoded client certificate for TLS authentication to the
    agent (needed when it sets tls.verify_https_client). Must be given with
    -client-key. Overrides DROVER_CLIENT_CERT and NOMAD_CLIENT_CERT.

  -client-key=<path>
    Path to an unencrypted PEM encoded private key matching the client
    certificate. Overrides DROVER_CLIENT_KEY and NOMAD_CLIENT_KEY.

  -tls-server-name=<value>
    The server name to use as the SNI host and to check the agent's
    certificate against. Overrides DROVER_TLS_SERVER_NAME and
    NOMAD_TLS_SERVER_NAME.

  -tls-skip-verify
    Do not verify the agent's TLS certificate. This is strongly
    discouraged. Overrides DROVER_SKIP_VERIFY and NOMAD_SKIP_VERIFY.

  A request the agent does not answer within 60s fails; set
  DROVER_HTTP_TIMEOUT (such as 2m) to wait longer. Blocking queries get
  their wait on top, and followed streams are not bounded once open.
`

// client builds an API client from the flags, then the environment.
func (m *Meta) client() (*api.Client, error) {
	cfg := api.ConfigFromEnv(m.getenv)
	cfg.Getenv = m.getenv
	if m.address != "" {
		cfg.Address = m.address
	}
	if m.namespace != "" {
		cfg.Namespace = m.namespace
	}
	if m.region != "" {
		cfg.Region = m.region
	}
	if m.token != "" {
		cfg.SecretID = m.token
	}
	cfg.TLSConfig = m.tlsFlags(cfg.TLSConfig)
	c, err := api.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("error initializing client: %w", err)
	}
	return c, nil
}

// tlsFlags overlays the TLS flags given on env, the settings from the
// environment. A CA or a client certificate given by flag replaces the
// environment's whole, so a flag never pairs with a stray variable.
func (m *Meta) tlsFlags(env *api.TLSConfig) *api.TLSConfig {
	out := api.TLSConfig{}
	if env != nil {
		out = *env
	}
	if m.caCert != "" || m.caPath != "" {
		out.CACert, out.CAPath = m.caCert, m.caPath
	}
	if m.clientCert != "" || m.clientKey != "" {
		out.ClientCert, out.ClientKey = m.clientCert, m.clientKey
	}
	if m.tlsServerName != "" {
		out.TLSServerName = m.tlsServerName
	}
	out.Insecure = out.Insecure || m.tlsSkipVerify
	return &out
}

// out prints a line to stdout.
func (m *Meta) out(format string, args ...any) {
	fmt.Fprintf(m.stdout, format+"\n", args...)
}

// errorf prints a line to stderr and returns 1, the exit code for errors.
func (m *Meta) errorf(format string, args ...any) int {
	fmt.Fprintf(m.stderr, format+"\n", args...)
	return 1
}

// printJSON writes v as indented JSON, the form -json and `job inspect`
// print.
func (m *Meta) printJSON(v any) int {
	buf, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return m.errorf("Error formatting JSON: %v", err)
	}
	m.out("%s", buf)
	return 0
}

// confirm asks a yes/no question on stdin; only "y" or "yes" is yes, and
// anything else, including no input at all, is no.
func (m *Meta) confirm(question string) bool {
	fmt.Fprintf(m.stdout, "%s [y/N]: ", question)
	line, _ := bufio.NewReader(m.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}
