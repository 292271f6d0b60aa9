package server

import (
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

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
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
	for _, c := range []prometheus.Collector{m.latency, m.documents, m.storeErrors, m.inFlight, m.rejected} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
