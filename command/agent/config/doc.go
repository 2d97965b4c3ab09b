// Package config is the `drover agent` configuration: its types (Config
// and its blocks), reading agent files (Parse), merging files with
// defaults and flags (Default, Dev, Merge, ParseArgs, and Build, which
// reads the -config files and directories), checking the result
// (Validate), and turning it into what the agent's parts are started
// with: the server's nomad.Config (ForServer), the client's
// client/config.Config (ForClient) and the listen and advertise addresses
// (HTTPBind, RPCBind, AdvertiseAddr). The agent (command/agent) owns
// starting anything; this package only computes, and reads nothing but the
// files it is given (and the host's name and interfaces, for the default
// node name and an address to advertise).
//
// # Syntax
//
// Agent files use Nomad's agent configuration syntax (HCL, or HCL's JSON
// form), so an operator's Nomad agent file works unchanged for the keys
// Drover has (config.go lists them). Files are decoded by walking the HCL
// body with a schema per block (decode.go, body.go) rather than with gohcl,
// because agent files are shared with Nomad. The HCL1 map-block spelling
// Nomad's docs use (`options { "driver.raw_exec.enable" = "1" }`) is
// accepted too (hcl1QuotedKeys), keeping every position in the file.
//
// # Promises
//
//   - A key Drover does not know, or knows and ignores (consul, vault, the
//     serf port, an unknown plugin, ...), is a warning naming the key with
//     its file and line, never an error: the file is Nomad's too. Only a
//     plugin's own config block is checked by the plugin (docker refuses a
//     key it does not know, in Validate).
//   - A malformed value is an error "file:line:col: key: what was
//     expected", and every problem of every file is reported at once in
//     one *Error. A file nested too deep to parse safely is refused before
//     the parser sees it (jobspec.CheckNesting).
//   - Parse returns what a file says, checked key by key but not as a
//     whole; Build, the agent's entry point, returns only a configuration
//     that passed Validate (something to run, a data_dir, servers for a
//     client-only agent, TLS and limits that fit).
//   - Several files merge in order, later wins and maps merge key by key;
//     flags win over files; a zero field means "not set" until merged onto
//     Default.
//   - Copy shares no memory with its original, so a reloaded configuration
//     never aliases the running one.
//
// # Dependencies
//
// Besides structs and helper (tlsutil, telemetry, rpcx defaults), it reads
// the defaults and bounds of the packages it configures, and nothing of
// their running parts: nomad for nomad.Config and the server's default
// limits, client/config for the client's Config, client/network and
// client/artifact for their validators and settings, client/drivers/docker
// to check a docker plugin block, and jobspec for the nesting check. It
// never imports command/agent, the server's internals or the client's
// (imports_test.go holds it to that).
package config
