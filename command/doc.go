// Package command is Drover's command-line interface: Run dispatches to one
// verb per file (job_run.go, node_drain.go, ...), each talking to an agent
// over the HTTP API through the api package. The agent process itself lives
// in command/agent.
package command
