// Package hoststats samples the host a client runs on, from /proc and
// statfs: memory, per-core CPU use, the disks, uptime. It is what a
// client's /v1/client/stats reports.
//
// CPU use is a rate: the kernel counts time spent per core since boot, so
// a percentage needs two readings. A Sampler keeps the previous reading
// and answers with the use since then; its first answer is the average
// since boot. The counters are the host's, so one Sampler per process is
// enough; its mutex guards the previous reading. It starts no goroutines.
package hoststats
