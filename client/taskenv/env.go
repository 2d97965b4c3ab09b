package taskenv

import (
	"sort"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/structs"
)

// Dirs are the paths a task sees.
type Dirs struct {
	AllocDir   string // shared alloc/ directory
	TaskDir    string // the task's local/ directory
	SecretsDir string
}

// Env is a built task environment.
type Env struct {
	vars map[string]string
	node *structs.Node
}

// Build makes the environment of task in alloc on node. host is the base
// (HostEnv or IsolatedBase, by the driver); NOMAD_* variables override
// it, and the task's env block, interpolated, overrides both.
func Build(node *structs.Node, alloc *structs.Allocation, task *structs.Task, region string, dirs Dirs, host map[string]string) *Env {
	vars := make(map[string]string, len(host)+32)
	for k, v := range host {
		vars[k] = v
	}
	set := func(k, v string) { vars[k] = v }
	set("NOMAD_ALLOC_ID", alloc.ID)
	set("NOMAD_SHORT_ALLOC_ID", structs.ShortID(alloc.ID))
	set("NOMAD_ALLOC_NAME", alloc.Name)
	set("NOMAD_ALLOC_INDEX", strconv.Itoa(alloc.Index()))
	set("NOMAD_ALLOC_DIR", dirs.AllocDir)
	set("NOMAD_TASK_DIR", dirs.TaskDir)
	set("NOMAD_SECRETS_DIR", dirs.SecretsDir)
	set("NOMAD_TASK_NAME", task.Name)
	set("NOMAD_GROUP_NAME", alloc.TaskGroup)
	set("NOMAD_JOB_ID", alloc.JobID)
	set("NOMAD_NAMESPACE", alloc.Namespace)
	set("NOMAD_REGION", region)
	if node != nil {
		set("NOMAD_DC", node.Datacenter)
	}
	if job := alloc.Job; job != nil {
		set("NOMAD_JOB_NAME", job.Name)
		if job.ParentID != "" {
			set("NOMAD_JOB_PARENT_ID", job.ParentID)
		}
		if region == "" && job.Region != "" {
			set("NOMAD_REGION", job.Region)
		}
		if job.Namespace != "" && alloc.Namespace == "" {
			set("NOMAD_NAMESPACE", job.Namespace)
		}
	}
	if r := task.Resources; r != nil {
		set("NOMAD_CPU_LIMIT", strconv.Itoa(r.CPU))
		set("NOMAD_MEMORY_LIMIT", strconv.Itoa(r.MemoryMB))
		if r.MemoryMaxMB > 0 {
			set("NOMAD_MEMORY_MAX_LIMIT", strconv.Itoa(r.MemoryMaxMB))
		}
	}
	if ar := alloc.AllocatedResources; ar != nil {
		if tr := ar.Tasks[task.Name]; tr != nil {
			set("NOMAD_CPU_LIMIT", strconv.FormatInt(tr.Cpu.CpuShares, 10))
			set("NOMAD_MEMORY_LIMIT", strconv.FormatInt(tr.Memory.MemoryMB, 10))
			// The grant has memory_max only where the cluster allows
			// memory oversubscription; the task's ask is not the limit.
			if tr.Memory.MemoryMaxMB > 0 {
				set("NOMAD_MEMORY_MAX_LIMIT", strconv.FormatInt(tr.Memory.MemoryMaxMB, 10))
			} else {
				delete(vars, "NOMAD_MEMORY_MAX_LIMIT")
			}
			addNetworkPorts(vars, tr.Networks)
		}
		// The shared ports come last: each carries its own host IP (a
		// port on a host_network has that network's address), where a
		// network block has one IP for all its ports.
		addNetworkPorts(vars, ar.Shared.Networks)
		for _, p := range ar.Shared.Ports {
			addPort(vars, p.Label, p.HostIP, p.Value, p.To)
		}
	}
	for k, v := range mergedMeta(alloc, task) {
		key := strings.NewReplacer(".", "_", "-", "_").Replace(k)
		set("NOMAD_META_"+key, v)
		set("NOMAD_META_"+strings.ToUpper(key), v)
	}
	e := &Env{vars: vars, node: node}
	// The env block may refer to the variables above and to node values.
	keys := make([]string, 0, len(task.Env))
	for k := range task.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	resolved := make(map[string]string, len(keys))
	for _, k := range keys {
		resolved[k] = e.ReplaceEnv(task.Env[k])
	}
	for k, v := range resolved {
		vars[k] = v
	}
	return e
}

// addPort sets the variables of one labelled port. NOMAD_PORT_ is the port
// the task binds: the mapped `to` port when set, else the host port.
func addPort(vars map[string]string, label, ip string, value, to int) {
	if label == "" {
		return
	}
	port := value
	if to > 0 {
		port = to
	}
	vars["NOMAD_PORT_"+label] = strconv.Itoa(port)
	vars["NOMAD_ALLOC_PORT_"+label] = strconv.Itoa(port)
	vars["NOMAD_HOST_PORT_"+label] = strconv.Itoa(value)
	if ip != "" {
		vars["NOMAD_IP_"+label] = ip
		vars["NOMAD_ADDR_"+label] = ip + ":" + strconv.Itoa(value)
		vars["NOMAD_HOST_IP_"+label] = ip
		vars["NOMAD_HOST_ADDR_"+label] = ip + ":" + strconv.Itoa(value)
	}
}

func addNetworkPorts(vars map[string]string, nets structs.Networks) {
	for _, n := range nets {
		for _, p := range n.ReservedPorts {
			addPort(vars, p.Label, n.IP, p.Value, p.To)
		}
		for _, p := range n.DynamicPorts {
			addPort(vars, p.Label, n.IP, p.Value, p.To)
		}
	}
}

// mergedMeta is job meta overlaid by group meta overlaid by task meta.
func mergedMeta(alloc *structs.Allocation, task *structs.Task) map[string]string {
	out := map[string]string{}
	if job := alloc.Job; job != nil {
		for k, v := range job.Meta {
			out[k] = v
		}
		if tg := job.LookupTaskGroup(alloc.TaskGroup); tg != nil {
			for k, v := range tg.Meta {
				out[k] = v
			}
		}
	}
	for k, v := range task.Meta {
		out[k] = v
	}
	return out
}

// Map returns a copy of the variables.
func (e *Env) Map() map[string]string {
	out := make(map[string]string, len(e.vars))
	for k, v := range e.vars {
		out[k] = v
	}
	return out
}

// Get returns one variable.
func (e *Env) Get(k string) (string, bool) {
	v, ok := e.vars[k]
	return v, ok
}
