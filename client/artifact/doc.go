// Package artifact downloads a task's `artifact` blocks into its directory
// before the task starts, as Nomad does, for the sources that need no cloud
// credentials: http:// and https:// URLs and files on the client (file://
// URLs or absolute paths) that the client's Sources allow. git::, hg::, s3::, gcs:: and the shorthands that
// mean them (github.com/..., bucket.s3.amazonaws.com/...) are refused with
// an error that names the source and what Drover fetches.
//
// # go-getter, and what Drover adds around it
//
// Addresses and options mean what they mean in Nomad because the fetching
// is done by the library Nomad uses, github.com/hashicorp/go-getter (v2:
// its cloud getters live in separate modules, so it brings no cloud SDKs).
// Options become query parameters of the address, so `checksum`
// ("type:value"), `archive` (false to keep an archive packed, or a type to
// force one), `filename` and the "//subdir" syntax behave as Nomad users
// know them. Only go-getter's HTTP getter is installed, with Drover's own
// getter for local files (local.go). Around them Drover adds what a
// shared client needs:
//
//   - Where sources may be (Sources, sources.go). A job's artifacts are
//     fetched by the client agent, with its permissions and from its place
//     in the network, for whoever could submit the job. By default a
//     local file is read only from inside the allocation's own directory,
//     through an os.Root so that no symlink or ".." leads out of it, and
//     copied with no wider permissions than it had; an http(s) source may
//     not be on a loopback, link-local (cloud metadata), unspecified or
//     multicast address, an address of this machine, or the agent's own
//     listeners. The address is checked in the dialer's Control hook as
//     it is dialled (transport.go), for every connection and redirect, so
//     DNS cannot answer one address to a check and another to the
//     connection. Every refusal is ErrSourceRefused and names the client
//     setting that would allow it.
//   - Bounds. A download stops with ErrTooLarge past MaxDownloadBytes
//     (go-getter's own limit would silently truncate the file), an archive
//     may unpack to at most MaxUnpackedBytes in MaxArchiveFiles entries,
//     and one artifact gets DefaultTimeout, Nomad's default
//     http_read_timeout (30m). The timeout is real time on purpose: it
//     bounds I/O, not anything a test drives.
//   - Unpacking (unpack.go). Tar archives (plain, .gz/.tgz, .bz2, .xz,
//     .zst) and zip archives are unpacked by Drover: go-getter v2 would
//     turn a symlink inside an archive into an empty file, which breaks a
//     tarball shipping lib.so -> lib.so.1 without a word. Drover keeps
//     symlinks that stay inside the destination and refuses, with
//     ErrUnsafeArchive, an entry or a symlink that leads outside it.
//     Single compressed files (.gz, .bz2, .xz, .zst) use go-getter's
//     decompressors.
//   - Staging. Everything is fetched into a fresh directory next to the
//     destination, inspected, and only then moved into place, so a failed
//     or refused download leaves the task directory as it was and a
//     partial file from an earlier attempt is never resumed into.
//   - Placement through descriptors. The alloc's other tasks may be
//     running and may swap a directory of the destination for a symlink
//     during the download, so the move into place opens the destination
//     one directory at a time without following symlinks and renames
//     with renameat (place.go, allocdir.OpenDir): a symlink on the way
//     fails the placement. The client's own places (a task's .artifacts
//     markers and staging directories, alloc/logs) are no destination
//     (allocdir.Reserved).
//   - Insecure TLS only when the artifact says `insecure = true`.
//
// # Errors
//
// Fetch returns an *Error naming the artifact's source. Its Recoverable
// field says whether trying again may help: an unsupported or refused
// source, a checksum mismatch, a malformed checksum option and a
// destination outside the alloc dir, through a symlink or among the
// client's own places are final; a network error, a bad
// status, a size bound or an unsafe archive may be fixed upstream and are
// worth a retry under the restart policy.
//
// Fetch has no goroutines of its own beyond the HTTP client's and no
// state: one call fetches one artifact.
package artifact
