package config

import (
	"maps"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/drover-sched/drover/nomad"
)

// maxEventBufferSize bounds server.event_buffer_size: a million events
// may hold a few GiB once encoded.
const maxEventBufferSize = 1 << 20

// Keys Nomad's agent file has and Drover ignores on purpose, with the
// reason shown in the warning. Keys in neither list get a generic
// "unknown key" warning.
var ignoredTop = map[string]string{
	"consul":                      "no Consul integration",
	"vault":                       "no Vault integration",
	"ui":                          "no web UI",
	"autopilot":                   "no autopilot",
	"audit":                       "no audit log",
	"sentinel":                    "no Sentinel",
	"reporting":                   "no license reporting",
	"keyring":                     "no keyring",
	"leave_on_interrupt":          "servers leave raft only through the operator API",
	"leave_on_terminate":          "servers leave raft only through the operator API",
	"enable_syslog":               "logs go to stderr",
	"syslog_facility":             "logs go to stderr",
	"log_file":                    "logs go to stderr",
	"log_rotate_bytes":            "logs go to stderr",
	"log_rotate_duration":         "logs go to stderr",
	"log_rotate_max_files":        "logs go to stderr",
	"log_include_location":        "logs go to stderr",
	"disable_update_check":        "Drover never checks for updates",
	"disable_anonymous_signature": "Drover never checks for updates",
	"plugin_dir":                  "drivers are built in",
	"enable_debug":                "no debug endpoints",
	"http_api_response_headers":   "not implemented",
}

var ignoredServer = map[string]string{
	"data_dir":           "use the top-level data_dir",
	"raft_protocol":      "raft protocol 3 is always used",
	"encrypt":            "no gossip encryption (no serf)",
	"start_join":         "use server_join { retry_join }",
	"rejoin_after_leave": "no serf",
	"redundancy_zone":    "no autopilot",
	"upgrade_version":    "no autopilot",
	"non_voting_server":  "every server votes",
	"license_path":       "no licensing",
}

var ignoredClient = map[string]string{
	"state_dir": "state lives under data_dir",
	"alloc_dir": "alloc dirs live under data_dir",
	"template":  "templates are not rendered yet",
}

// decodeTop decodes the top level of an agent file into c.
func (d *decoder) decodeTop(body hcl.Body, c *Config) {
	d.walk(body, &section{
		attrs: map[string]attrFunc{
			"name":       strAttr(&c.Name),
			"datacenter": strAttr(&c.Datacenter),
			"region":     strAttr(&c.Region),
			"data_dir":   strAttr(&c.DataDir),
			"bind_addr":  strAttr(&c.BindAddr),
			"log_level":  oneOfAttr(&c.LogLevel, "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF"),
			"log_json":   boolAttr(&c.LogJSON),
		},
		blocks: map[string]blockSpec{
			"ports":     {decode: func(d *decoder, b *hcl.Block) { d.decodePorts(b.Body, &c.Ports) }},
			"addresses": {decode: func(d *decoder, b *hcl.Block) { d.decodeAddresses(b.Body, &c.Addresses) }},
			"advertise": {decode: func(d *decoder, b *hcl.Block) { d.decodeAdvertise(b.Body, &c.Advertise) }},
			"server":    {decode: func(d *decoder, b *hcl.Block) { d.decodeServer(b.Body, &c.Server) }},
			"client":    {decode: func(d *decoder, b *hcl.Block) { d.decodeClient(b.Body, &c.Client) }},
			"tls":       {decode: func(d *decoder, b *hcl.Block) { d.decodeTLS(b.Body, &c.TLS) }},
			"acl":       {decode: func(d *decoder, b *hcl.Block) { d.decodeACL(b.Body, &c.ACL) }},
			"limits":    {decode: func(d *decoder, b *hcl.Block) { d.decodeLimits(b.Body, &c.Limits) }},
			// metrics (issue 15)
			"telemetry": {decode: func(d *decoder, b *hcl.Block) { d.decodeTelemetry(b.Body, &c.Telemetry) }},
			"plugin": {labels: []string{"name"}, decode: func(d *decoder, b *hcl.Block) {
				if p := d.decodePlugin(b); p != nil {
					if c.Plugins == nil {
						c.Plugins = map[string]*PluginConfig{}
					}
					c.Plugins[p.Name] = p
				}
			}},
		},
		ignored: ignoredTop,
	})
}

func (d *decoder) decodePorts(body hcl.Body, p *Ports) {
	d.walk(body, &section{
		path: "ports",
		attrs: map[string]attrFunc{
			"http": portAttr(&p.HTTP),
			"rpc":  portAttr(&p.RPC),
			"serf": func(d *decoder, key string, a *hcl.Attribute) {
				portAttr(&p.Serf)(d, key, a)
				d.warn(a.NameRange, "%q is ignored: Drover does not use serf; servers join over RPC", key)
			},
		},
	})
}

func (d *decoder) decodeAddresses(body hcl.Body, a *Addresses) {
	d.walk(body, &section{
		path:    "addresses",
		attrs:   map[string]attrFunc{"http": strAttr(&a.HTTP), "rpc": strAttr(&a.RPC)},
		ignored: map[string]string{"serf": "no serf"},
	})
}

