// Package logmon turns a task's stdout and stderr into size-rotated files,
// and reads them back for `alloc logs`.
//
// A task writes into a FIFO in the alloc's log directory (see executor's
// doc.go for why a FIFO survives a client restart). A TaskLogger holds the
// FIFO's read end and copies what arrives into <task>.<stdout|stderr>.N,
// starting a new file when the current one reaches max_file_size and
// deleting the oldest beyond max_files. The highest N is the newest file; a
// restarted client continues appending to it. The oldest file is deleted
// before the next one is created, so at no moment does a stream hold more
// than max_files × max_file_size on disk, however fast the task writes
// (a test measures it with `yes`).
//
// Goroutines: a TaskLogger owns one copier per stream while a task attempt
// is writing. Close stops them and waits. A Reader has no goroutine; a
// following Reader waits on the injected clock inside Read.
package logmon
