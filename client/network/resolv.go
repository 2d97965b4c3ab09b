package network

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/drover-sched/drover/structs"
)

// resolvConf renders a dns block as resolv.conf.
func resolvConf(dns *structs.DNSConfig) []byte {
	var b bytes.Buffer
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
