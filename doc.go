// Package hitflow is a toolkit for turning raw radiation-detector data into
// physics objects fast enough for real time. This root package holds only
// documentation and the test that keeps the dependency rules; the code
// lives in:
//
//	cmd/hitflow      the command-line program (flags -> library calls)
//	pixel            hit model, cluster definitions, streaming clusterer, sorter
//	pixel/tpx3       Timepix3 formats (.tpx3, .t3pa, Katherine, CSV), calibration
//	pixel/pixelsim   synthetic datasets after Čelko et al.
//	pixel/pipeline   decode -> calibrate -> sort -> cluster -> write
//	clue             CLUE density clustering
//	clue/cluecsv     CLUE's CSV input and output
//	clue/cluesim     the CLUE paper's synthetic calorimeter
//	jpet             two-strip J-PET list-mode MLEM reconstruction
//	output           writers and plots for analysis formats
//
// Dependencies run one way: domain packages never import each other's
// domains, output or the CLI; only cmd/hitflow imports cobra.
package hitflow
