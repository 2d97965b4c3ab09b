package network

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/drover-sched/drover/structs"
)

// hostResolvConf is the host's resolver file, which a dns block changes.
const hostResolvConf = "/etc/resolv.conf"

// resolvConf renders a dns block as resolv.conf, as Nomad does: the
// host's file, with the nameserver, search and options lines the block
// sets replaced by its own, so a block that names only searches keeps
// the host's servers.
func resolvConf(dns *structs.DNSConfig, host []byte) []byte {
	keep := func(set []string) bool { return len(set) == 0 }
	var b bytes.Buffer
	for _, l := range strings.Split(string(host), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") || strings.HasPrefix(f[0], ";") {
			continue
		}
		switch f[0] {
		case "nameserver":
			if !keep(dns.Servers) {
				continue
			}
		case "search", "domain":
			if !keep(dns.Searches) {
				continue
			}
		case "options":
			if !keep(dns.Options) {
				continue
			}
		}
		b.WriteString(strings.Join(f, " ") + "\n")
	}
	for _, s := range dns.Servers {
		fmt.Fprintf(&b, "nameserver %s\n", s)
	}
	if len(dns.Searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(dns.Searches, " "))
	}
	if len(dns.Options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(dns.Options, " "))
	}
	return b.Bytes()
}

// readHostResolvConf is the host's file, or nothing when it cannot be read.
func readHostResolvConf() []byte {
	b, _ := os.ReadFile(hostResolvConf)
	return b
}
