// Package unchecked builds structtensor values from buffers that are valid
// by construction, skipping the linear checks of structtensor's public
// constructors. Package decode uses it for the engine's outputs: row splits
// that start at 0 and never decrease, string offsets likewise, because the
// engine writes them that way (its differential and property tests hold it
// to that). The public constructors read every split and offset again to
// check it, a second pass over outputs that can be many times the size of
// the input (a wide sparse record has a split per field per record), which
// the TensorFlow op, handing the same buffers to TensorFlow, does not make.
//
// Package structtensor sets the functions (in its init), since only it can
// build its values; their results are *structtensor.RowPartition and
// *structtensor.Tensor. Built with -tags invariants, the values are
// re-validated as every constructor's are.
package unchecked

// RowSplits returns the partition of splits (a *structtensor.RowPartition),
// sharing them. splits must be non-empty, start at 0 and never decrease.
var RowSplits func(splits []int64) any

// StringTensor returns the vector of strings data[offsets[i]:offsets[i+1]]
// (a *structtensor.Tensor), sharing data and offsets, placed in slab (see
// Slab; nil allocates it alone). offsets must be non-empty, start at 0 or
// more, never decrease and end within data; utf8 says every string is
// valid UTF-8.
var StringTensor func(slab any, data []byte, offsets []int64, utf8 bool) any

// Column returns the vector of values, placed in slab (nil: one
// allocation for the whole value): a *structtensor.Tensor, or with splits
// a *structtensor.Ragged whose rows they split (sharing values and
// splits). values is a []bool, []int32, []uint32, []float32, []int64,
// []uint64 or []float64, or a string vector from StringTensor; splits is
// nil or as RowSplits wants them, ending at the number of values. A batch
// of wide records has hundreds of columns, and the value, its flat
// tensor, its shape and its partition allocated one by one were most of
// the cost of building its StructTensor.
var Column func(slab any, values any, splits []int64) any

// Struct returns the *structtensor.StructTensor of nrows rows holding
// fields (a []structtensor.Field it keeps), its rows split by splits when
// they are not nil (then each field has a row per value of the
// partition), placed in slab (nil: one allocation). index maps each
// field's name to its position in fields; it is shared, never changed, so
// that every batch decoded with one plan builds it once. The fields' names
// must be valid and distinct, and each field must have as many rows as
// the struct's flat rows.
var Struct func(slab any, nrows int, splits []int64, fields any, index map[string]int) any

// Slab returns room for the values of one StructTensor built with the
// functions above: ragged columns, vector columns, string vectors and
// structs, each kind in one allocation, handed out in turn (a value asked
// for beyond the room is allocated alone), and for the structs' fields
// (SlabFields). A batch of a schema of six hundred leaves built its values
// in twelve hundred allocations; with a slab it takes five. The cost is
// that any value kept keeps the slab's every value, and so every buffer
// they share: a column kept keeps its whole batch's output, as a column of
// a batch decoded into one lent block of Go memory already does.
var Slab func(ragged, vectors, strings, structs, fields int) *Room

// Room is a slab (Slab). Package structtensor keeps the slab's arrays in
// it, and every struct placed in the slab refers back to it: a weak
// pointer to the Room lives exactly as long as some struct of its
// StructTensor does, so that a plan can take back the room of an output
// its caller recycles (decode.Plan.Recycle) without keeping any output
// alive itself.
type Room struct{ Impl any }

// SlabFields returns the room's []structtensor.Field of the length Slab
// was given, for the structs' fields (Struct keeps the slices it is given).
var SlabFields func(room *Room) any

// ReuseSlab makes the whole room free again for another StructTensor. No
// value built in it before may be used afterwards: each is overwritten as
// its place is handed out again.
var ReuseSlab func(room *Room)
