package jobspec

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// MaxNestingDepth bounds how deeply a job file may nest: blocks, lists,
// objects, parentheses, quoted templates and their directives, and the
// expressions HCL builds one tree level per operator of (chained
// conditionals, unary and binary operators, index and splat chains).
// HCL's parsers, and the evaluation and walks of what they build, recurse
// once per level, and a Go stack overflow cannot be recovered: a 200 KB
// body nested 100,000 deep, or a 1 MB sum 1+1+...+1, would take the whole
// agent down. Real job files nest a dozen levels; a hundred leaves room
// for generated ones.
const MaxNestingDepth = 100

// CheckNesting refuses src, a job file, variable file or agent
// configuration file in HCL's native or JSON syntax (or the API's JSON),
// if it nests deeper than limit, before any parser recurses into it. It
// reads src with HCL's scanner, which keeps its own stack and does not
// recurse. The error is an *Error whose diagnostic points at the token
// that went one level too deep. Source the scanner cannot read is left to
// the parser, which reports it with its usual errors.
func CheckNesting(src []byte, filename string, limit int) error {
	var rng *hcl.Range
	if isJSON(src) {
		rng = jsonTooDeep(src, filename, limit)
	} else {
		tokens, _ := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
		rng = tokensTooDeep(tokens, limit, 0)
	}
	if rng == nil {
		return nil
	}
	return &Error{Diagnostics: hcl.Diagnostics{tooDeep(*rng, limit)}}
}

// checkExprNesting is CheckNesting for a lone expression (a -var value).
func checkExprNesting(src []byte, filename string, limit int) hcl.Diagnostics {
	tokens, _ := hclsyntax.LexExpression(src, filename, hcl.InitialPos)
	if rng := tokensTooDeep(tokens, limit, 0); rng != nil {
		return hcl.Diagnostics{tooDeep(*rng, limit)}
	}
	return nil
}

func tooDeep(rng hcl.Range, limit int) *hcl.Diagnostic {
	return newDiag(rng, "Nesting too deep",
		"Blocks, brackets, parentheses, templates and chained operators nest more than %d levels deep here; "+
			"Drover refuses deeper nesting (jobspec.MaxNestingDepth) so that no file can exhaust the parser. Flatten the structure.", limit)
}

// depthFrame is one open bracket (or template directive) and the
// recursion its contents added without opening another: conditionals,
// operators, indexes and splats since the last element separator.
type depthFrame struct {
	closer hclsyntax.TokenType
	// newlineSeparates is true in a body or object, where a newline ends
	// an argument; inside (), [] and templates the parser skips newlines,
	// so a conditional chain may span lines there.
	newlineSeparates bool
	extra            int
}

// directiveFrame marks an open %{ if } or %{ for } directive, closed by
// its %{ endif } or %{ endfor }.
const directiveFrame hclsyntax.TokenType = -1

// tokensTooDeep returns the range of the first token at which the nesting
// of tokens exceeds limit, counting base levels already open around them
// (a template inside a JSON string), or nil.
func tokensTooDeep(tokens hclsyntax.Tokens, limit, base int) *hcl.Range {
	stack := []depthFrame{{newlineSeparates: true}}
	depth := base // open frames above the root, plus every frame's extra
	over := func(i int) *hcl.Range {
		if depth > limit {
			r := tokens[i].Range
			return &r
		}
		return nil
	}
	push := func(closer hclsyntax.TokenType, newlines bool) {
		stack = append(stack, depthFrame{closer: closer, newlineSeparates: newlines})
		depth++
	}
	pop := func() {
		if len(stack) > 1 {
			top := stack[len(stack)-1]
			depth -= 1 + top.extra
			stack = stack[:len(stack)-1]
		}
	}
	for i, tok := range tokens {
		top := &stack[len(stack)-1]
		switch tok.Type {
		case hclsyntax.TokenOBrace:
			push(hclsyntax.TokenCBrace, true)
		case hclsyntax.TokenOBrack:
			if i > 0 && endsValue(tokens[i-1].Type) {
				// An index or a splat of the value before: one tree
				// level that outlasts its brackets.
				top.extra++
				depth++
			}
			push(hclsyntax.TokenCBrack, false)
		case hclsyntax.TokenOParen:
			push(hclsyntax.TokenCParen, false)
		case hclsyntax.TokenOQuote:
			push(hclsyntax.TokenCQuote, false)
		case hclsyntax.TokenOHeredoc:
			push(hclsyntax.TokenCHeredoc, false)
		case hclsyntax.TokenTemplateInterp:
			push(hclsyntax.TokenTemplateSeqEnd, false)
		case hclsyntax.TokenTemplateControl:
			// The directive itself is one level; an if or for also opens
			// a level that lasts until its end directive.
			switch keyword(tokens, i+1) {
			case "if", "for":
				push(directiveFrame, false)
			case "endif", "endfor":
				if top.closer == directiveFrame {
					pop()
				}
			}
			push(hclsyntax.TokenTemplateSeqEnd, false)
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenCQuote,
			hclsyntax.TokenCHeredoc, hclsyntax.TokenTemplateSeqEnd:
			// Unbalanced closers are the parser's to report; a directive
			// left open is closed with what encloses it.
			for len(stack) > 1 && stack[len(stack)-1].closer == directiveFrame && tok.Type != hclsyntax.TokenTemplateSeqEnd {
				pop()
			}
			pop()
		case hclsyntax.TokenComma:
			depth -= top.extra
			top.extra = 0
		case hclsyntax.TokenNewline:
			if top.newlineSeparates {
				depth -= top.extra
				top.extra = 0
			}
		case hclsyntax.TokenQuestion, hclsyntax.TokenBang, hclsyntax.TokenMinus,
			hclsyntax.TokenPlus, hclsyntax.TokenSlash, hclsyntax.TokenPercent,
			hclsyntax.TokenEqualOp, hclsyntax.TokenNotEqual, hclsyntax.TokenLessThan, hclsyntax.TokenLessThanEq,
			hclsyntax.TokenGreaterThan, hclsyntax.TokenGreaterThanEq, hclsyntax.TokenAnd, hclsyntax.TokenOr:
			// Unary operators recurse in the parser; binary ones are read
			// in a loop, but each makes the tree one level deeper, and
			// evaluating it recurses per level. Counting every operator
			// of an element bounds its tree's depth from above.
			top.extra++
			depth++
		case hclsyntax.TokenStar:
			// A product, or an attribute splat (.*); the * of a full
			// splat ([*]) was counted with its bracket.
			if i > 0 && (endsValue(tokens[i-1].Type) || tokens[i-1].Type == hclsyntax.TokenDot) {
				top.extra++
				depth++
			}
		}
		if r := over(i); r != nil {
			return r
		}
	}
	return nil
}

