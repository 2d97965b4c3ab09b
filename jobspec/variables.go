package jobspec

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// envVarPrefix marks environment variables that set input variables:
// NOMAD_VAR_image=redis:7 sets var.image. Nomad's prefix is kept so that
// existing setups work unchanged.
const envVarPrefix = "NOMAD_VAR_"

// variable is one declared input variable and the value it ends up with.
type variable struct {
	name string
	// typ is the declared type, or cty.DynamicPseudoType without one.
	typ       cty.Type
	typeGiven bool
	// defaultIsComplex says that an untyped variable's default is a
	// collection or object, so string inputs are read as HCL expressions.
	defaultIsComplex bool
	value            cty.Value
	decl             hcl.Range
	validations      []validation
}

// validation is a variable's validation block.
type validation struct {
	condition hcl.Expression
	message   string
	decl      hcl.Range
}

var variableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "type"}, {Name: "default"}, {Name: "description"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "condition", Required: true},
		{Name: "error_message", Required: true},
	},
}

// collectVariables declares the file's variables and settles their values,
// each source overriding the ones before it: default, NOMAD_VAR_
// environment variables, variable files in order, -var arguments in order.
// It returns the object bound to "var".
func collectVariables(content *hcl.BodyContent, c *ParseConfig, src sources) (cty.Value, hcl.Diagnostics) {
	fctx := &hcl.EvalContext{Functions: functions(baseDir(c.Path), c.AllowFS)}
	vars, diags := declareVariables(content, fctx, src)

	undefined := hcl.DiagWarning
	if c.Strict {
		undefined = hcl.DiagError
	}

	for _, kv := range c.Envs {
		rest, ok := strings.CutPrefix(kv, envVarPrefix)
		if !ok {
			continue
		}
		name, raw, ok := strings.Cut(rest, "=")
		if !ok {
			continue
		}
		// The environment holds values for many jobs, so an entry for a
		// variable this job does not declare is not a mistake.
		if v, found := vars[name]; found {
			diags = append(diags, v.setFromString(raw, "environment variable "+envVarPrefix+name, fctx)...)
		}
	}

	for _, path := range c.VarFiles {
		diags = append(diags, applyVarFile(path, vars, fctx, src, undefined)...)
	}

	for _, arg := range c.ArgVars {
		name, raw, ok := strings.Cut(arg, "=")
		if !ok || name == "" {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid -var argument",
				Detail: fmt.Sprintf("The argument %q must have the form name=value.", arg)})
			continue
		}
		v, found := vars[name]
		if !found {
			diags = append(diags, &hcl.Diagnostic{Severity: undefined, Summary: "Undefined -var variable",
				Detail: fmt.Sprintf("A value was given for %q, but the job file declares no such variable. "+
					"To use it, declare it with a variable %q block.", name, name)})
			continue
		}
		diags = append(diags, v.setFromString(raw, "-var argument", fctx)...)
	}

	values := make(map[string]cty.Value, len(vars))
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		v := vars[name]
		if v.value == cty.NilVal {
			diags = append(diags, newDiag(v.decl, fmt.Sprintf("Unset variable %q", name),
				"The variable has no default, so a value must be given with -var, a variable file or %s%s.",
				envVarPrefix, name))
			continue
		}
		diags = append(diags, v.validate(fctx, src)...)
		values[name] = v.value
	}
	if diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	return cty.ObjectVal(values), diags
}

