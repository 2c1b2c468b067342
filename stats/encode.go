package stats

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"strings"

	"github.com/structtensor/structtensor-go/structtensor"
)

// The serialized form of an Accumulator (MarshalBinary), for Beam's coder
// and any other transport of partial statistics:
//
//	"STST" version=1
//	options: QuantileK Quantiles TopCounters TopK DistinctPrecision
//	records, feature count, then per feature:
//	  path (count, names), kind, enclosing struct levels, level count,
//	  present empty missing values, values-per-record lengths, each
//	  level's lengths, then the numbers' or strings' statistics
//
// Integers are unsigned varints except the sums (a sign byte and the
// magnitude's big-endian bytes) and floats (8 bytes, little-endian IEEE
// 754). The frequent-value counters are written in byte order, so equal
// statistics serialize to equal bytes. UnmarshalBinary checks everything
// it reads (counts against the bytes left, sketch invariants, names), so
// that hostile bytes give an error wrapping ErrState, never a crash or an
// allocation larger than the input.
const stateMagic = "STST\x01"

type stateWriter struct{ b []byte }

func (w *stateWriter) uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *stateWriter) int(v int)     { w.uint(uint64(v)) }
func (w *stateWriter) float(v float64) {
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(v))
}
func (w *stateWriter) bytes(b []byte)  { w.int(len(b)); w.b = append(w.b, b...) }
func (w *stateWriter) string(s string) { w.int(len(s)); w.b = append(w.b, s...) }
func (w *stateWriter) fixed(f *fixedPoint) {
	z := f.int()
	sign := byte(0)
	if z.Sign() < 0 {
		sign = 1
	}
	w.b = append(w.b, sign)
	w.bytes(new(big.Int).Abs(z).Bytes())
}

func (w *stateWriter) lengths(l *lengthStats) {
	w.uint(l.lists)
	w.uint(l.total)
	w.uint(l.min)
	w.uint(l.max)
	n := 0
	for _, c := range l.hist {
		if c > 0 {
			n++
		}
	}
	w.int(n)
	for i, c := range l.hist {
		if c > 0 {
			w.int(i)
			w.uint(c)
		}
	}
}

// MarshalBinary serializes the partial statistics.
func (a *Accumulator) MarshalBinary() ([]byte, error) {
	w := &stateWriter{b: []byte(stateMagic)}
	o := a.opts
	for _, v := range []int{o.QuantileK, o.Quantiles, o.TopCounters, o.TopK, o.DistinctPrecision} {
		w.int(v)
	}
	w.uint(a.records)
	w.int(len(a.features))
	for _, f := range a.features {
		w.int(len(f.path))
		for _, p := range f.path {
			w.string(p)
		}
		w.int(int(f.kind))
		w.int(f.structLevels)
		w.int(len(f.levels))
		w.uint(f.present)
		w.uint(f.empty)
		w.uint(f.missing)
		w.uint(f.values)
		w.lengths(&f.perRecord)
		for i := range f.levels {
			w.lengths(&f.levels[i])
		}
		switch {
		case f.num != nil:
			n := f.num
			for _, v := range []uint64{n.count, n.nan, n.zeros, n.posInf, n.negInf, n.min, n.max} {
				w.uint(v)
			}
			w.fixed(&n.sum)
			w.fixed(&n.sumSq)
			q := n.quantiles
			w.uint(q.n)
			w.int(len(q.levels))
			for h, items := range q.levels {
				w.uint(q.compactions[h])
				w.int(len(items))
				for _, x := range items {
					w.float(x)
				}
			}
		case f.str != nil:
			s := f.str
			for _, v := range []uint64{s.count, s.bytes, s.minLen, s.maxLen, s.invalidUTF8} {
				w.uint(v)
			}
			w.bytes(s.distinct.registers)
			w.uint(s.frequent.n)
			keys := make([]string, 0, len(s.frequent.counts))
			for k := range s.frequent.counts {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			w.int(len(keys))
			for _, k := range keys {
				w.string(k)
				w.uint(s.frequent.counts[k])
			}
		}
	}
	return w.b, nil
}

type stateReader struct {
	b   []byte
	off int
	err error
}

func (r *stateReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at byte %d", ErrState, what, r.off)
	}
}

func (r *stateReader) uint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	// Only the shortest encoding: one value, one form.
	if n <= 0 || n != varintLen(v) {
		r.fail("bad varint (" + what + ")")
		return 0
	}
	r.off += n
	return v
}

