package config

import (
	"testing"

	"github.com/drover-sched/drover/nomad"
)

func TestEventBufferSizeIsParsedAndBounded(t *testing.T) {
	checkServerIntKey(t, "event_buffer_size", 500,
		func(s *nomad.Config) int { return s.EventBufferEvents },
		func(c *Config) int { return c.Server.EventBufferSize },
		map[string]string{
			"server {\n  event_buffer_size = 0\n}\n":       "server.event_buffer_size: 0 would switch the limit off",
			"server {\n  event_buffer_size = 2000000\n}\n": "server.event_buffer_size: expected a number between 1 and 1048576",
		})
}
