package docker

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Kind is the shape a config key's value must have.
type Kind string

// The kinds a docker task config key may have.
const (
	KindString  Kind = "string"
	KindStrings Kind = "list of strings"
	KindBool    Kind = "bool"
	KindInt     Kind = "number"
	// KindMap is a map of strings (labels, sysctl, ulimit).
	KindMap Kind = "map"
	// KindBlock is a single nested block (auth, logging, healthchecks).
	KindBlock Kind = "block"
	// KindBlocks is a repeatable nested block (mount).
	KindBlocks Kind = "list of blocks"
)

// Key describes one config key. Keys holds the nested keys of a block.
type Key struct {
	Kind Kind
	Keys map[string]Key
}

// ConfigSchema is every key of Nomad's docker task config that Drover
// reads, with its kind and, for blocks, the keys inside. It is the one
// list of what a docker task may set: StartTask refuses any other key, and
// job validation can refuse it earlier from the same data.
var ConfigSchema = map[string]Key{
	"image":              {Kind: KindString},
	"command":            {Kind: KindString},
	"args":               {Kind: KindStrings},
	"entrypoint":         {Kind: KindStrings},
	"work_dir":           {Kind: KindString},
	"labels":             {Kind: KindMap},
	"ports":              {Kind: KindStrings},
	"network_mode":       {Kind: KindString},
	"hostname":           {Kind: KindString},
	"dns_servers":        {Kind: KindStrings},
	"dns_search_domains": {Kind: KindStrings},
	"dns_options":        {Kind: KindStrings},
	"extra_hosts":        {Kind: KindStrings},
	"volumes":            {Kind: KindStrings},
	"volume_driver":      {Kind: KindString},
	"mount": {Kind: KindBlocks, Keys: map[string]Key{
		"type":     {Kind: KindString},
		"target":   {Kind: KindString},
		"source":   {Kind: KindString},
		"readonly": {Kind: KindBool},
		"bind_options": {Kind: KindBlock, Keys: map[string]Key{
			"propagation": {Kind: KindString},
		}},
		"volume_options": {Kind: KindBlock, Keys: map[string]Key{
			"no_copy": {Kind: KindBool},
			"labels":  {Kind: KindMap},
		}},
		"tmpfs_options": {Kind: KindBlock, Keys: map[string]Key{
			"size": {Kind: KindInt},
			"mode": {Kind: KindInt},
		}},
	}},
	"privileged":        {Kind: KindBool},
	"cap_add":           {Kind: KindStrings},
	"cap_drop":          {Kind: KindStrings},
	"memory_hard_limit": {Kind: KindInt},
	"cpu_hard_limit":    {Kind: KindBool},
	"cpu_cfs_period":    {Kind: KindInt},
	"cpuset_cpus":       {Kind: KindString},
	"pids_limit":        {Kind: KindInt},
	"ulimit":            {Kind: KindMap},
	"sysctl":            {Kind: KindMap},
	"shm_size":          {Kind: KindInt},
	"security_opt":      {Kind: KindStrings},
	"readonly_rootfs":   {Kind: KindBool},
	"init":              {Kind: KindBool},
	"ipc_mode":          {Kind: KindString},
	"pid_mode":          {Kind: KindString},
	"uts_mode":          {Kind: KindString},
	"tty":               {Kind: KindBool},
	"interactive":       {Kind: KindBool},
	"auth": {Kind: KindBlock, Keys: map[string]Key{
		"username":       {Kind: KindString},
		"password":       {Kind: KindString},
		"email":          {Kind: KindString},
		"server_address": {Kind: KindString},
	}},
	"auth_soft_fail":     {Kind: KindBool},
	"force_pull":         {Kind: KindBool},
	"image_pull_timeout": {Kind: KindString},
	"logging": {Kind: KindBlock, Keys: map[string]Key{
		"type":   {Kind: KindString},
		"driver": {Kind: KindString},
		"config": {Kind: KindMap},
	}},
	"healthchecks": {Kind: KindBlock, Keys: map[string]Key{
		"disable": {Kind: KindBool},
	}},
}

// checkKeys refuses keys that schema does not list, naming the path of
// the key and the nearest known key, so that a typo ("comand") is not
// silently ignored.
func checkKeys(cfg map[string]any, schema map[string]Key, path string) error {
	for _, k := range slices.Sorted(mapKeys(cfg)) {
		key, ok := schema[k]
		name := path + k
		if !ok {
			msg := fmt.Sprintf("docker config: unknown key %q", name)
			if s := nearest(k, schema); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", path+s)
			}
			return fmt.Errorf("%s", msg)
		}
		if key.Kind != KindBlock && key.Kind != KindBlocks || key.Keys == nil {
			continue
		}
		blocks, err := asBlocks(cfg[k], name)
		if err != nil {
			return err
		}
		if key.Kind == KindBlock && len(blocks) > 1 {
			return fmt.Errorf("docker config: %q may be given once, got %d blocks", name, len(blocks))
		}
		for _, b := range blocks {
			if err := checkKeys(b, key.Keys, name+"."); err != nil {
				return err
			}
		}
	}
	return nil
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// nearest returns the known key closest to k by edit distance, if close
// enough to be a likely typo.
func nearest(k string, schema map[string]Key) string {
	names := make([]string, 0, len(schema))
	for n := range schema {
		names = append(names, n)
	}
	sort.Strings(names)
	best, bestD := "", len(k)/2+2
	for _, n := range names {
		if d := editDistance(strings.ToLower(k), n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// asBlocks reads a nested block in any of the shapes config arrives in:
// a map (JSON object), or a list of maps (HCL blocks, JSON arrays).
func asBlocks(v any, name string) ([]map[string]any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return []map[string]any{x}, nil
	case []map[string]any:
		return x, nil
	case []any:
		out := make([]map[string]any, 0, len(x))
		for _, e := range x {
			m, err := asMap(e, name)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
		return out, nil
	}
	return nil, fmt.Errorf("docker config: %q must be a block, got %T", name, v)
}

func asMap(v any, name string) (map[string]any, error) {
	switch x := v.(type) {
	case map[string]any:
		return x, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = e
		}
		return out, nil
	}
	return nil, fmt.Errorf("docker config: %q must be a block, got %T", name, v)
}

// asStringMap reads a map of strings (labels, sysctl, ulimit) given as a
// map or as HCL blocks (`labels { a = "b" }`), merging repeated blocks.
func asStringMap(v any, name string) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	var blocks []map[string]any
	if m, err := asMap(v, name); err == nil {
		blocks = []map[string]any{m}
	} else if bs, err := asBlocks(v, name); err == nil {
		blocks = bs
	} else {
		return nil, fmt.Errorf("docker config: %q must be a map of strings, got %T", name, v)
	}
	out := map[string]string{}
	for _, b := range blocks {
		for k, e := range b {
			switch s := e.(type) {
			case string:
				out[k] = s
			case bool, int, int64, uint64, float64:
				out[k] = fmt.Sprint(s)
			default:
				return nil, fmt.Errorf("docker config: %q key %q must be a string, got %T", name, k, e)
			}
		}
	}
	return out, nil
}
