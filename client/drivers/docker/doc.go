// Package docker is the docker task driver: each task attempt is one
// container on the node's Docker Engine, created and watched through
// Docker's own Go client, with Nomad's `docker` task config (its keys and
// shapes declared once, in structs.DockerConfigSchema, which job
// validation checks and StartTask checks again through
// structs.ValidateDriverConfig) and plugin config (PluginConfig), so that
// Nomad job files and agent configs work unchanged.
//
// # A task's container
//
// StartTask makes sure the image is there (pulling it when missing or on
// force_pull, within image_pull_timeout and the plugin's
// pull_activity_timeout), creates the container with Drover's labels
// (LabelAllocID and friends, which the reaper looks for), the task's
// alloc/, local/ and secrets/ directories bound at /alloc, /local and
// /secrets, the task's environment as the container's, and the task's
// grant as cgroup limits: memory is the hard limit unless memory_max (or
// memory_hard_limit) raises it, in which case memory is the reservation.
// A restart is a new attempt and so a new container; DestroyTask removes
// the old one.
//
// # What a task may ask for
//
// A job submitter is not trusted with the node. Without the plugin's
// allow_privileged, StartTask refuses privileged, security_opt values
// that turn confinement off (confinement.go), and pid_mode, ipc_mode,
// uts_mode or userns_mode "host"; cap_add must stay within allow_caps.
// Host paths and named volumes need volumes { enabled = true }; a
// relative bind source is resolved through its symlinks and must stay in
// the alloc directory either way (insideAllocDir). network_mode, pid_mode
// and ipc_mode "container:<x>" may only join a container of the same
// alloc (joinOwnAlloc). Only sysctls the kernel keeps per container are
// passed. network_mode "host" is allowed, as in Nomad.
//
// # The alloc's network
//
// In a group network mode other than host (bridge, none, cni/*) every
// docker task joins the alloc's pause container (sandbox.go), whose
// namespace the client attaches through CNI; the container publishes no
// ports of its own.
//
// # Goroutines
//
// Each tracked task has two goroutines, both owned by the Driver (its
// WaitGroup) and stopped by its context: the waiter blocks in
// ContainerWait, then reads the exit code and OOM flag from inspect (which
// knows them even for an exit that happened while the client was away),
// waits briefly for the log copier, and publishes the result under d.mu;
// the log copier follows the container's output and demultiplexes it into
// the task runner's stdout and stderr FIFOs, from which Drover's log
// rotation, `alloc logs` and the fs API read as for every other driver.
// The reaper loop and each pending image removal are goroutines of the
// Driver too. Shutdown stops them all; containers keep running so that
// the next client re-attaches with RecoverTask, from the container ID in
// the handle's DriverState.
//
// # A daemon or client that goes away
//
// The copier reads the output with the daemon's timestamps and keeps a
// cursor (log_cursor.go), in memory and in a file in the task directory,
// which the container does not see. A stream the daemon drops while the
// container runs (the daemon stopped; with live-restore the container
// lives on) is followed again from the cursor once the daemon answers, and
// a re-attaching client starts from the cursor the previous one left: the
// logs get what the container wrote meanwhile, and no line twice (but for
// one entry copied just before a client was killed). TTY output, which
// the daemon sends without frames to carry timestamps, is copied from the
// re-attach on. A failed daemon call of a waiter or copier tells the
// client's health loop (HealthMayHaveChanged), which fingerprints at once:
// the node's driver.docker turns unhealthy without waiting for a period.
//
// # Collection
//
// Images are counted by the tasks using them and removed gc.image_delay
// after the last one is destroyed (if gc.image), on the injected clock. The
// reaper removes containers that carry Drover's labels for this node
// (LabelNodeID, so that agents sharing a daemon leave each other's alone)
// but belong to no task of this driver and to no live alloc
// (Options.AllocLive), older than gc.dangling_containers.creation_grace.
//
// # Not supported yet
//
// Image builds and loads (load), devices, cpuset pinning by the
// scheduler, port_map (the old port syntax), network aliases and
// container networks other than those network_mode names, and Windows.
// Script checks run in the container through ExecTask (docker exec).
package docker
