package command

import (
	"flag"
	"fmt"
	"strings"

	"github.com/drover-sched/drover/api"
)

// The deployment verbs that change a deployment: promote, fail, pause,
// resume and unblock. Each resolves an ID prefix, makes its one write,
// says what it did, and (unless -detach, and except pause, which makes no
// evaluation) monitors the evaluation the write created and the deployment
// after it, as "job run" does.

const deploymentPromoteHelp = `
Usage: drover deployment promote [options] <deployment>

  Promote the canaries of a deployment, so that the rest of the new
  version is placed. Without -group, every group with canaries is
  promoted. Every canary of a promoted group must be healthy.

Promote Options:

  -group=<name>  Promote only this task group; may be given more than once.
  -detach        Return once promoted, printing the evaluation ID.
  -verbose       Show full IDs.
`

const deploymentFailHelp = `
Usage: drover deployment fail [options] <deployment>

  Mark an active deployment failed. A task group with auto_revert rolls
  the job back to its newest stable version.

Fail Options:

  -detach    Return once failed, printing the evaluation ID.
  -verbose   Show full IDs.
`

const deploymentPauseHelp = `
Usage: drover deployment pause [options] <deployment>

  Pause a running deployment: nothing more is placed for it, and it does
  not fail on its progress deadline, until "deployment resume".

Pause Options:

  -verbose   Show full IDs.
`

const deploymentResumeHelp = `
Usage: drover deployment resume [options] <deployment>

  Resume a paused deployment.

Resume Options:

  -detach    Return once resumed, printing the evaluation ID.
  -verbose   Show full IDs.
`

const deploymentUnblockHelp = `
Usage: drover deployment unblock [options] <deployment>

  Move a blocked deployment on, marking it successful.

Unblock Options:

  -detach    Return once unblocked, printing the evaluation ID.
  -verbose   Show full IDs.
`

// groupFlags collects repeated -group values.
type groupFlags []string

func (g *groupFlags) String() string     { return strings.Join(*g, ",") }
func (g *groupFlags) Set(v string) error { *g = append(*g, v); return nil }

// deploymentWrite is one deployment verb: its flags, and the write that
// returns what to print and the response.
type deploymentWrite struct {
	name, help string
	// monitors is false for a write that makes no evaluation (pause).
	monitors bool
	flags    func(fs *flag.FlagSet)
	// write makes the write and says what it did, naming the deployment
	// as shown.
	write func(c *api.Client, id, shown string) (*api.DeploymentUpdateResponse, string, error)
}

func (w deploymentWrite) run(m *Meta, args []string) int {
	c := m.cmdLine(w.name, w.help, takes(1, "<deployment>")).withVerbose()
	detach := new(bool)
	if w.monitors {
		detach = c.Bool("detach", false, "")
	}
	if w.flags != nil {
		w.flags(c.FlagSet)
	}
	client, id, code, ok := c.startFor(args, deploymentKind)
	if !ok {
		return code
	}
	resp, said, err := w.write(client, id, shortID(id, c.verbose))
	if err != nil {
		return m.errorf("Error: %v", err)
	}
	m.out("%s", said)
	if resp.RevertedJobVersion != nil {
		m.out("Auto-reverted to job version %d.", *resp.RevertedJobVersion)
	}
	if !w.monitors || resp.EvalID == "" {
		return 0
	}
	if *detach {
		m.out("Evaluation ID: %s", resp.EvalID)
		return 0
	}
	m.out("")
	return m.withInterrupt(func() int { return newMonitor(m, client, c.verbose).monitorEval(resp.EvalID) })
}

func deploymentPromote(m *Meta, args []string) int {
	var groups groupFlags
	return deploymentWrite{name: "deployment promote", help: deploymentPromoteHelp, monitors: true,
		flags: func(fs *flag.FlagSet) { fs.Var(&groups, "group", "") },
		write: func(c *api.Client, id, shown string) (*api.DeploymentUpdateResponse, string, error) {
			if len(groups) == 0 {
				r, _, err := c.Deployments().PromoteAll(id, nil)
				return r, fmt.Sprintf("Deployment %q promoted", shown), err
			}
			r, _, err := c.Deployments().PromoteGroups(id, groups, nil)
			return r, fmt.Sprintf("Deployment %q promoted (groups %s)", shown, strings.Join(groups, ", ")), err
		},
	}.run(m, args)
}

func deploymentFail(m *Meta, args []string) int {
	return deploymentWrite{name: "deployment fail", help: deploymentFailHelp, monitors: true,
		write: func(c *api.Client, id, shown string) (*api.DeploymentUpdateResponse, string, error) {
			r, _, err := c.Deployments().Fail(id, nil)
			return r, fmt.Sprintf("Deployment %q failed", shown), err
		},
	}.run(m, args)
}

func deploymentPause(m *Meta, args []string) int {
	return deploymentWrite{name: "deployment pause", help: deploymentPauseHelp,
		write: func(c *api.Client, id, shown string) (*api.DeploymentUpdateResponse, string, error) {
			r, _, err := c.Deployments().Pause(id, true, nil)
			return r, fmt.Sprintf("Deployment %q paused", shown), err
		},
	}.run(m, args)
}

func deploymentResume(m *Meta, args []string) int {
	return deploymentWrite{name: "deployment resume", help: deploymentResumeHelp, monitors: true,
		write: func(c *api.Client, id, shown string) (*api.DeploymentUpdateResponse, string, error) {
			r, _, err := c.Deployments().Pause(id, false, nil)
			return r, fmt.Sprintf("Deployment %q resumed", shown), err
		},
	}.run(m, args)
}

func deploymentUnblock(m *Meta, args []string) int {
	return deploymentWrite{name: "deployment unblock", help: deploymentUnblockHelp, monitors: true,
		write: func(c *api.Client, id, shown string) (*api.DeploymentUpdateResponse, string, error) {
			r, _, err := c.Deployments().Unblock(id, nil)
			return r, fmt.Sprintf("Deployment %q unblocked", shown), err
		},
	}.run(m, args)
}
