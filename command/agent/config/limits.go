package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/nomad"
)

// Limits is the agent's limits {} block: how much one caller can make the
// agent hold. The keys are Nomad's where Nomad has them, with Nomad's
// defaults; the rest are Drover's. Every value must be positive: Nomad
// lets 0 switch a limit off, Drover does not, since every port is
// reachable by whoever can reach the machine. A zero field is "not set"
// while files are merged.
type Limits struct {
	// HTTPSHandshakeTimeout bounds a TLS handshake on the HTTP port.
	HTTPSHandshakeTimeout time.Duration
	// HTTPMaxConnsPerClient bounds the HTTP connections one remote IP may
	// hold open; one more is closed at once.
	HTTPMaxConnsPerClient int
	// RPCHandshakeTimeout and RPCMaxConnsPerClient are the same for the
	// RPC port.
	RPCHandshakeTimeout  time.Duration
	RPCMaxConnsPerClient int
	// RPCMaxConns and HTTPMaxConns bound the connections of every client
	// together on each port, so that many hosts at once cannot take every
	// file descriptor either. By default half the process's descriptor
	// limit for RPC and a quarter for HTTP.
	RPCMaxConns  int
	HTTPMaxConns int
	// RPCMaxStreamsPerSession bounds the streams of one multiplexed RPC
	// session.
	RPCMaxStreamsPerSession int
	// HTTPMaxBodySize bounds a request body of any HTTP endpoint but the
	// job endpoints, which are bounded by server.job_max_source_size.
	HTTPMaxBodySize int64
	// MaxBlockingQueries bounds the blocking queries a server holds at
	// once, MaxBlockingQueriesPerClient those of one client.
	MaxBlockingQueries          int
	MaxBlockingQueriesPerClient int
}

// DefaultHTTPMaxBodySize is the body limit of every HTTP endpoint but the
// job endpoints: the largest other bodies are a dispatch (a payload of at
// most 16 KiB, base64, with its meta) and configuration objects, a few KB.
const DefaultHTTPMaxBodySize = 1 << 20

// defaultLimits are Nomad's defaults for Nomad's keys and Drover's for
// its own.
func defaultLimits() Limits {
	return Limits{
		HTTPSHandshakeTimeout:       5 * time.Second,
		HTTPMaxConnsPerClient:       100,
		RPCHandshakeTimeout:         nomad.DefaultRPCHandshakeTimeout,
		RPCMaxConnsPerClient:        nomad.DefaultRPCMaxConnsPerClient,
		RPCMaxStreamsPerSession:     nomad.DefaultRPCMaxStreamsPerSession,
		RPCMaxConns:                 rpcx.DefaultMaxConns(),
		HTTPMaxConns:                max(rpcx.DefaultMaxConns()/2, 512),
		HTTPMaxBodySize:             DefaultHTTPMaxBodySize,
		MaxBlockingQueries:          nomad.DefaultMaxBlockingQueries,
		MaxBlockingQueriesPerClient: nomad.DefaultMaxBlockingQueriesPerClient,
	}
}

func (d *decoder) decodeLimits(body hcl.Body, l *Limits) {
	const maxConns = 1 << 20
	d.walk(body, &section{
		path: "limits",
		attrs: map[string]attrFunc{
			"https_handshake_timeout":     limitDurAttr(&l.HTTPSHandshakeTimeout),
			"http_max_conns_per_client":   limitIntAttr(&l.HTTPMaxConnsPerClient, maxConns),
			"rpc_handshake_timeout":       limitDurAttr(&l.RPCHandshakeTimeout),
			"rpc_max_conns_per_client":    limitIntAttr(&l.RPCMaxConnsPerClient, maxConns),
			"rpc_max_streams_per_session": limitIntAttr(&l.RPCMaxStreamsPerSession, 1<<16),
			// rpc_max_streams is the shorter name of the same setting.
			"rpc_max_streams":                 limitIntAttr(&l.RPCMaxStreamsPerSession, 1<<16),
			"rpc_max_conns":                   limitIntAttr(&l.RPCMaxConns, maxConns),
			"http_max_conns":                  limitIntAttr(&l.HTTPMaxConns, maxConns),
			"http_max_body_size":              sizeAttr(&l.HTTPMaxBodySize, 1<<10, 1<<30),
			"max_blocking_queries":            limitIntAttr(&l.MaxBlockingQueries, maxConns),
			"max_blocking_queries_per_client": limitIntAttr(&l.MaxBlockingQueriesPerClient, maxConns),
		},
	})
}

// limitIntAttr is a whole number from 1 to max. Nomad's "0 disables" is
// refused with a message saying so.
// boundedIntAttr accepts a whole number between min and max.
func boundedIntAttr(dst *int, min, max int) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		if n, ok := d.decodeInt(key, a, min, max); ok {
			*dst = n
		}
	}
}

func limitIntAttr(dst *int, max int) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		if v, ok := d.value(a.Expr); ok && v.Type() == cty.Number && v.RawEquals(cty.Zero) {
			d.problem(a.Expr.Range(), key, "0 would switch the limit off, which Drover does not allow; set a number between 1 and %d", max)
			return
		}
		if n, ok := d.decodeInt(key, a, 1, max); ok {
			*dst = n
		}
	}
}

