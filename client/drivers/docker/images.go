package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/registry"
	"github.com/docker/docker/pkg/jsonmessage"

	"github.com/drover-sched/drover/client/drivers"
)

// imageRefs counts the tasks using each image (by image ID) and removes
// an image once none has used it for gc.image_delay, if gc.image is on.
// A task that starts with the image in the meantime cancels the removal.
type imageRefs struct {
	d *Driver

	mu sync.Mutex
	// refs counts users by image ID; names are the references tasks used
	// for it, which are what the removal untags.
	refs    map[string]int
	names   map[string]map[string]bool
	pending map[string]chan struct{}
}

func newImageRefs(d *Driver) *imageRefs {
	return &imageRefs{d: d, refs: map[string]int{}, names: map[string]map[string]bool{}, pending: map[string]chan struct{}{}}
}

// ensure makes the task's image present (pulling it when missing or when
// force_pull is set) and counts the task as a user. It returns the image
// ID.
func (r *imageRefs) ensure(tc *TaskConfig) (string, error) {
	d := r.d
	if !tc.ForcePull {
		if id, err := r.inspect(tc.Image); err == nil {
			r.acquire(id, tc.Image)
			return id, nil
		} else if !cerrdefs.IsNotFound(err) {
			return "", fmt.Errorf("docker: inspecting image %q: %w", tc.Image, err)
		}
	}
	if err := r.pull(tc); err != nil {
		return "", err
	}
	id, err := r.inspect(tc.Image)
	if err != nil {
		return "", fmt.Errorf("docker: image %q is not there after its pull: %w", tc.Image, err)
	}
	d.logger.Debug("pulled image", "image", tc.Image, "id", shortID(id))
	r.acquire(id, tc.Image)
	return id, nil
}

func (r *imageRefs) inspect(ref string) (string, error) {
	ctx, cancel := r.d.call()
	defer cancel()
	info, err := r.d.docker.ImageInspect(ctx, ref)
	if err != nil {
		return "", err
	}
	return info.ID, nil
}

// pull pulls the image within image_pull_timeout, failing early when the
// daemon reports no progress for the plugin's pull_activity_timeout. With
// auth_soft_fail, a pull refused with the task's credentials is tried once
// more without them.
func (r *imageRefs) pull(tc *TaskConfig) error {
	err := r.pullWith(tc, tc.Auth)
	if err != nil && tc.Auth != nil && tc.AuthSoftFail {
		r.d.logger.Warn("image pull with credentials failed; trying without (auth_soft_fail)", "image", tc.Image, "error", err)
		err = r.pullWith(tc, nil)
	}
	return err
}

