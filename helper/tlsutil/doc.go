// Package tlsutil turns the agent's `tls {}` settings into *tls.Config
// values for every place Drover speaks TLS, and makes the certificates to
// go with them.
//
// # One source of material, many configs
//
// A Manager loads the CA, certificate and key named by Config once, checks
// that they belong together (the key matches the certificate, the
// certificate chains to the CA, neither has expired), and keeps the result
// behind an atomic pointer. Every *tls.Config it hands out reads that
// pointer when a connection starts (GetConfigForClient on the server side,
// a fresh config per dial on the client side), so a Reload that succeeds
// takes effect for the next connection without a restart, and connections
// already open keep the material they were made with. A Reload that fails
// (a missing file, a key that does not match) changes nothing: the old
// material stays in use and the error says which file and setting.
//
// The configs, one per role:
//
//   - IncomingRPC: the server's RPC port. A client certificate is required
//     and must chain to the CA. Session tickets are off, so every
//     connection is verified against the CA in use when it starts.
//   - OutgoingRPC: a dialer (client agent, another server, raft). It
//     presents its certificate and checks the server's against the CA;
//     with verify_server_hostname the server's certificate must also be
//     valid for server.<region>.nomad.
//   - IncomingHTTPS: the HTTP API. Client certificates are required, and
//     checked against the CA, only with verify_https_client.
//   - OutgoingHTTPS: an agent forwarding an API request to another agent
//     (logs, files). It checks the other agent's certificate against the
//     CA and, with verify_server_hostname, that it is an agent
//     certificate of this region (server or client), since agents are
//     dialled by IP address, which agent certificates do not usually name.
//
// # Roles
//
// Certificates say who their holder is by name, as in Nomad:
// server.<region>.nomad for servers, client.<region>.nomad for client
// agents, cli.<region>.nomad for people. IsServer and IsClient read the
// verified certificate of a connection; the server uses them to keep
// client certificates away from raft and from server-to-server RPCs.
//
// # Making certificates
//
// GenerateCA and GenerateCert make a self-signed CA and certificates signed
// by it (ECDSA P-256), as `drover tls ca create` and `drover tls cert
// create` do; tests use the tlstest sub-package.
package tlsutil
