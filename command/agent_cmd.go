package command

import (
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/drover-sched/drover/command/agent"
)

// agentCommand runs `drover agent` until SIGINT or SIGTERM; SIGHUP reloads
// its configuration.
func agentCommand(args []string, stdout, stderr io.Writer) int {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)
	return agent.Run(args, Version, stdout, stderr, signals)
}