func (r *imageRefs) pullWith(tc *TaskConfig, auth *Auth) error {
	d := r.d
	opts := image.PullOptions{}
	if auth != nil {
		enc, err := registry.EncodeAuthConfig(registry.AuthConfig{Username: auth.Username, Password: auth.Password, ServerAddress: auth.ServerAddress})
		if err != nil {
			return fmt.Errorf("docker: encoding the auth of image %q: %w", tc.Image, err)
		}
		opts.RegistryAuth = enc
	}
	ctx, cancel := context.WithTimeout(d.ctx, tc.ImagePullTimeout)
	defer cancel()
	// The watchdog cancels the pull when the daemon reports nothing for
	// pull_activity_timeout, including before its first message (a daemon
	// stuck resolving the image answers the pull call only then).
	activity := make(chan struct{}, 1)
	var stalled atomic.Bool
	if idle := d.opts.Config.PullActivityTimeout; idle > 0 {
		go func() {
			for {
				select {
				case <-activity:
				case <-d.clock.After(idle):
					stalled.Store(true)
					cancel()
					return
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	fail := func(err error) error {
		switch {
		case stalled.Load():
			return &drivers.RecoverableError{Err: fmt.Errorf("docker: pulling image %q made no progress for %v (plugin config pull_activity_timeout)", tc.Image, d.opts.Config.PullActivityTimeout)}
		case d.ctx.Err() != nil:
			return fmt.Errorf("docker: pulling image %q: the client is shutting down", tc.Image)
		case ctx.Err() != nil:
			return &drivers.RecoverableError{Err: fmt.Errorf("docker: pulling image %q did not finish within image_pull_timeout %v", tc.Image, tc.ImagePullTimeout)}
		}
		return pullError(tc, err)
	}
	rc, err := d.docker.ImagePull(ctx, tc.Image, opts)
	if err != nil {
		return fail(err)
	}
	defer rc.Close()
	dec := json.NewDecoder(rc)
	for {
		var m jsonmessage.JSONMessage
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) && ctx.Err() == nil {
				return nil
			}
			return fail(err)
		}
		if m.Error != nil {
			return pullError(tc, m.Error)
		}
		select {
		case activity <- struct{}{}:
		default:
		}
	}
}

// pullError names the image and passes on the daemon's answer. A missing
// image or refused credentials will not get better by retrying; anything
// else (a registry that is down) may.
func pullError(tc *TaskConfig, err error) error {
	e := fmt.Errorf("docker: pulling image %q failed: %w", tc.Image, err)
	if cerrdefs.IsNotFound(err) || cerrdefs.IsUnauthorized(err) || cerrdefs.IsPermissionDenied(err) || cerrdefs.IsInvalidArgument(err) || refusedCredentials(err) {
		return e
	}
	return &drivers.RecoverableError{Err: e}
}

// registryRefusals are what a registry's answer says when it refused the
// credentials (or their absence). The daemon passes such an answer on as
// a plain error (status 500), so its text is all there is to go by.
var registryRefusals = []string{"unauthorized", "authentication required", "no basic auth credentials", "access denied", "denied: requested access"}

// refusedCredentials reports whether the registry refused the pull's
// credentials: retrying with the same ones cannot succeed.
func refusedCredentials(err error) bool {
	msg := strings.ToLower(err.Error())
	for _, r := range registryRefusals {
		if strings.Contains(msg, r) {
			return true
		}
	}
	return false
}

// acquire counts one more user of an image and cancels a pending removal.
func (r *imageRefs) acquire(id, name string) {
	if id == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refs[id]++
	if r.names[id] == nil {
		r.names[id] = map[string]bool{}
	}
	if name != "" {
		r.names[id][name] = true
	}
	if ch, ok := r.pending[id]; ok {
		close(ch)
		delete(r.pending, id)
	}
}

// release counts one user less; the last one schedules the removal.
func (r *imageRefs) release(id, name string) {
	if id == "" {
		return
	}
	d := r.d
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refs[id] > 0 {
		r.refs[id]--
	}
	if r.refs[id] > 0 || !d.opts.Config.GC.Image {
		return
	}
	if _, ok := r.pending[id]; ok {
		return
	}
	cancel := make(chan struct{})
	r.pending[id] = cancel
	after := d.clock.After(d.opts.Config.GC.ImageDelay)
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		select {
		case <-after:
		case <-cancel:
			return
		case <-d.ctx.Done():
			return
		}
		r.remove(id, cancel)
	}()
}

// remove untags the references tasks used for the image (deleting it with
// its last tag), if no task took it up again since the removal was
// scheduled. An image some other container still uses stays, with the
// daemon's refusal logged.
func (r *imageRefs) remove(id string, cancel chan struct{}) {
	r.mu.Lock()
	if r.pending[id] != cancel || r.refs[id] > 0 {
		r.mu.Unlock()
		return
	}
	delete(r.pending, id)
	names := r.names[id]
	delete(r.names, id)
	delete(r.refs, id)
	r.mu.Unlock()
	refs := make([]string, 0, len(names))
	for n := range names {
		refs = append(refs, n)
	}
	if len(refs) == 0 {
		refs = append(refs, id)
	}
	for _, ref := range refs {
		ctx, done := r.d.call()
		_, err := r.d.docker.ImageRemove(ctx, ref, image.RemoveOptions{PruneChildren: true})
		done()
		if err != nil && !cerrdefs.IsNotFound(err) {
			r.d.logger.Warn("cannot remove unused image", "image", ref, "error", err)
			continue
		}
		r.d.logger.Debug("removed unused image", "image", ref)
	}
}

// pendingRemovals reports how many images wait for their removal (tests).
func (r *imageRefs) pendingRemovals() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}
