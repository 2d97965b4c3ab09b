package api

import "time"

// Lifecycle hooks: when a task runs relative to the group's main tasks.
const (
	TaskLifecycleHookPrestart  = "prestart"
	TaskLifecycleHookPoststart = "poststart"
	TaskLifecycleHookPoststop  = "poststop"
)

// Task is one process (or container) of a task group, run by a driver.
type Task struct {
	Name   string
	Driver string
	User   string

	// Lifecycle makes the task a prestart, poststart or poststop helper
	// instead of a main task; nil means main task.
	Lifecycle *TaskLifecycle

	// Config is the driver's own configuration. Its shape belongs to the
	// driver, so it stays untyped here: strings, numbers, bools, lists and
	// maps, with nested blocks of a job file as lists of maps.
	Config map[string]interface{}

	Constraints   []*Constraint
	Affinities    []*Affinity
	Env           map[string]string
	Services      []*Service
	Resources     *Resources
	RestartPolicy *RestartPolicy
	Meta          map[string]string
	KillTimeout   *time.Duration
	LogConfig     *LogConfig
	Artifacts     []*TaskArtifact
	Templates     []*Template

	// DispatchPayload says where a dispatched job's payload is written.
	DispatchPayload *DispatchPayloadConfig
	VolumeMounts    []*VolumeMount

	// Leader marks the task whose exit stops the rest of the group.
	Leader bool

	// ShutdownDelay is how long to wait between deregistering the task's
	// services and sending the kill signal.
	ShutdownDelay time.Duration

	// KillSignal is the signal sent first when the task is stopped; the
	// driver's default (usually SIGINT or SIGTERM) when empty.
	KillSignal string

	// Kind is set by Nomad for tasks it injects (e.g. Connect sidecars).
	Kind string
}

// NewTask returns a task with a name and a driver.
func NewTask(name, driver string) *Task {
	return &Task{Name: name, Driver: driver}
}

// TaskLifecycle places a task before, beside or after the main tasks.
type TaskLifecycle struct {
	// Hook is one of the TaskLifecycleHook constants.
	Hook string

	// Sidecar keeps a prestart or poststart task running alongside the main
	// tasks instead of waiting for it to finish.
	Sidecar bool
}

// DispatchPayloadConfig names the file, relative to the task's local
// directory, that receives a dispatched job's payload.
type DispatchPayloadConfig struct {
	File string
}

// Canonicalize fills the task's defaults. The restart policy is inherited
// from the group field by field, so a task may override only the attempts.
func (t *Task) Canonicalize(tg *TaskGroup, job *Job) {
	if t.Resources == nil {
		t.Resources = &Resources{}
	}
	t.Resources.Canonicalize()

	if t.KillTimeout == nil {
		t.KillTimeout = new(5 * time.Second)
	}
	if t.LogConfig == nil {
		t.LogConfig = DefaultLogConfig()
	} else {
		t.LogConfig.Canonicalize()
	}
	canonicalizeEach(t.Artifacts)
	canonicalizeEach(t.Templates)
	for _, s := range t.Services {
		s.Canonicalize(t, tg, job)
	}
	canonicalizeEach(t.Affinities)
	canonicalizeEach(t.VolumeMounts)

	// The task gets its own copy so that changing one task's policy later
	// cannot change its siblings'.
	var restart RestartPolicy
	if tg.RestartPolicy != nil {
		restart = *tg.RestartPolicy
	}
	restart.Merge(t.RestartPolicy)
	t.RestartPolicy = &restart
}