func (d *decoder) decodeAdvertise(body hcl.Body, a *Advertise) {
	d.walk(body, &section{
		path: "advertise",
		attrs: map[string]attrFunc{
			"http": strAttr(&a.HTTP),
			"rpc":  strAttr(&a.RPC),
			"serf": func(d *decoder, key string, at *hcl.Attribute) {
				strAttr(&a.Serf)(d, key, at)
				d.warn(at.NameRange, "%q is ignored: Drover does not use serf", key)
			},
		},
	})
}

func (d *decoder) decodeServerJoin(path string, body hcl.Body, j *ServerJoin) {
	d.walk(body, &section{
		path: path,
		attrs: map[string]attrFunc{
			"retry_join":     listAttr(&j.RetryJoin),
			"retry_interval": durAttr(&j.RetryInterval),
			"retry_max":      intAttr(&j.RetryMax),
		},
		ignored: map[string]string{"start_join": "use retry_join"},
	})
}

func (d *decoder) decodeServer(body hcl.Body, s *ServerConfig) {
	d.walk(body, &section{
		path: "server",
		attrs: map[string]attrFunc{
			"enabled":          boolAttr(&s.Enabled),
			"bootstrap_expect": intAttr(&s.BootstrapExpect),
			// The pre-server_join spellings, still common in Nomad files.
			"retry_join":                listAttr(&s.ServerJoin.RetryJoin),
			"retry_interval":            durAttr(&s.ServerJoin.RetryInterval),
			"retry_max":                 intAttr(&s.ServerJoin.RetryMax),
			"num_schedulers":            intPtrAttr(&s.NumSchedulers),
			"enabled_schedulers":        schedulersAttr(&s.EnabledSchedulers),
			"heartbeat_grace":           durAttr(&s.HeartbeatGrace),
			"min_heartbeat_ttl":         durAttr(&s.MinHeartbeatTTL),
			"max_heartbeats_per_second": floatAttr(&s.MaxHeartbeatsPerSecond, 0, 1e9),
			"failover_heartbeat_ttl":    durAttr(&s.FailoverHeartbeatTTL),
			"reconnect_report_window":   durAttr(&s.ReconnectReportWindow),
			"eval_gc_threshold":         durAttr(&s.EvalGCThreshold),
			"batch_eval_gc_threshold":   durAttr(&s.BatchEvalGCThreshold),
			"job_gc_threshold":          durAttr(&s.JobGCThreshold),
			"node_gc_threshold":         durAttr(&s.NodeGCThreshold),
			"deployment_gc_threshold":   durAttr(&s.DeploymentGCThreshold),
			"eval_gc_interval":          durAttr(&s.EvalGCInterval),
			"job_gc_interval":           durAttr(&s.JobGCInterval),
			"node_gc_interval":          durAttr(&s.NodeGCInterval),
			"deployment_gc_interval":    durAttr(&s.DeploymentGCInterval),
			"job_max_source_size":       sizeAttr(&s.JobMaxSourceSize, 1<<10, nomad.MaxJobMaxSourceSize),
			"job_max_count":             limitIntAttr(&s.JobMaxCount, 1<<30),
			"job_max_allocs":            limitIntAttr(&s.JobMaxAllocs, 1<<30),
			// Event stream (issue 15, events).
			"event_buffer_size": limitIntAttr(&s.EventBufferSize, maxEventBufferSize),
			// Raft timing (issue 16, raftmult).
			"raft_multiplier": boundedIntAttr(&s.RaftMultiplier, 1, nomad.MaxRaftMultiplier),
		},
		blocks: map[string]blockSpec{
			"server_join": {decode: func(d *decoder, b *hcl.Block) { d.decodeServerJoin("server.server_join", b.Body, &s.ServerJoin) }},
			"default_scheduler_config": {decode: func(d *decoder, b *hcl.Block) {
				d.decodeDefaultSchedulerConfig(b.Body, &s.DefaultSchedulerConfig)
			}},
		},
		ignored: ignoredServer,
	})
}

// schedulersAttr accepts the scheduler types a server can run.
func schedulersAttr(dst *[]string) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		var list []string
		listAttr(&list)(d, key, a)
		for _, s := range list {
			switch s {
			case "service", "batch", "system", "sysbatch", "_core":
			default:
				d.problem(a.Expr.Range(), key, "expected scheduler types among service, batch, system, sysbatch, _core, got %q", s)
				return
			}
		}
		if list != nil {
			*dst = list
		}
	}
}

