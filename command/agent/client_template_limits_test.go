package agent

import (
	"os"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/template"
	"github.com/drover-sched/drover/helper/childproc"
	nomadapi "github.com/hashicorp/nomad/api"
)

// The finding: a template that never ends spun in the client agent even
// after its job was stopped, and the alloc stayed pending, its resources
// never freed. Templates now render in a child process that stopping the
// alloc kills at once, long before the render's 30 s limit.
func TestStoppingAJobWhoseTemplateSpinsEndsItsAllocPromptly(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	job := nomadapi.NewBatchJob("spin", "spin", "global", 50).AddDatacenter("dc1")
	task := nomadapi.NewTask("app", "raw_exec").SetConfig("command", "/bin/true")
	task.Require(&nomadapi.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	task.Templates = []*nomadapi.Template{{EmbeddedTmpl: ptr(`{{ range 1000000000000 }}{{ end }}`), DestPath: ptr("local/spin")}}
	job.AddTaskGroup(nomadapi.NewTaskGroup("g", 1).AddTask(task))
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	alloc := nomadJobAllocs(t, c, "spin", 1, "the alloc to be placed", func(*nomadapi.AllocationListStub) bool { return true })[0]
	waitUntil(t, "the template to be rendering", func() bool { return templateRenderChildren(t) == 1 })

	start := time.Now()
	if _, _, err := c.Jobs().Deregister("spin", false, nil); err != nil {
		t.Fatal(err)
	}
	var status string
	waitUntil(t, "the alloc to be complete or failed", func() bool {
		info, _, err := c.Allocations().Info(alloc.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		status = info.ClientStatus
		return status == "complete" || status == "failed"
	})
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the stopped alloc took %v to be %s", took, status)
	}
	waitUntil(t, "the render child to be gone", func() bool { return templateRenderChildren(t) == 0 })
}

// templateRenderChildren counts this process's children that render
// templates.
func templateRenderChildren(t *testing.T) int {
	return childproc.Running(os.Getpid(), template.RenderEntry)
}
