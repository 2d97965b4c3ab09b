package command

import (
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/drover-sched/drover/helper/tlsutil"
)

const tlsCertCreateHelp = `
Usage: drover tls cert create [options]

  Create a certificate for a server, a client agent, or a person using the
  CLI, signed by the CA that "drover tls ca create" made. The files are
  written to the current directory, named for the region, role and domain
  (global-server-nomad.pem and global-server-nomad-key.pem for a server of
  region global), and are never overwritten.

  The certificate's names say its role, and agents with
  tls.verify_server_hostname check them: server.<region>.nomad may speak
  raft and the servers' own RPCs, client.<region>.nomad may register nodes
  and run their work, cli.<region>.nomad may only use the HTTP API. Server
  and client certificates also name localhost and 127.0.0.1, so the CLI
  can reach a local agent over HTTPS.

Options:

  -server, -client, -cli
    The role of the certificate. Exactly one is required.

  -region=<region>
    The region of the agents. Default: global.

  -additional-dnsname=<name>
    Another DNS name for the certificate (an agent's host name, to reach
    its HTTPS API by it). May be given more than once.

  -additional-ipaddress=<ip>
    Another IP address for the certificate. May be given more than once.

  -days=<n>
    How many days the certificate is valid for. Default: 365.

  -ca=<path>
    The CA certificate. Default: <domain>-agent-ca.pem.

  -key=<path>
    The CA key. Default: <domain>-agent-ca-key.pem.

  -domain=<domain>
    The domain of the names and files. Default: nomad. Drover's agents
    check names under nomad (server.<region>.nomad), so change it only for
    certificates that agents do not verify by role.

  -dc=<datacenter>
    Accepted for compatibility with older Nomad scripts; certificates are
    named for the region, so it changes nothing.
`

// tlsRoleSpec is what a certificate of one role carries.
type tlsRoleSpec struct {
	role     string
	loopback bool // 127.0.0.1 too, so a local CLI reaches the agent's HTTPS API by IP
	usage    []x509.ExtKeyUsage
}

var tlsRoles = map[string]tlsRoleSpec{
	"server": {"server", true, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
	"client": {"client", true, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
	"cli":    {"cli", false, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
}

func tlsCertCreate(m *Meta, args []string) int {
	c := m.localCmdLine("tls cert create", tlsCertCreateHelp, noArgs)
	var server, client, cli bool
	var region, domain, caFile, keyFile, dc string
	var days int
	var dnsNames, ipAddrs stringList
	c.BoolVar(&server, "server", false, "")
	c.BoolVar(&client, "client", false, "")
	c.BoolVar(&cli, "cli", false, "")
	c.StringVar(&region, "region", "global", "")
	c.StringVar(&domain, "domain", "nomad", "")
	c.StringVar(&caFile, "ca", "", "")
	c.StringVar(&keyFile, "key", "", "")
	c.StringVar(&dc, "dc", "", "")
	c.IntVar(&days, "days", tlsutil.DefaultCertDays, "")
	c.Var(&dnsNames, "additional-dnsname", "")
	c.Var(&ipAddrs, "additional-ipaddress", "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	var spec tlsRoleSpec
	switch {
	case server && !client && !cli:
		spec = tlsRoles["server"]
	case client && !server && !cli:
		spec = tlsRoles["client"]
	case cli && !server && !client:
		spec = tlsRoles["cli"]
	default:
		return c.usageError("Give exactly one of -server, -client or -cli")
	}
	switch {
	case days <= 0:
		return c.usageError(fmt.Sprintf("-days must be a positive number of days, got %d", days))
	case region == "" || strings.ContainsAny(region, "./ "):
		return c.usageError(fmt.Sprintf("-region %q must be a region name such as global (no dots, slashes or spaces)", region))
	case domain == "":
		return c.usageError("-domain must not be empty (the default is nomad)")
	}
	var ips []net.IP
	for _, s := range ipAddrs {
		ip := net.ParseIP(s)
		if ip == nil {
			return c.usageError(fmt.Sprintf("-additional-ipaddress %q is not an IP address", s))
		}
		ips = append(ips, ip)
	}
	if caFile == "" {
		caFile = domain + "-agent-ca.pem"
	}
	if keyFile == "" {
		keyFile = domain + "-agent-ca-key.pem"
	}

	name := spec.role + "." + region + "." + domain
	names := append([]string{name, "localhost"}, dnsNames...)
	if spec.loopback {
		ips = append([]net.IP{net.ParseIP("127.0.0.1")}, ips...)
	}
	out := fmt.Sprintf("%s-%s-%s", region, spec.role, domain)
	certOut, keyOut := out+".pem", out+"-key.pem"
	if err := refuseExisting(certOut, keyOut); err != nil {
		return m.errorf("Error: %v", err)
	}
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return m.errorf("Error reading the CA certificate (-ca): %v\nCreate one with \"drover tls ca create\", or point -ca at yours.", err)
	}
	caKey, err := os.ReadFile(keyFile)
	if err != nil {
		return m.errorf("Error reading the CA key (-key): %v\nCreate one with \"drover tls ca create\", or point -key at yours.", err)
	}
	cert, key, err := tlsutil.GenerateCert(tlsutil.CertOptions{
		CACert: caPEM, CAKey: caKey, CommonName: name, DNSNames: names, IPAddresses: ips,
		ExtKeyUsage: spec.usage, Days: days, Now: m.now(),
	})
	if err != nil {
		return m.errorf("Error creating the certificate with CA %s and key %s: %v", caFile, keyFile, err)
	}
	if spec.role == "server" {
		m.out("==> WARNING: a server certificate lets its holder act as a server: join raft,")
		m.out("    read and write all cluster state, and take scheduling work. Install it")
		m.out("    only on server hosts, and guard it like the CA key.")
	}
	if dc != "" {
		m.out("==> Note: -dc is ignored; certificates are named for the region (%s)", region)
	}
	m.out("==> Using CA certificate %s and CA key %s", caFile, keyFile)
	if err := writeNewFiles(certOut, cert, keyOut, key); err != nil {
		return m.errorf("Error %v", err)
	}
	title := strings.ToUpper(spec.role[:1]) + spec.role[1:]
	if spec.role == "cli" {
		title = "CLI"
	}
	m.out("==> %s certificate saved to: %s", title, certOut)
	m.out("==> %s certificate key saved to: %s", title, keyOut)
	return 0
}