func (d *decoder) decodeClient(body hcl.Body, c *ClientConfig) {
	attrs := map[string]attrFunc{
		"enabled":                  boolAttr(&c.Enabled),
		"servers":                  listAttr(&c.Servers),
		"node_class":               strAttr(&c.NodeClass),
		"node_pool":                strAttr(&c.NodePool),
		"cpu_total_compute":        intAttr(&c.CPUTotalCompute),
		"memory_total_mb":          intAttr(&c.MemoryTotalMB),
		"network_interface":        strAttr(&c.NetworkInterface),
		"gc_interval":              durAttr(&c.GCInterval),
		"gc_max_allocs":            intAttr(&c.GCMaxAllocs),
		"gc_disk_usage_threshold":  floatAttr(&c.GCDiskUsageThreshold, 0, 100),
		"gc_inode_usage_threshold": floatAttr(&c.GCInodeUsageThreshold, 0, 100),
		"min_dynamic_port":         portAttr(&c.MinDynamicPort),
		"max_dynamic_port":         portAttr(&c.MaxDynamicPort),
	}
	maps.Copy(attrs, networkAttrs(&c.Network))
	d.walk(body, &section{
		path:  "client",
		attrs: attrs,
		blocks: map[string]blockSpec{
			"server_join":  {decode: func(d *decoder, b *hcl.Block) { d.decodeServerJoin("client.server_join", b.Body, &c.ServerJoin) }},
			"reserved":     {decode: func(d *decoder, b *hcl.Block) { d.decodeReserved(b.Body, &c.Reserved) }},
			"artifact":     {decode: func(d *decoder, b *hcl.Block) { d.decodeArtifact(b.Body, &c.Artifact) }},
			"host_volume":  {labels: []string{"name"}, decode: func(d *decoder, b *hcl.Block) { d.decodeHostVolume(b, c) }},
			"host_network": {labels: []string{"name"}, decode: func(d *decoder, b *hcl.Block) { d.decodeHostNetwork(b, c) }},
		},
		maps: map[string]func(map[string]string){
			"meta":    func(m map[string]string) { c.Meta = mergeMap(c.Meta, m) },
			"options": func(m map[string]string) { c.Options = mergeMap(c.Options, m) },
			// The exec driver's chroot; an /etc in it is never mapped whole
			// (see client/drivers/exec).
			"chroot_env": func(m map[string]string) { c.ChrootEnv = mergeMap(c.ChrootEnv, m) },
		},
		ignored: ignoredClient,
	})
}

func (d *decoder) decodeReserved(body hcl.Body, r *Reserved) {
	d.walk(body, &section{
		path: "client.reserved",
		attrs: map[string]attrFunc{
			"cpu":            intAttr(&r.CPU),
			"memory":         intAttr(&r.MemoryMB),
			"disk":           intAttr(&r.DiskMB),
			"reserved_ports": portSpecAttr(&r.ReservedPorts),
		},
		ignored: map[string]string{"cores": "cores cannot be reserved yet"},
	})
}

// Plugins Drover has built in, by the names Nomad's files use.
var knownPlugins = map[string]bool{"raw_exec": true, "exec": true, "mock_driver": true, "mock": true, "docker": true}

// decodePlugin reads `plugin "name" { config { ... } }`. A plugin Drover
// does not have is a warning: the agent starts, and jobs asking for that
// driver find no node.
func (d *decoder) decodePlugin(b *hcl.Block) *PluginConfig {
	p := &PluginConfig{Name: b.Labels[0], Config: map[string]any{}}
	if !knownPlugins[p.Name] {
		d.warn(b.DefRange, "unknown plugin %q (built-in drivers: raw_exec, exec, docker, mock_driver); ignored", p.Name)
		return nil
	}
	d.walk(b.Body, &section{
		path: "plugin." + p.Name,
		blocks: map[string]blockSpec{
			"config": {decode: func(d *decoder, cb *hcl.Block) { d.decodePluginConfig(p, cb.Body) }},
		},
		ignored: map[string]string{"args": "drivers are built in"},
	})
	return p
}

func (d *decoder) decodePluginConfig(p *PluginConfig, body hcl.Body) {
	if syn, ok := body.(*hclsyntax.Body); ok && len(syn.Blocks) > 0 {
		// Nested blocks (docker's gc, volumes): the driver checks the keys.
		d.decodeNestedConfig(p.Config, syn, "plugin."+p.Name+".config.")
		return
	}
	attrs, diags := body.JustAttributes()
	d.addDiags(diags)
	for name, a := range attrs {
		key := "plugin." + p.Name + ".config." + name
		if name == "enabled" {
			var b bool
			boolAttr(&b)(d, key, a)
			p.Config[name] = b
			continue
		}
		if v, ok := d.value(a.Expr); ok {
			p.Config[name] = goValue(v)
		}
	}
}

// decodeNestedConfig reads a plugin config body with blocks into plain
// values, each block a map under its type (a repeated block the last one):
// `gc { image = false }` becomes {"gc": {"image": false}}.
func (d *decoder) decodeNestedConfig(out map[string]any, body *hclsyntax.Body, path string) {
	for name, a := range body.Attributes {
		if v, ok := d.value(a.Expr); ok {
			out[name] = goValue(v)
		}
	}
	for _, b := range body.Blocks {
		if len(b.Labels) > 0 {
			d.warn(b.DefRange(), "%s%s: labelled blocks are not read; ignored", path, b.Type)
			continue
		}
		m := map[string]any{}
		d.decodeNestedConfig(m, b.Body, path+b.Type+".")
		out[b.Type] = m
	}
}
