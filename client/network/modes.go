package network

import (
	"sort"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
)

// bridgePlugins are the plugins bridge mode's conflist runs; none mode
// needs loopback alone.
var bridgePlugins = []string{"loopback", "bridge", "host-local", "firewall", "portmap"}

// Modes lists the group network modes this client can give an alloc, in
// the order the node advertises them: bridge and none when their plugins
// are in cni_path, then cni/<name> for each network in cni_config_dir
// whose plugins all are. The scheduler places a group only on a node that
// advertises its mode, so a client without the plugins is never handed
// an alloc it can only fail.
func (m *Manager) Modes() []string {
	var out []string
	if m.havePlugins(bridgePlugins...) {
		out = append(out, ModeBridge)
	}
	if m.havePlugins("loopback") {
		out = append(out, ModeNone)
	}
	files, err := libcni.ConfFiles(m.cfg.CNIConfigDir, []string{".conflist"})
	if err != nil {
		return out
	}
	var named []string
	seen := map[string]bool{}
	for _, f := range files {
		l, err := libcni.ConfListFromFile(f)
		if err != nil || l.Name == "" || seen[l.Name] {
			continue
		}
		ok := true
		for _, p := range l.Plugins {
			ok = ok && m.havePlugins(p.Network.Type)
		}
		if ok {
			seen[l.Name] = true
			named = append(named, cniPrefix+l.Name)
		}
	}
	sort.Strings(named)
	return append(out, named...)
}

func (m *Manager) havePlugins(names ...string) bool {
	for _, n := range names {
		if _, err := invoke.FindInPath(n, m.cfg.CNIPath); err != nil {
			return false
		}
	}
	return true
}
