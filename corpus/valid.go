package corpus

import "encoding/binary"

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
	for i < len(b) {
		for i+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8 // eight bytes that neither end the string nor escape
		}
		if i >= len(b) {
			break
		}
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