// declareVariables reads variable blocks and the older variables { a = 1 }
// blocks.
func declareVariables(content *hcl.BodyContent, fctx *hcl.EvalContext, src sources) (map[string]*variable, hcl.Diagnostics) {
	vars := map[string]*variable{}
	var diags hcl.Diagnostics
	declare := func(v *variable) {
		if prev, dup := vars[v.name]; dup {
			diags = append(diags, newDiag(v.decl, "Duplicate variable",
				"The variable %q is already declared at %s.", v.name, prev.decl))
			return
		}
		vars[v.name] = v
	}

	for _, b := range content.Blocks {
		switch b.Type {
		case "variable":
			v, ds := decodeVariableBlock(b, fctx, src)
			diags = append(diags, ds...)
			if v != nil {
				declare(v)
			}
		case "variables":
			attrs, ds := b.Body.JustAttributes()
			diags = append(diags, ds...)
			for _, a := range sortedAttrs(attrs) {
				val, ds := evaluate(fctx, a.Expr, src)
				diags = append(diags, ds...)
				declare(&variable{name: a.Name, typ: cty.DynamicPseudoType, value: val,
					defaultIsComplex: !val.Type().IsPrimitiveType(), decl: a.NameRange})
			}
		}
	}
	return vars, diags
}

func decodeVariableBlock(b *hcl.Block, fctx *hcl.EvalContext, src sources) (*variable, hcl.Diagnostics) {
	name := b.Labels[0]
	content, diags := b.Body.Content(variableSchema)
	if !hclsyntax.ValidIdentifier(name) {
		diags = append(diags, newDiag(b.LabelRanges[0], "Invalid variable name",
			"A name must start with a letter or underscore and may contain only letters, digits, underscores and dashes."))
		return nil, diags
	}
	v := &variable{name: name, typ: cty.DynamicPseudoType, decl: b.DefRange}

	if a, ok := content.Attributes["type"]; ok {
		ty, ds := typeexpr.TypeConstraint(a.Expr)
		diags = append(diags, ds...)
		if !ds.HasErrors() {
			v.typ, v.typeGiven = ty, true
		}
	}
	if a, ok := content.Attributes["default"]; ok {
		val, ds := evaluate(fctx, a.Expr, src)
		diags = append(diags, ds...)
		if ds.HasErrors() {
			// Reported already; do not also call the variable unset.
			v.value = cty.DynamicVal
		} else {
			v.defaultIsComplex = !val.Type().IsPrimitiveType() && val.Type() != cty.DynamicPseudoType
			diags = append(diags, v.set(val, a.Expr.Range(), "default value")...)
		}
	}
	for _, vb := range content.Blocks {
		vc, ds := vb.Body.Content(validationSchema)
		diags = append(diags, ds...)
		if ds.HasErrors() {
			continue
		}
		msg, ds := evaluate(fctx, vc.Attributes["error_message"].Expr, src)
		diags = append(diags, ds...)
		if ds.HasErrors() {
			continue
		}
		msg, err := convert.Convert(msg, cty.String)
		if err != nil || msg.IsNull() {
			diags = append(diags, newDiag(vc.Attributes["error_message"].Expr.Range(),
				"Invalid validation error message", "The error message must be a string."))
			continue
		}
		v.validations = append(v.validations, validation{
			condition: vc.Attributes["condition"].Expr, message: msg.AsString(), decl: vb.DefRange,
		})
	}
	return v, diags
}

// set converts val to the variable's type and makes it the value.
func (v *variable) set(val cty.Value, rng hcl.Range, origin string) hcl.Diagnostics {
	if v.typeGiven {
		converted, err := convert.Convert(val, v.typ)
		if err != nil {
			return hcl.Diagnostics{newDiag(rng, "Invalid value for variable",
				"The %s for %q does not match the variable's type %s: %s.",
				origin, v.name, typeexpr.TypeString(v.typ), err)}
		}
		val = converted
	}
	v.value = val
	return nil
}