// Bounds of the handshake timeouts: shorter fails slow links, longer lets
// a caller hold a connection doing nothing.
const (
	minHandshakeTimeout = 100 * time.Millisecond
	maxHandshakeTimeout = 5 * time.Minute
)

func limitDurAttr(dst *time.Duration) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		var dur time.Duration
		durAttr(&dur)(d, key, a)
		if dur == 0 {
			if v, ok := d.value(a.Expr); ok && v.Type() == cty.String && strings.TrimSpace(v.AsString()) != "" {
				if parsed, err := time.ParseDuration(strings.TrimSpace(v.AsString())); err == nil && parsed == 0 {
					d.problem(a.Expr.Range(), key, "0 would switch the timeout off, which Drover does not allow; set a duration between %s and %s", minHandshakeTimeout, maxHandshakeTimeout)
				}
			}
			return
		}
		if dur < minHandshakeTimeout || dur > maxHandshakeTimeout {
			d.problem(a.Expr.Range(), key, "expected a duration between %s and %s, got %s", minHandshakeTimeout, maxHandshakeTimeout, dur)
			return
		}
		*dst = dur
	}
}

// sizeAttr is a byte size between min and max: a number of bytes, or a
// string with a unit as Nomad writes them ("1M", "1MB", "512KiB"; M and
// MB are 1,000,000 bytes, MiB 1,048,576).
func sizeAttr(dst *int64, min, max int64) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		v, ok := d.value(a.Expr)
		if !ok {
			return
		}
		var n uint64
		switch v.Type() {
		case cty.Number:
			f := v.AsBigFloat()
			if !f.IsInt() || f.Sign() < 0 {
				d.problem(a.Expr.Range(), key, "expected a size such as \"1MB\" or a whole number of bytes, got %s", describe(v))
				return
			}
			n, _ = f.Uint64()
		case cty.String:
			var err error
			if n, err = humanize.ParseBytes(strings.TrimSpace(v.AsString())); err != nil {
				d.problem(a.Expr.Range(), key, "expected a size such as \"1MB\", \"512KiB\" or a number of bytes, got %q", v.AsString())
				return
			}
		default:
			d.problem(a.Expr.Range(), key, "expected a size such as \"1MB\", got %s", describe(v))
			return
		}
		if n < uint64(min) || n > uint64(max) {
			d.problem(a.Expr.Range(), key, "expected a size between %s and %s, got %s (%d bytes)",
				humanize.IBytes(uint64(min)), humanize.IBytes(uint64(max)), humanize.Bytes(n), n)
			return
		}
		*dst = int64(n)
	}
}

func (l Limits) merge(o *Limits) Limits {
	setDur(&l.HTTPSHandshakeTimeout, o.HTTPSHandshakeTimeout)
	setInt(&l.HTTPMaxConnsPerClient, o.HTTPMaxConnsPerClient)
	setDur(&l.RPCHandshakeTimeout, o.RPCHandshakeTimeout)
	setInt(&l.RPCMaxConnsPerClient, o.RPCMaxConnsPerClient)
	setInt(&l.RPCMaxStreamsPerSession, o.RPCMaxStreamsPerSession)
	setInt(&l.RPCMaxConns, o.RPCMaxConns)
	setInt(&l.HTTPMaxConns, o.HTTPMaxConns)
	setDur(&l.HTTPMaxBodySize, o.HTTPMaxBodySize)
	setInt(&l.MaxBlockingQueries, o.MaxBlockingQueries)
	setInt(&l.MaxBlockingQueriesPerClient, o.MaxBlockingQueriesPerClient)
	return l
}

// validate checks the merged block: every limit set and positive (a
// configuration built in code may skip the decoder), and the per-client
// bound of blocking queries within the total.
func (l Limits) validate() []error {
	var errs []error
	for _, f := range []struct {
		key string
		v   int64
	}{
		{"https_handshake_timeout", int64(l.HTTPSHandshakeTimeout)},
		{"http_max_conns_per_client", int64(l.HTTPMaxConnsPerClient)},
		{"rpc_handshake_timeout", int64(l.RPCHandshakeTimeout)},
		{"rpc_max_conns_per_client", int64(l.RPCMaxConnsPerClient)},
		{"rpc_max_streams_per_session", int64(l.RPCMaxStreamsPerSession)},
		{"rpc_max_conns", int64(l.RPCMaxConns)},
		{"http_max_conns", int64(l.HTTPMaxConns)},
		{"http_max_body_size", l.HTTPMaxBodySize},
		{"max_blocking_queries", int64(l.MaxBlockingQueries)},
		{"max_blocking_queries_per_client", int64(l.MaxBlockingQueriesPerClient)},
	} {
		if f.v <= 0 {
			errs = append(errs, fmt.Errorf("agent: limits.%s must be positive, got %d", f.key, f.v))
		}
	}
	if l.MaxBlockingQueriesPerClient > l.MaxBlockingQueries {
		errs = append(errs, fmt.Errorf("agent: limits.max_blocking_queries_per_client (%d) must not exceed limits.max_blocking_queries (%d)",
			l.MaxBlockingQueriesPerClient, l.MaxBlockingQueries))
	}
	return errs
}
