package sample

import (
	"github.com/neardup/neardup/feature"
	"github.com/neardup/neardup/identity"
	"github.com/neardup/neardup/sketch"
)

// Sketched is what a Sketcher makes of one document body. Its slices are
// the caller's buffers: Sketch resets and refills them, so a Sketched
// reused across documents stops allocating once its buffers have grown to
// the largest document. Copy what must outlive the next call.
type Sketched struct {
	// Fingerprint is the identity fingerprint of the body's bytes
	// (package identity: its length and 128 bits under
	// the Sketcher's key; book 2.2, 3.3): identical bodies have equal
	// fingerprints, and without the key nobody can make two different
	// bodies collide. It detects exact duplicates before sketching is
	// worth anything.
	Fingerprint identity.Fingerprint
	// Features are the body's features as feature.Extractor gives them:
	// each id once, weighted per Config.Features.
	Features []feature.Feature
	// Values are the sketch values (Sampler.Sketch); none for a body
	// without features.
	Values []uint64
	// Size is the exact size of the feature set (Config.Size): the number
	// of features, or their total weight for weighted samplers.
	Size float64
}

// Sketch returns the sketch of s under header h (the Sketcher's Header):
// its Values alias s.Values.
func (s *Sketched) Sketch(h sketch.Header) sketch.Sketch {
	return sketch.Sketch{Header: h, Values: s.Values, Size: s.Size}
}

// Sketcher turns document bodies into what the rest of the system works
// on: the exact fingerprint, the features and the sketch, made with one
// Config. Deduplication, the index commands, the server and the Beam
// pipeline all sketch through it, so a document gets the same sketch
// wherever it is sketched.
//
// A Sketcher holds scratch space (the extractor's buffers, the sampler's):
// it is not safe for concurrent use; make one per goroutine. Creating one
// costs two feature extractors and a sampler (tens of microseconds); Sketch
// costs one pass over the body for the fingerprint, the extraction, and
// the sampler's pass over the features, and allocates nothing once warm.
type Sketcher struct {
	cfg  Config
	smp  Sampler
	hdr  sketch.Header
	text *feature.Extractor // Config.Features' format (auto: sniffed)
	html *feature.Extractor // bodies known to be HTML (auto format only)
	id   *identity.Hasher
}

// NewSketcher returns a Sketcher for c (zero fields take their defaults).
// It returns the errors of c.Validate.
func NewSketcher(c Config) (*Sketcher, error) {
	c.EnsureDefaults()
	smp, err := New(c)
	if err != nil {
		return nil, err
	}
	text, err := feature.New(c.Features)
	if err != nil {
		return nil, err
	}
	html := text
	if c.Features.Format == feature.FormatAuto {
		ho := c.Features
		ho.Format = feature.FormatHTML
		if html, err = feature.New(ho); err != nil {
			return nil, err
		}
	}
	return &Sketcher{cfg: c, smp: smp, hdr: smp.Header(), text: text, html: html, id: identity.New(identity.Key{})}, nil
}

// SetKey makes s fingerprint under key k (package identity). A new
// Sketcher uses the zero key, the public one: reproducible, and
// no defence against forged collisions. Index.NewSketcher sets the
// index's key.
func (s *Sketcher) SetKey(k identity.Key) { s.id = identity.New(k) }

// Config returns the configuration, defaults filled in.
func (s *Sketcher) Config() Config { return s.cfg }

// Header returns the header of the sketches s makes.
func (s *Sketcher) Header() sketch.Header { return s.hdr }

// Sampler returns the sampler s draws with (owned by s: not safe for use
// by another goroutine).
func (s *Sketcher) Sampler() Sampler { return s.smp }

// Extractor returns the extractor Sketch uses for a body: with the
// automatic format, the HTML one for bodies known to be HTML (html true)
// and the sniffing one otherwise. It is owned by s; its AppendText refers
// to the last body it extracted.
func (s *Sketcher) Extractor(html bool) *feature.Extractor {
	if html {
		return s.html
	}
	return s.text
}

// Sketch fingerprints body, extracts its features and sketches them into
// out, reusing out's buffers. html says that the body is known to be HTML
// (an HTML file, a WARC response: corpus.Document.HTML); with
// feature.FormatAuto such a body is read as HTML without sniffing, and
// other formats ignore it.
func (s *Sketcher) Sketch(out *Sketched, body []byte, html bool) {
	out.Fingerprint = s.id.Sum(body)
	out.Features = s.Extractor(html).Extract(out.Features[:0], body)
	out.Values = s.smp.Sketch(out.Values[:0], out.Features)
	out.Size = s.cfg.Size(out.Features)
}

// SketchFeatures sketches features extracted elsewhere into out: it sets
// Features (a copy of fs, reusing out's buffer), Values and Size, and
// leaves Fingerprint alone.
func (s *Sketcher) SketchFeatures(out *Sketched, fs []feature.Feature) {
	out.Features = append(out.Features[:0], fs...)
	out.Values = s.smp.Sketch(out.Values[:0], out.Features)
	out.Size = s.cfg.Size(out.Features)
}
