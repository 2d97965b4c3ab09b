package template

import (
	"fmt"
	"sort"
)

// Scratch is consul-template's scratch pad: a map a template writes and
// reads while it renders ({{ scratch.Set "k" 1 }}{{ scratch.Get "k" }}).
// Each render starts with an empty one. A render runs in one goroutine,
// so it needs no lock.
type Scratch struct {
	values map[string]any
}

// Key reports whether k is set.
func (s *Scratch) Key(k string) bool {
	_, ok := s.values[k]
	return ok
}

// Get returns the value of k, or nil.
func (s *Scratch) Get(k string) any { return s.values[k] }

// Set sets k to v. It returns "" so that it prints nothing.
func (s *Scratch) Set(k string, v any) string {
	s.init()
	s.values[k] = v
	return ""
}

// SetX sets k to v unless k is already set.
func (s *Scratch) SetX(k string, v any) string {
	s.init()
	if _, ok := s.values[k]; !ok {
		s.values[k] = v
	}
	return ""
}

// MapSet sets key mk of the map named k to v, creating the map.
func (s *Scratch) MapSet(k, mk string, v any) (string, error) { return s.mapSet(k, mk, v, true) }

// MapSetX is MapSet that leaves an existing key alone.
func (s *Scratch) MapSetX(k, mk string, v any) (string, error) { return s.mapSet(k, mk, v, false) }

func (s *Scratch) mapSet(k, mk string, v any, overwrite bool) (string, error) {
	s.init()
	if _, ok := s.values[k]; !ok {
		s.values[k] = map[string]any{}
	}
	m, ok := s.values[k].(map[string]any)
	if !ok {
		return "", fmt.Errorf("%q is not a map", k)
	}
	if _, set := m[mk]; overwrite || !set {
		m[mk] = v
	}
	return "", nil
}

// MapValues returns the values of the map named k, sorted by their keys;
// nil when k is not a map.
func (s *Scratch) MapValues(k string) ([]any, error) {
	m, ok := s.values[k].(map[string]any)
	if !ok {
		return nil, nil
	}
	keys := make([]string, 0, len(m))
	for mk := range m {
		keys = append(keys, mk)
	}
	sort.Strings(keys)
	out := make([]any, len(keys))
	for i, mk := range keys {
		out[i] = m[mk]
	}
	return out, nil
}

func (s *Scratch) init() {
	if s.values == nil {
		s.values = map[string]any{}
	}
}
