package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/command/agent/httpapi"
	"github.com/drover-sched/drover/helper/telemetry"
	"github.com/drover-sched/drover/helper/tlsutil"
)

// httpShutdownGrace is how long open HTTP requests get to finish on
// shutdown before their connections are closed.
const httpShutdownGrace = 5 * time.Second

// httpReadHeaderTimeout bounds reading a request's headers.
const httpReadHeaderTimeout = 10 * time.Second

// Agent is one running `drover agent`: a server, a client, or both, and the
// HTTP API in front of them.
//
// Ownership: the agent owns the server, the client, the remote RPC pool of
// a client-only agent, and the HTTP serve goroutine. Shutdown stops them in
// the reverse of the start order (HTTP, client, server) and waits for each.
type Agent struct {
	logger hclog.Logger

	mu     sync.Mutex
	config *config.Config

	dataDir    string
	removeData bool // a dev agent's temporary data dir
	dirLock    *dataDirLock

	server serverHandle
	client clientHandle
	remote *remoteRPC
	rpc    rpcer
	// tls is the agent's TLS material, shared by the server, the client,
	// the remote RPC pool and the HTTP API, so a reload reaches them all.
	// It is never nil; with TLS off it gives no configs.
	tls *tlsutil.Manager
	// telemetry is the agent's metrics (helper/telemetry), handed to the
	// server and the client and read by /v1/metrics.
	telemetry *telemetry.Telemetry

	httpLn      net.Listener
	httpSrv     *http.Server
	connLimiter *connLimiter
	httpCancel  context.CancelFunc
	httpDone    chan struct{}
	httpAddr    string // advertised
	rpcAddr     string // advertised, "" without a server
	servers     []string

	shutdownOnce sync.Once
	shutdownErr  error
}

// NewAgent starts an agent: the server (if enabled), then the client (if
// enabled; it registers with the local server when there is one), then the
// HTTP API. The HTTP port is bound first, so the client can register the
// address other agents use to reach it, but it serves only once the rest
// is up. On error, whatever was started is stopped again.
func NewAgent(cfg *config.Config, logger hclog.Logger) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	a := &Agent{config: cfg.Copy(), logger: logger}
	if err := a.start(); err != nil {
		a.Shutdown()
		return nil, err
	}
	return a, nil
}

// aclWithoutTLSWarning is logged by a server with ACLs on whose RPC port
// does not check certificate roles. Raft has no authentication of its
// own: whoever reaches the port can send a forged leader's entries, and
// one request rewrites the log, ACL tokens included. Tokens then guard
// the HTTP API against honest mistakes, not against anyone on the network.
const aclWithoutTLSWarning = "ACLs are on, but without tls.rpc and tls.verify_server_hostname anyone who can reach this server's RPC port " +
	"can speak raft and rewrite the cluster's state, ACL tokens included; turn on mutual TLS (see docs/tls.md) " +
	"before relying on ACLs"

func (a *Agent) start() error {
	cfg := a.config
	if err := a.setupDataDir(); err != nil {
		return err
	}
	lock, err := lockDataDir(a.dataDir)
	if err != nil {
		return err
	}
	a.dirLock = lock
	tm, err := tlsutil.New(cfg.TLS, cfg.Region, a.logger)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	a.tls = tm
	if a.telemetry, err = telemetry.New(cfg.Telemetry, cfg.Name, a.logger.Named("telemetry")); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.HTTPBind())
	if err != nil {
		return fmt.Errorf("agent: HTTP listener: %w", err)
	}
	a.httpLn = ln
	if a.httpAddr, err = config.AdvertiseAddr(cfg.Advertise.HTTP, ln.Addr(), cfg.Client.NetworkInterface); err != nil {
		return fmt.Errorf("agent: advertise HTTP address: %w", err)
	}

	if cfg.Server.Enabled {
		scfg, err := cfg.ForServer(a.dataDir, a.logger.Named("server"))
		if err != nil {
			return err
		}
		if cfg.ACL.Enabled && !(a.tls.RPCEnabled() && a.tls.VerifyServerHostname()) {
			a.logger.Warn(aclWithoutTLSWarning)
		}
		scfg.TLS = a.tls
		a.telemetry.BridgeRaft()
		scfg.Metrics, scfg.StatsInterval = a.telemetry.Metrics(), a.telemetry.Config().CollectionInterval
		if cfg.ServerHook != nil {
			cfg.ServerHook(scfg)
		}
		if a.server, err = startServer(scfg); err != nil {
			return fmt.Errorf("agent: starting server: %w", err)
		}
		a.rpc = a.server
		a.rpcAddr = a.server.RPCAddr()
	}

	if cfg.Client.Enabled {
		if a.server != nil {
			a.servers = []string{a.rpcAddr}
		} else {
			a.servers = append(append([]string(nil), cfg.Client.Servers...), cfg.Client.ServerJoin.RetryJoin...)
			a.remote = newRemoteRPC(a.servers, a.logger.Named("rpc"), a.tls.OutgoingRPC())
			a.rpc = a.remote
		}
		if cfg.Client.MemoryTotalMB != 0 {
			a.logger.Warn("client.memory_total_mb is not applied yet: the client fingerprints memory itself")
		}
		// The client names its own logger.
		ccfg := cfg.ForClient(a.dataDir, a.servers, a.httpAddr, a.logger)
		ccfg.Artifacts.Sources.OwnAddrs = a.ownAddrs()
		ccfg.RPCTLS = a.tls.OutgoingRPC()
		tc := a.telemetry.Config()
		ccfg.Metrics, ccfg.StatsInterval = a.telemetry.Metrics(), tc.CollectionInterval
		ccfg.PublishAllocationMetrics, ccfg.PublishNodeMetrics = tc.PublishAllocationMetrics, tc.PublishNodeMetrics
		if cfg.ClientHook != nil {
			cfg.ClientHook(ccfg)
		}
		if a.client, err = startClient(ccfg); err != nil {
			return fmt.Errorf("agent: starting client: %w", err)
		}
	}

	a.serveHTTP()
	return nil
}

