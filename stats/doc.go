// Package stats computes summary statistics of StructTensors, per path:
// how many records hold values there, how long the lists on the way are,
// and what the values look like (minimum, maximum, mean, standard
// deviation and quantiles of numbers; lengths, distinct counts and the
// most frequent values of strings and bytes). It writes them as JSON and
// as tensorflow_metadata's DatasetFeatureStatisticsList, the statistics
// TFDV computes, which TFDV's schema inference and validation and Facets
// read.
//
// # Partial statistics
//
// Statistics are built to be computed in pieces: an Accumulator takes
// StructTensors (Add), merges the partial statistics of other
// Accumulators (Merge) and serializes them (MarshalBinary), so that a
// pipeline (package beam's Stats, a Beam CombineFn) summarises each
// bundle where it is and merges the partials in whatever tree the runner
// picks. That puts two demands on every quantity.
//
// Exact quantities are exact for any split of the data and any merge
// order. Counts, minima and maxima are so by nature. Sums are not, in
// floating point: a+(b+c) is not (a+b)+c. So the sum and the sum of
// squares of numbers are kept as exact fixed-point integers wide enough
// for any float64 and its square (a little over 4,000 bits), and the mean
// and standard deviation are computed from them once, at the end, each
// rounded once. Merged statistics therefore equal one pass over all the
// data bit for bit, which is what the tests check.
//
// Approximate quantities come from sketches whose size does not grow with
// the data, each with an error bound that holds for any split and merge
// order, and each deterministic: the same adds and merges in the same
// order give the same bytes (no random source; where an algorithm wants
// coin flips, they come from a hash of the sketch's own state).
//
//   - Quantiles: a compactor stack in the style of KLL (quantileSketch).
//     Every rank is within H/(k-1) of the number of values, H being the
//     number of compacted levels (at most log2(n/k)+1), for any input
//     order; this bound is reported with the quantiles. With the default
//     k = 512 it is under 2% up to a million values and 3% up to a
//     billion; measured errors are about ten times smaller
//     (TestQuantileBound logs them).
//   - Distinct values: HyperLogLog with 2^14 registers (distinctSketch),
//     whose merge is a register-wise maximum, so it depends only on the
//     set of values; relative standard error 1.04/sqrt(2^p), 0.81% by
//     default, a statistical bound over the hash function.
//   - Most frequent values: Misra-Gries with mergeable counters
//     (frequentSketch); each reported count is low by at most the
//     reported bound, itself at most n/(counters+1).
//
// # What is counted
//
// A StructTensor of rank 1 is a batch of records; each of its fields,
// and each field of a nested struct, is a feature with a path (a scalar
// struct is one record; the inner dimensions of a struct of higher rank
// are list levels of every feature). Between a record and a feature's
// values lie list levels: the partitions of enclosing structs (a record's
// list of ingredients), then the feature's own ragged or dense
// dimensions. For every feature:
//
//   - Present, Empty, Missing: the records holding at least one value;
//     those where the path is reached (every enclosing struct has an
//     element) but holds no value; those where some enclosing list of
//     structs is empty, so there is nowhere for a value to be. The value
//     model has no nulls: an absent optional protobuf field decodes to an
//     empty list and counts as empty.
//   - Values and ValuesPerRecord: the number of values (for a struct,
//     of its elements), and their number per present record, with an
//     exact histogram in power-of-two buckets.
//   - Levels: for each list level, the number of lists, how many are
//     empty, and their lengths (minimum, maximum, total, histogram).
//   - Numbers (Int, Uint, Float; Bool counts as 0 and 1): count, NaN
//     count (NaN is left out of everything else), zeros, exact minimum
//     and maximum in the values' own type, mean and population standard
//     deviation (infinite or NaN when infinities are among the values),
//     median and the Options.Quantiles+1 quantiles.
//   - Strings and bytes (String values, "string" when marked UTF-8):
//     count, total, minimum, maximum and mean length in bytes, values not
//     UTF-8 in a string feature, the distinct count and the most frequent
//     values.
//
// # JSON
//
// Summary.WriteJSON writes the Summary's fields under their json tags:
//
//	{"records": 3,
//	 "features": [
//	   {"path": ["ingredients", "name"], "kind": "string",
//	    "present": 2, "empty": 0, "missing": 1, "values": 3,
//	    "values_per_record": {"lists": 2, "empty": 0, "total": 3, "min": 1, "max": 2, "mean": 1.5,
//	                          "histogram": [{"low": 1, "high": 1, "count": 1}, {"low": 2, "high": 3, "count": 1}]},
//	    "struct_levels": 1,
//	    "levels": [{"lists": 3, ...}],
//	    "strings": {"count": 3, "total_bytes": 14, "min_bytes": 4, "max_bytes": 5, "mean_bytes": 4.67,
//	                "invalid_utf8": 0, "distinct": 3, "distinct_standard_error": 0.0081,
//	                "top": [{"value": "flour", "count": 1}, ...], "top_max_undercount": 0}},
//	   {"path": ["rating"], "kind": "float", ...,
//	    "numbers": {"count": 2, "nan": 0, "zeros": 0, "min": 3, "max": 4.5, "mean": 3.75, "std_dev": 0.75,
//	                "median": 3, "quantiles": [3, ..., 4.5], "quantile_rank_error": 0}}]}
//
// kind is one of struct, int, uint, float, string, bytes. Integer minima
// and maxima are written exactly (as JSON integers, beyond 2^53 too); a
// float that JSON cannot express is the string "NaN", "+Inf" or "-Inf". A
// top value that is not UTF-8 is written as "value_base64" instead of
// "value". A feature has "numbers" or "strings" by its kind, a struct
// neither.
//
// # DatasetFeatureStatisticsList
//
// Summary.StatisticsProto builds the tensorflow_metadata message on a
// descriptor made in code (no .proto file, nothing registered globally),
// and MarshalStatistics and MarshalStatisticsText give its binary and text
// forms; StatisticsProto's comment lists where each quantity goes.
package stats
