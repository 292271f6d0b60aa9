package main

// Validation of flag values shared by several commands. Every invalid value
// is a usage error (exit 2) that states the valid range.

// checkThreshold checks a similarity threshold flag: a value in (0, 1].
func checkThreshold(flag string, v float64) error {
	if !(v > 0 && v <= 1) {
		return usagef("%s %v: want a similarity in (0, 1]", flag, v)
	}
	return nil
}
