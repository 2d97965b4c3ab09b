package command

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/drover-sched/drover/api"
)

const jobDispatchHelp = `
Usage: drover job dispatch [options] <parameterized job> [input source]

  Dispatch an instance of a parameterized job: a new child job that runs
  with the given meta and payload. The payload is read from the file named
  by [input source], or from standard input when it is "-"; a task with a
  dispatch_payload block finds it in its local directory. The payload may
  be at most 16384 bytes (16 KiB).

  The dispatched job's ID is printed and its evaluation monitored, as by
  "job run", unless -detach is given.

  Exit codes: 0 when the dispatched job was placed, 2 when some
  allocations could not be placed, 1 on any error.

Dispatch Options:

  -meta <key>=<value>
    Meta for the dispatched job, checked against the parameterized block's
    meta_required and meta_optional. May be repeated.

  -idempotency-token <token>
    Dispatch only if no dispatched instance of the job with this token is
    still running or pending; otherwise print that instance.

  -id-prefix-template <word>
    Put <word> into the dispatched job's ID, after "dispatch-".

  -priority <1-100>
    The priority of the dispatched job, instead of the parent's.

  -detach
    Return once the job is dispatched, printing its evaluation ID.

  -verbose
    Show full IDs.
`

func jobDispatch(m *Meta, args []string) int {
	c := m.cmdLine("job dispatch", jobDispatchHelp, takesUpTo(1, 2, "<parameterized job> [input source]")).withVerbose()
	var metaFlags stringList
	c.Var(&metaFlags, "meta", "")
	token := c.String("idempotency-token", "", "")
	idPrefix := c.String("id-prefix-template", "", "")
	priority := c.Int("priority", 0, "")
	detach := c.Bool("detach", false, "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	meta, err := parseDispatchMeta(metaFlags)
	if err != nil {
		return c.usageError("Error parsing meta value: " + err.Error())
	}
	var payload []byte
	if c.NArg() == 2 {
		if payload, err = m.readPayload(c.Arg(1)); err != nil {
			return m.errorf("Error reading input data: %v", err)
		}
	}
	client, code, ok := c.client()
	if !ok {
		return code
	}
	jobID, code, ok := c.resolve(client, parameterizedJobKind, strings.TrimSpace(c.Arg(0)))
	if !ok {
		return code
	}
	resp, _, err := client.Jobs().DispatchOpts(&api.DispatchOptions{
		JobID: jobID, Meta: meta, Payload: payload,
		IdempotencyToken: *token, IdPrefixTemplate: *idPrefix, Priority: *priority,
	}, nil)
	if err != nil {
		return m.errorf("Failed to dispatch job: %s", serverMessage(err))
	}

	// No evaluation means an earlier instance with the same idempotency
	// token answered: there is nothing new to monitor.
	rows := []string{"Dispatched Job ID|" + resp.DispatchedJobID}
	if resp.EvalID != "" {
		rows = append(rows, "Evaluation ID|"+shortID(resp.EvalID, c.verbose))
	}
	fmt.Fprint(m.stdout, keyValues(rows))
	if *detach || resp.EvalID == "" {
		return exitOK
	}
	m.out("")
	return m.withInterrupt(func() int {
		return newMonitor(m, client, c.verbose).monitorEval(resp.EvalID)
	})
}

// parseDispatchMeta turns repeated -meta key=value flags into a map.
func parseDispatchMeta(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	meta := make(map[string]string, len(flags))
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-meta %q is not of the form <key>=<value>", f)
		}
		meta[k] = v
	}
	return meta, nil
}

// readPayload reads a dispatch payload from a file, or from standard input
// for "-".
func (m *Meta) readPayload(source string) ([]byte, error) {
	if source == "-" {
		return io.ReadAll(m.stdin)
	}
	return os.ReadFile(source)
}
