package dedup

import (
	"fmt"
	"time"

	"github.com/neardup/neardup/lsh"
)

// Summary accounts for every record: Read = Kept + Duplicates + Rejected.
type Summary struct {
	// Read is the number of records the iterator yielded (documents and
	// rejected records).
	Read       int64            `json:"read"`
	Kept       int64            `json:"kept"`
	Duplicates int64            `json:"duplicates"`
	Exact      int64            `json:"exact_duplicates"`
	Near       int64            `json:"near_duplicates"`
	Rejected   int64            `json:"rejected"`
	RejectedBy map[string]int64 `json:"rejected_by,omitempty"`
	// Warnings and Skipped are the reader's counts (corpus.Stats); Run
	// leaves them for the caller, which owns the reader.
	Warnings int64 `json:"warnings"`
	Skipped  int64 `json:"skipped"`
	// Bytes is the total length of the documents' bodies.
	Bytes int64 `json:"bytes"`
	// NotSegmented counts the documents of at least UnsegmentedBytes bytes
	// that gave at most UnsegmentedFeatures features: text the tokenizer
	// did not cut into words (a script it does not segment, or not text
	// at all), which can only match an identical copy.
	// NotSegmentedExample is the id of the first of them.
	NotSegmented        int64  `json:"not_segmented"`
	NotSegmentedExample string `json:"not_segmented_example,omitempty"`
	Pairs               int    `json:"pairs"`
	Candidates          int64  `json:"candidates"`
	Clusters            int    `json:"clusters"`
	Largest             int    `json:"largest_cluster"`
	ExactCheck          bool   `json:"exact_verification"`
	// Unconfirmed counts the identity fingerprint matches that failed
	// confirmation (package identity: the first 64 bits agreed and the
	// rest of the 128 bits or the length did not, in this run or against
	// a stored document): such a document is not dropped as identical but
	// left to near-duplicate verification. With a keyed 128-bit
	// fingerprint it stays 0 unless something is wrong.
	Unconfirmed int64 `json:"identity_unconfirmed"`
	// Upgraded reports that the run's Store held an index of an earlier
	// release, which was given an identity key (index.Index.Upgraded).
	Upgraded bool `json:"identity_upgraded,omitempty"`
	// Verification says how the candidate pairs were verified:
	// VerifyExact or VerifyEstimate. Out of core (External) an exact run
	// read the feature sets of the candidates' documents back from its
	// work directory after the join.
	Verification string `json:"verification,omitempty"`
	// External reports an out-of-core run (Options.Memory); Spilled is the
	// bytes it wrote to the work directory (sketches, feature sets and
	// compressed sorted runs), or those of the feature sets that a run in
	// memory wrote there (when they did not fit in memory).
	External bool `json:"external,omitempty"`
	// Resumed names the first stage a resumed run (Options.Stages) ran
	// again: "sketch" (stage 1, from an input end), "index", "verify" or
	// "cluster" (the stages before it were read from their files); empty
	// for a run from the start.
	Resumed string        `json:"resumed,omitempty"`
	Spilled int64         `json:"spilled_bytes,omitempty"`
	Bloom   *BloomSummary `json:"fingerprint_filter,omitempty"`
	Config  Config        `json:"config"`
	Stages  []Stage       `json:"stages"`
	Seconds float64       `json:"seconds"`
}

// Summary.Verification's values.
const (
	// VerifyExact: by exact Jaccard.
	VerifyExact = "exact"
	// VerifyEstimate: by the sketch estimate (Options.Exact ExactNever, or
	// ExactAuto past Options.ExactBudget in a run without a memory
	// budget).
	VerifyEstimate = "estimate"
)

// BloomSummary describes the Bloom filter in front of the stored exact
// fingerprints (store mode; see index.FingerprintStats).
type BloomSummary struct {
	Bits           uint  `json:"bits"`
	Probes         uint  `json:"probes"`
	Lookups        int64 `json:"confirming_lookups"`
	FalsePositives int64 `json:"false_positives"`
}

// Stage is the time one stage took. The store stage runs in the background
// beside the join, verification and clustering, so the stages' times may
// add up to more than the run's.
type Stage struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	Items   int64   `json:"items"`
	// PeakMemory is the most memory the Go runtime held from the OS
	// (mapped and not released) during the stage, sampled every 10 ms (0
	// for the store stage, which runs in the background).
	PeakMemory int64 `json:"peak_memory"`
	// Spilled is the bytes the stage wrote to the work directory (out of
	// core; in memory, the high halves of the sketch values a store or
	// the band export needs: values.go).
	Spilled int64 `json:"spilled_bytes,omitempty"`
	// Restored reports a stage a resumed run did not run again: its
	// output was read from its stage files, and its time, peak memory and
	// bytes spilled are those of the run that made them.
	Restored bool `json:"restored,omitempty"`
}

// Config records the parameters a run used.
type Config struct {
	Sampler   string     `json:"sampler"`
	K         int        `json:"k"`
	Seed      uint64     `json:"seed"`
	Threshold float64    `json:"threshold"`
	LSH       lsh.Params `json:"lsh"`
	Features  string     `json:"features"`
}

// finish completes the summary and checks the accounting identity.
func (r *run) finish(start time.Time) (*Result, error) {
	if err := r.tally(); err != nil {
		return nil, err
	}
	r.sum.Stages = r.ev.stages
	r.sum.Seconds = time.Since(start).Seconds()
	return r.res, nil
}

// tally counts the kept and dropped documents of the final clusters into
// the summary and checks that every record read is accounted for.
func (r *run) tally() error {
	res, sum := r.res, r.sum
	sum.Largest, sum.Exact, sum.Near = 0, 0, 0
	for _, c := range res.Clusters {
		sum.Largest = max(sum.Largest, len(c.Members))
	}
	for i := range res.Docs {
		d := &res.Docs[i]
		switch {
		case res.Duplicate[d.Seq] && d.ExactOf != -1:
			sum.Exact++
		case res.Duplicate[d.Seq]:
			sum.Near++
		}
	}
	sum.Duplicates = sum.Exact + sum.Near
	sum.Kept = int64(len(res.Docs)) - sum.Duplicates
	if sum.Read != sum.Kept+sum.Duplicates+sum.Rejected {
		return fmt.Errorf("dedup: accounting error: read %d != kept %d + duplicates %d + rejected %d", sum.Read, sum.Kept, sum.Duplicates, sum.Rejected)
	}
	return nil
}

// The "not segmented" test of Summary.NotSegmented: a body of at least
// UnsegmentedBytes bytes with at most UnsegmentedFeatures features (with
// 5-word shingles, at most 7 words: 28 bytes or more per word).
const (
	UnsegmentedBytes    = 200
	UnsegmentedFeatures = 3
)

// countUnsegmented sets s.NotSegmented and s.NotSegmentedExample from the
// documents of stage 1, in input order.
func countUnsegmented(s *Summary, docs []Doc) {
	s.NotSegmented, s.NotSegmentedExample = 0, ""
	for i := range docs {
		if d := &docs[i]; d.Bytes >= UnsegmentedBytes && d.Shingles <= UnsegmentedFeatures {
			if s.NotSegmented == 0 {
				s.NotSegmentedExample = d.Name
			}
			s.NotSegmented++
		}
	}
}
