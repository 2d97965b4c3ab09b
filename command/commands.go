package command

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// verb is one CLI command, such as "job run" or "operator raft list-peers".
type verb struct {
	name     string
	synopsis string
	run      func(m *Meta, args []string) int
}

// verbs is the dispatch table that command.go's run consults. Names are one
// to three words; the longest name matching the arguments wins.
var verbs = []verb{
	{"job run", "Submit a job and monitor its placement", jobRun},
	{"job plan", "Dry-run a job update and show what would change", jobPlan},
	{"job status", "List jobs, or show one job's status and allocations", jobStatus},
	{"job stop", "Stop a running job", jobStop},
	{"job history", "List a job's versions", jobHistory},
	{"job revert", "Revert a job to an earlier version", jobRevert},
	{"job scale", "Change the count of a job's task group", jobScale},
	{"job scaling-events", "List a job's recent scaling events", jobScalingEvents},
	{"job inspect", "Print a job's definition as JSON", jobInspect},
	{"job validate", "Check a job file for errors", jobValidate},
	{"job dispatch", "Dispatch an instance of a parameterized job", jobDispatch},
	{"node status", "List nodes, or show one node", nodeStatus},
	{"node drain", "Start or stop draining a node", nodeDrain},
	{"node eligibility", "Mark a node eligible or ineligible for new work", nodeEligibility},
	{"alloc status", "Show an allocation's status and task events", allocStatus},
	{"alloc logs", "Print or follow a task's logs", allocLogs},
	{"alloc stop", "Stop an allocation and have it replaced", allocStop},
	{"alloc restart", "Restart an allocation's tasks in place", allocRestart},
	{"alloc signal", "Send a signal to an allocation's tasks", allocSignal},
	{"alloc fs", "List or print files of an allocation's directory", allocFS},
	{"eval status", "Show an evaluation and its placement failures", evalStatus},
	{"eval list", "List evaluations", evalList},
	{"deployment status", "Show a deployment's progress", deploymentStatus},
	{"server members", "List the servers of the cluster", serverMembers},
	{"server join", "Join the agent's server to other servers", serverJoin},
	{"operator raft list-peers", "List the raft peers and which one leads", operatorRaftListPeers},
	{"operator raft remove-peer", "Remove a server from the raft peer set", operatorRaftRemovePeer},
	{"operator scheduler get-config", "Display the scheduler configuration", operatorSchedulerGetConfig},
	{"operator scheduler set-config", "Change the scheduler configuration", operatorSchedulerSetConfig},
	{"system gc", "Run garbage collection now", systemGC},
	{"acl bootstrap", "Bootstrap the ACL system and print the first management token", aclBootstrap},
	{"acl policy apply", "Create or update an ACL policy", aclPolicyApply},
	{"acl policy list", "List ACL policies", aclPolicyList},
	{"acl policy info", "Show an ACL policy and its rules", aclPolicyInfo},
	{"acl policy delete", "Delete an ACL policy", aclPolicyDelete},
	{"acl token create", "Create an ACL token", aclTokenCreate},
	{"acl token list", "List ACL tokens", aclTokenList},
	{"acl token info", "Show an ACL token", aclTokenInfo},
	{"acl token self", "Show the token in use", aclTokenSelf},
	{"acl token update", "Change an ACL token's name, type or policies", aclTokenUpdate},
	{"acl token delete", "Delete an ACL token", aclTokenDelete},
	{"tls ca create", "Create a certificate authority for agents' TLS", tlsCACreate},
	{"tls cert create", "Create a server, client or CLI certificate signed by the CA", tlsCertCreate},
	{"status", "List jobs, or show the status of any object by ID", status},

	// Deployment watcher (issue 13).
	{"deployment list", "List deployments", deploymentList},
	{"deployment promote", "Promote a deployment's canaries", deploymentPromote},
	{"deployment fail", "Mark a deployment failed", deploymentFail},
	{"deployment pause", "Pause a running deployment", deploymentPause},
	{"deployment resume", "Resume a paused deployment", deploymentResume},
	{"deployment unblock", "Move a blocked deployment on", deploymentUnblock},

	// Native service registrations (issue 13, services).
	{"service list", "List native services", serviceList},
	{"service info", "Show the registrations of a native service", serviceInfo},
	{"service delete", "Delete a registration of a native service", serviceDelete},
	// metrics (issue 15)
	{"operator metrics", "Print the agent's metrics, as JSON or for Prometheus", operatorMetrics},
	// Event stream (issue 15, events).
	{"operator api", "Send a request to the HTTP API and print the answer, streams included", operatorAPI},
	// Node simulator (issue 16, nodesim).
	{"nodesim", "Simulate many client nodes against real servers", nodesimCmd},
}

// runVerb runs the verb args name, if any. ok is false when args name no
// verb and no verb group, so the caller can report an unknown command.
func runVerb(args []string, stdout, stderr io.Writer) (code int, ok bool) {
	return runVerbMeta(newMeta(stdout, stderr), args)
}

func runVerbMeta(m *Meta, args []string) (int, bool) {
	for n := min(3, len(args)); n >= 1; n-- {
		name := strings.Join(args[:n], " ")
		for _, v := range verbs {
			if v.name == name {
				return v.run(m, args[n:]), true
			}
		}
	}
	// A group without (or with an unknown) subcommand: list the group.
	if sub := groupVerbs(args[0]); len(sub) > 0 {
		if len(args) > 1 && !isHelpFlag(args[1]) {
			fmt.Fprintf(m.stderr, "Unknown command %q\n\n", strings.Join(args[:2], " "))
			writeVerbs(m.stderr, args[0], sub)
			return 1, true
		}
		if len(args) > 1 {
			writeVerbs(m.stdout, args[0], sub)
			return 0, true
		}
		writeVerbs(m.stderr, args[0], sub)
		return 1, true
	}
	return 0, false
}

func isHelpFlag(s string) bool {
	switch s {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// groupVerbs returns the verbs whose name starts with group.
func groupVerbs(group string) []verb {
	var out []verb
	for _, v := range verbs {
		if strings.HasPrefix(v.name, group+" ") {
			out = append(out, v)
		}
	}
	return out
}

func writeVerbs(w io.Writer, group string, vs []verb) {
	fmt.Fprintf(w, "Usage: drover %s <subcommand> [options] [args]\n\nSubcommands:\n", group)
	writeVerbTable(w, vs)
}

func writeVerbTable(w io.Writer, vs []verb) {
	sorted := append([]verb(nil), vs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].name < sorted[j].name })
	width := 0
	for _, v := range sorted {
		width = max(width, len(v.name))
	}
	for _, v := range sorted {
		fmt.Fprintf(w, "    %-*s  %s\n", width, v.name, v.synopsis)
	}
}

// writeVerbUsage lists the verbs for the top-level usage text.
func writeVerbUsage(w io.Writer) {
	fmt.Fprint(w, "\nCluster commands:\n")
	writeVerbTable(w, verbs)
}
