package main

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a flag value of bytes: a number with an optional unit, B,
// KiB, MiB, GiB, TiB (powers of 1024; K, M, G, T and KB, MB, GB, TB
// mean the same).
type byteSize int64

func (s *byteSize) String() string { return formatBytes(int64(*s)) }

func (s *byteSize) Type() string { return "size" }

func (s *byteSize) Set(v string) error {
	n, err := parseBytes(v)
	if err != nil {
		return err
	}
	*s = byteSize(n)
	return nil
}

// parseBytes parses a size such as 64MiB, 1.5G or 4096.
func parseBytes(v string) (int64, error) {
	t := strings.TrimSpace(v)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f <= 0 {
		return 0, fmt.Errorf("%q: want a positive size such as 64MiB", v)
	}
	shift := map[string]uint{"": 0, "b": 0, "k": 10, "kb": 10, "kib": 10, "m": 20, "mb": 20, "mib": 20,
		"g": 30, "gb": 30, "gib": 30, "t": 40, "tb": 40, "tib": 40}
	sh, ok := shift[unit]
	if !ok {
		return 0, fmt.Errorf("%q: unknown unit %q (want B, KiB, MiB, GiB or TiB)", v, unit)
	}
	f *= float64(int64(1) << sh)
	if f >= 1<<62 || f < 1 {
		return 0, fmt.Errorf("%q: out of range", v)
	}
	return int64(f), nil
}

// formatBytes formats n in the largest unit that divides it.
func formatBytes(n int64) string {
	for _, u := range []struct {
		s  string
		sh uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n > 0 && n%(int64(1)<<u.sh) == 0 {
			return strconv.FormatInt(n>>u.sh, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}
