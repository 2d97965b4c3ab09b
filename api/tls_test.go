package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/drover-sched/drover/helper/tlsutil"
	"github.com/drover-sched/drover/helper/tlsutil/tlstest"
)

// httpsAgent is a stand-in agent whose API speaks HTTPS with a server
// certificate of ca, requiring client certificates of ca.
func httpsAgent(t *testing.T, ca *tlstest.CA) *httptest.Server {
	t.Helper()
	m := ca.Manager(t, tlstest.Server, "global", func(c *tlsutil.Config) { c.EnableHTTP, c.VerifyHTTPSClient = true, true })
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`"127.0.0.1:4647"`))
	}))
	srv.TLS = m.IncomingHTTPS()
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func leader(t *testing.T, cfg *Config) error {
	t.Helper()
	c, err := NewClient(cfg)
	if err != nil {
		return err
	}
	_, err = c.Status().Leader()
	return err
}

func TestHTTPSWithCAAndClientCertificate(t *testing.T) {
	ca := tlstest.NewCA(t)
	srv := httpsAgent(t, ca)
	cert, key := ca.RoleCert(t, tlstest.CLI, "global")
	// The agent's certificate names localhost and 127.0.0.1.
	addr := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)

	if err := leader(t, &Config{Address: addr, Getenv: envOf(nil),
		TLSConfig: &TLSConfig{CACert: ca.CAFile, ClientCert: cert, ClientKey: key}}); err != nil {
		t.Fatalf("with CA and client certificate: %v", err)
	}
	// The same from Nomad's environment variables, Drover's winning.
	env := map[string]string{"NOMAD_CACERT": "/nonexistent", "DROVER_CACERT": ca.CAFile, "NOMAD_CLIENT_CERT": cert, "NOMAD_CLIENT_KEY": key}
	if err := leader(t, &Config{Address: addr, Getenv: envOf(env)}); err != nil {
		t.Fatalf("from the environment: %v", err)
	}

	for _, tc := range []struct {
		name string
		tls  *TLSConfig
		want string
	}{
		{"no CA", &TLSConfig{ClientCert: cert, ClientKey: key}, "give that CA with -ca-cert or NOMAD_CACERT"},
		{"no client certificate", &TLSConfig{CACert: ca.CAFile}, "the agent requires a client certificate: give one with -client-cert and -client-key"},
		{"a wrong server name", &TLSConfig{CACert: ca.CAFile, ClientCert: cert, ClientKey: key, TLSServerName: "elsewhere.example"}, "-tls-server-name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := leader(t, &Config{Address: addr, Getenv: envOf(nil), TLSConfig: tc.tls})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
	// Skipping verification still needs the client certificate.
	if err := leader(t, &Config{Address: addr, Getenv: envOf(map[string]string{"NOMAD_SKIP_VERIFY": "true"}),
		TLSConfig: &TLSConfig{ClientCert: cert, ClientKey: key}}); err != nil {
		t.Fatalf("NOMAD_SKIP_VERIFY: %v", err)
	}
	// A CA directory works like a CA file.
	if err := leader(t, &Config{Address: addr, Getenv: envOf(nil), TLSConfig: &TLSConfig{CAPath: ca.Dir, ClientCert: cert, ClientKey: key}}); err != nil {
		t.Fatalf("with -ca-path: %v", err)
	}
}

func TestBadTLSFilesNameTheFlagAndVariable(t *testing.T) {
	ca := tlstest.NewCA(t)
	cert, _ := ca.RoleCert(t, tlstest.CLI, "global")
	for _, tc := range []struct {
		name string
		tls  *TLSConfig
		want string
	}{
		{"missing CA", &TLSConfig{CACert: "/nonexistent/ca.pem"}, "TLS CA certificate (-ca-cert, NOMAD_CACERT)"},
		{"missing CA directory", &TLSConfig{CAPath: "/nonexistent"}, "TLS CA directory (-ca-path, NOMAD_CAPATH)"},
		{"certificate without key", &TLSConfig{ClientCert: cert}, "given without its key (-client-key, NOMAD_CLIENT_KEY)"},
		{"missing key", &TLSConfig{ClientCert: cert, ClientKey: "/nonexistent/key.pem"}, "TLS client key (-client-key, NOMAD_CLIENT_KEY)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewClient(&Config{Address: "https://localhost:4646", Getenv: envOf(nil), TLSConfig: tc.tls})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want %q, got %v", tc.want, err)
			}
		})
	}
}

func TestPlainHTTPAgentWithAnHTTPSAddressSaysSo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	err := leader(t, &Config{Address: strings.Replace(srv.URL, "http://", "https://", 1), Getenv: envOf(nil)})
	if err == nil || !strings.Contains(err.Error(), "use an http:// address") {
		t.Fatalf("want a hint to use http, got %v", err)
	}
}
