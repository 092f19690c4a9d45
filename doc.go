// Package hitflow is a toolkit for turning raw radiation-detector data into
// physics objects fast enough for real time. This root package holds only
// documentation and the test that keeps the dependency rules; the code
// lives in:
//
//	cmd/hitflow      the command-line program (flags -> options -> library calls)
//	pixel            hit model, cluster definitions, the clusterers, sorter
//	pixel/tpx3       Timepix3 formats (.tpx3, .t3pa, Katherine, CSV), calibration, masks
//	pixel/pixelsim   synthetic datasets after Čelko et al.
//	pixel/pipeline   decode -> calibrate -> sort -> cluster -> write; the auto mode
//	clue             CLUE density clustering
//	clue/cluecsv     CLUE's CSV input and output
//	clue/cluesim     the CLUE paper's synthetic calorimeter
//	jpet             two-strip J-PET list-mode MLEM reconstruction
//	format           result files by name: format/text, format/columnar, format/root
//	plot             figures for every domain
//
// Dependencies run one way: algorithms <- formats <- pipelines <- CLI.
// Domain packages never import each other, the formats, the figures or
// the CLI; only cmd/hitflow imports cobra (deps_test.go checks it).
package hitflow