// setupDataDir creates the data dir; a dev agent without one gets a
// temporary directory, removed on shutdown.
func (a *Agent) setupDataDir() error {
	dir := a.config.DataDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "drover-dev-")
		if err != nil {
			return fmt.Errorf("agent: creating dev data dir: %w", err)
		}
		// MkdirTemp makes it 0700; a task run as another user (exec's
		// nobody) must pass through it to its alloc dir.
		if err := os.Chmod(tmp, 0o711); err != nil {
			return fmt.Errorf("agent: dev data dir: %w", err)
		}
		a.dataDir, a.removeData = tmp, true
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("agent: data_dir %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("agent: data_dir: %w", err)
	}
	// The operator's own directory keeps its mode; a task run as
	// another user (exec's nobody) cannot start under one it cannot
	// pass through.
	if fi, err := os.Stat(abs); err == nil && a.config.Client.Enabled && fi.Mode().Perm()&0o001 == 0 {
		a.logger.Warn("data_dir is not traversable by other users, so tasks run as another user (exec's nobody) cannot start; make it 0711 or 0755",
			"data_dir", abs, "mode", fmt.Sprintf("%#o", fi.Mode().Perm()))
	}
	a.dataDir = abs
	return nil
}

func (a *Agent) serveHTTP() {
	forward := http.DefaultTransport.(*http.Transport).Clone()
	// Requests forwarded to another agent (logs, files) speak HTTPS when
	// the API does, presenting this agent's certificate.
	forward.TLSClientConfig = a.tls.OutgoingHTTPS()
	api := a.httpDeps()
	api.Forward = &http.Client{Transport: forward}
	// Handlers see the base context end when the agent shuts down, so a
	// followed log stream ends instead of holding shutdown up.
	ctx, cancel := context.WithCancel(context.Background())
	a.httpCancel = cancel
	a.connLimiter = newConnLimiter(func() int {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.config.Limits.HTTPMaxConnsPerClient
	}, func() int {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.config.Limits.HTTPMaxConns
	}, a.logger.Named("http"))
	a.httpSrv = &http.Server{
		ConnState:         a.connLimiter.connState,
		Handler:           httpapi.NewHandler(api),
		ReadHeaderTimeout: httpReadHeaderTimeout,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          a.logger.Named("http").StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
	}
	ln := a.httpLn
	if a.tls.HTTPEnabled() {
		// The server's TLSConfig tells net/http to offer HTTP/2; the
		// listener does the handshakes with the current certificates.
		a.httpSrv.TLSConfig = a.tls.IncomingHTTPS()
		ln = tls.NewListener(ln, a.httpSrv.TLSConfig)
		// net/http bounds a TLS handshake by its shortest timeout, the
		// header timeout here: with HTTPS it is also
		// limits.https_handshake_timeout, so a client that opens a
		// connection and stalls the handshake holds it no longer.
		if hs := a.config.Limits.HTTPSHandshakeTimeout; hs > 0 && hs < a.httpSrv.ReadHeaderTimeout {
			a.httpSrv.ReadHeaderTimeout = hs
		}
	}
	a.httpDone = make(chan struct{})
	go func() {
		defer close(a.httpDone)
		if err := a.httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.logger.Error("HTTP server stopped", "error", err)
		}
	}()
}

// httpDeps is what the HTTP API is built from: the agent's server,
// client, RPC path and metrics, and a view of the agent as it is now. A
// nil serverHandle or clientHandle converts to a nil httpapi.Server or
// httpapi.Client, which the API reads as "this agent has none".
func (a *Agent) httpDeps() httpapi.Deps {
	return httpapi.Deps{
		RPC:       a.rpc,
		Server:    a.server,
		Client:    a.client,
		Info:      a.info,
		Logger:    a.logger.Named("http"),
		Scheme:    a.httpScheme(),
		Telemetry: a.telemetry,
	}
}

