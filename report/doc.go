// Package report provides plots and self-contained HTML reports.
package report