// int reads a count no larger than limit.
func (r *stateReader) int(what string, limit int) int {
	v := r.uint(what)
	if r.err == nil && v > uint64(limit) {
		r.fail(fmt.Sprintf("%s %d over %d", what, v, limit))
		return 0
	}
	return int(v)
}

func (r *stateReader) left() int { return len(r.b) - r.off }

func (r *stateReader) raw(what string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > r.left() {
		r.fail(what + " past the end")
		return nil
	}
	b := r.b[r.off : r.off+n]
	r.off += n
	return b
}

func (r *stateReader) bytes(what string) []byte { return r.raw(what, r.int(what+" length", r.left())) }

func (r *stateReader) float(what string) float64 {
	b := r.raw(what, 8)
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

func (r *stateReader) fixed(what string, f *fixedPoint) {
	sign := r.raw(what+" sign", 1)
	mag := r.bytes(what)
	if r.err != nil {
		return
	}
	if sign[0] > 1 || (len(mag) > 0 && mag[0] == 0) || (sign[0] == 1 && len(mag) == 0) {
		r.fail(what + " not in its shortest form")
		return
	}
	z := new(big.Int).SetBytes(mag)
	if sign[0] == 1 {
		z.Neg(z)
	}
	if !f.setInt(z) {
		r.fail(what + " out of range")
	}
}

func (r *stateReader) lengths(what string, l *lengthStats) {
	l.lists = r.uint(what)
	l.total = r.uint(what)
	l.min = r.uint(what)
	l.max = r.uint(what)
	n := r.int(what+" buckets", len(l.hist))
	prev := -1
	var sum uint64
	for range n {
		i := r.int(what+" bucket", len(l.hist)-1)
		c := r.uint(what)
		if r.err != nil {
			return
		}
		if i <= prev || c == 0 {
			r.fail(what + " buckets out of order")
			return
		}
		prev = i
		l.hist[i] = c
		sum += c
	}
	if r.err == nil && (sum != l.lists || (l.lists > 0 && l.min > l.max)) {
		r.fail(what + " counts disagree")
	}
}

// UnmarshalBinary replaces a's statistics with serialized ones.
func (a *Accumulator) UnmarshalBinary(b []byte) error {
	if !strings.HasPrefix(string(b), stateMagic) {
		return fmt.Errorf("%w: no %q header", ErrState, stateMagic[:4])
	}
	r := &stateReader{b: b, off: len(stateMagic)}
	var o Options
	for _, v := range []*int{&o.QuantileK, &o.Quantiles, &o.TopCounters, &o.TopK, &o.DistinctPrecision} {
		*v = r.int("options", 1<<20)
	}
	if r.err != nil {
		return r.err
	}
	if d, err := o.withDefaults(); err != nil || d != o {
		return fmt.Errorf("%w: options %+v", ErrState, o)
	}
	c := &Accumulator{opts: o, index: map[string]int{}}
	c.records = r.uint("records")
	// Every feature takes at least a few bytes: counts are bounded by
	// the bytes left, never by what the header claims.
	nf := r.int("features", r.left())
	for range nf {
		f := c.readFeature(r)
		if r.err != nil {
			return r.err
		}
		if _, dup := c.index[f.key()]; dup {
			return fmt.Errorf("%w: path %q twice", ErrState, f.key())
		}
		c.index[f.key()] = len(c.features)
		c.features = append(c.features, f)
	}
	if r.err != nil {
		return r.err
	}
	if r.left() != 0 {
		return fmt.Errorf("%w: %d bytes after the statistics", ErrState, r.left())
	}
	*a = *c
	return nil
}

func (c *Accumulator) readFeature(r *stateReader) *feature {
	f := &feature{}
	np := r.int("path length", r.left())
	if np == 0 && r.err == nil {
		r.fail("empty path")
	}
	for range np {
		name := string(r.bytes("field name"))
		if r.err == nil && !structtensor.ValidFieldName(name) {
			r.fail(fmt.Sprintf("field name %q", name))
		}
		f.path = append(f.path, name)
	}
	f.kind = Kind(r.int("kind", int(KindBytes)))
	if r.err == nil && f.kind < KindStruct {
		r.fail("kind")
	}
	f.structLevels = r.int("struct levels", r.left())
	nl := r.int("levels", r.left())
	if r.err == nil && f.structLevels > nl {
		r.fail("struct levels over levels")
	}
	f.present = r.uint("present")
	f.empty = r.uint("empty")
	f.missing = r.uint("missing")
	f.values = r.uint("values")
	r.lengths("values per record", &f.perRecord)
	if r.err != nil {
		return f
	}
	f.levels = make([]lengthStats, nl)
	for i := range f.levels {
		r.lengths("level", &f.levels[i])
	}
	if r.err == nil && (f.perRecord.lists != f.present || f.perRecord.total != f.values ||
		f.present+f.empty+f.missing != c.records) {
		r.fail(fmt.Sprintf("path %q: record counts disagree", f.key()))
	}
	switch f.kind {
	case KindInt, KindUint, KindFloat:
		n := &numberStats{}
		for _, v := range []*uint64{&n.count, &n.nan, &n.zeros, &n.posInf, &n.negInf, &n.min, &n.max} {
			*v = r.uint("numbers")
		}
		r.fixed("sum", &n.sum)
		r.fixed("sum of squares", &n.sumSq)
		n.quantiles = c.readQuantiles(r)
		if r.err == nil && (n.quantiles.n != n.count || n.zeros > n.count || n.posInf+n.negInf > n.count || n.count+n.nan != f.values) {
			r.fail(fmt.Sprintf("path %q: number counts disagree", f.key()))
		}
		f.num = n
	case KindString, KindBytes:
		s := &stringStats{}
		for _, v := range []*uint64{&s.count, &s.bytes, &s.minLen, &s.maxLen, &s.invalidUTF8} {
			*v = r.uint("strings")
		}
		regs := r.bytes("registers")
		if r.err == nil && len(regs) != 1<<c.opts.DistinctPrecision {
			r.fail("register count")
		}
		for _, x := range regs {
			if r.err == nil && int(x) > 64-c.opts.DistinctPrecision+1 {
				r.fail("register value")
			}
		}
		s.distinct = &distinctSketch{p: uint8(c.opts.DistinctPrecision), registers: slices.Clone(regs)}
		s.frequent = newFrequentSketch(c.opts.TopCounters)
		s.frequent.n = r.uint("frequent values")
		nc := r.int("counters", c.opts.TopCounters)
		var kept uint64
		prev := ""
		for i := range nc {
			k := string(r.bytes("value"))
			v := r.uint("count")
			if r.err != nil {
				break
			}
			if v == 0 || (i > 0 && k <= prev) {
				r.fail("counters out of order")
				break
			}
			prev = k
			s.frequent.counts[k] = v
			kept += v
		}
		if r.err == nil && (kept > s.frequent.n || s.frequent.n != s.count || s.count != f.values || s.invalidUTF8 > s.count ||
			(s.count > 0 && s.minLen > s.maxLen)) {
			r.fail(fmt.Sprintf("path %q: string counts disagree", f.key()))
		}
		f.str = s
	}
	return f
}

func (c *Accumulator) readQuantiles(r *stateReader) *quantileSketch {
	q := newQuantileSketch(c.opts.QuantileK)
	q.n = r.uint("quantile count")
	nl := r.int("quantile levels", min(64, r.left()))
	var weight uint64
	overflow := false
	for h := range nl {
		q.compactions = append(q.compactions, r.uint("compactions"))
		// A level holds fewer than k items between operations.
		ni := r.int("quantile items", min(c.opts.QuantileK-1, r.left()/8))
		items := make([]float64, 0, c.opts.QuantileK)
		for range ni {
			x := r.float("quantile item")
			if r.err == nil && x != x {
				r.fail("NaN quantile item")
			}
			items = append(items, x)
		}
		q.levels = append(q.levels, items)
		hi, lo := uint64(0), uint64(ni)<<h
		if h > 0 {
			hi = uint64(ni) >> (64 - h)
		}
		if hi != 0 {
			overflow = true
		}
		var carry uint64
		weight, carry = addCarry(weight, lo)
		overflow = overflow || carry != 0
	}
	if r.err == nil && (overflow || weight != q.n) {
		r.fail("quantile weights disagree with the count")
	}
	return q
}

func varintLen(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }

func addCarry(a, b uint64) (uint64, uint64) {
	s := a + b
	if s < a {
		return s, 1
	}
	return s, 0
}