// setFromString sets the variable from a string given on the command line
// or in the environment. Strings are taken literally for variables of a
// primitive type (or none), and read as HCL expressions (["a", "b"],
// { k = "v" }) for collection and object types. For type any, a string
// that is not a self-contained expression is taken literally, so that
// -var name=hello works.
func (v *variable) setFromString(raw, origin string, fctx *hcl.EvalContext) hcl.Diagnostics {
	filename := fmt.Sprintf("<value for var.%s from %s>", v.name, origin)
	rng := hcl.Range{Filename: filename, Start: hcl.InitialPos, End: hcl.InitialPos}
	literal := !v.defaultIsComplex && (!v.typeGiven || v.typ.IsPrimitiveType())
	if literal {
		return v.set(cty.StringVal(raw), rng, origin)
	}
	if diags := checkExprNesting([]byte(raw), filename, MaxNestingDepth); diags.HasErrors() {
		return diags
	}
	expr, diags := hclsyntax.ParseExpression([]byte(raw), filename, hcl.InitialPos)
	if v.typ == cty.DynamicPseudoType && (diags.HasErrors() || len(expr.Variables()) > 0) {
		return v.set(cty.StringVal(raw), rng, origin)
	}
	if diags.HasErrors() {
		return diags
	}
	val, diags := expr.Value(fctx)
	if diags.HasErrors() {
		return diags
	}
	return v.set(val, expr.Range(), origin)
}

// validate runs the variable's validation blocks against its value.
func (v *variable) validate(fctx *hcl.EvalContext, src sources) hcl.Diagnostics {
	var diags hcl.Diagnostics
	ctx := fctx.NewChild()
	ctx.Variables = map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{v.name: v.value})}
	for _, val := range v.validations {
		ok, ds := evaluate(ctx, val.condition, src)
		diags = append(diags, ds...)
		if ds.HasErrors() {
			continue
		}
		ok, err := convert.Convert(ok, cty.Bool)
		if err != nil || ok.IsNull() {
			diags = append(diags, newDiag(val.condition.Range(), "Invalid validation condition",
				"The condition must be true or false."))
			continue
		}
		if ok.False() {
			diags = append(diags, newDiag(v.decl, "Invalid value for variable",
				"%s (checked by the validation at %s)", val.message, val.decl))
		}
	}
	return diags
}

// applyVarFile sets variables from a variable file, a list of
// name = value arguments in HCL or JSON.
func applyVarFile(path string, vars map[string]*variable, fctx *hcl.EvalContext, src sources, undefined hcl.DiagnosticSeverity) hcl.Diagnostics {
	body, err := os.ReadFile(path)
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Failed to read variable file",
			Detail: fmt.Sprintf("Reading %s: %s.", path, err)}}
	}
	file, diags := parseHCLOrJSON(body, path)
	if diags.HasErrors() {
		return diags
	}
	src[path] = body

	// A variable block here is a common slip (declaring instead of
	// assigning); say so rather than "unexpected block".
	content, _, _ := file.Body.PartialContent(&hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{{Type: "variable", LabelNames: []string{"name"}}},
	})
	for _, b := range content.Blocks {
		diags = append(diags, newDiag(b.DefRange, "Variable declaration in a variable file",
			"A variable file assigns values (%s = <value>); declare the variable %q in the job file instead.",
			b.Labels[0], b.Labels[0]))
	}
	if diags.HasErrors() {
		return diags
	}

	attrs, ds := file.Body.JustAttributes()
	diags = append(diags, ds...)
	for _, a := range sortedAttrs(attrs) {
		v, found := vars[a.Name]
		if !found {
			diags = append(diags, &hcl.Diagnostic{Severity: undefined, Summary: "Undefined variable",
				Detail: fmt.Sprintf("A value is given for %q, but the job file declares no such variable. "+
					"To use it, declare it with a variable %q block.", a.Name, a.Name),
				Subject: a.NameRange.Ptr()})
			continue
		}
		val, ds := evaluate(fctx, a.Expr, src)
		diags = append(diags, ds...)
		if !ds.HasErrors() {
			diags = append(diags, v.set(val, a.Expr.Range(), "value in "+path)...)
		}
	}
	return diags
}

func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	return slices.SortedFunc(maps.Values(attrs), func(a, b *hcl.Attribute) int {
		return cmp.Compare(a.Range.Start.Byte, b.Range.Start.Byte)
	})
}
