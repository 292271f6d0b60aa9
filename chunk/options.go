package chunk

import (
	"errors"
	"fmt"
)

// Mode selects how cut points are computed. Both modes give identical cut
// points; they differ only in speed.
type Mode int

const (
	// Fast computes the long hash only where the lead byte is zero (book
	// 6.2, accelerated winnowing). It is the default.
	Fast Mode = iota
	// Plain computes both hashes at every byte and winnows all of them; it
	// is the reference the fast mode is tested against.
	Plain
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case Fast:
		return "fast"
	case Plain:
		return "plain"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Window is the number of bytes before a boundary that its hash depends on
// (the gear hash's span; the long hash covers the last LongWindow of them).
const (
	Window     = 64
	LongWindow = 48
)

// DefaultAvg is the default average chunk size, 8 KiB.
const DefaultAvg = 8 << 10

// ErrOptions reports invalid chunking options.
var ErrOptions = errors.New("chunk: invalid options")

// Options sets the chunk sizes. The zero value gives the defaults: an 8 KiB
// average, Min = 3*Avg/4 and Max = 2*Avg - Min (6 KiB and 10 KiB). On random
// data chunk lengths spread almost uniformly over [Min, Max] (the measured
// mean is about 1% above the midpoint, the SD about (Max-Min)/sqrt(12)), so
// the three sizes are tied by Avg = (Min+Max)/2: set any two (or only Avg)
// and the rest is derived. The default window, Max-Min = Avg/2, gives a
// chunk-size SD of about 0.15*Avg, half of FastCDC's at the same mean, with
// the same dedup ratio on real trees as wider windows (bench/chunk).
type Options struct {
	// Min is the smallest chunk length except for the last chunk of an
	// input. It must be more than Window (64). The default is 3*Avg/4.
	Min int
	// Avg is the average chunk length on random data. The default is 8 KiB,
	// or (Min+Max)/2 when both are set.
	Avg int
	// Max is the largest chunk length. The default is 2*Avg - Min.
	Max int
	// Mode selects the fast (default) or the plain reference computation.
	Mode Mode
}

// EnsureDefaults fills zero fields with their defaults and returns o.
func (o Options) EnsureDefaults() Options {
	switch {
	case o.Avg == 0 && o.Min != 0 && o.Max != 0:
		o.Avg = (o.Min + o.Max) / 2
	case o.Avg == 0 && o.Min != 0:
		o.Avg = o.Min * 4 / 3
	case o.Avg == 0 && o.Max != 0:
		o.Avg = o.Max * 4 / 5
	case o.Avg == 0:
		o.Avg = DefaultAvg
	}
	if o.Min == 0 && o.Max != 0 {
		o.Min = 2*o.Avg - o.Max
	}
	if o.Min == 0 {
		o.Min = o.Avg * 3 / 4
	}
	if o.Max == 0 {
		o.Max = 2*o.Avg - o.Min
	}
	return o
}

// Validate reports every problem of o (after EnsureDefaults) at once.
func (o Options) Validate() error {
	o = o.EnsureDefaults()
	var errs []error
	if o.Min <= Window {
		errs = append(errs, fmt.Errorf("%w: Min %d must exceed %d", ErrOptions, o.Min, Window))
	}
	if o.Max < o.Min {
		errs = append(errs, fmt.Errorf("%w: Max %d below Min %d", ErrOptions, o.Max, o.Min))
	}
	if d := o.Min + o.Max - 2*o.Avg; d < -1 || d > 1 {
		errs = append(errs, fmt.Errorf("%w: Avg %d must be (Min+Max)/2 = %d", ErrOptions, o.Avg, (o.Min+o.Max)/2))
	}
	if o.Max > 1<<30 {
		errs = append(errs, fmt.Errorf("%w: Max %d above 1 GiB", ErrOptions, o.Max))
	}
	if o.Mode != Fast && o.Mode != Plain {
		errs = append(errs, fmt.Errorf("%w: unknown mode %d", ErrOptions, int(o.Mode)))
	}
	return errors.Join(errs...)
}