func (a *Agent) info() httpapi.AgentInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	return httpapi.AgentInfo{Config: a.config, HTTPAddr: a.httpAddr, RPCAddr: a.rpcAddr, Servers: append([]string(nil), a.servers...)}
}

// ownAddrs are the agent's listeners, bound and advertised, which no
// artifact may be fetched from (see artifact.Sources.OwnAddrs). An
// address that is a name, not an IP, cannot be dialled as such and is
// left out.
func (a *Agent) ownAddrs() []netip.AddrPort {
	cands := []string{a.httpLn.Addr().String(), a.httpAddr}
	if a.server != nil {
		cands = append(cands, a.config.RPCBind(), a.rpcAddr)
	}
	var out []netip.AddrPort
	for _, c := range cands {
		if ap, err := netip.ParseAddrPort(c); err == nil {
			out = append(out, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
		}
	}
	return out
}

// HTTPAddr is the advertised address of the HTTP API ("host:port").
func (a *Agent) HTTPAddr() string { return a.httpAddr }

// HTTPURL is the advertised base URL of the HTTP API: https with tls.http.
func (a *Agent) HTTPURL() string { return a.httpScheme() + "://" + a.httpAddr }

func (a *Agent) httpScheme() string {
	if a.tls.HTTPEnabled() {
		return "https"
	}
	return "http"
}

// RPCAddr is the advertised RPC address of the agent's server, "" when it
// has none.
func (a *Agent) RPCAddr() string { return a.rpcAddr }

// Config returns the configuration the agent runs with.
func (a *Agent) Config() *config.Config {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.config.Copy()
}

// NodeID is the client's node ID, "" without a client.
func (a *Agent) NodeID() string {
	if a.client == nil {
		return ""
	}
	return a.client.NodeID()
}

// RPC makes an RPC call through the agent's server, or through the servers
// a client-only agent knows.
func (a *Agent) RPC(method string, args, reply any) error {
	if a.rpc == nil {
		return errNoServers
	}
	return a.rpc.RPC(context.Background(), method, args, reply)
}

// Reload applies what can change without a restart: the log level, the
// TLS certificates, CA and key (new connections use them; a set of files
// that does not load keeps the old ones and makes Reload return the
// error), and the configuration /v1/agent/self reports. Everything else
// needs a restart; the changes that were not applied are logged.
func (a *Agent) Reload(newCfg *config.Config) error {
	if err := newCfg.Validate(); err != nil {
		return err
	}
	a.mu.Lock()
	old := a.config
	next := newCfg.Copy()
	// Hooks and identity are runtime settings, not file contents.
	next.ServerHook, next.ClientHook, next.Version = old.ServerHook, old.ClientHook, old.Version
	a.config = next
	a.mu.Unlock()

	if old.LogLevel != next.LogLevel {
		a.logger.SetLevel(hclog.LevelFromString(next.LogLevel))
		a.logger.Info("log level changed", "from", old.LogLevel, "to", next.LogLevel)
	}
	// The files may have changed even when their paths did not.
	tlsErr := a.tls.Reload(next.TLS)
	if old.Server.Enabled != next.Server.Enabled || old.Client.Enabled != next.Client.Enabled ||
		old.DataDir != next.DataDir || old.Ports != next.Ports || old.BindAddr != next.BindAddr || old.ACL != next.ACL ||
		!reflect.DeepEqual(old.Telemetry, next.Telemetry) {
		a.logger.Warn("configuration reloaded; server/client roles, data_dir, ports, addresses, the acl and the telemetry blocks change only on restart")
	}
	return tlsErr
}

// Shutdown stops the HTTP API, then the client, then the server, and
// waits for each. It is safe to call more than once.
func (a *Agent) Shutdown() error {
	a.shutdownOnce.Do(func() {
		var errs []error
		if a.httpSrv != nil {
			a.httpCancel()
			ctx, cancel := context.WithTimeout(context.Background(), httpShutdownGrace)
			if err := a.httpSrv.Shutdown(ctx); err != nil {
				a.httpSrv.Close()
			}
			cancel()
			<-a.httpDone
		} else if a.httpLn != nil {
			a.httpLn.Close()
		}
		if a.client != nil {
			if err := a.client.Shutdown(); err != nil {
				errs = append(errs, fmt.Errorf("client shutdown: %w", err))
			}
		}
		if a.remote != nil {
			a.remote.Shutdown()
		}
		if a.server != nil {
			if err := a.server.Shutdown(); err != nil {
				errs = append(errs, fmt.Errorf("server shutdown: %w", err))
			}
		}
		if a.telemetry != nil {
			a.telemetry.Shutdown()
		}
		a.dirLock.release()
		if a.removeData {
			if err := os.RemoveAll(a.dataDir); err != nil {
				errs = append(errs, err)
			}
		}
		a.shutdownErr = errors.Join(errs...)
	})
	return a.shutdownErr
}
