package jobspec

import (
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/api"
)

// template decodes a template block. Like Nomad's parser, it fills the
// change mode, permissions, splay and missing-key settings, so that a job
// shows the same template settings whether or not it was canonicalized.
func (d *decoder) template(body hcl.Body) *api.Template {
	t := &api.Template{}
	d.decodeBody(body, spec{
		attrs: attrSet{
			"source":               pointer(&t.SourcePath),
			"destination":          pointer(&t.DestPath),
			"data":                 pointer(&t.EmbeddedTmpl),
			"change_mode":          pointer(&t.ChangeMode),
			"change_signal":        pointer(&t.ChangeSignal),
			"once":                 pointer(&t.Once),
			"splay":                durationPtr(&t.Splay),
			"perms":                pointer(&t.Perms),
			"uid":                  pointer(&t.Uid),
			"gid":                  pointer(&t.Gid),
			"left_delimiter":       pointer(&t.LeftDelim),
			"right_delimiter":      pointer(&t.RightDelim),
			"env":                  pointer(&t.Envvars),
			"error_on_missing_key": pointer(&t.ErrMissingKey),
		},
		blocks: blockSet{
			"change_script": one(func(d *decoder, b *hcl.Block) { t.ChangeScript = d.changeScript(b.Body) }),
			"wait": one(func(d *decoder, b *hcl.Block) {
				t.Wait = &api.WaitConfig{}
				d.decodeBody(b.Body, spec{attrs: attrSet{
					"min": durationPtr(&t.Wait.Min),
					"max": durationPtr(&t.Wait.Max),
				}})
			}),
		},
	})
	if t.ChangeMode == nil {
		t.ChangeMode = new("restart")
	}
	if t.Perms == nil {
		t.Perms = new("0644")
	}
	if t.Splay == nil {
		t.Splay = new(5 * time.Second)
	}
	if t.ErrMissingKey == nil {
		t.ErrMissingKey = new(false)
	}
	return t
}

func (d *decoder) changeScript(body hcl.Body) *api.ChangeScript {
	c := &api.ChangeScript{}
	d.decodeBody(body, spec{attrs: attrSet{
		"command":       pointer(&c.Command),
		"args":          value(&c.Args),
		"timeout":       durationPtr(&c.Timeout),
		"fail_on_error": pointer(&c.FailOnError),
	}})
	if c.Args == nil {
		c.Args = []string{}
	}
	if c.Timeout == nil {
		c.Timeout = new(5 * time.Second)
	}
	if c.FailOnError == nil {
		c.FailOnError = new(false)
	}
	return c
}

// artifact decodes an artifact block.
func (d *decoder) artifact(body hcl.Body) *api.TaskArtifact {
	a := &api.TaskArtifact{}
	d.decodeBody(body, spec{
		attrs: attrSet{
			"source":      pointer(&a.GetterSource),
			"destination": pointer(&a.RelativeDest),
			"mode":        pointer(&a.GetterMode),
			"insecure":    pointer(&a.GetterInsecure),
			"chown":       value(&a.Chown),
		},
		maps: mapSet{
			"options": stringMap(&a.GetterOptions),
			"headers": stringMap(&a.GetterHeaders),
		},
	})
	return a
}
