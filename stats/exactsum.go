package stats

import (
	"math"
	"math/big"
	"math/bits"
)

// fixedPoint is an exact sum of numbers of the form m·2^e: a two's
// complement integer of fixedWords 64-bit words counting units of
// 2^-fixedScale. Every finite float64 is m·2^e with a 53-bit m and
// e >= -1074, and its square is a 106-bit m² times 2^2e with 2e >= -2148,
// so one scale of 2^-2148 holds values, squares and integers exactly;
// the top word leaves room for 2^63 addends of the largest square and a
// sign. Addition is integer addition, so a sum does not depend on the
// order of its terms, which is what lets merged partial statistics equal
// the statistics of the whole data bit for bit.
type fixedPoint struct {
	w [fixedWords]uint64
}

const (
	fixedScale = 2148
	// The largest square is below 2^(2*1024) = 2^(4196 - fixedScale)
	// units, and 2^63 of them below 2^4259; one more bit for the sign.
	fixedWords = (4259 + 1 + 63) / 64
)

// add adds (or, when neg, subtracts) the 128-bit magnitude hi:lo shifted
// left by shift bits.
func (f *fixedPoint) add(hi, lo uint64, shift int, neg bool) {
	if hi == 0 && lo == 0 {
		return
	}
	idx, off := shift/64, uint(shift%64)
	var w0, w1, w2 uint64
	w0 = lo << off
	if off == 0 {
		w1 = hi
	} else {
		w1 = hi<<off | lo>>(64-off)
		w2 = hi >> (64 - off)
	}
	parts := [3]uint64{w0, w1, w2}
	if !neg {
		var carry uint64
		for i := 0; i < 3 && idx+i < fixedWords; i++ {
			f.w[idx+i], carry = bits.Add64(f.w[idx+i], parts[i], carry)
		}
		for i := idx + 3; carry != 0 && i < fixedWords; i++ {
			f.w[i], carry = bits.Add64(f.w[i], 0, carry)
		}
		return
	}
	var borrow uint64
	for i := 0; i < 3 && idx+i < fixedWords; i++ {
		f.w[idx+i], borrow = bits.Sub64(f.w[idx+i], parts[i], borrow)
	}
	for i := idx + 3; borrow != 0 && i < fixedWords; i++ {
		f.w[i], borrow = bits.Sub64(f.w[i], 0, borrow)
	}
}

// merge adds another sum.
func (f *fixedPoint) merge(o *fixedPoint) {
	var carry uint64
	for i := range f.w {
		f.w[i], carry = bits.Add64(f.w[i], o.w[i], carry)
	}
}

// addFloat adds x, and addFloatSquare x², exactly; x must be finite.
func (f *fixedPoint) addFloat(x float64) {
	m, e := floatParts(x)
	f.add(0, m, e+fixedScale, x < 0)
}

func (f *fixedPoint) addFloatSquare(x float64) {
	m, e := floatParts(x)
	hi, lo := bits.Mul64(m, m)
	f.add(hi, lo, 2*e+fixedScale, false)
}

// addInt adds v (sign and 64-bit magnitude) and addIntSquare its square.
func (f *fixedPoint) addInt(mag uint64, neg bool) {
	f.add(0, mag, fixedScale, neg)
}

func (f *fixedPoint) addIntSquare(mag uint64) {
	hi, lo := bits.Mul64(mag, mag)
	f.add(hi, lo, fixedScale, false)
}

// floatParts returns m and e with |x| = m·2^e, e >= -1074.
func floatParts(x float64) (uint64, int) {
	b := math.Float64bits(x)
	exp := int(b >> 52 & 0x7ff)
	mant := b & (1<<52 - 1)
	if exp == 0 {
		return mant, -1074
	}
	return mant | 1<<52, exp - 1075
}

// int returns the sum in units of 2^-fixedScale.
func (f *fixedPoint) int() *big.Int {
	neg := f.w[fixedWords-1]>>63 == 1
	w := f.w
	if neg {
		// Negate: invert and add one.
		var carry uint64 = 1
		for i := range w {
			w[i], carry = bits.Add64(^w[i], 0, carry)
		}
	}
	buf := make([]byte, 8*fixedWords)
	for i, x := range w {
		for j := range 8 {
			buf[len(buf)-1-8*i-j] = byte(x >> (8 * j))
		}
	}
	z := new(big.Int).SetBytes(buf)
	if neg {
		z.Neg(z)
	}
	return z
}

// setInt sets the sum from units of 2^-fixedScale; it reports false when
// the value does not fit.
func (f *fixedPoint) setInt(z *big.Int) bool {
	mag := new(big.Int).Abs(z)
	if mag.BitLen() > 64*fixedWords-1 {
		return false
	}
	buf := mag.FillBytes(make([]byte, 8*fixedWords))
	for i := range f.w {
		var x uint64
		for j := range 8 {
			x |= uint64(buf[len(buf)-1-8*i-j]) << (8 * j)
		}
		f.w[i] = x
	}
	if z.Sign() < 0 {
		var carry uint64 = 1
		for i := range f.w {
			f.w[i], carry = bits.Add64(^f.w[i], 0, carry)
		}
	}
	return true
}

// meanAndStdDev returns sum/n and the population standard deviation
// sqrt(sumSquares/n - mean²), each rounded once from the exact value, so
// that they are the same for any split and merge order of the data.
func meanAndStdDev(sum, sumSquares *fixedPoint, n uint64) (mean, stddev float64) {
	if n == 0 {
		return 0, 0
	}
	a, b := sum.int(), sumSquares.int()
	bn := new(big.Int).SetUint64(n)
	// mean = a·2^-scale / n, with a in units of 2^-scale.
	m := new(big.Float).SetPrec(200).SetInt(a)
	m.SetMantExp(m, -fixedScale)
	m.Quo(m, new(big.Float).SetPrec(200).SetInt(bn))
	mean, _ = m.Float64()
	// variance = b/n·2^-scale - (a/n·2^-scale)²
	//          = (n·b·2^scale - a²) / n² · 2^-2scale, exact up to the division.
	num := new(big.Int).Mul(bn, b)
	num.Lsh(num, fixedScale)
	num.Sub(num, new(big.Int).Mul(a, a))
	if num.Sign() <= 0 {
		return mean, 0
	}
	v := new(big.Float).SetPrec(300).SetInt(num)
	v.SetMantExp(v, -2*fixedScale)
	n2 := new(big.Int).Mul(bn, bn)
	v.Quo(v, new(big.Float).SetPrec(300).SetInt(n2))
	v.Sqrt(v)
	stddev, _ = v.Float64()
	return mean, stddev
}
