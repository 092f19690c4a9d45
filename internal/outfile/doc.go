// Package outfile creates output files so that no reader ever finds a
// partial one under the final name, and checks a command's outputs
// before any work starts.
//
// [Create] writes to a temporary file beside the final one (same
// directory, so the rename cannot cross file systems); [File.Close]
// renames it over the final name only when every write succeeded, and
// [File.Abort] removes it. A run that is killed (SIGKILL, power loss)
// leaves the old file, if any, untouched and at most a hidden temporary
// file ".NAME.*.part" beside it. Outputs that are not regular files
// (devices such as /dev/null, pipes) are written in place: there is
// nothing to rename.
//
// [Check] refuses, before the work, an output that is the same file as an
// input or as another output (by device and inode after following links,
// or by resolved path for files that do not exist yet), and an output
// whose directory is missing or not writable.
package outfile
