package pipeline

import (
	"context"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// measureFn runs by reflection: registering it with package register
// (universal types in a 4x1 DoFn) costs the compiler minutes and gigabytes.
func init() {
	beam.RegisterType(reflect.TypeOf((*measureFn)(nil)).Elem())
}

// meter measures the shuffle (Options.ShuffleBytes): with On set, every
// GroupByKey and CoGroupByKey of the pipeline counts the elements entering
// it and their bytes, key and value as Beam's coders encode them (the
// runner adds its windowing and framing), into the counters
// shuffle_elements.STAGE and shuffle_bytes.STAGE.
type meter struct{ On bool }

// in passes pc through the measurement of stage.
func (m meter) in(s beam.Scope, stage string, pc beam.PCollection) beam.PCollection {
	if !m.On {
		return pc
	}
	return beam.ParDo(s, &measureFn{Stage: stage}, pc)
}

// gbk is beam.GroupByKey, measured.
func (m meter) gbk(s beam.Scope, stage string, pc beam.PCollection) beam.PCollection {
	return beam.GroupByKey(s, m.in(s, stage, pc))
}

// cogbk is beam.CoGroupByKey, measured.
func (m meter) cogbk(s beam.Scope, stage string, pcs ...beam.PCollection) beam.PCollection {
	in := make([]beam.PCollection, len(pcs))
	for i, pc := range pcs {
		in[i] = m.in(s, stage, pc)
	}
	return beam.CoGroupByKey(s, in...)
}

// measureFn counts the elements and encoded bytes of a keyed PCollection
// and passes them on unchanged.
type measureFn struct {
	Stage    string
	bytes    beam.Counter
	elements beam.Counter
	encoders map[reflect.Type]beam.ElementEncoder
	w        countWriter
}

func (f *measureFn) Setup() {
	f.bytes = beam.NewCounter("neardup", "shuffle_bytes."+f.Stage)
	f.elements = beam.NewCounter("neardup", "shuffle_elements."+f.Stage)
	f.encoders = map[reflect.Type]beam.ElementEncoder{}
}

func (f *measureFn) encode(v any) error {
	t := reflect.TypeOf(v)
	enc, ok := f.encoders[t]
	if !ok {
		enc = beam.NewElementEncoder(t)
		f.encoders[t] = enc
	}
	return enc.Encode(v, &f.w)
}

func (f *measureFn) ProcessElement(ctx context.Context, k beam.T, v beam.U, emit func(beam.T, beam.U)) error {
	f.w = 0
	if err := f.encode(k); err != nil {
		return err
	}
	if err := f.encode(v); err != nil {
		return err
	}
	f.bytes.Inc(ctx, int64(f.w))
	f.elements.Inc(ctx, 1)
	emit(k, v)
	return nil
}

// countWriter counts the bytes written to it.
type countWriter int64

func (w *countWriter) Write(p []byte) (int, error) {
	*w += countWriter(len(p))
	return len(p), nil
}
