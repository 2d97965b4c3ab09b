package docker

import (
	"fmt"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// TaskConfig is a docker task's `config` block, decoded and checked
// against structs.DockerConfigSchema.
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
	UsernsMode       string
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

// ParseTaskConfig decodes a task's config block. It refuses, as job
// validation does (structs.ValidateDriverConfig), keys that are not in
// structs.DockerConfigSchema and values of the wrong kind, naming the
// key: a job stored before a rule is refused here in the same words.
func ParseTaskConfig(raw map[string]any) (*TaskConfig, error) {
	if err := structs.ValidateDriverConfig(Name, raw); err != nil {
		return nil, err
	}
	p := parser{raw: raw}
	c := &TaskConfig{
		Image:            p.str(structs.DockerConfigImage),
		Command:          p.str(structs.DockerConfigCommand),
		Args:             p.strs(structs.DockerConfigArgs),
		Entrypoint:       p.strs(structs.DockerConfigEntrypoint),
		WorkDir:          p.str(structs.DockerConfigWorkDir),
		Labels:           p.smap(structs.DockerConfigLabels),
		Ports:            p.strs(structs.DockerConfigPorts),
		NetworkMode:      p.str(structs.DockerConfigNetworkMode),
		Hostname:         p.str(structs.DockerConfigHostname),
		DNSServers:       p.strs(structs.DockerConfigDNSServers),
		DNSSearchDomains: p.strs(structs.DockerConfigDNSSearchDomains),
		DNSOptions:       p.strs(structs.DockerConfigDNSOptions),
		ExtraHosts:       p.strs(structs.DockerConfigExtraHosts),
		Volumes:          p.strs(structs.DockerConfigVolumes),
		VolumeDriver:     p.str(structs.DockerConfigVolumeDriver),
		Privileged:       p.boolean(structs.DockerConfigPrivileged),
		CapAdd:           p.strs(structs.DockerConfigCapAdd),
		CapDrop:          p.strs(structs.DockerConfigCapDrop),
		MemoryHardLimit:  p.integer(structs.DockerConfigMemoryHardLimit),
		CPUHardLimit:     p.boolean(structs.DockerConfigCPUHardLimit),
		CPUCFSPeriod:     p.integer(structs.DockerConfigCPUCFSPeriod),
		CPUSetCPUs:       p.str(structs.DockerConfigCPUSetCPUs),
		PidsLimit:        p.integer(structs.DockerConfigPidsLimit),
		Ulimit:           p.smap(structs.DockerConfigUlimit),
		Sysctl:           p.smap(structs.DockerConfigSysctl),
		ShmSize:          p.integer(structs.DockerConfigShmSize),
		SecurityOpt:      p.strs(structs.DockerConfigSecurityOpt),
		ReadonlyRootfs:   p.boolean(structs.DockerConfigReadonlyRootfs),
		Init:             p.boolean(structs.DockerConfigInit),
		IPCMode:          p.str(structs.DockerConfigIPCMode),
		PidMode:          p.str(structs.DockerConfigPidMode),
		UTSMode:          p.str(structs.DockerConfigUTSMode),
		UsernsMode:       p.str(structs.DockerConfigUsernsMode),
		TTY:              p.boolean(structs.DockerConfigTTY),
		Interactive:      p.boolean(structs.DockerConfigInteractive),
		AuthSoftFail:     p.boolean(structs.DockerConfigAuthSoftFail),
		ForcePull:        p.boolean(structs.DockerConfigForcePull),
		ImagePullTimeout: p.duration(structs.DockerConfigImagePullTimeout, DefaultImagePullTimeout),
	}
	for i, b := range p.blocks(structs.DockerConfigMount) {
		mp := parser{raw: b, path: fmt.Sprintf("mount[%d].", i)}
		m := Mount{Type: mp.str(structs.DockerMountType), Target: mp.str(structs.DockerMountTarget), Source: mp.str(structs.DockerMountSource), ReadOnly: mp.boolean(structs.DockerMountReadonly)}
		if bo := mp.block(structs.DockerMountBindOptions); bo != nil {
			m.Propagation = (&parser{raw: bo, path: mp.path + "bind_options."}).str(structs.DockerMountPropagation)
		}
		if vo := mp.block(structs.DockerMountVolumeOptions); vo != nil {
			vp := parser{raw: vo, path: mp.path + "volume_options."}
			m.VolumeNoCopy, m.VolumeLabels = vp.boolean(structs.DockerMountNoCopy), vp.smap(structs.DockerMountLabels)
			p.err = firstErr(p.err, vp.err)
		}
		if to := mp.block(structs.DockerMountTmpfsOptions); to != nil {
			tp := parser{raw: to, path: mp.path + "tmpfs_options."}
			m.TmpfsSize = tp.integer(structs.DockerMountTmpfsSize)
			_, m.hasTmpfsMode = to[structs.DockerMountTmpfsMode]
			m.TmpfsMode = tp.integer(structs.DockerMountTmpfsMode)
			p.err = firstErr(p.err, tp.err)
		}
		p.err = firstErr(p.err, mp.err)
		c.Mounts = append(c.Mounts, m)
	}
	if a := p.block(structs.DockerConfigAuth); a != nil {
		ap := parser{raw: a, path: "auth."}
		c.Auth = &Auth{Username: ap.str(structs.DockerAuthUsername), Password: ap.str(structs.DockerAuthPassword), Email: ap.str(structs.DockerAuthEmail), ServerAddress: ap.str(structs.DockerAuthServerAddress)}
		p.err = firstErr(p.err, ap.err)
	}
	if l := p.block(structs.DockerConfigLogging); l != nil {
		lp := parser{raw: l, path: "logging."}
		c.Logging = &Logging{Type: lp.str(structs.DockerLoggingType), Config: lp.smap(structs.DockerLoggingConfig)}
		if c.Logging.Type == "" {
			c.Logging.Type = lp.str(structs.DockerLoggingDriver)
		}
		p.err = firstErr(p.err, lp.err)
	}
	if h := p.block(structs.DockerConfigHealthchecks); h != nil {
		hp := parser{raw: h, path: "healthchecks."}
		c.HealthchecksOff = hp.boolean(structs.DockerHealthchecksDisable)
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
