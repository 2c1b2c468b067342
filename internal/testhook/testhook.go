// Package testhook holds switches that tests of other packages turn on to
// reach paths that ordinary runs take only by chance.
package testhook

import "sync/atomic"

// PoisonLentBuffers makes package native fill the Go buffers it lends the
// engine with a non-zero byte pattern before the decode, as the uncleared
// memory of a reused heap span may hold: an output element the engine
// failed to write then shows up as a wrong value instead of a lucky zero.
var PoisonLentBuffers atomic.Bool

// LentInPlace and LentCopied count, process-wide, the outputs of decodes
// that lent the engine Go buffers (package native): those handed out in
// the lent buffer, and those copied out of engine memory because the
// engine did not complete them there. Tests compare them before and after
// a decode.
var LentInPlace, LentCopied atomic.Int64

// LendBlockBytes, when positive, replaces the size up to which package
// native lends a decode's buffers in one block (beyond it, in blocks of
// about an eighth of them), so that small test batches take the path of
// huge ones.
var LendBlockBytes atomic.Int64

// ExampleInto and ExampleIntoFallbacks count, process-wide, the feature
// decodes (package native) that went straight into a block laid out by
// the plan's guess, and those whose guess was too small, decoded again
// the usual way.
var ExampleInto, ExampleIntoFallbacks atomic.Int64

// ExampleStretchBytes, set by package native, sets the records' bytes per
// stretch of a feature decode straight into a block, and the least batch
// decoded so, to bytes, or both back to their defaults (0): tests make
// small batches take that path, or none.
var ExampleStretchBytes func(bytes int64)

// IgnoreUTF8Marks makes package native's protobuf results tell nothing
// of their string columns' UTF-8 (Result.StringsUTF8), so that package
// decode checks the strings itself: tests compare the engine's marks
// with that check.
var IgnoreUTF8Marks atomic.Bool

// LentFromPool counts, process-wide, the blocks package native lent
// again from its pool of blocks that came back (by Recycle, or by
// themselves once nothing referred to them) instead of allocating.
var LentFromPool atomic.Int64

// CollectionsForBlocks counts, process-wide, the garbage collections
// package native ran to get lent blocks back into its pool, starved of
// them, rather than allocate new ones.
var CollectionsForBlocks atomic.Int64

// DropPooledBlocks, set by package native, empties its pool of lent
// blocks (the blocks are left to the collector), for tests that must know
// what the next decode takes from it.
var DropPooledBlocks func()

// ForcePackedTier, set by package native, makes the engine's packed
// varints take the decoder of a tier (0 AVX-512, 1 AVX2, 2 BMI2's pext, 3
// scalar) or the best below it the CPU has, and with noPext the AVX2 and
// BMI2 decoders do without pext (as where it is slow); -1 restores the
// default. It returns the tier in effect. Tests compare the decoders'
// outputs with it.
var ForcePackedTier func(tier int, noPext bool) int

// Handover, set by package native, makes multi-threaded decodes into lent
// buffers hand the records' own row splits over to later chunks never
// (mode -1), as the last batch says (0, the default) or always (1), the
// first chunk then taking share less time than the others (4: a sixth of
// two chunks' bytes): the output must not depend on it.
var Handover func(mode int, share float64)

// DeferSplits, set by package native, makes the later chunks of those
// decodes defer the records' own row splits until they take the
// hand-over where those splits are enough of the output (mode 0, the
// default), wherever they may (1), or never, writing them as they go
// (-1): the output must not depend on it either.
var DeferSplits func(mode int)

// Steal, set by package native, makes the threads of multi-threaded
// decodes into lent buffers and by feature spec (decode.ExamplePlan),
// done with their chunk, split another
// thread's chunk and take the second half of its records left never
// (mode -1), when worth it (0, the default), whenever two records or more
// are left (1), or so with the first (2) or the last (3) chunk's walk
// slowed down until the batch's first split (so that one happens): the
// output must not depend on it.
var Steal func(mode int)

// MinThreadSeconds, set by package native, sets the least walk (seconds,
// at the plan's measured rate) a thread of a decode into lent buffers is
// given: 0 none, < 0 the default. The tests of several chunks set 0, so
// that their small batches still take several.
var MinThreadSeconds func(seconds float64)

// CopyAllBytes, when non-zero, replaces the size up to which package
// native copies a result's outputs out of engine memory in one call into
// one block (negative: never, each output is copied on its own), so that
// tests decode the same batch both ways.
var CopyAllBytes atomic.Int64

// CopiedAtOnce counts, process-wide, the results package native copied
// out in one call, and of those CopiedIntoPooled the ones whose block it
// took from its pool of lent blocks.
var CopiedAtOnce, CopiedIntoPooled atomic.Int64

// SlabsReused counts, process-wide, the StructTensors package decode
// built in the room of a recycled one's values (Plan.Recycle).
var SlabsReused atomic.Int64
