package httpapi

import "github.com/drover-sched/drover/command/agent/internal/apitest"

// The HTTP client side of the tests is shared with the agent's own
// (command/agent/internal/apitest); these are its short names here.
var (
	call          = apitest.Call
	callOK        = apitest.CallOK
	requireStatus = apitest.RequireStatus
	index         = apitest.Index
	mockJob       = apitest.MockJob
	richNomadJob  = apitest.RichNomadJob
	openStream    = apitest.OpenStream
)
