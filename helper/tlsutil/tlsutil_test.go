package tlsutil_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/tlsutil"
	"github.com/drover-sched/drover/helper/tlsutil/tlstest"
)

// handshake runs a TLS handshake between server and client configs over
// loopback TCP (buffered, unlike net.Pipe, so an alert written by a side
// that gives up never waits for a reader) and returns what each side saw. The server side also
// reads one byte, so that in TLS 1.3 a client certificate the server
// refuses makes the client fail too (its handshake finishes first).
func handshake(t *testing.T, server, client *tls.Config) (srvState *tls.ConnectionState, srvErr, cliErr error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	b, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	a.SetDeadline(time.Now().Add(10 * time.Second))
	b.SetDeadline(time.Now().Add(10 * time.Second))
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer a.Close()
		sc := tls.Server(a, server)
		if srvErr = sc.Handshake(); srvErr != nil {
			return
		}
		st := sc.ConnectionState()
		srvState = &st
		buf := make([]byte, 1)
		if _, err := sc.Read(buf); err != nil {
			srvErr = err
			return
		}
		sc.Write(buf)
	}()
	cc := tls.Client(b, client)
	cliErr = cc.Handshake()
	if cliErr == nil {
		if _, err := cc.Write([]byte{1}); err != nil {
			cliErr = err
		} else if _, err := cc.Read(make([]byte, 1)); err != nil {
			cliErr = err
		}
	}
	b.Close()
	<-done
	return srvState, srvErr, cliErr
}

