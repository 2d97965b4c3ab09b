// Package allocdir lays out an allocation's directory on disk:
//
//	<data_dir>/alloc/<alloc_id>/
//	    alloc/            shared by every task of the alloc (NOMAD_ALLOC_DIR)
//	        data/ tmp/
//	        logs/         <task>.stdout.N, <task>.stderr.N, and the FIFOs
//	    <task>/           the task's working directory
//	        local/        NOMAD_TASK_DIR
//	        secrets/      NOMAD_SECRETS_DIR (mode 0700)
//	        tmp/
//
// Task directories are siblings of alloc/, so no task may be called
// "alloc": job validation refuses it (structs, names.go), along
// with names that are not one path segment.
//
// An AllocDir is plain paths plus idempotent Build and Destroy; it has no
// goroutines and no locks. Its owner is the alloc runner; after the runner
// is gone, the garbage collector destroys it.
package allocdir
