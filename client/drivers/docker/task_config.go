package docker

import (
	"fmt"
	"time"

	"github.com/drover-sched/drover/client/drivers"
)

// TaskConfig is a docker task's `config` block, decoded and checked
// against ConfigSchema.
type TaskConfig struct {
	Image            string
	Command          string
	Args             []string
	Entrypoint       []string
	WorkDir          string
	Labels           map[string]string
	Ports            []string
	NetworkMode      string
	Hostname         string
	DNSServers       []string
	DNSSearchDomains []string
	DNSOptions       []string
	ExtraHosts       []string
	Volumes          []string
	VolumeDriver     string
	Mounts           []Mount
	Privileged       bool
	CapAdd           []string
	CapDrop          []string
	MemoryHardLimit  int64
	CPUHardLimit     bool
	CPUCFSPeriod     int64
	CPUSetCPUs       string
	PidsLimit        int64
	Ulimit           map[string]string
	Sysctl           map[string]string
	ShmSize          int64
	SecurityOpt      []string
	ReadonlyRootfs   bool
	Init             bool
	IPCMode          string
	PidMode          string
	UTSMode          string
	TTY              bool
	Interactive      bool
	Auth             *Auth
	AuthSoftFail     bool
	ForcePull        bool
	ImagePullTimeout time.Duration
	Logging          *Logging
	HealthchecksOff  bool
}

// Mount is one `mount` block.
type Mount struct {
	Type         string // bind (default), volume, tmpfs
	Target       string
	Source       string
	ReadOnly     bool
	Propagation  string
	VolumeNoCopy bool
	VolumeLabels map[string]string
	TmpfsSize    int64
	TmpfsMode    int64
	hasTmpfsMode bool
}

// Auth is the `auth` block: registry credentials for the pull.
type Auth struct {
	Username string
	Password string
	// Email is accepted for Nomad job files and not sent: the Engine
	// has ignored it since API 1.23.
	Email         string
	ServerAddress string
}

// Logging is the `logging` block: the container's docker log driver.
type Logging struct {
	Type   string
	Config map[string]string
}

// DefaultImagePullTimeout is Nomad's image_pull_timeout default.
const DefaultImagePullTimeout = 5 * time.Minute

