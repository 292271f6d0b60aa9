package corpus

import (
	"bytes"
	"encoding/binary"
)

// validJSON reports whether b is one valid JSON value (RFC 8259) with
// optional surrounding white space. It accepts exactly what
// encoding/json.Valid accepts, including its nesting limit of 10000 and
// its leniency about invalid UTF-8 inside strings (the Reader checks UTF-8
// itself), but it scans strings several times faster than encoding/json's
// byte-at-a-time state machine, which dominated JSONL reading.
// FuzzValidJSON checks the equivalence.
func validJSON(b []byte) bool {
	v := validator{b: b}
	v.ws()
	if !v.value() {
		return false
	}
	v.ws()
	return v.i == len(b)
}

const maxJSONDepth = 10000 // encoding/json's maxNestingDepth

type validator struct {
	b     []byte
	i     int
	depth int
}

func (v *validator) ws() {
	for v.i < len(v.b) {
		switch v.b[v.i] {
		case ' ', '\t', '\n', '\r':
			v.i++
		default:
			return
		}
	}
}

func (v *validator) value() bool {
	if v.i >= len(v.b) {
		return false
	}
	switch c := v.b[v.i]; {
	case c == '{':
		return v.object()
	case c == '[':
		return v.array()
	case c == '"':
		return v.str()
	case c == 't':
		return v.lit("true")
	case c == 'f':
		return v.lit("false")
	case c == 'n':
		return v.lit("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return v.number()
	}
	return false
}

func (v *validator) lit(s string) bool {
	if len(v.b)-v.i < len(s) || string(v.b[v.i:v.i+len(s)]) != s {
		return false
	}
	v.i += len(s)
	return true
}

func (v *validator) object() bool {
	v.i++ // '{'
	if v.depth++; v.depth > maxJSONDepth {
		return false
	}
	v.ws()
	if v.i < len(v.b) && v.b[v.i] == '}' {
		v.i++
		v.depth--
		return true
	}
	for {
		v.ws()
		if v.i >= len(v.b) || v.b[v.i] != '"' || !v.str() {
			return false
		}
		v.ws()
		if v.i >= len(v.b) || v.b[v.i] != ':' {
			return false
		}
		v.i++
		v.ws()
		if !v.value() {
			return false
		}
		v.ws()
		if v.i >= len(v.b) {
			return false
		}
		switch v.b[v.i] {
		case ',':
			v.i++
		case '}':
			v.i++
			v.depth--
			return true
		default:
			return false
		}
	}
}

func (v *validator) array() bool {
	v.i++ // '['
	if v.depth++; v.depth > maxJSONDepth {
		return false
	}
	v.ws()
	if v.i < len(v.b) && v.b[v.i] == ']' {
		v.i++
		v.depth--
		return true
	}
	for {
		v.ws()
		if !v.value() {
			return false
		}
		v.ws()
		if v.i >= len(v.b) {
			return false
		}
		switch v.b[v.i] {
		case ',':
			v.i++
		case ']':
			v.i++
			v.depth--
			return true
		default:
			return false
		}
	}
}

func (v *validator) str() bool {
	b, i := v.b, v.i+1 // after '"'
	q := -1            // the index of the next '"' at or after i, once known
	for i < len(b) {
		if q < i {
			if q = bytes.IndexByte(b[i:], '"'); q < 0 {
				return false // the string does not end
			}
			q += i
		}
		i = plainRun(b[:q], i)
		c := b[i]
		switch {
		case c == '"':
			v.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return false
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return false
					}
				}
				i += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			i++
		}
	}
	return false
}

// plain8 reports whether none of the eight bytes of x is '"', '\\' or a
// control character (< 0x20): the bytes a string scan stops at. It is the
// SWAR test for a zero byte ((y - 0x01…) &^ y & 0x80…, set for the lowest
// zero byte of y and perhaps for bytes above it, never when y has none)
// applied to x ^ '"', x ^ '\\' and, for bytes below 0x20, to x itself
// against 0x20 (exact for the existence of such a byte while the bytes
// are compared against a value at most 0x80).
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := x ^ ('"' * ones)
	s := x ^ ('\\' * ones)
	t := (q - ones) &^ q
	t |= (s - ones) &^ s
	t |= (x - 0x20*ones) &^ x
	return t&highs == 0
}

// plainRun returns the index of the first backslash or control character
// (< 0x20) of b at or after i, or len(b) when there is none: the bytes of
// a string up to its closing quote (at len(b)) that need no look. It finds
// the backslash with bytes.IndexByte (vectorized) and checks the bytes
// before it for control characters 32 at a time, without a branch per
// word (a valid string has none, so the scan rarely stops early).
func plainRun(b []byte, i int) int {
	rest := b[i:]
	end := len(rest)
	if e := bytes.IndexByte(rest, '\\'); e >= 0 {
		end = e
	}
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	j := 0
	for ; j+32 <= end; j += 32 {
		x0 := binary.LittleEndian.Uint64(rest[j:])
		x1 := binary.LittleEndian.Uint64(rest[j+8:])
		x2 := binary.LittleEndian.Uint64(rest[j+16:])
		x3 := binary.LittleEndian.Uint64(rest[j+24:])
		t := (x0 - 0x20*ones) &^ x0
		t |= (x1 - 0x20*ones) &^ x1
		t |= (x2 - 0x20*ones) &^ x2
		t |= (x3 - 0x20*ones) &^ x3
		if t&highs != 0 {
			break // a control character in these 32 bytes
		}
	}
	for ; j < end; j++ {
		if rest[j] < 0x20 {
			return i + j
		}
	}
	return i + end
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func (v *validator) digits() int {
	n := 0
	for v.i < len(v.b) && '0' <= v.b[v.i] && v.b[v.i] <= '9' {
		v.i++
		n++
	}
	return n
}

func (v *validator) number() bool {
	if v.b[v.i] == '-' {
		v.i++
	}
	if v.i >= len(v.b) {
		return false
	}
	if v.b[v.i] == '0' {
		v.i++
	} else if v.digits() == 0 {
		return false
	}
	if v.i < len(v.b) && v.b[v.i] == '.' {
		v.i++
		if v.digits() == 0 {
			return false
		}
	}
	if v.i < len(v.b) && (v.b[v.i] == 'e' || v.b[v.i] == 'E') {
		v.i++
		if v.i < len(v.b) && (v.b[v.i] == '+' || v.b[v.i] == '-') {
			v.i++
		}
		if v.digits() == 0 {
			return false
		}
	}
	return true
}
