package structs

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A task's driver config is the driver's own: Drover carries it as a
// map and the client hands it to the driver. Left unchecked, a typo
// (`comand = "/bin/sleep"`) validates and plans, and the task then fails
// on a client with "config "command" is missing"; an unknown key is
// silently ignored. So each built-in driver declares, once, the keys its
// config takes and their shapes (a DriverConfigSchema, one file per
// driver: driver_config_<name>.go), job validation refuses what the
// schema does not allow, naming the key and the closest known one, and
// the driver reads its config through the same key constants.
//
// A driver no schema is registered for (a plugin Drover does not ship)
// is not checked: its tasks cannot be placed anyway, and the scheduler
// says which driver is missing.

// DriverConfigKind is the shape a driver config value must have.
type DriverConfigKind uint8

// The shapes a value can have. Values arrive decoded from JSON (numbers
// as float64, lists as []any, objects as map[string]any), from HCL
// (int, []any, and []map[string]any for blocks) or from msgpack, and a
// value interpolated on the client (${NOMAD_META_x}) is a string until
// then, so every kind but KindString also accepts a string holding "${".
const (
	// KindString is a string.
	KindString DriverConfigKind = iota + 1
	// KindStrings is a list whose elements are strings, numbers or bools
	// (each read as a string, as HCL converts them).
	KindStrings
	// KindBool is a boolean, or a string strconv.ParseBool reads.
	KindBool
	// KindNumber is a number, or a string holding one.
	KindNumber
	// KindDuration is a duration written "10s", or a number of nanoseconds.
	KindDuration
	// KindStringMap is a map of string (or number, bool) values, written
	// as an HCL map or as one block of attributes.
	KindStringMap
	// KindBlock is one nested block, checked against DriverConfigKey.Block.
	KindBlock
	// KindBlocks is a list of nested blocks, each checked against
	// DriverConfigKey.Block.
	KindBlocks
)

// String names the kind the way an error message should.
func (k DriverConfigKind) String() string {
	switch k {
	case KindString:
		return "a string"
	case KindStrings:
		return "a list of strings"
	case KindBool:
		return "a boolean"
	case KindNumber:
		return "a number"
	case KindDuration:
		return `a duration (e.g. "10s")`
	case KindStringMap:
		return "a map of strings"
	case KindBlock:
		return "a block"
	case KindBlocks:
		return "a list of blocks"
	}
	return "kind " + strconv.Itoa(int(k))
}

// DriverConfigKey describes one key of a driver's config.
type DriverConfigKey struct {
	Kind DriverConfigKind
	// Required keys must be present (and not null).
	Required bool
	// Example is shown when a required key is missing, e.g.
	// `command = "/bin/sleep"`.
	Example string
	// Block is the schema of a KindBlock or KindBlocks value.
	Block *DriverConfigSchema
}

// DriverConfigSchema is the set of keys a driver's config (or a block
// inside it) may hold.
type DriverConfigSchema struct {
	Keys map[string]DriverConfigKey
}

var driverSchemas = struct {
	sync.RWMutex
	m map[string]*DriverConfigSchema
}{m: map[string]*DriverConfigSchema{}}

// RegisterDriverConfigSchema makes job validation check the config of
// tasks using driver against s. Each driver_config_<name>.go calls it
// from init; registering a name twice is a programming error and panics.
func RegisterDriverConfigSchema(driver string, s *DriverConfigSchema) {
	driverSchemas.Lock()
	defer driverSchemas.Unlock()
	if _, dup := driverSchemas.m[driver]; dup {
		panic("structs: driver config schema for " + strconv.Quote(driver) + " registered twice")
	}
	driverSchemas.m[driver] = s
}

// DriverConfigSchemaFor returns the schema registered for driver, or nil.
func DriverConfigSchemaFor(driver string) *DriverConfigSchema {
	driverSchemas.RLock()
	defer driverSchemas.RUnlock()
	return driverSchemas.m[driver]
}