func TestValidateNamesTheSettingAndWhatWouldBeRight(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  tlsutil.Config
		want string
	}{
		{"rpc without files", tlsutil.Config{EnableRPC: true}, "tls.ca_file is required when tls.rpc is true"},
		{"http without a key", tlsutil.Config{EnableHTTP: true, CAFile: "ca", CertFile: "c"}, "tls.key_file is required when tls.http is true"},
		{"verify_server_hostname without rpc", tlsutil.Config{VerifyServerHostname: true}, "tls.verify_server_hostname needs tls.rpc = true"},
		{"verify_https_client without http", tlsutil.Config{VerifyHTTPSClient: true}, "tls.verify_https_client needs tls.http = true"},
		{"tls11 is refused", tlsutil.Config{MinVersion: "tls11"}, `tls.tls_min_version "tls11" is refused`},
		{"an unknown version", tlsutil.Config{MinVersion: "ssl3"}, `use "tls12" (the default) or "tls13"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
	if err := (tlsutil.Config{MinVersion: "tls13"}).Validate(); err != nil {
		t.Fatalf("TLS off with tls13: %v", err)
	}
}

func TestNewRefusesBadFilesNamingFileAndSetting(t *testing.T) {
	ca := tlstest.NewCA(t)
	other := tlstest.NewCA(t)
	cert, key := ca.RoleCert(t, tlstest.Server, "global")
	otherCert, otherKey := other.RoleCert(t, tlstest.Server, "global")
	_, keyOfAnother := ca.RoleCert(t, tlstest.Client, "global")
	notPEM := filepath.Join(t.TempDir(), "junk.pem")
	os.WriteFile(notPEM, []byte("not a certificate"), 0o644)

	// An expired certificate from the right CA.
	caCert, caKey := ca.PEM()
	oldCert, oldKey, err := tlsutil.GenerateCert(tlsutil.CertOptions{CACert: caCert, CAKey: caKey, DNSNames: []string{"server.global.nomad"},
		Now: time.Now().AddDate(0, 0, -10), Days: 1})
	if err != nil {
		t.Fatal(err)
	}
	expired := filepath.Join(t.TempDir(), "expired.pem")
	expiredKey := filepath.Join(t.TempDir(), "expired-key.pem")
	os.WriteFile(expired, oldCert, 0o644)
	os.WriteFile(expiredKey, oldKey, 0o600)

	base := func(edit func(*tlsutil.Config)) tlsutil.Config {
		c := tlsutil.Config{EnableRPC: true, CAFile: ca.CAFile, CertFile: cert, KeyFile: key}
		edit(&c)
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  tlsutil.Config
		want []string
	}{
		{"missing CA file", base(func(c *tlsutil.Config) { c.CAFile = "/nonexistent/ca.pem" }), []string{`tls.ca_file "/nonexistent/ca.pem" cannot be read`}},
		{"CA file without a certificate", base(func(c *tlsutil.Config) { c.CAFile = notPEM }), []string{"tls.ca_file", "holds no PEM certificate"}},
		{"missing certificate", base(func(c *tlsutil.Config) { c.CertFile = "/nonexistent/c.pem" }), []string{`tls.cert_file "/nonexistent/c.pem" cannot be read`}},
		{"missing key", base(func(c *tlsutil.Config) { c.KeyFile = "/nonexistent/k.pem" }), []string{`tls.key_file "/nonexistent/k.pem" cannot be read`}},
		{"key of another certificate", base(func(c *tlsutil.Config) { c.KeyFile = keyOfAnother }), []string{"tls.cert_file", "tls.key_file", "are not a certificate and its key"}},
		{"certificate of another CA", base(func(c *tlsutil.Config) { c.CertFile, c.KeyFile = otherCert, otherKey }), []string{"tls.cert_file", "is not usable with tls.ca_file", "unknown authority"}},
		{"expired certificate", base(func(c *tlsutil.Config) { c.CertFile, c.KeyFile = expired, expiredKey }), []string{"tls.cert_file", "expired"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tlsutil.New(tc.cfg, "global", nil)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestTLSOffNeedsNoFilesAndGivesNoConfigs(t *testing.T) {
	m, err := tlsutil.New(tlsutil.Config{}, "global", nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.RPCEnabled() || m.HTTPEnabled() || m.IncomingRPC() != nil || m.OutgoingRPC() != nil || m.IncomingHTTPS() != nil {
		t.Fatal("TLS off must give no configs")
	}
	var nilManager *tlsutil.Manager
	if nilManager.RPCEnabled() || nilManager.OutgoingRPC() != nil || nilManager.Reload(tlsutil.Config{}) != nil {
		t.Fatal("a nil manager is TLS off")
	}
}

func TestRPCMutualTLSVerifiesBothSidesAndRoles(t *testing.T) {
	ca := tlstest.NewCA(t)
	server := ca.Manager(t, tlstest.Server, "global", nil)
	client := ca.Manager(t, tlstest.Client, "global", nil)

	st, srvErr, cliErr := handshake(t, server.IncomingRPC(), client.OutgoingRPC())
	if srvErr != nil || cliErr != nil {
		t.Fatalf("client to server: server %v, client %v", srvErr, cliErr)
	}
	if !tlsutil.IsClient(st, "global") || tlsutil.IsServer(st, "global") {
		t.Fatalf("the server must see a client: names %v", st.PeerCertificates[0].DNSNames)
	}
	if tlsutil.IsClient(st, "europe") {
		t.Fatal("a client of region global is not one of europe")
	}

	st, srvErr, cliErr = handshake(t, server.IncomingRPC(), server.OutgoingRPC())
	if srvErr != nil || cliErr != nil {
		t.Fatalf("server to server: server %v, client %v", srvErr, cliErr)
	}
	if !tlsutil.IsServer(st, "global") {
		t.Fatal("the server must see a server")
	}
	if tlsutil.IsServer(nil, "global") || tlsutil.IsServer(&tls.ConnectionState{PeerCertificates: st.PeerCertificates}, "global") {
		t.Fatal("a role needs a verified certificate")
	}
}

func TestRPCRefusesACertificateOfAnotherCA(t *testing.T) {
	ca := tlstest.NewCA(t)
	server := ca.Manager(t, tlstest.Server, "global", nil)
	stranger := tlstest.NewCA(t).Manager(t, tlstest.Server, "global", nil)

	_, srvErr, cliErr := handshake(t, server.IncomingRPC(), stranger.OutgoingRPC())
	if srvErr == nil || cliErr == nil {
		t.Fatalf("want both sides to fail: server %v, client %v", srvErr, cliErr)
	}
	if !strings.Contains(cliErr.Error(), "not signed by tls.ca_file") {
		t.Errorf("the dialer should refuse the server it does not trust: %v", cliErr)
	}

	// A dialer with no certificate at all.
	noCert := &tls.Config{InsecureSkipVerify: true}
	_, srvErr, _ = handshake(t, server.IncomingRPC(), noCert)
	if srvErr == nil || !strings.Contains(srvErr.Error(), "certificate") {
		t.Fatalf("the server must require a client certificate: %v", srvErr)
	}
}

func TestVerifyServerHostnameRefusesAClientPosingAsServer(t *testing.T) {
	ca := tlstest.NewCA(t)
	impostor := ca.Manager(t, tlstest.Client, "global", nil) // serves with a client certificate
	dialer := ca.Manager(t, tlstest.Client, "global", nil)
	_, _, cliErr := handshake(t, impostor.IncomingRPC(), dialer.OutgoingRPC())
	if cliErr == nil || !strings.Contains(cliErr.Error(), "not a server certificate of region \"global\"") {
		t.Fatalf("want the dialer to refuse a non-server certificate, got %v", cliErr)
	}

	// Without verify_server_hostname any certificate of the CA will do.
	lax := ca.Manager(t, tlstest.Client, "global", func(c *tlsutil.Config) { c.VerifyServerHostname = false })
	if _, srvErr, cliErr := handshake(t, impostor.IncomingRPC(), lax.OutgoingRPC()); srvErr != nil || cliErr != nil {
		t.Fatalf("without verify_server_hostname: server %v, client %v", srvErr, cliErr)
	}
}

func TestMinVersionTLS13RefusesTLS12Peers(t *testing.T) {
	ca := tlstest.NewCA(t)
	server := ca.Manager(t, tlstest.Server, "global", func(c *tlsutil.Config) { c.MinVersion = "tls13" })
	client := ca.Manager(t, tlstest.Client, "global", nil)
	old := client.OutgoingRPC()
	old.MaxVersion = tls.VersionTLS12
	if _, srvErr, _ := handshake(t, server.IncomingRPC(), old); srvErr == nil {
		t.Fatal("a TLS 1.2 peer must be refused with tls_min_version = tls13")
	}
	st, srvErr, cliErr := handshake(t, server.IncomingRPC(), client.OutgoingRPC())
	if srvErr != nil || cliErr != nil || st.Version != tls.VersionTLS13 {
		t.Fatalf("TLS 1.3: server %v, client %v", srvErr, cliErr)
	}
}

func TestReloadServesNewCertificatesAndKeepsOldOnFailure(t *testing.T) {
	ca := tlstest.NewCA(t)
	cfg := ca.Config(t, tlstest.Server, "global")
	server, err := tlsutil.New(cfg, "global", nil)
	if err != nil {
		t.Fatal(err)
	}
	client := ca.Manager(t, tlstest.Client, "global", nil)
	incoming := server.IncomingRPC() // made once, as a listener would
	seen := func() *x509.Certificate {
		t.Helper()
		var got *x509.Certificate
		cc := client.OutgoingRPC()
		verify := cc.VerifyConnection
		cc.VerifyConnection = func(cs tls.ConnectionState) error {
			got = cs.PeerCertificates[0]
			return verify(cs)
		}
		if _, srvErr, cliErr := handshake(t, incoming, cc); srvErr != nil || cliErr != nil {
			t.Fatalf("handshake: server %v, client %v", srvErr, cliErr)
		}
		return got
	}
	first := seen()

	next := cfg
	next.CertFile, next.KeyFile = ca.RoleCert(t, tlstest.Server, "global")
	if err := server.Reload(next); err != nil {
		t.Fatal(err)
	}
	second := seen()
	if first.SerialNumber.Cmp(second.SerialNumber) == 0 {
		t.Fatal("a new connection after the reload must see the new certificate")
	}

	broken := next
	broken.KeyFile = "/nonexistent/key.pem"
	if err := server.Reload(broken); err == nil || !strings.Contains(err.Error(), "tls.key_file") {
		t.Fatalf("want the reload to fail naming tls.key_file, got %v", err)
	}
	if third := seen(); third.SerialNumber.Cmp(second.SerialNumber) != 0 {
		t.Fatal("a failed reload must keep the certificate in use")
	}
}

func TestReloadWithANewCAMovesTrustForNewConnections(t *testing.T) {
	oldCA, newCA := tlstest.NewCA(t), tlstest.NewCA(t)
	cfg := oldCA.Config(t, tlstest.Server, "global")
	server, err := tlsutil.New(cfg, "global", nil)
	if err != nil {
		t.Fatal(err)
	}
	incoming := server.IncomingRPC()
	newClient := newCA.Manager(t, tlstest.Client, "global", nil)
	if _, srvErr, _ := handshake(t, incoming, newClient.OutgoingRPC()); srvErr == nil {
		t.Fatal("before the reload the new CA's clients are strangers")
	}
	next := newCA.Config(t, tlstest.Server, "global")
	if err := server.Reload(next); err != nil {
		t.Fatal(err)
	}
	if _, srvErr, cliErr := handshake(t, incoming, newClient.OutgoingRPC()); srvErr != nil || cliErr != nil {
		t.Fatalf("after the reload: server %v, client %v", srvErr, cliErr)
	}
	oldClient := oldCA.Manager(t, tlstest.Client, "global", nil)
	if _, srvErr, _ := handshake(t, incoming, oldClient.OutgoingRPC()); srvErr == nil {
		t.Fatal("after the reload the old CA's clients are strangers")
	}
}

func TestHTTPSRequiresClientCertificatesOnlyWithVerifyHTTPSClient(t *testing.T) {
	ca := tlstest.NewCA(t)
	httpsOnly := func(verify bool) func(*tlsutil.Config) {
		return func(c *tlsutil.Config) {
			c.EnableHTTP, c.VerifyHTTPSClient = true, verify
		}
	}
	anon := &tls.Config{RootCAs: x509.NewCertPool(), ServerName: "localhost"}
	caPEM, _ := ca.PEM()
	block, _ := pem.Decode(caPEM)
	caCert, _ := x509.ParseCertificate(block.Bytes)
	anon.RootCAs.AddCert(caCert)

	open := ca.Manager(t, tlstest.Server, "global", httpsOnly(false))
	if _, srvErr, cliErr := handshake(t, open.IncomingHTTPS(), anon); srvErr != nil || cliErr != nil {
		t.Fatalf("HTTPS without verify_https_client: server %v, client %v", srvErr, cliErr)
	}
	strict := ca.Manager(t, tlstest.Server, "global", httpsOnly(true))
	if _, srvErr, _ := handshake(t, strict.IncomingHTTPS(), anon); srvErr == nil {
		t.Fatal("verify_https_client must refuse a client without a certificate")
	}
	cli := ca.Manager(t, tlstest.CLI, "global", httpsOnly(false))
	if _, srvErr, cliErr := handshake(t, strict.IncomingHTTPS(), cli.OutgoingHTTPS()); srvErr != nil || cliErr != nil {
		t.Fatalf("verify_https_client with a CLI certificate: server %v, client %v", srvErr, cliErr)
	}
}

func TestOutgoingHTTPSAcceptsOnlyAgentsOfTheRegion(t *testing.T) {
	ca := tlstest.NewCA(t)
	https := func(c *tlsutil.Config) { c.EnableHTTP = true }
	dialer := ca.Manager(t, tlstest.Server, "global", https)
	for _, tc := range []struct {
		role   tlstest.Role
		region string
		ok     bool
	}{
		{tlstest.Client, "global", true},
		{tlstest.Server, "global", true},
		{tlstest.CLI, "global", false},
		{tlstest.Client, "europe", false},
	} {
		agent := ca.Manager(t, tc.role, tc.region, https)
		_, _, cliErr := handshake(t, agent.IncomingHTTPS(), dialer.OutgoingHTTPS())
		if (cliErr == nil) != tc.ok {
			t.Errorf("%s of %s: want ok=%v, got %v", tc.role, tc.region, tc.ok, cliErr)
		}
	}
}

func TestGeneratedCertificatesCarryTheirNamesAndUsages(t *testing.T) {
	caPEM, caKey, err := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(caPEM)
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil || !ca.IsCA || !strings.HasPrefix(ca.Subject.CommonName, "Drover Agent CA") {
		t.Fatalf("CA: %v %+v", err, ca)
	}
	if days := ca.NotAfter.Sub(ca.NotBefore).Hours() / 24; days < 5*365-1 || days > 5*365+1 {
		t.Errorf("the CA should last five years, lasts %.0f days", days)
	}
	certPEM, keyPEM, err := tlsutil.GenerateCert(tlsutil.CertOptions{CACert: caPEM, CAKey: caKey, CommonName: "server.global.nomad",
		DNSNames: []string{"server.global.nomad", "localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, Days: 30})
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := pem.Decode(keyPEM)
	if kb.Type != "EC PRIVATE KEY" {
		t.Errorf("key block %q", kb.Type)
	}
	block, _ = pem.Decode(certPEM)
	cert, _ := x509.ParseCertificate(block.Bytes)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "server.global.nomad", KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			t.Errorf("usage %v: %v", usage, err)
		}
	}
	if cert.VerifyHostname("127.0.0.1") != nil || cert.VerifyHostname("localhost") != nil {
		t.Error("localhost and 127.0.0.1 must be named")
	}

	otherPEM, _, _ := tlsutil.GenerateCA(tlsutil.CAOptions{})
	if _, _, err := tlsutil.GenerateCert(tlsutil.CertOptions{CACert: otherPEM, CAKey: caKey}); err == nil || !strings.Contains(err.Error(), "does not belong") {
		t.Fatalf("want a mismatched CA key refused, got %v", err)
	}
}
