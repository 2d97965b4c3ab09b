package jobspec

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// ignorableBlocks are Nomad job file blocks Drover accepts but does not act
// on (it has no Vault, Consul, workload identity, autoscaler, CSI, ...).
// "scaling" is decoded in a group (its bounds matter to scaling requests)
// and skipped in a task, where it configures dynamic application sizing.
// Rejecting them would make ordinary Nomad job files fail to parse (the
// output of `nomad job init` has an identity block), so they are skipped
// with a warning that names them.
var ignorableBlocks = map[string]bool{
	"vault": true, "consul": true, "identity": true, "scaling": true, "csi_plugin": true,
	"action": true, "schedule": true, "secret": true, "ui": true, "multiregion": true,
	"connect": true, "sidecar_service": true, "sidecar_task": true, "gateway": true,
	"numa": true, "cni": true, "consul_namespace": true, "kind": true,
}

// ignoredBlocks finds the ignorable blocks present in body that its spec
// does not decode. It warns about each one, and returns each type with the
// label count of its first occurrence (for the schema) and the ranges of
// all of them (so label-count complaints about ones with other counts,
// such as identity {} beside identity "vault_default" {}, can be dropped).
func (d *decoder) ignoredBlocks(body hcl.Body, s spec) (map[string]int, []hcl.Range) {
	syn := d.syntax.lookup(body)
	if syn == nil {
		return nil, nil
	}
	var types map[string]int
	var ranges []hcl.Range
	for _, b := range syn.Blocks {
		if !ignorableBlocks[b.Type] {
			continue
		}
		if _, decoded := s.blocks[b.Type]; decoded {
			continue
		}
		if types == nil {
			types = map[string]int{}
		}
		if _, seen := types[b.Type]; !seen {
			types[b.Type] = len(b.Labels)
		}
		ranges = append(ranges, b.Range())
		d.warnIgnored(b.Type, b.DefRange())
	}
	return types, ranges
}

// dropInside removes diagnostics about places inside any of ranges.
func dropInside(diags hcl.Diagnostics, ranges []hcl.Range) hcl.Diagnostics {
	if len(ranges) == 0 {
		return diags
	}
	out := diags[:0]
	for _, dg := range diags {
		inside := false
		for _, r := range ranges {
			if dg.Subject != nil && dg.Subject.Filename == r.Filename && dg.Subject.Start.Byte >= r.Start.Byte && dg.Subject.End.Byte <= r.End.Byte {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, dg)
		}
	}
	return out
}

func labelNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("label%d", i)
	}
	return out
}

// warnIgnored records that a block was skipped.
func (d *decoder) warnIgnored(blockType string, rng hcl.Range) {
	d.diags = append(d.diags, &hcl.Diagnostic{
		Severity: hcl.DiagWarning,
		Summary:  fmt.Sprintf("Block %q ignored", blockType),
		Detail:   fmt.Sprintf("Drover does not support %s blocks; this one was skipped and has no effect.", blockType),
		Subject:  rng.Ptr(),
	})
}

// warningsFrom renders the warning diagnostics as file:line,col: text.
func warningsFrom(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		if d.Severity != hcl.DiagWarning {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += "; " + d.Detail
		}
		if d.Subject != nil {
			msg = fmt.Sprintf("%s:%d,%d: %s", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, msg)
		}
		out = append(out, msg)
	}
	return out
}
