package command

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/drover-sched/drover/helper/tlsutil"
)

const tlsCACreateHelp = `
Usage: drover tls ca create [options]

  Create a self-signed certificate authority (CA) for Drover's TLS: the
  CA certificate every agent trusts (tls.ca_file) and the CA key that signs
  the agents' certificates (see "drover tls cert create"). The files are
  written to the current directory and are never overwritten.

  Keep the CA key (the -key.pem file) off the agents: whoever holds it can
  make a certificate for any role, a server's included.

Options:

  -common-name=<name>
    The CA's common name. Default: "Drover Agent CA <serial number>".

  -days=<n>
    How many days the CA is valid for. Default: 1825 (five years).

  -domain=<domain>
    The domain of the cluster, used to name the files. Default: nomad,
    which makes nomad-agent-ca.pem and nomad-agent-ca-key.pem.
`

func tlsCACreate(m *Meta, args []string) int {
	c := m.localCmdLine("tls ca create", tlsCACreateHelp, noArgs)
	var commonName, domain string
	var days int
	c.StringVar(&commonName, "common-name", "", "")
	c.StringVar(&domain, "domain", "nomad", "")
	c.IntVar(&days, "days", tlsutil.DefaultCADays, "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	if days <= 0 {
		return c.usageError(fmt.Sprintf("-days must be a positive number of days, got %d", days))
	}
	if domain == "" {
		return c.usageError("-domain must not be empty (the default is nomad)")
	}
	certFile, keyFile := domain+"-agent-ca.pem", domain+"-agent-ca-key.pem"
	if err := refuseExisting(certFile, keyFile); err != nil {
		return m.errorf("Error: %v", err)
	}
	cert, key, err := tlsutil.GenerateCA(tlsutil.CAOptions{CommonName: commonName, Days: days, Now: m.now()})
	if err != nil {
		return m.errorf("Error creating the CA: %v", err)
	}
	if err := writeNewFiles(certFile, cert, keyFile, key); err != nil {
		return m.errorf("Error %v", err)
	}
	m.out("==> CA certificate saved to: %s", certFile)
	m.out("==> CA certificate key saved to: %s", keyFile)
	return 0
}

// refuseExisting fails if any of paths exists: a certificate or key that
// is in use must never be replaced by accident.
func refuseExisting(paths ...string) error {
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s already exists; move it away or run the command in another directory (files are never overwritten)", p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("checking %s: %w", p, err)
		}
	}
	return nil
}

// writeNewFiles writes a certificate (readable by all) and its key
// (readable by the owner only), refusing to replace an existing file even
// one created since refuseExisting looked. If the key cannot be written
// the certificate is removed again, so no half pair is left.
func writeNewFiles(certFile string, cert []byte, keyFile string, key []byte) error {
	if err := writeNew(certFile, cert, 0o644); err != nil {
		return err
	}
	if err := writeNew(keyFile, key, 0o600); err != nil {
		os.Remove(certFile)
		return err
	}
	return nil
}

func writeNew(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
