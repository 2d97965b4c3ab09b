package command

import (
	"fmt"
	"io"
	"os"

	"github.com/drover-sched/drover/client/drivers/exec/execinit"
	"github.com/drover-sched/drover/helper/childproc"
	"github.com/drover-sched/drover/helper/fdinherit"
)

// Version is Drover's version, reported by `drover version` and in node
// attributes.
const Version = "0.1.0-dev"

// Run executes the CLI with args (without the program name) and returns the
// process exit code.
func Run(args []string) int {
	// The exec driver starts its own executable as each task's init (see
	// client/drivers/exec/execinit); such a process is no CLI either.
	if code, ok := execinit.MaybeRun(); ok {
		return code
	}
	// The agent runs its own executable to evaluate job files it receives
	// and to render templates (see helper/childproc); such a child is no
	// CLI.
	if code, ok := childproc.MaybeRun(); ok {
		return code
	}
	// Whatever descriptors the agent's parent left inheritable are the
	// parent's business, not its tasks'.
	fdinherit.CloseOnExec()
	return run(args, os.Stdout, os.Stderr)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 1
	}
	switch args[0] {
	case "version", "-version", "--version", "-v":
		fmt.Fprintf(stdout, "Drover v%s\n", Version)
		return 0
	case "agent":
		return agentCommand(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return 0
	}
	if code, ok := runVerb(args, stdout, stderr); ok {
		return code
	}
	fmt.Fprintf(stderr, "Unknown command %q\n\n", args[0])
	usage(stderr)
	return 1
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage: drover <command> [args]

Commands:
    agent      Run a Drover agent (server and/or client)
    version    Print the Drover version
`)
	writeVerbUsage(w)
}
