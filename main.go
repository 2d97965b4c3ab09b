// Command drover is a cluster scheduler in the style of Nomad: one binary that
// is the agent (server and/or client) and the command-line interface.
package main

import (
	"os"

	"github.com/drover-sched/drover/command"
)

func main() {
	os.Exit(command.Run(os.Args[1:]))
}
