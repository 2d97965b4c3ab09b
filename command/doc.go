// Package command is Drover's command-line interface: Run dispatches to one
// verb per file (job_run.go, node_drain.go, ...), each talking to an agent
// over the HTTP API through the api package. Every verb opens with a
// cmdLine (cmdline.go): its flags and the general ones, the count of its
// arguments, the client, an ID prefix resolved, and -json or -t output.
// The agent process itself lives in command/agent.
package command
