package template

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/drover-sched/drover/helper/childproc"
	"github.com/drover-sched/drover/structs"
)

// RenderEntry names the child entry point that renders one task start's
// templates (see renderer.go for why they render in a child).
const RenderEntry = "template-render"

func init() { childproc.Register(RenderEntry, renderChild) }

// childRequest is everything a render reads that does not come from the
// sandboxed directories, resolved by the agent: paths already
// interpolated, the environment as a map, the clock as one instant.
type childRequest struct {
	Templates []*structs.Template
	TaskDir   string
	SharedDir string
	Env       map[string]string
	Now       time.Time
	Chown     bool
	Owner     *Owner       `json:",omitempty"`
	Services  *ServiceData `json:",omitempty"`
}

// childAnswer is what the child renders into: the env templates'
// variables, or the one template that failed.
type childAnswer struct {
	Vars    map[string]string `json:",omitempty"`
	Changed []int             `json:",omitempty"`
	Error   *childError       `json:",omitempty"`
}

// childError carries an *Error across the process boundary, with the one
// sentinel a caller may test for.
type childError struct {
	Index       int
	Msg         string
	PathEscapes bool
}

// pathEscapesError keeps errors.Is(err, ErrPathEscapes) true for a path
// refused in the child, with the child's message.
type pathEscapesError struct{ msg string }

func (e *pathEscapesError) Error() string { return e.msg }
func (e *pathEscapesError) Unwrap() error { return ErrPathEscapes }

// renderChild is the child's side: it renders the templates of the
// request to their destinations, under the same sandbox as in process,
// and reports each template's index as a step before rendering it.
func renderChild(input []byte, step func(string)) ([]byte, error) {
	var req childRequest
	if err := json.Unmarshal(input, &req); err != nil {
		return nil, fmt.Errorf("reading the render request: %w", err)
	}
	now := req.Now
	vars, changed, err := render(Input{
		Templates: req.Templates,
		TaskDir:   req.TaskDir,
		SharedDir: req.SharedDir,
		Env:       req.Env,
		Now:       func() time.Time { return now },
		Chown:     req.Chown,
		Owner:     req.Owner,
		Services:  req.Services,
	}, func(i int) { step(strconv.Itoa(i)) })
	var te *Error
	switch {
	case errors.As(err, &te):
		return json.Marshal(childAnswer{Error: &childError{Index: te.Index, Msg: te.Err.Error(), PathEscapes: errors.Is(err, ErrPathEscapes)}})
	case err != nil:
		// Not one template's fault (the task directory is missing, say).
		return nil, err
	}
	return json.Marshal(childAnswer{Vars: vars, Changed: changed})
}
