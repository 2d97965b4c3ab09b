// Package allocdir lays out an allocation's directory on disk:
//
//	<data_dir>/alloc/            0711  (the client makes it; see client.ensureDataDirs)
//	  <alloc_id>/                0711  entered, never listed, by the alloc's tasks
//	    alloc/                   0755  shared by every task of the alloc (NOMAD_ALLOC_DIR)
//	      data/ tmp/             1777  written by every task, whatever its user
//	      logs/                  0755  <task>.stdout.N, <task>.stderr.N (0644) and the FIFOs (0600):
//	                                   the client writes them, tasks may only read the logs
//	    <task>/                  0711  the task's working directory
//	      local/                 NOMAD_TASK_DIR
//	      secrets/               NOMAD_SECRETS_DIR
//	      tmp/
//
// A task's local/, secrets/ and tmp/ are the client's (0755, 0700, 0755)
// until TaskDir.Chown gives them to the user the task runs as, 0700 each:
// the task runner does so before starting a task whose driver isolates
// its file system (drivers.Capabilities), so the task writes its own
// directories and no other task's. A task of a driver without isolation
// (raw_exec) runs as the client's user and needs no chown. When the
// task's user changes between versions, Chown hands the old user's files
// in those directories to the new one, through descriptors (chown.go).
// The client's writes into directories a task can change go through
// O_NOFOLLOW descriptors (beneath.go), and a task's .artifacts and
// alloc/logs are the client's alone (reserved.go). The log FIFOs
// stay root's 0600: the driver opens them before it switches to the
// task's user, and the task only inherits the descriptors.
//
// Task directories are siblings of alloc/, so no task may be called
// "alloc": job validation refuses it (structs, names.go), along
// with names that are not one path segment.
//
// An AllocDir is plain paths plus idempotent Build and Destroy; it has no
// goroutines and no locks. Its owner is the alloc runner; after the runner
// is gone, the garbage collector destroys it.
package allocdir