// keyword returns the identifier at tokens[i], or "". (A "~" strip
// marker is part of the %{~ token, not a token of its own.)
func keyword(tokens hclsyntax.Tokens, i int) string {
	if i < len(tokens) && tokens[i].Type == hclsyntax.TokenIdent {
		return string(tokens[i].Bytes)
	}
	return ""
}

// endsValue reports whether a token of type t can end an operand, so that
// a bracket after it is an index or splat of that operand and a star after
// it a product.
func endsValue(t hclsyntax.TokenType) bool {
	switch t {
	case hclsyntax.TokenIdent, hclsyntax.TokenNumberLit, hclsyntax.TokenCQuote, hclsyntax.TokenCBrack,
		hclsyntax.TokenCParen, hclsyntax.TokenCBrace, hclsyntax.TokenCHeredoc, hclsyntax.TokenStar:
		return true
	}
	return false
}

// jsonTooDeep scans JSON for nesting deeper than limit: arrays and objects,
// and inside string values the HCL templates that HCL's JSON syntax
// evaluates ("${...}", "%{...}"). It does not validate the JSON: what it
// cannot make sense of is the decoder's to report.
func jsonTooDeep(src []byte, filename string, limit int) *hcl.Range {
	depth := 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '{', '[':
			depth++
			if depth > limit {
				return jsonRange(src, filename, i)
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		case '"':
			end := jsonStringEnd(src, i)
			if end < 0 {
				return nil
			}
			if r := jsonTemplateTooDeep(src, filename, i, end, limit, depth); r != nil {
				return r
			}
			i = end
		}
	}
	return nil
}

// jsonStringEnd returns the index of the quote closing the string that
// opens at src[start], or -1.
func jsonStringEnd(src []byte, start int) int {
	for j := start + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

// jsonTemplateTooDeep checks the string literal src[start:end+1] as an HCL
// template, nested depth levels deep, if it holds a template sequence.
func jsonTemplateTooDeep(src []byte, filename string, start, end, limit, depth int) *hcl.Range {
	lit := src[start : end+1]
	if !containsSeq(lit) {
		return nil
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return nil
	}
	tokens, _ := hclsyntax.LexTemplate([]byte(s), filename, hcl.InitialPos)
	if tokensTooDeep(tokens, limit, depth) != nil {
		// Positions inside the unescaped string do not map back to the
		// file; point at the string.
		return jsonRange(src, filename, start)
	}
	return nil
}

func containsSeq(b []byte) bool {
	for i := 0; i+1 < len(b); i++ {
		if (b[i] == '$' || b[i] == '%') && b[i+1] == '{' {
			return true
		}
	}
	return false
}

// jsonRange is the one-byte range at offset in src.
func jsonRange(src []byte, filename string, offset int) *hcl.Range {
	line, col := 1, 1
	for _, c := range src[:offset] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	pos := hcl.Pos{Line: line, Column: col, Byte: offset}
	return &hcl.Range{Filename: filename, Start: pos, End: hcl.Pos{Line: line, Column: col + 1, Byte: offset + 1}}
}

// NestingError describes src's first point deeper than limit, for callers
// outside this package that bound JSON they decode themselves (the HTTP
// API's job bodies). It returns "" when src is within the limit.
func NestingError(src []byte, limit int) string {
	if r := jsonTooDeep(src, "request body", limit); r != nil {
		return fmt.Sprintf("request body nests more than %d levels deep at line %s, column %s (byte %d); Drover refuses deeper JSON so that no request can exhaust the decoder",
			limit, strconv.Itoa(r.Start.Line), strconv.Itoa(r.Start.Column), r.Start.Byte)
	}
	return ""
}
