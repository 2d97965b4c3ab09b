package docker

import (
	"fmt"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// PluginConfig is the agent's `plugin "docker" { config { ... } }` block,
// with Nomad's keys and defaults.
type PluginConfig struct {
	// Endpoint is the daemon's address ("unix:///var/run/docker.sock");
	// empty means the environment's DOCKER_HOST or the default socket.
	Endpoint string
	// AllowPrivileged lets tasks set privileged = true.
	AllowPrivileged bool
	// AllowCaps are the capabilities a task may cap_add (or keep); "all"
	// allows any.
	AllowCaps []string
	// VolumesEnabled lets tasks mount host paths and named volumes.
	VolumesEnabled bool
	// GC says what the driver collects.
	GC GCConfig
	// PullActivityTimeout fails a pull that makes no progress for this long.
	PullActivityTimeout time.Duration
	// InfraImage is the image of the pause container that holds the
	// network of an alloc in bridge, none or cni/* mode (sandbox.go);
	// InfraImagePullTimeout bounds its pull.
	InfraImage            string
	InfraImagePullTimeout time.Duration
}

// GCConfig is the plugin config's `gc` block.
type GCConfig struct {
	// Image removes an image once no task uses it, after ImageDelay.
	Image      bool
	ImageDelay time.Duration
	// Container removes a task's container when the task is destroyed.
	Container bool
	// Dangling is the reaper of containers Drover labelled but no longer
	// runs.
	Dangling DanglingConfig
}

// DanglingConfig is `gc { dangling_containers { ... } }`.
type DanglingConfig struct {
	Enabled bool
	// Period is how often the reaper looks.
	Period time.Duration
	// CreationGrace spares containers younger than this, which may belong
	// to a start still in progress.
	CreationGrace time.Duration
}

// DefaultAllowCaps are the capabilities Nomad's docker driver allows by
// default: Docker's own default set less NET_RAW.
var DefaultAllowCaps = []string{
	"audit_write", "chown", "dac_override", "fowner", "fsetid", "kill", "mknod",
	"net_bind_service", "setfcap", "setgid", "setpcap", "setuid", "sys_chroot",
}

// DefaultPluginConfig is the config of an agent that has no docker plugin
// block, with Nomad's defaults.
func DefaultPluginConfig() PluginConfig {
	return PluginConfig{
		AllowCaps: DefaultAllowCaps,
		GC: GCConfig{
			Image: true, ImageDelay: 3 * time.Minute, Container: true,
			Dangling: DanglingConfig{Enabled: true, Period: 5 * time.Minute, CreationGrace: 5 * time.Minute},
		},
		PullActivityTimeout: 2 * time.Minute,
		// Nomad's defaults.
		InfraImage:            "registry.k8s.io/pause-amd64:3.3",
		InfraImagePullTimeout: 5 * time.Minute,
	}
}

// pluginKeys are the plugin config keys Drover reads; other keys are
// refused so that a misspelt one is not silently ignored.
var pluginKeys = &structs.DriverConfigSchema{Keys: map[string]structs.DriverConfigKey{
	"endpoint":                 {Kind: structs.KindString},
	"allow_privileged":         {Kind: structs.KindBool},
	"allow_caps":               {Kind: structs.KindStrings},
	"pull_activity_timeout":    {Kind: structs.KindDuration},
	"infra_image":              {Kind: structs.KindString},
	"infra_image_pull_timeout": {Kind: structs.KindDuration},
	"volumes": {Kind: structs.KindBlock, Block: &structs.DriverConfigSchema{Keys: map[string]structs.DriverConfigKey{
		"enabled": {Kind: structs.KindBool},
	}}},
	"gc": {Kind: structs.KindBlock, Block: &structs.DriverConfigSchema{Keys: map[string]structs.DriverConfigKey{
		"image":       {Kind: structs.KindBool},
		"image_delay": {Kind: structs.KindDuration},
		"container":   {Kind: structs.KindBool},
		"dangling_containers": {Kind: structs.KindBlock, Block: &structs.DriverConfigSchema{Keys: map[string]structs.DriverConfigKey{
			"enabled":        {Kind: structs.KindBool},
			"period":         {Kind: structs.KindDuration},
			"creation_grace": {Kind: structs.KindDuration},
		}}},
	}}},
}}

// ParsePluginConfig decodes the plugin block's config over the defaults.
func ParsePluginConfig(raw map[string]any) (PluginConfig, error) {
	c := DefaultPluginConfig()
	if len(raw) == 0 {
		return c, nil
	}
	if err := pluginKeys.Validate(fmt.Sprintf("plugin %q", Name), raw); err != nil {
		return c, err
	}
	p := parser{raw: raw}
	c.Endpoint = p.str("endpoint")
	c.AllowPrivileged = p.boolean("allow_privileged")
	if _, ok := raw["allow_caps"]; ok {
		c.AllowCaps = p.strs("allow_caps")
	}
	c.PullActivityTimeout = p.duration("pull_activity_timeout", c.PullActivityTimeout)
	if s := p.str("infra_image"); s != "" {
		c.InfraImage = s
	}
	c.InfraImagePullTimeout = p.duration("infra_image_pull_timeout", c.InfraImagePullTimeout)
	if v := p.block("volumes"); v != nil {
		vp := parser{raw: v, path: "volumes."}
		c.VolumesEnabled = vp.boolean("enabled")
		p.err = firstErr(p.err, vp.err)
	}
	if g := p.block("gc"); g != nil {
		gp := parser{raw: g, path: "gc."}
		c.GC.Image = boolOr(&gp, g, "image", c.GC.Image)
		c.GC.ImageDelay = gp.duration("image_delay", c.GC.ImageDelay)
		c.GC.Container = boolOr(&gp, g, "container", c.GC.Container)
		if d := gp.block("dangling_containers"); d != nil {
			dp := parser{raw: d, path: "gc.dangling_containers."}
			c.GC.Dangling.Enabled = boolOr(&dp, d, "enabled", c.GC.Dangling.Enabled)
			c.GC.Dangling.Period = dp.duration("period", c.GC.Dangling.Period)
			c.GC.Dangling.CreationGrace = dp.duration("creation_grace", c.GC.Dangling.CreationGrace)
			gp.err = firstErr(gp.err, dp.err)
		}
		p.err = firstErr(p.err, gp.err)
	}
	if p.err != nil {
		return c, fmt.Errorf("plugin %q: %w", Name, p.err)
	}
	return c, nil
}

// boolOr reads a boolean that keeps its default when absent (Nomad's gc
// switches default to true).
func boolOr(p *parser, raw map[string]any, k string, def bool) bool {
	if _, ok := raw[k]; !ok {
		return def
	}
	v, err := drivers.ConfigBool(raw, k)
	p.wrap(err)
	return v
}
