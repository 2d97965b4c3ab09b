package config

import (
	"path/filepath"

	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/client/network"
)

// ClientNetwork holds the client keys of group networks (Nomad's names):
// cni_path, cni_config_dir and bridge_network_*. Empty fields take the
// defaults of client/network.
type ClientNetwork struct {
	CNIPath      string
	CNIConfigDir string
	BridgeName   string
	BridgeSubnet string
	HairpinMode  bool
}

// networkAttrs are the client block's attributes of ClientNetwork, each
// value checked where it is decoded so the error names its key.
func networkAttrs(n *ClientNetwork) map[string]attrFunc {
	return map[string]attrFunc{
		"cni_path":       cniPathAttr(&n.CNIPath),
		"cni_config_dir": absDirAttr(&n.CNIConfigDir),
		"bridge_network_name": func(d *decoder, key string, a *hcl.Attribute) {
			var s string
			if !d.decodeString(key, a.Expr, &s) {
				return
			}
			if err := network.ValidateBridge(s, ""); err != nil {
				d.problem(a.Expr.Range(), key, "%v", err)
				return
			}
			n.BridgeName = s
		},
		"bridge_network_subnet": func(d *decoder, key string, a *hcl.Attribute) {
			var s string
			if !d.decodeString(key, a.Expr, &s) {
				return
			}
			if err := network.ValidateBridge("", s); err != nil {
				d.problem(a.Expr.Range(), key, "%v", err)
				return
			}
			n.BridgeSubnet = s
		},
		"bridge_network_hairpin_mode": boolAttr(&n.HairpinMode),
	}
}

func cniPathAttr(dst *string) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		var s string
		if !d.decodeString(key, a.Expr, &s) {
			return
		}
		for _, p := range network.SplitCNIPath(s) {
			if !filepath.IsAbs(p) {
				d.problem(a.Expr.Range(), key, "%q is not an absolute directory (want a list such as %q)", p, network.DefaultCNIPath)
				return
			}
		}
		*dst = s
	}
}

func absDirAttr(dst *string) attrFunc {
	return func(d *decoder, key string, a *hcl.Attribute) {
		var s string
		if !d.decodeString(key, a.Expr, &s) {
			return
		}
		if !filepath.IsAbs(s) {
			d.problem(a.Expr.Range(), key, "%q is not an absolute directory", s)
			return
		}
		*dst = s
	}
}

// merge lays o's set fields over n's.
func (n ClientNetwork) merge(o ClientNetwork) ClientNetwork {
	setStr(&n.CNIPath, o.CNIPath)
	setStr(&n.CNIConfigDir, o.CNIConfigDir)
	setStr(&n.BridgeName, o.BridgeName)
	setStr(&n.BridgeSubnet, o.BridgeSubnet)
	n.HairpinMode = n.HairpinMode || o.HairpinMode
	return n
}

// config is the client's network.Config.
func (n ClientNetwork) config() network.Config {
	return network.Config{
		CNIPath:      network.SplitCNIPath(n.CNIPath),
		CNIConfigDir: n.CNIConfigDir,
		BridgeName:   n.BridgeName,
		BridgeSubnet: n.BridgeSubnet,
		HairpinMode:  n.HairpinMode,
	}
}
