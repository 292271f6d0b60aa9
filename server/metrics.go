package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the server's Prometheus collectors.
type metrics struct {
	latency     *prometheus.HistogramVec // route, code
	documents   *prometheus.CounterVec   // op: added, rejected_if_new, queried, removed
	storeErrors prometheus.Counter
	inFlight    prometheus.Gauge
	rejected    *prometheus.CounterVec // reason: unauthorized, busy
}

// journalCollector reports the journal the backend follows, asked at
// each scrape (Backend.Stats: one store round trip, within two seconds).
type journalCollector struct{ b Backend }

var (
	journalEntries  = prometheus.NewDesc("neardup_journal_entries", "Entries of the shared store's journal (trimmed to what every live server has read).", nil, nil)
	journalBytes    = prometheus.NewDesc("neardup_journal_bytes", "Memory of the shared store's journal in the store (Redis MEMORY USAGE).", nil, nil)
	journalRebuilds = prometheus.NewDesc("neardup_journal_rebuilds_total", "In-memory postings loaded from the store: 1 at start, one more after each absence past the journal's expiry.", nil, nil)
)

func (c journalCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- journalEntries
	ch <- journalBytes
	ch <- journalRebuilds
}

func (c journalCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := c.b.Stats(ctx)
	if err != nil || st.Journal == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(journalEntries, prometheus.GaugeValue, float64(st.Journal.Entries))
	if st.Journal.Bytes >= 0 {
		ch <- prometheus.MustNewConstMetric(journalBytes, prometheus.GaugeValue, float64(st.Journal.Bytes))
	}
	ch <- prometheus.MustNewConstMetric(journalRebuilds, prometheus.CounterValue, float64(st.Journal.Rebuilds))
}

func newMetrics(reg prometheus.Registerer, b Backend) (*metrics, error) {
	m := &metrics{
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "neardup",
			Name:      "http_request_duration_seconds",
			Help:      "Latency of HTTP requests by route and status code.",
			Buckets:   []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "code"}),
		documents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "neardup",
			Name:      "documents_total",
			Help:      "Documents handled, by operation: added, skipped (if_new with near-duplicates), queried, removed.",
		}, []string{"op"}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "neardup",
			Name:      "store_errors_total",
			Help:      "Requests that failed in the index or its store (status 5xx).",
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "neardup",
			Name:      "http_requests_in_flight",
			Help:      "API requests being served.",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "neardup",
			Name:      "http_requests_rejected_total",
			Help:      "API requests refused before being served, by reason: unauthorized, busy.",
		}, []string{"reason"}),
	}
	for _, c := range []prometheus.Collector{m.latency, m.documents, m.storeErrors, m.inFlight, m.rejected, journalCollector{b}} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