// ParseTaskConfig decodes a task's config block. It refuses keys that are
// not in ConfigSchema and values of the wrong kind, naming the key.
func ParseTaskConfig(raw map[string]any) (*TaskConfig, error) {
	if err := checkKeys(raw, ConfigSchema, ""); err != nil {
		return nil, err
	}
	p := parser{raw: raw}
	c := &TaskConfig{
		Image:            p.str("image"),
		Command:          p.str("command"),
		Args:             p.strs("args"),
		Entrypoint:       p.strs("entrypoint"),
		WorkDir:          p.str("work_dir"),
		Labels:           p.smap("labels"),
		Ports:            p.strs("ports"),
		NetworkMode:      p.str("network_mode"),
		Hostname:         p.str("hostname"),
		DNSServers:       p.strs("dns_servers"),
		DNSSearchDomains: p.strs("dns_search_domains"),
		DNSOptions:       p.strs("dns_options"),
		ExtraHosts:       p.strs("extra_hosts"),
		Volumes:          p.strs("volumes"),
		VolumeDriver:     p.str("volume_driver"),
		Privileged:       p.boolean("privileged"),
		CapAdd:           p.strs("cap_add"),
		CapDrop:          p.strs("cap_drop"),
		MemoryHardLimit:  p.integer("memory_hard_limit"),
		CPUHardLimit:     p.boolean("cpu_hard_limit"),
		CPUCFSPeriod:     p.integer("cpu_cfs_period"),
		CPUSetCPUs:       p.str("cpuset_cpus"),
		PidsLimit:        p.integer("pids_limit"),
		Ulimit:           p.smap("ulimit"),
		Sysctl:           p.smap("sysctl"),
		ShmSize:          p.integer("shm_size"),
		SecurityOpt:      p.strs("security_opt"),
		ReadonlyRootfs:   p.boolean("readonly_rootfs"),
		Init:             p.boolean("init"),
		IPCMode:          p.str("ipc_mode"),
		PidMode:          p.str("pid_mode"),
		UTSMode:          p.str("uts_mode"),
		TTY:              p.boolean("tty"),
		Interactive:      p.boolean("interactive"),
		AuthSoftFail:     p.boolean("auth_soft_fail"),
		ForcePull:        p.boolean("force_pull"),
		ImagePullTimeout: p.duration("image_pull_timeout", DefaultImagePullTimeout),
	}
	for i, b := range p.blocks("mount") {
		mp := parser{raw: b, path: fmt.Sprintf("mount[%d].", i)}
		m := Mount{Type: mp.str("type"), Target: mp.str("target"), Source: mp.str("source"), ReadOnly: mp.boolean("readonly")}
		if bo := mp.block("bind_options"); bo != nil {
			m.Propagation = (&parser{raw: bo, path: mp.path + "bind_options."}).str("propagation")
		}
		if vo := mp.block("volume_options"); vo != nil {
			vp := parser{raw: vo, path: mp.path + "volume_options."}
			m.VolumeNoCopy, m.VolumeLabels = vp.boolean("no_copy"), vp.smap("labels")
			p.err = firstErr(p.err, vp.err)
		}
		if to := mp.block("tmpfs_options"); to != nil {
			tp := parser{raw: to, path: mp.path + "tmpfs_options."}
			m.TmpfsSize = tp.integer("size")
			_, m.hasTmpfsMode = to["mode"]
			m.TmpfsMode = tp.integer("mode")
			p.err = firstErr(p.err, tp.err)
		}
		p.err = firstErr(p.err, mp.err)
		c.Mounts = append(c.Mounts, m)
	}
	if a := p.block("auth"); a != nil {
		ap := parser{raw: a, path: "auth."}
		c.Auth = &Auth{Username: ap.str("username"), Password: ap.str("password"), Email: ap.str("email"), ServerAddress: ap.str("server_address")}
		p.err = firstErr(p.err, ap.err)
	}
	if l := p.block("logging"); l != nil {
		lp := parser{raw: l, path: "logging."}
		c.Logging = &Logging{Type: lp.str("type"), Config: lp.smap("config")}
		if c.Logging.Type == "" {
			c.Logging.Type = lp.str("driver")
		}
		p.err = firstErr(p.err, lp.err)
	}
	if h := p.block("healthchecks"); h != nil {
		hp := parser{raw: h, path: "healthchecks."}
		c.HealthchecksOff = hp.boolean("disable")
		p.err = firstErr(p.err, hp.err)
	}
	if p.err != nil {
		return nil, p.err
	}
	if c.Image == "" {
		return nil, fmt.Errorf(`docker config: "image" is missing (the image to run, such as "redis:7")`)
	}
	return c, nil
}

// parser reads typed values out of one config map, keeping the first
// error so that the decode above reads as a list of fields.
type parser struct {
	raw  map[string]any
	path string
	err  error
}

func (p *parser) wrap(err error) {
	if err != nil && p.err == nil {
		p.err = fmt.Errorf("docker config: %s%w", p.path, err)
	}
}

func (p *parser) str(k string) string {
	v, err := drivers.ConfigString(p.raw, k)
	p.wrap(err)
	return v
}

func (p *parser) strs(k string) []string {
	v, err := drivers.ConfigStrings(p.raw, k)
	p.wrap(err)
	return v
}

func (p *parser) boolean(k string) bool {
	v, err := drivers.ConfigBool(p.raw, k)
	p.wrap(err)
	return v
}

func (p *parser) integer(k string) int64 {
	v, err := drivers.ConfigInt(p.raw, k, 0)
	p.wrap(err)
	return v
}

func (p *parser) duration(k string, def time.Duration) time.Duration {
	v, err := drivers.ConfigDuration(p.raw, k)
	p.wrap(err)
	if v == 0 {
		return def
	}
	return v
}

func (p *parser) smap(k string) map[string]string {
	v, err := asStringMap(p.raw[k], p.path+k)
	if err != nil && p.err == nil {
		p.err = err
	}
	return v
}

func (p *parser) blocks(k string) []map[string]any {
	v, err := asBlocks(p.raw[k], p.path+k)
	if err != nil && p.err == nil {
		p.err = err
	}
	return v
}

func (p *parser) block(k string) map[string]any {
	bs := p.blocks(k)
	if len(bs) == 0 {
		return nil
	}
	return bs[0]
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
