package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"strings"
)

// IsServer reports whether state is a TLS connection whose peer presented a
// certificate, verified against the CA, that names server.<region>.nomad:
// another server of this region.
func IsServer(state *tls.ConnectionState, region string) bool {
	return verifiedName(state, ServerName(region))
}

// IsClient reports whether state is a TLS connection whose peer presented a
// verified certificate that names client.<region>.nomad: a client agent of
// this region.
func IsClient(state *tls.ConnectionState, region string) bool {
	return verifiedName(state, ClientName(region))
}

// verifiedName reports whether the verified peer certificate of state
// names name exactly. Exact names, not wildcard matching, decide roles: a
// certificate for *.global.nomad is neither a server nor a client.
func verifiedName(state *tls.ConnectionState, name string) bool {
	if state == nil || len(state.VerifiedChains) == 0 || len(state.PeerCertificates) == 0 {
		return false
	}
	return hasName(state.PeerCertificates[0], name)
}

func hasName(cert *x509.Certificate, name string) bool {
	for _, n := range cert.DNSNames {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}
