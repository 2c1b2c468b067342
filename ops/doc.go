// Package ops implements operations on StructTensors and on the Tensor and
// Ragged values of their fields.
package ops
