// Package restarts applies a task's `restart` block: after each exit (or
// failed start) it decides whether the task is done, restarted after a
// delay, or failed. The client's task runner and the node simulator
// (client/nodesim) both use it, so a simulated node restarts tasks by the
// very rules a real client does.
package restarts
