package structs

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// TaskGroup is a set of tasks placed together on one node. Count copies of it
// run, each an allocation named job.group[index].
type TaskGroup struct {
	Name                      string
	Count                     int
	Update                    *UpdateStrategy
	Migrate                   *MigrateStrategy
	Constraints               []*Constraint
	RestartPolicy             *RestartPolicy
	Tasks                     []*Task
	EphemeralDisk             *EphemeralDisk
	Meta                      map[string]string
	ReschedulePolicy          *ReschedulePolicy
	Affinities                []*Affinity
	Spreads                   []*Spread
	Networks                  Networks
	Services                  []*Service
	Volumes                   map[string]*VolumeRequest
	ShutdownDelay             *time.Duration
	StopAfterClientDisconnect *time.Duration
	MaxClientDisconnect       *time.Duration
	PreventRescheduleOnLost   bool
	Disconnect                *DisconnectStrategy
	// Scaling is the group's scaling block: the bounds every scaling
	// request (and registration) must respect. Nil means no bounds.
	Scaling *ScalingPolicy
}

// Canonicalize fills defaults from the job type, and folds the legacy
// max_client_disconnect / stop_after_client_disconnect fields into the
// disconnect block so the rest of Drover reads one place.
func (tg *TaskGroup) Canonicalize(job *Job) {
	if tg.RestartPolicy == nil {
		tg.RestartPolicy = DefaultRestartPolicy(job.Type)
	}
	if tg.ReschedulePolicy == nil {
		tg.ReschedulePolicy = DefaultReschedulePolicy(job.Type)
	} else if tg.ReschedulePolicy.DelayFunction == "" {
		tg.ReschedulePolicy.DelayFunction = DelayFunctionConstant
	}
	if tg.EphemeralDisk == nil {
		tg.EphemeralDisk = DefaultEphemeralDisk()
	}
	if tg.Migrate == nil && job.Type == JobTypeService {
		tg.Migrate = DefaultMigrateStrategy()
	}
	if job.Type == JobTypeService && tg.Update == nil && job.Update.MaxParallel > 0 {
		u := job.Update
		tg.Update = &u
	}
	if tg.MaxClientDisconnect != nil || tg.StopAfterClientDisconnect != nil {
		if tg.Disconnect == nil {
			tg.Disconnect = &DisconnectStrategy{}
		}
		if tg.MaxClientDisconnect != nil && tg.Disconnect.LostAfter == 0 {
			tg.Disconnect.LostAfter = *tg.MaxClientDisconnect
		}
		if tg.StopAfterClientDisconnect != nil && tg.Disconnect.StopOnClientAfter == nil {
			v := *tg.StopAfterClientDisconnect
			tg.Disconnect.StopOnClientAfter = &v
		}
	}
	if tg.Disconnect != nil {
		tg.Disconnect.Canonicalize()
	}
	if tg.Scaling != nil {
		tg.Scaling.canonicalize(job, tg)
	}
	for _, c := range tg.Constraints {
		c.Canonicalize()
	}
	for _, n := range tg.Networks {
		n.Canonicalize()
	}
	for _, t := range tg.Tasks {
		t.Canonicalize(job, tg)
	}
}