// ValidateDriverConfig returns the problems of cfg under driver's schema
// as one error (a *ValidationError), or nil when there are none or no
// schema is registered for driver. Drivers may call it on a task's
// config to refuse, with the same words, a job stored before a rule.
func ValidateDriverConfig(driver string, cfg map[string]any) error {
	p := newProblems()
	validateDriverConfig(driver, cfg, p)
	return p.err()
}

// Validate returns the problems of cfg under s as one error (a
// *ValidationError), each message led by what, or nil. A driver checks
// its agent-side plugin config with it, in the words job validation uses.
func (s *DriverConfigSchema) Validate(what string, cfg map[string]any) error {
	p := newProblems()
	s.check(cfg, "", func(format string, args ...any) {
		p.add("%s: "+format, append([]any{what}, args...)...)
	})
	return p.err()
}

// validateDriverConfig adds the problems of a task's driver config.
func validateDriverConfig(driver string, cfg map[string]any, p problems) {
	s := DriverConfigSchemaFor(driver)
	if s == nil {
		return
	}
	s.check(cfg, "", func(format string, args ...any) {
		p.add("driver %q: "+format, append([]any{driver}, args...)...)
	})
}

// check reports each problem of cfg, a config or a block inside one at
// path (the keys leading to it, "" at the top, "mount[0]." in a block).
func (s *DriverConfigSchema) check(cfg map[string]any, path string, report func(string, ...any)) {
	suggested := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		key, ok := s.Keys[k]
		if !ok {
			if near := closestKey(k, s.Keys); near != "" {
				report("unknown config key %q; did you mean %q?", path+k, path+near)
				suggested[near] = true
			} else {
				report("unknown config key %q; the known keys are %s", path+k, strings.Join(slices.Sorted(maps.Keys(s.Keys)), ", "))
			}
			continue
		}
		if v := cfg[k]; v != nil {
			key.check(v, path+k, report)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Keys)) {
		// A required key already suggested for a misspelt one is not
		// reported missing as well: the fix is the same.
		if key := s.Keys[k]; key.Required && cfg[k] == nil && !suggested[k] {
			if key.Example != "" {
				report("config key %q is missing (e.g. %s)", path+k, key.Example)
			} else {
				report("config key %q is missing", path+k)
			}
		}
	}
}

// check reports a value that does not have the key's kind.
func (key DriverConfigKey) check(v any, path string, report func(string, ...any)) {
	bad := func() { report("config key %q must be %s, got %s", path, key.Kind, describeValue(v)) }
	if s, ok := v.(string); ok && key.Kind != KindString && strings.Contains(s, "${") {
		return // interpolated on the client
	}
	switch key.Kind {
	case KindString:
		if !isString(v) {
			bad()
		}
	case KindStrings:
		elems, ok := listOf(v)
		if !ok {
			bad()
			return
		}
		for i, e := range elems {
			if !isConfigScalar(e) {
				report("config key %q must be a list of strings, element %d is %s", path, i, describeValue(e))
			}
		}
	case KindBool:
		if !isBool(v) {
			bad()
		}
	case KindNumber:
		if !isNumber(v) {
			bad()
		}
	case KindDuration:
		if !isDuration(v) {
			bad()
		}
	case KindStringMap:
		m, ok := singleBlock(v)
		if !ok {
			bad()
			return
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if e := m[k]; e != nil && !isConfigScalar(e) {
				report("config key %q must be a map of strings, %q is %s", path, k, describeValue(e))
			}
		}
	case KindBlock:
		m, ok := singleBlock(v)
		if !ok {
			bad()
			return
		}
		key.Block.check(m, path+".", report)
	case KindBlocks:
		blocks, ok := blockList(v)
		if !ok {
			bad()
			return
		}
		for i, m := range blocks {
			key.Block.check(m, path+"["+strconv.Itoa(i)+"].", report)
		}
	}
}
