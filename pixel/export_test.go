package pixel

// The differential tests' streams and checks, and the sorter's, for the
// device's tests (device_test.go, device_sort_test.go, package pixel_test,
// which imports pixel/pixelcl).
var (
	AgainstSequential = againstSequential
	Feed              = feed
	EqualClusters     = equalClusters
	EqualFeatures     = equalFeatures
	BecomesCalibrated = becomesCalibrated
	SortStream        = sortStream
)

// SetSizes sets the new hits a buffer of c takes and the hits a chunk
// takes.
func SetSizes(c *ChunkedClusterer, buffer, chunk int) { c.size, c.chunk = buffer, chunk }