func (tg *TaskGroup) validate(job *Job, p problems) {
	if tg.Name == "" {
		p.add("group name is missing")
	} else {
		validateGroupName(p, tg.Name)
	}
	if tg.Count < 0 {
		p.add("count must be >= 0, got %d", tg.Count)
	}
	if (job.Type == JobTypeSystem || job.Type == JobTypeSysBatch) && tg.Count > 1 {
		p.add("%s jobs run one allocation per node; count must be 0 or 1, got %d", job.Type, tg.Count)
	}
	if len(tg.Tasks) == 0 {
		p.add("group has no tasks (add a task block)")
	}
	if tg.RestartPolicy != nil {
		tg.RestartPolicy.validate(p)
	} else {
		p.add("restart policy is missing")
	}
	if tg.ReschedulePolicy != nil {
		if job.Type == JobTypeSystem || job.Type == JobTypeSysBatch {
			if tg.ReschedulePolicy.Enabled() {
				p.add("%s jobs may not have a reschedule block", job.Type)
			}
		} else {
			tg.ReschedulePolicy.validate(p)
		}
	}
	if tg.Disconnect != nil {
		tg.Disconnect.validate(p)
	}
	if tg.Update != nil {
		tg.Update.validate(p)
	}
	if tg.Scaling != nil {
		tg.Scaling.validate(tg, p.at("scaling"))
	}
	if tg.EphemeralDisk != nil && tg.EphemeralDisk.SizeMB <= 0 {
		p.add("ephemeral_disk.size must be > 0 (MB), got %d", tg.EphemeralDisk.SizeMB)
	}
	validateEach(p, "constraint", tg.Constraints)
	validateEach(p, "affinity", tg.Affinities)
	validateEach(p, "spread", tg.Spreads)
	if len(tg.Networks) > 1 {
		p.add("only one network block is allowed per group, got %d", len(tg.Networks))
	}
	labels := map[string]bool{}
	for i, n := range tg.Networks {
		n.validate(p.at("network[" + itoa(i) + "]"))
		for _, port := range append(append([]Port(nil), n.ReservedPorts...), n.DynamicPorts...) {
			labels[port.Label] = true
		}
	}
	seen := map[string]bool{}
	leaders := 0
	for _, t := range tg.Tasks {
		if seen[t.Name] && t.Name != "" {
			p.add("task %q is defined twice", t.Name)
		}
		seen[t.Name] = true
		if t.Leader {
			leaders++
		}
		t.validate(job, tg, p.at(`task "`+t.Name+`"`))
	}
	if leaders > 1 {
		p.add("only one task may be the leader, %d are", leaders)
	}
	for _, name := range slices.Sorted(maps.Keys(tg.Volumes)) {
		tg.Volumes[name].validate(name, p.at(`volume "`+name+`"`))
	}
	validateLogStorage(tg, p)
	for i, s := range tg.Services {
		if s.PortLabel != "" && len(tg.Networks) > 0 && !labels[s.PortLabel] && !isNumeric(s.PortLabel) {
			p.add("service[%d] %q: port %q is not a port label of the group network", i, s.Name, s.PortLabel)
		}
	}
	// Service checks (issue 13, health): service_check.go.
	validateServiceChecks(tg, p)
}

// Copy returns a deep copy.
func (tg *TaskGroup) Copy() *TaskGroup {
	if tg == nil {
		return nil
	}
	c := *tg
	c.Update = tg.Update.Copy()
	c.Migrate = tg.Migrate.Copy()
	c.Constraints = copyEach(tg.Constraints)
	c.RestartPolicy = tg.RestartPolicy.Copy()
	c.Tasks = make([]*Task, len(tg.Tasks))
	for i, t := range tg.Tasks {
		c.Tasks[i] = t.Copy()
	}
	c.EphemeralDisk = copyPtr(tg.EphemeralDisk)
	c.Meta = maps.Clone(tg.Meta)
	c.ReschedulePolicy = tg.ReschedulePolicy.Copy()
	c.Affinities = copyEach(tg.Affinities)
	c.Spreads = copyEach(tg.Spreads)
	c.Networks = tg.Networks.Copy()
	c.Services = copyServices(tg.Services)
	if tg.Volumes != nil {
		c.Volumes = make(map[string]*VolumeRequest, len(tg.Volumes))
		for k, v := range tg.Volumes {
			vc := *v
			if v.MountOptions != nil {
				mo := *v.MountOptions
				mo.MountFlags = copyStrings(mo.MountFlags)
				vc.MountOptions = &mo
			}
			c.Volumes[k] = &vc
		}
	}
	c.Disconnect = tg.Disconnect.Copy()
	c.ShutdownDelay = copyPtr(tg.ShutdownDelay)
	c.StopAfterClientDisconnect = copyPtr(tg.StopAfterClientDisconnect)
	c.MaxClientDisconnect = copyPtr(tg.MaxClientDisconnect)
	c.Scaling = tg.Scaling.Copy()
	return &c
}

