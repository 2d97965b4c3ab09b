package template

import (
	"errors"
	"fmt"
	"reflect"
)

// Math on integers and floats, as consul-template does it. The piped
// value is the left operand: {{ 10 | subtract 3 }} is 7, as is
// {{ subtract 3 10 }}. Two integers give an int64 (a uint64 when both are
// unsigned); a float on either side gives a float64.

var errDivideByZero = errors.New("division by zero")

// number is an operand sorted into integer, unsigned or float.
type number struct {
	kind byte // 'i', 'u' or 'f'
	i    int64
	u    uint64
	f    float64
}

func toNumber(op string, v any) (number, error) {
	rv := reflect.ValueOf(v)
	switch k := rv.Kind(); {
	case isInt(k):
		return number{kind: 'i', i: rv.Int(), f: float64(rv.Int())}, nil
	case isUint(k):
		return number{kind: 'u', u: rv.Uint(), i: int64(rv.Uint()), f: float64(rv.Uint())}, nil
	case isFloat(k):
		return number{kind: 'f', f: rv.Float()}, nil
	}
	return number{}, fmt.Errorf("%s: unknown type for %q (%T)", op, fmt.Sprint(v), v)
}

// operands converts b (the argument) and a (the piped value).
func operands(op string, b, a any) (number, number, error) {
	x, err := toNumber(op, a)
	if err != nil {
		return x, x, err
	}
	y, err := toNumber(op, b)
	return x, y, err
}

// arith applies an operation to a and b in the type their kinds call for.
func arith(op string, b, a any, ints func(x, y int64) (int64, error), uints func(x, y uint64) (uint64, error), floats func(x, y float64) (float64, error)) (any, error) {
	x, y, err := operands(op, b, a)
	if err != nil {
		return nil, err
	}
	var out any
	switch {
	case x.kind == 'f' || y.kind == 'f':
		if floats == nil {
			return nil, fmt.Errorf("%s: unknown type for %q (float64)", op, fmt.Sprint(b))
		}
		out, err = floats(x.f, y.f)
	case x.kind == 'u' && y.kind == 'u':
		out, err = uints(x.u, y.u)
	default:
		out, err = ints(x.i, y.i)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}

func add(b, a any) (any, error) {
	return arith("add", b, a,
		func(x, y int64) (int64, error) { return x + y, nil },
		func(x, y uint64) (uint64, error) { return x + y, nil },
		func(x, y float64) (float64, error) { return x + y, nil })
}

func subtract(b, a any) (any, error) {
	return arith("subtract", b, a,
		func(x, y int64) (int64, error) { return x - y, nil },
		func(x, y uint64) (uint64, error) { return x - y, nil },
		func(x, y float64) (float64, error) { return x - y, nil })
}

func multiply(b, a any) (any, error) {
	return arith("multiply", b, a,
		func(x, y int64) (int64, error) { return x * y, nil },
		func(x, y uint64) (uint64, error) { return x * y, nil },
		func(x, y float64) (float64, error) { return x * y, nil })
}

// divide divides a by b; integers divide as integers ({{ 7 | divide 2 }}
// is 3). Dividing an integer by zero is an error; a float gives ±Inf.
func divide(b, a any) (any, error) {
	return arith("divide", b, a,
		func(x, y int64) (int64, error) {
			if y == 0 {
				return 0, errDivideByZero
			}
			return x / y, nil
		},
		func(x, y uint64) (uint64, error) {
			if y == 0 {
				return 0, errDivideByZero
			}
			return x / y, nil
		},
		func(x, y float64) (float64, error) { return x / y, nil })
}

// modulo is a mod b, for integers only.
func modulo(b, a any) (any, error) {
	return arith("modulo", b, a,
		func(x, y int64) (int64, error) {
			if y == 0 {
				return 0, errDivideByZero
			}
			return x % y, nil
		},
		func(x, y uint64) (uint64, error) {
			if y == 0 {
				return 0, errDivideByZero
			}
			return x % y, nil
		},
		nil)
}

// minimum and maximum return the smaller or larger operand, converted to
// int64, uint64 or float64 after its own kind; on a tie, the argument.
func minimum(b, a any) (any, error) { return pick("minimum", b, a, true) }
func maximum(b, a any) (any, error) { return pick("maximum", b, a, false) }

func pick(op string, b, a any, smaller bool) (any, error) {
	x, y, err := operands(op, b, a)
	if err != nil {
		return nil, err
	}
	var less, greater bool
	switch {
	case x.kind == 'f' || y.kind == 'f':
		less, greater = x.f < y.f, x.f > y.f
	case x.kind == 'u' && y.kind == 'u':
		less, greater = x.u < y.u, x.u > y.u
	default:
		less, greater = x.i < y.i, x.i > y.i
	}
	if (smaller && less) || (!smaller && greater) {
		return x.value(), nil
	}
	return y.value(), nil
}

func (n number) value() any {
	switch n.kind {
	case 'i':
		return n.i
	case 'u':
		return n.u
	}
	return n.f
}
