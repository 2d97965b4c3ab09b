package nomad

import (
	"fmt"
	"strings"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// memoryMaxWarning warns, as Nomad does at register and plan, that the
// job's memory_max settings will be ignored because the cluster's
// scheduler configuration has memory oversubscription off: each such
// task is limited to its reserved memory. It is "" when there is nothing
// to warn about.
func memoryMaxWarning(st *state.StateStore, job *structs.Job) string {
	_, cfg, err := st.SchedulerConfig()
	if err != nil || cfg == nil || cfg.MemoryOversubscriptionEnabled {
		return ""
	}
	var tasks []string
	for _, tg := range job.TaskGroups {
		for _, t := range tg.Tasks {
			if t.Resources != nil && t.Resources.MemoryMaxMB > 0 {
				tasks = append(tasks, fmt.Sprintf("%q", tg.Name+"/"+t.Name))
			}
		}
	}
	if len(tasks) == 0 {
		return ""
	}
	return fmt.Sprintf("Memory oversubscription is not enabled; memory_max of task %s will be ignored and each task "+
		"limited to its memory (enable it with `drover operator scheduler set-config -memory-oversubscription=true`)",
		strings.Join(tasks, ", "))
}
