package jobspec

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// functions returns the functions a job file may call: cty's standard
// library under the names Terraform and Nomad users know, plus a few
// encoding and hashing helpers. None depends on the clock or randomness
// (there is no timestamp or uuid), so parsing the same file gives the same
// job. The file functions read below baseDir, and only when allowFS is set.
func functions(baseDir string, allowFS bool) map[string]function.Function {
	funcs := map[string]function.Function{
		"abs":             stdlib.AbsoluteFunc,
		"base64decode":    base64DecodeFunc,
		"base64encode":    base64EncodeFunc,
		"basename":        pathFunc(filepath.Base),
		"can":             tryfunc.CanFunc,
		"ceil":            stdlib.CeilFunc,
		"chomp":           stdlib.ChompFunc,
		"chunklist":       stdlib.ChunklistFunc,
		"coalesce":        stdlib.CoalesceFunc,
		"coalescelist":    stdlib.CoalesceListFunc,
		"compact":         stdlib.CompactFunc,
		"concat":          stdlib.ConcatFunc,
		"contains":        stdlib.ContainsFunc,
		"convert":         typeexpr.ConvertFunc,
		"csvdecode":       stdlib.CSVDecodeFunc,
		"dirname":         pathFunc(filepath.Dir),
		"distinct":        stdlib.DistinctFunc,
		"element":         stdlib.ElementFunc,
		"flatten":         stdlib.FlattenFunc,
		"floor":           stdlib.FloorFunc,
		"format":          stdlib.FormatFunc,
		"formatdate":      stdlib.FormatDateFunc,
		"formatlist":      stdlib.FormatListFunc,
		"indent":          stdlib.IndentFunc,
		"index":           stdlib.IndexFunc,
		"join":            stdlib.JoinFunc,
		"jsondecode":      stdlib.JSONDecodeFunc,
		"jsonencode":      stdlib.JSONEncodeFunc,
		"keys":            stdlib.KeysFunc,
		"length":          stdlib.LengthFunc,
		"log":             stdlib.LogFunc,
		"lookup":          stdlib.LookupFunc,
		"lower":           stdlib.LowerFunc,
		"max":             stdlib.MaxFunc,
		"md5":             hashFunc(md5.New),
		"merge":           stdlib.MergeFunc,
		"min":             stdlib.MinFunc,
		"parseint":        stdlib.ParseIntFunc,
		"pow":             stdlib.PowFunc,
		"range":           stdlib.RangeFunc,
		"regex":           stdlib.RegexFunc,
		"regexall":        stdlib.RegexAllFunc,
		"regex_replace":   stdlib.RegexReplaceFunc,
		"replace":         replaceFunc,
		"reverse":         stdlib.ReverseListFunc,
		"setintersection": stdlib.SetIntersectionFunc,
		"setproduct":      stdlib.SetProductFunc,
		"setsubtract":     stdlib.SetSubtractFunc,
		"setunion":        stdlib.SetUnionFunc,
		"sha1":            hashFunc(sha1.New),
		"sha256":          hashFunc(sha256.New),
		"sha512":          hashFunc(sha512.New),
		"signum":          stdlib.SignumFunc,
		"slice":           stdlib.SliceFunc,
		"sort":            stdlib.SortFunc,
		"split":           stdlib.SplitFunc,
		"strrev":          stdlib.ReverseFunc,
		"substr":          stdlib.SubstrFunc,
		"timeadd":         stdlib.TimeAddFunc,
		"title":           stdlib.TitleFunc,
		"tobool":          stdlib.MakeToFunc(cty.Bool),
		"tolist":          stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
		"tomap":           stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
		"tonumber":        stdlib.MakeToFunc(cty.Number),
		"toset":           stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
		"tostring":        stdlib.MakeToFunc(cty.String),
		"trim":            stdlib.TrimFunc,
		"trimprefix":      stdlib.TrimPrefixFunc,
		"trimspace":       stdlib.TrimSpaceFunc,
		"trimsuffix":      stdlib.TrimSuffixFunc,
		"try":             tryfunc.TryFunc,
		"upper":           stdlib.UpperFunc,
		"urlencode":       urlEncodeFunc,
		"values":          stdlib.ValuesFunc,
		"zipmap":          stdlib.ZipmapFunc,
	}
	fs := fileFuncs{baseDir: baseDir, allowed: allowFS}
	funcs["file"] = fs.file()
	funcs["fileexists"] = fs.exists()
	return funcs
}

// replaceFunc is replace(string, substring, replacement); a substring
// written as /regexp/ is a regular expression, as in Terraform and Nomad.
var replaceFunc = function.New(&function.Spec{
	Params: []function.Parameter{
		{Name: "str", Type: cty.String},
		{Name: "substr", Type: cty.String},
		{Name: "replace", Type: cty.String},
	},
	Type: function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		sub := args[1].AsString()
		if len(sub) > 1 && strings.HasPrefix(sub, "/") && strings.HasSuffix(sub, "/") {
			return stdlib.RegexReplace(args[0], cty.StringVal(sub[1:len(sub)-1]), args[2])
		}
		return stdlib.Replace(args[0], args[1], args[2])
	},
})

var base64EncodeFunc = stringFunc(func(s string) (string, error) {
	return base64.StdEncoding.EncodeToString([]byte(s)), nil
})

var base64DecodeFunc = stringFunc(func(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("invalid base64: %w", err)
	}
	return string(b), nil
})

var urlEncodeFunc = stringFunc(func(s string) (string, error) {
	return url.QueryEscape(s), nil
})

func pathFunc(f func(string) string) function.Function {
	return stringFunc(func(s string) (string, error) { return f(s), nil })
}

func hashFunc(newHash func() hash.Hash) function.Function {
	return stringFunc(func(s string) (string, error) {
		h := newHash()
		h.Write([]byte(s))
		return hex.EncodeToString(h.Sum(nil)), nil
	})
}

// stringFunc makes a function from string to string.
func stringFunc(f func(string) (string, error)) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "str", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			out, err := f(args[0].AsString())
			if err != nil {
				return cty.UnknownVal(cty.String), err
			}
			return cty.StringVal(out), nil
		},
	})
}

// errFSNotAllowed is returned by the file functions when the parse was not
// allowed to read files: a job file submitted to a server must not read the
// server's disk.
var errFSNotAllowed = errors.New("reading files is not allowed in this context; " +
	"file functions work only when the job file is parsed locally (ParseConfig.AllowFS)")

// fileFuncs are the functions that read the file system, relative to the
// job file's directory.
type fileFuncs struct {
	baseDir string
	allowed bool
}

func (f fileFuncs) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(f.baseDir, p)
}

func (f fileFuncs) file() function.Function {
	return stringFunc(func(p string) (string, error) {
		if !f.allowed {
			return "", errFSNotAllowed
		}
		b, err := os.ReadFile(f.path(p))
		if err != nil {
			return "", err
		}
		return string(b), nil
	})
}

func (f fileFuncs) exists() function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "path", Type: cty.String}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if !f.allowed {
				return cty.UnknownVal(cty.Bool), errFSNotAllowed
			}
			_, err := os.Stat(f.path(args[0].AsString()))
			switch {
			case err == nil:
				return cty.True, nil
			case errors.Is(err, os.ErrNotExist):
				return cty.False, nil
			default:
				return cty.UnknownVal(cty.Bool), err
			}
		},
	})
}
