// Package structtensor is the value model of structtensor: Tensors, row
// partitions, Ragged values and StructTensors (multi-dimensional
// collections of records with one schema), with their Specs.
//
// A StructTensor is stored column-wise as parallel flat arrays plus row
// partitions shared by all of its fields, the layout of an Arrow struct
// array under its list parents, so that export to Arrow or TensorFlow
// ragged components needs no copy.
package structtensor