// LookupTask returns the named task or nil.
func (tg *TaskGroup) LookupTask(name string) *Task {
	for _, t := range tg.Tasks {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Task is one process (or container) in a group, run by a driver.
type Task struct {
	Name          string
	Driver        string
	User          string
	Config        map[string]any
	Env           map[string]string
	Services      []*Service
	Constraints   []*Constraint
	Affinities    []*Affinity
	Resources     *Resources
	RestartPolicy *RestartPolicy
	Meta          map[string]string
	KillTimeout   time.Duration
	LogConfig     *LogConfig
	Artifacts     []*TaskArtifact
	Templates     []*Template
	Leader        bool
	ShutdownDelay time.Duration
	KillSignal    string
	Lifecycle     *TaskLifecycleConfig
	// DispatchPayload names the file in the task's local directory that
	// a dispatched job's payload is written to before the task starts.
	// VolumeMounts bind the group's host volumes into the task (exec,
	// docker; see host_volume.go). Kind is kept as data.
	DispatchPayload *DispatchPayloadConfig
	VolumeMounts    []*VolumeMount
	Kind            string
}

// DispatchPayloadConfig is a task's `dispatch_payload` block: File is
// relative to the task's local directory and may not leave it.
type DispatchPayloadConfig struct {
	File string
}

// VolumeMount is a task's `volume_mount` block: Volume names a group
// volume, Destination is where the task sees it. SELinuxLabel is kept as data.
type VolumeMount struct {
	Volume          string
	Destination     string
	ReadOnly        bool
	PropagationMode string
	SELinuxLabel    string
}

// DefaultKillTimeout is how long a task gets between its kill signal and
// SIGKILL when kill_timeout is unset.
const DefaultKillTimeout = 5 * time.Second

// Canonicalize fills task defaults; the task inherits the group's restart
// policy unless it has its own.
func (t *Task) Canonicalize(job *Job, tg *TaskGroup) {
	if t.Resources == nil {
		t.Resources = &Resources{}
	}
	t.Resources.Canonicalize()
	if t.KillTimeout == 0 {
		t.KillTimeout = DefaultKillTimeout
	}
	if t.LogConfig == nil {
		t.LogConfig = DefaultLogConfig()
	}
	if t.RestartPolicy == nil && tg.RestartPolicy != nil {
		t.RestartPolicy = tg.RestartPolicy.Copy()
	}
	for _, c := range t.Constraints {
		c.Canonicalize()
	}
}

func (t *Task) validate(job *Job, tg *TaskGroup, p problems) {
	if t.Name == "" {
		p.add("task name is missing")
	} else {
		validateTaskName(p, t.Name)
	}
	if t.Driver == "" {
		p.add("driver is missing (e.g. driver = \"raw_exec\")")
	} else {
		validateDriverConfig(t.Driver, t.Config, p)
	}
	if t.KillTimeout < 0 {
		p.add("kill_timeout must be >= 0")
	}
	if t.Resources == nil {
		p.add("resources are missing")
	} else {
		t.Resources.validate(p)
	}
	if t.LogConfig != nil {
		t.LogConfig.validate(p)
	}
	if t.RestartPolicy != nil && t.RestartPolicy != tg.RestartPolicy {
		t.RestartPolicy.validate(p)
	}
	validateEach(p, "constraint", t.Constraints)
	validateEach(p, "affinity", t.Affinities)
	validateEach(p, "artifact", t.Artifacts)
	validateEach(p, "template", t.Templates)
	for i, vm := range t.VolumeMounts {
		validateVolumeMount(vm, tg, t.Driver, p.at("volume_mount["+itoa(i)+"]"))
	}
	if t.Lifecycle != nil {
		switch t.Lifecycle.Hook {
		case "prestart", "poststart", "poststop":
		default:
			p.add("lifecycle.hook %q must be prestart, poststart or poststop", t.Lifecycle.Hook)
		}
	}
}

// Copy returns a deep copy. Driver config is copied deeply because drivers
// interpolate into it.
func (t *Task) Copy() *Task {
	if t == nil {
		return nil
	}
	c := *t
	c.Config = CopyMapAny(t.Config)
	c.Env = maps.Clone(t.Env)
	c.Services = copyServices(t.Services)
	c.Constraints = copyEach(t.Constraints)
	c.Affinities = copyEach(t.Affinities)
	c.Resources = t.Resources.Copy()
	c.RestartPolicy = t.RestartPolicy.Copy()
	c.Meta = maps.Clone(t.Meta)
	c.LogConfig = copyPtr(t.LogConfig)
	c.Artifacts = copyPtrs(t.Artifacts)
	for _, a := range c.Artifacts {
		a.GetterOptions = maps.Clone(a.GetterOptions)
		a.GetterHeaders = maps.Clone(a.GetterHeaders)
	}
	c.Templates = copyPtrs(t.Templates)
	for _, tm := range c.Templates {
		tm.copyRefs()
	}
	c.Lifecycle = copyPtr(t.Lifecycle)
	c.DispatchPayload = copyPtr(t.DispatchPayload)
	c.VolumeMounts = copyPtrs(t.VolumeMounts)
	return &c
}

// Service is a `service` block. Drover keeps services as part of the job so
// that job files written for Nomad run unchanged; it does not register them
// in a catalog.
type Service struct {
	Name      string
	TaskName  string
	PortLabel string
	Provider  string
	Tags      []string
	Meta      map[string]string
	Checks    []*ServiceCheck

	CanaryTags        []string
	EnableTagOverride bool
	AddressMode       string
	Address           string
	CheckRestart      *CheckRestart
	CanaryMeta        map[string]string
	TaggedAddresses   map[string]string
	OnUpdate          string
	Cluster           string
	Kind              string
}

// ServiceCheck is a `check` block inside a service. The client runs the
// http, tcp and script ones (client/checks); service_check.go validates
// them.
type ServiceCheck struct {
	Name      string
	Type      string
	Command   string
	Args      []string
	Path      string
	Protocol  string
	PortLabel string
	Interval  time.Duration
	Timeout   time.Duration
	Method    string

	Expose                 bool
	AddressMode            string
	Advertise              string
	InitialStatus          string
	Notes                  string
	TLSServerName          string
	TLSSkipVerify          bool
	Header                 map[string][]string
	Body                   string
	CheckRestart           *CheckRestart
	GRPCService            string
	GRPCUseTLS             bool
	TaskName               string
	SuccessBeforePassing   int
	FailuresBeforeCritical int
	FailuresBeforeWarning  int
	OnUpdate               string
}

// CheckRestart is a `check_restart` block: the client restarts the task
// after Limit failing results in a row, once Grace has passed since the
// task started (client/checks).
type CheckRestart struct {
	Limit          int
	Grace          time.Duration
	IgnoreWarnings bool
}

func (c *CheckRestart) copy() *CheckRestart {
	return copyPtr(c)
}

func copyServices(in []*Service) []*Service {
	if in == nil {
		return nil
	}
	out := make([]*Service, len(in))
	for i, s := range in {
		sc := *s
		sc.Tags = copyStrings(s.Tags)
		sc.Meta = maps.Clone(s.Meta)
		sc.CanaryTags = copyStrings(s.CanaryTags)
		sc.CanaryMeta = maps.Clone(s.CanaryMeta)
		sc.TaggedAddresses = maps.Clone(s.TaggedAddresses)
		sc.CheckRestart = s.CheckRestart.copy()
		sc.Checks = make([]*ServiceCheck, len(s.Checks))
		for j, ch := range s.Checks {
			cc := *ch
			cc.Args = copyStrings(ch.Args)
			cc.CheckRestart = ch.CheckRestart.copy()
			if ch.Header != nil {
				cc.Header = make(map[string][]string, len(ch.Header))
				for k, v := range ch.Header {
					cc.Header[k] = copyStrings(v)
				}
			}
			sc.Checks[j] = &cc
		}
		out[i] = &sc
	}
	return out
}

// TaskArtifact is an `artifact` block. The client fetches it before the
// task starts (client/artifact); structs/artifact.go validates it.
type TaskArtifact struct {
	GetterSource   string
	GetterOptions  map[string]string
	GetterHeaders  map[string]string
	GetterMode     string
	GetterInsecure bool
	RelativeDest   string
	Chown          bool
}

// Template is a `template` block. The client renders it before the task
// starts (client/template); structs/template.go validates it.
type Template struct {
	SourcePath    string
	DestPath      string
	EmbeddedTmpl  string
	ChangeMode    string
	ChangeSignal  string
	ChangeScript  *ChangeScript
	Once          bool
	Splay         time.Duration
	Perms         string
	Uid           *int
	Gid           *int
	LeftDelim     string
	RightDelim    string
	Envvars       bool
	Wait          *WaitConfig
	ErrMissingKey bool
}

// ChangeScript is a template's `change_script` block (kept as data).
type ChangeScript struct {
	Command     string
	Args        []string
	Timeout     time.Duration
	FailOnError bool
}

// WaitConfig is a template's `wait` block (kept as data).
type WaitConfig struct {
	Min *time.Duration
	Max *time.Duration
}

// copyRefs replaces the template's pointers and slices by copies, for a
// deep copy made from a shallow one.
func (t *Template) copyRefs() {
	if t.ChangeScript != nil {
		cs := *t.ChangeScript
		cs.Args = copyStrings(cs.Args)
		t.ChangeScript = &cs
	}
	t.Uid = copyPtr(t.Uid)
	t.Gid = copyPtr(t.Gid)
	if t.Wait != nil {
		w := WaitConfig{Min: copyPtr(t.Wait.Min), Max: copyPtr(t.Wait.Max)}
		t.Wait = &w
	}
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// copyPtrs copies a list of blocks one level deep: each element is a
// copy of its own. A nil list stays nil and an empty one empty.
func copyPtrs[T any](in []*T) []*T {
	if in == nil {
		return nil
	}
	out := make([]*T, len(in))
	for i, p := range in {
		out[i] = copyPtr(p)
	}
	return out
}

// TaskLifecycleConfig is a `lifecycle` block.
type TaskLifecycleConfig struct {
	Hook    string
	Sidecar bool
}

// VolumeRequest is a group `volume` block. Only type "host" is placed and
// mounted; Sticky, AccessMode, AttachmentMode and MountOptions are kept as
// data (they belong to CSI and dynamic host volumes).
type VolumeRequest struct {
	Name           string
	Type           string
	Source         string
	ReadOnly       bool
	Sticky         bool
	AccessMode     string
	AttachmentMode string
	MountOptions   *CSIMountOptions
	PerAlloc       bool
}

// CSIMountOptions is a CSI volume's `mount_options` block (kept as data).
type CSIMountOptions struct {
	FSType     string
	MountFlags []string
}

func isNumeric(s string) bool {
	_, err := fmt.Sscanf(s, "%d", new(int))
	return err == nil
}

// copyEach deep-copies a list of blocks, each with its own Copy; nil
// stays nil.
func copyEach[V interface{ Copy() V }](in []V) []V {
	if in == nil {
		return nil
	}
	out := make([]V, len(in))
	for i, v := range in {
		out[i] = v.Copy()
	}
	return out
}

// CopyMapAny deep-copies a driver config map.
func CopyMapAny(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyAny(v)
	}
	return out
}

func copyAny(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return CopyMapAny(x)
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = copyAny(e)
		}
		return c
	case []map[string]any:
		c := make([]map[string]any, len(x))
		for i, e := range x {
			c[i] = CopyMapAny(e)
		}
		return c
	case []string:
		return copyStrings(x)
	}
	return v
}
